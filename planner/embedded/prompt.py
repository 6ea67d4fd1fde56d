"""The embedded model's prompt and answer format, shared by training and inference.

Why so short: prompt processing dominates latency on a CPU, and the model is specialised by
fine-tuning, so it needs no instructions, no schema and no few-shot block; only the chat
frame its base was instruction-tuned with, one line of scene (so "the one on top", "the
block in the green bin" and "what you are holding" can be resolved) and the user's text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sim.scene import cube_color

if TYPE_CHECKING:
    from sim.world import DrawerState, WorldState

#: Bumped whenever the prompt or the command language changes; an adapter trained for
#: another version is refused at load.
FORMAT_VERSION = 2
END = "<|im_end|>"
#: Longest instruction given to the model (characters); longer text is cut at a word.
MAX_CHARS = 600
#: Longest command the model may write (tokens); four clauses and a quantifier fit.
MAX_NEW_TOKENS = 72


def clip(text: str) -> str:
    text = " ".join(str(text).split())
    if len(text) <= MAX_CHARS:
        return text
    return text[:MAX_CHARS].rsplit(" ", 1)[0]


def scene_line(
    cubes: list[str],
    in_bin: dict[str, str] | None = None,
    on: dict[str, str] | None = None,
    held: str | None = None,
    drawer: str | None = None,
    in_drawer: list[str] | None = None,
    light: bool | None = None,
) -> str:
    """The scene as the model sees it, from colours: ``red green blue; blue on red; green
    in blue bin; holding yellow``. Training and inference both build it here.

    The articulated scene adds its devices at the end: ``drawer`` is ``"open"``,
    ``"closed"`` or ``"ajar"`` (``drawer open with red``, the colours in it after "with"),
    ``light`` on or off (``light off``). Where both are None (the tabletop scene) the line is
    what it always was, so tabletop prompts are unchanged."""
    parts = [" ".join(cubes) or "no cubes"]
    parts += [f"{a} on {b}" for a, b in sorted((on or {}).items())]
    parts += [f"{a} in {b} bin" for a, b in sorted((in_bin or {}).items())]
    if held:
        parts.append(f"holding {held}")
    if drawer is not None:
        inside = " and ".join(in_drawer or [])
        parts.append(f"drawer {drawer}" + (f" with {inside}" if inside else ""))
    if light is not None:
        parts.append(f"light {'on' if light else 'off'}")
    return "; ".join(parts)


def scene_of(world: WorldState) -> str:
    """:func:`scene_line` of a :class:`sim.world.WorldState`."""
    col = cube_color
    objs = list(getattr(world, "objects", []) or [])
    drawer = getattr(world, "drawer", None)
    return scene_line(
        [col(o.name) for o in objs],
        {col(o.name): col(o.in_bin) for o in objs if o.in_bin},
        {col(o.name): col(o.on) for o in objs if o.on},
        col(world.held_object) if world.held_object else None,
        _drawer_word(drawer),
        [col(n) for n in drawer.contents] if drawer is not None else None,
        getattr(world, "light_on", None),
    )


def _drawer_word(d: DrawerState | None) -> str | None:
    if d is None:
        return None
    return "open" if d.is_open else "closed" if d.is_closed else "ajar"


def user_text(instruction: str, scene: str) -> str:
    """The user message: the scene line, then the instruction."""
    return f"scene: {scene}\n{clip(instruction)}"


def prompt(user: str) -> str:
    """The text the model continues, around a :func:`user_text` message."""
    return f"<|im_start|>user\n{user}{END}\n<|im_start|>assistant\n"


def target(command: str) -> str:
    """What training teaches the model to write after :func:`prompt`."""
    return f"{command}{END}"
