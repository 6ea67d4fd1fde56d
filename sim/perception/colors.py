"""Which pixels are which cube's colour: ratio tests on RGB.

Each cube has its own colour (red, green, blue, yellow), so a colour is an identity. The
tests compare channels with each other rather than with fixed levels, so they hold in
light and in shade (the lamp's warm light included). What else in the scene has a cube's
hue (the bins, the button's red cap, the lit bulb, the finger pads' orange) is told apart
by where it is (:mod:`sim.perception.static`), not by colour.
"""

from __future__ import annotations

import numpy as np

from sim import scene


def color_masks(rgb: np.ndarray) -> dict[str, np.ndarray]:
    """One boolean mask (H, W) per cube colour of ``scene.CUBE_COLORS``."""
    r = rgb[..., 0].astype(np.int16)
    g = rgb[..., 1].astype(np.int16)
    b = rgb[..., 2].astype(np.int16)
    bright = (r + g + b) > 90
    masks = {
        # the pads' orange (g/r 0.6) and the wood (g/r 0.85, b/r 0.63) are not red or yellow
        "red": bright & (r * 10 > g * 25) & (r * 10 > b * 25),
        "green": bright & (g * 10 > r * 15) & (g * 10 > b * 13),
        "blue": bright & (b * 10 > r * 15) & (b * 10 > g * 13),
        "yellow": bright & (r * 10 > b * 22) & (g * 10 > b * 22) & (g * 100 > r * 80),
    }
    return {c: masks[c] for c in scene.CUBE_COLORS}
