"""A fixed sample of the planner's prompts (scene line and instruction, as
:func:`planner.embedded.prompt.user_text` builds them) for the tests that compare our forward
pass and its quantised weights with the reference, and for scripts/bench_model.py."""

from __future__ import annotations

from planner.embedded.prompt import scene_line, user_text

_TABLE = scene_line(["red", "green", "blue", "yellow"])
_STACKED = scene_line(["red", "green", "blue"], on={"blue": "red"}, in_bin={"green": "green"})
_HOLDING = scene_line(["red", "green", "blue"], held="blue")
_DRAWER = scene_line(["red", "green"], drawer="closed", light=False)

CASES = [
    ("chuck the crimson cube into the emerald bin", _TABLE),
    ("pick up teh rde block and put it in the gren bin", _TABLE),
    ("stack everything on the blue one then go home", _TABLE),
    ("put the one on top in the red tub", _STACKED),
    ("take the block out of the green basket and push it to the left", _STACKED),
    ("drop what you are holding into the blue crate", _HOLDING),
    ("put every block except the red one in the blue bin", _TABLE),
    ("first the yellow cube to the middle of the table, then the green one on top of it", _TABLE),
    ("could you move the sapphire brick over to the right side", _TABLE),
    ("put the purple block in the red bin", _TABLE),
    ("open the drawer, put the red cube inside and close it", _DRAWER),
    ("turn on the light", _DRAWER),
    ("mets le cube rouge dans le bac vert", _TABLE),
    ("swap the red and blue blocks", _TABLE),
    ("stop", _TABLE),
    ("put the lemon coloured block next to the ocean one", _TABLE),
]


def planner_prompts() -> list[str]:
    return [user_text(instruction, scene) for instruction, scene in CASES]
