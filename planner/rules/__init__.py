"""The rules planner: a deterministic parser from instructions to subgoal JSON.

"Rules before models": a small closed vocabulary covers most tabletop instructions
(colours, block/cube, bin/box/container/basket, put/place/drop/move, stack/on top of,
push/slide, pick up, go home, "and then" chains, all/every/each, "the bin of its colour"),
and a few inverted forms: the destination first ("into the green bin, put the red block"),
a verb after its object ("the red block goes / should be in the blue bin"), wishes ("I need
the blue brick in the red basket"), and "it" as a destination (the block of the previous
clause).
The parser knows when it understood *everything*: any word it cannot place lowers its
confidence, and the hybrid planner then asks a model instead of guessing. Instructions that
name things the scene does not have ("the purple block", "the yellow bin") are declined with
a reason: ``{"steps": [], "refuse": "..."}``.

The output is the same JSON a model would write, so it goes through the same bridge. It
carries the instruction's ``goal`` (what each clause asks to be true at the end, in the
grammar of :mod:`bridge.goals`), derived from the clauses and not from the steps: the bridge
then checks that the steps achieve it, and the runner checks it in physics. Clauses the
world already satisfies keep their goal but get no steps, so a replan resumes where the
last plan stopped. Quantifiers take exclusions ("every block except the red one").

One module per concept: :mod:`~planner.rules.vocabulary` (the words, most of them the
lexicon's), :mod:`~planner.rules.lexing` (text to tokens and noun phrases),
:mod:`~planner.rules.clauses` (tokens to clauses: verbs, objects, destinations, devices),
:mod:`~planner.rules.references` (what a phrase names in the world),
:mod:`~planner.rules.plan` (the plan being built and the scene it leaves),
:mod:`~planner.rules.building` (one clause to steps and its goal),
:mod:`~planner.rules.repairs` (steps a cube's position blocks, replaced by ones that run),
:mod:`~planner.rules.result` and :mod:`~planner.rules.planner` (:class:`RulesPlanner`).
"""

from __future__ import annotations

from planner.rules.planner import RulesPlanner, parse
from planner.rules.repairs import MAX_SEPARATIONS
from planner.rules.result import MAX_REFUSAL, NOTHING_TO_DO, RulesResult
from planner.rules.vocabulary import (
    BIN_NOUNS,
    BLOCK_NOUNS,
    BOUNDARY,
    DEVICE_EXTRA,
    DEVICE_NOUNS,
    DEVICE_VERBS,
    EXCEPT,
    FILLER,
    HOME,
    HOME_WORDS,
    KNOWN_COLORS,
    MATCH,
    MOVE,
    OTHER_COLORS,
    OTHER_THINGS,
    PICK,
    PICK_LIKE,
    POSTFIX_VERBS,
    PREPS,
    PRONOUN_MANY,
    PRONOUN_ONE,
    PUSH,
    QUANTS,
    REGION_WORDS,
    SORT,
    SOURCE_PREPS,
    STACK,
    VERBS,
)

__all__ = [
    "BIN_NOUNS",
    "BLOCK_NOUNS",
    "BOUNDARY",
    "DEVICE_EXTRA",
    "DEVICE_NOUNS",
    "DEVICE_VERBS",
    "EXCEPT",
    "FILLER",
    "HOME",
    "HOME_WORDS",
    "KNOWN_COLORS",
    "MATCH",
    "MAX_REFUSAL",
    "MAX_SEPARATIONS",
    "MOVE",
    "NOTHING_TO_DO",
    "OTHER_COLORS",
    "OTHER_THINGS",
    "PICK",
    "PICK_LIKE",
    "POSTFIX_VERBS",
    "PREPS",
    "PRONOUN_MANY",
    "PRONOUN_ONE",
    "PUSH",
    "QUANTS",
    "REGION_WORDS",
    "SORT",
    "SOURCE_PREPS",
    "STACK",
    "VERBS",
    "RulesPlanner",
    "RulesResult",
    "parse",
]
