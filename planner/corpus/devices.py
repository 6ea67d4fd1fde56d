"""The articulated scene's clauses as a person might type them: the drawer (open, close, a
block into it, a block out of it), the light and the button."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.corpus.forms import BUTTON_NOUNS, DRAWER_NOUNS, LIGHT_NOUNS, MOVE_VERBS, PICK_VERBS
from planner.grammar import Clause

if TYPE_CHECKING:
    from planner.corpus.writer import Writer


def articulated_text(w: Writer, c: Clause, *, goal: bool = True) -> str:  # noqa: C901 - one table of forms
    """An articulated-scene clause as a person might type it (``goal``: end-state and wish
    forms may be drawn too)."""
    r, p = w.r, w.pick
    g = goal and r.random() < max(w.p_goal, 0.25)
    D = p(DRAWER_NOUNS)
    if c.kind == "open":
        if g:
            return p(
                [
                    f"I want {D} open",
                    f"{D} should be open",
                    f"leave {D} open",
                    f"{D} open",
                    f"{D} open please",
                    f"get {D} open",
                    f"make sure {D} is open",
                    "drawer: open",
                    f"I need {D} opened",
                    f"{D} needs to be open",
                ]
            )
        return p(
            [
                f"{p(['open', 'pull open', 'pull out', 'slide open', 'open up', 'open'])} {D}",
                f"{p(['pull', 'slide', 'yank'])} {D} open",
                f"open {D} up",
                f"can you open {D}",
                f"give {D} a pull",
            ]
        )
    if c.kind == "close":
        if g:
            return p(
                [
                    f"I want {D} shut",
                    f"I want {D} closed",
                    f"{D} should be closed",
                    f"{D} shut",
                    f"{D} closed",
                    f"make sure {D} is shut",
                    f"get {D} closed",
                    "drawer: closed",
                    f"{D} needs to be shut",
                    f"don't leave {D} open",
                ]
            )
        return p(
            [
                f"{p(['close', 'shut', 'push in', 'slide shut', 'close', 'shut'])} {D}",
                f"{p(['push', 'slide', 'shove'])} {D} {p(['shut', 'closed', 'in'])}",
                f"close {D} up",
                f"can you shut {D}",
            ]
        )
    if c.kind in ("light_on", "light_off"):
        on = c.kind == "light_on"
        L = p(LIGHT_NOUNS)
        word = "on" if on else "off"
        verb = p(["turn", "switch", "flick", "put", "turn", "switch"])
        if g:
            if on:
                return p(
                    [
                        "make it bright in here",
                        "it's too dark in here",
                        "I can't see anything, it's dark",
                        f"I want {L} on",
                        f"{L} should be on",
                        "we need some light",
                        "light the table up",
                        "brighten things up",
                        "let there be light",
                        f"{L} on",
                        "lights on",
                        "light on please",
                    ]
                )
            return p(
                [
                    "make it dark in here",
                    "it's too bright in here",
                    f"I want {L} off",
                    f"{L} should be off",
                    "lights out",
                    "lights off",
                    f"{L} off",
                    "darken the room",
                    "we don't need the light anymore",
                    "save some power, no light",
                ]
            )
        return p(
            [
                f"{verb} {word} {L}",
                f"{verb} {L} {word}",
                f"{verb} {word} {L}",
                f"get {L} {word}",
                f"can you {verb} {L} {word}",
                f"{'power on' if on else 'power off'} {L}",
                f"{'light up' if on else 'kill'} {L}",
            ]
        )
    if c.kind == "press":
        B = p(BUTTON_NOUNS)
        return p(
            [
                f"{p(['press', 'push', 'hit', 'tap', 'click', 'press', 'push down'])} {B}",
                f"give {B} a {p(['press', 'push', 'tap', 'poke'])}",
                f"press down on {B}",
                "toggle the light",
                "toggle the lamp",
                f"{B}: press it",
                f"smash {B}" if r.random() < 0.2 else f"press {B} once",
            ]
        )
    ob = w.block(c.named_obj, allow_bare=False)
    if c.kind == "drawer_in":
        if g:
            return p(
                [
                    f"I want {ob} in {D}",
                    f"{ob} should be in {D}",
                    f"{ob} goes in {D}",
                    f"{ob} belongs in {D}",
                    f"{ob} in {D}",
                    f"{ob} -> {D}",
                    f"{ob}: drawer",
                    f"keep {ob} in {D}",
                ]
            )
        into = p(["in", "into", "inside", "in", "into"])
        return p(
            [
                f"{p(MOVE_VERBS)} {ob} {into} {D}",
                f"{p(['pop', 'stash', 'store', 'tuck', 'hide', 'stick', 'drop'])} {ob} {into} {D}",
                f"{p(PICK_VERBS)} {ob} and {p(['put', 'drop', 'place'])} it {into} {D}",
                f"{p(['put', 'drop', 'stash'])} {ob} away in {D}",
                f"{ob} {into} {D}",
            ]
        )
    if c.kind == "drawer_out":
        return p(
            [
                f"{p(['take', 'get', 'pull', 'lift', 'fish'])} {ob} out of {D}",
                f"{p(['remove', 'grab', 'take', 'pick up', 'retrieve'])} {ob} from {D}",
                f"get {ob} back out of {D}",
                f"{ob} out of {D}",
                f"{p(['empty', 'clear'])} {ob} out of {D}",
            ]
        )
    raise ValueError(c.kind)
