"""Clauses rendered as a person might type them: colour words and shades, things of a
colour, nouns, regions, verbs and prepositions, as orders or as wishes and end states."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import TypeVar

from planner.corpus.devices import articulated_text
from planner.corpus.forms import (
    BIN_NOUNS,
    BLOCK_NOUNS,
    COLOR_SYNONYMS,
    EXCEPT_WORDS,
    HOME_PHRASES,
    IN_PREPS,
    MOVE_VERBS,
    ON_PREPS,
    PICK_VERBS,
    PUSH_VERBS,
    QUANTIFIER_FORMS,
    REGION_WORDS,
    STACK_VERBS,
    WORLD_THINGS,
)
from planner.grammar import ARTICULATED_KINDS, Clause

T = TypeVar("T")


class Writer:
    """Renders clauses as a person might type them. One instance per sample: it carries
    the sample's style choices (synonyms, world knowledge, casual register)."""

    def __init__(
        self,
        rng: random.Random,
        *,
        synonyms: float,
        knowledge: float,
        goal_state: float,
        casual: bool,
        things: Mapping[str, Sequence[str]] | None = None,
    ):
        self.r = rng
        self.things = WORLD_THINGS if things is None else things
        self.p_syn = synonyms
        self.p_know = knowledge
        self.p_goal = goal_state
        self.casual = casual

    def pick(self, xs: Sequence[T]) -> T:
        return self.r.choice(xs)

    def colour(self, c: str) -> str:
        if c in COLOR_SYNONYMS and self.r.random() < self.p_syn:
            return self.pick(COLOR_SYNONYMS[c][1:])
        return c

    def block(self, c: str, *, allow_bare: bool = True) -> str:
        """A noun phrase naming the block of colour ``c``."""
        r = self.r
        if c in self.things and r.random() < self.p_know:
            thing = self.pick(self.things[c])
            noun = self.pick(["block", "cube", "one", "brick"])
            bare = thing.split(" ", 1)[-1] if thing.startswith(("a ", "an ", "the ")) else thing
            return self.pick(
                [
                    f"the {noun} that is the colour of {thing}",
                    f"the {noun} the color of {thing}",
                    f"the {bare}-coloured {noun}",
                    f"the {bare}-colored {noun}",
                    f"the {noun} that looks like {thing}",
                    f"the {noun} with the same colour as {thing}",
                    f"the {noun} matching {thing}",
                    f"the {noun} that's coloured like {thing}",
                ]
            )
        col = self.colour(c)
        if allow_bare and r.random() < (0.25 if self.casual else 0.06):
            return col
        noun = self.pick(BLOCK_NOUNS)
        art = self.pick(["the", "the", "the", "that", "the", ""] if self.casual else ["the"])
        return f"{art} {col} {noun}".strip()

    def bin(self, c: str) -> str:
        r = self.r
        if c in self.things and r.random() < self.p_know * 0.7:
            thing = self.pick(self.things[c])
            noun = self.pick(["bin", "box", "basket", "container"])
            bare = thing.split(" ", 1)[-1] if thing.startswith(("a ", "an ", "the ")) else thing
            return self.pick(
                [
                    f"the {noun} that is the colour of {thing}",
                    f"the {bare}-coloured {noun}",
                    f"the {noun} the same color as {thing}",
                    f"the {noun} that matches {thing}",
                ]
            )
        col = self.colour(c)
        if r.random() < (0.12 if self.casual else 0.03):
            return f"{col} {self.pick(['bin', 'box'])}"
        return f"the {col} {self.pick(BIN_NOUNS)}"

    def region(self, reg: str) -> str:
        return self.pick(REGION_WORDS[reg])

    # -- clauses ------------------------------------------------------------------
    def imperative(self, c: Clause) -> str:
        """The clause as an order ("put the red block in the green bin")."""
        p = self.pick
        if c.kind in ARTICULATED_KINDS:
            return articulated_text(self, c, goal=False)
        if c.kind == "move":
            ob, B = self.block(c.named_obj, allow_bare=False), self.bin(c.named_dest)
            return p(
                [
                    f"{p(MOVE_VERBS)} {ob} {p(IN_PREPS)} {B}",
                    f"{p(MOVE_VERBS)} {ob} {p(IN_PREPS)} {B}",
                    f"{p(PICK_VERBS)} {ob} and {p(['put', 'drop', 'place', 'toss'])} it "
                    f"{p(IN_PREPS)} {B}",
                    f"{p(['grab', 'take', 'pick up'])} {ob}, then {p(['drop', 'put'])} it in {B}",
                    f"{p(IN_PREPS[:3])} {B}, {p(MOVE_VERBS)} {ob}",
                    f"{p(MOVE_VERBS)} {ob} over to {B}",
                ]
            )
        if c.kind == "stack":
            ob, D = (
                self.block(c.named_obj, allow_bare=False),
                self.block(c.named_dest, allow_bare=False),
            )
            return p(
                [
                    f"{p(STACK_VERBS)} {ob} {p(ON_PREPS)} {D}",
                    f"stack {ob} on {D}",
                    f"{p(PICK_VERBS)} {ob} and {p(['put', 'stack', 'place', 'set'])} it "
                    f"{p(ON_PREPS)} {D}",
                    f"put {ob} on top of {D}",
                    f"build a stack with {ob} on top of {D}",
                    f"make a tower: {ob} on top of {D}",
                ]
            )
        if c.kind == "region":
            ob, R = self.block(c.named_obj, allow_bare=False), self.region(c.named_dest)
            return p(
                [
                    f"{p(['put', 'place', 'set', 'move', 'put down'])} {ob} "
                    f"{p(['on', 'at', 'in'])} {R}",
                    f"{p(['pick up', 'lift', 'grab'])} {ob} and {p(['put', 'place', 'set'])} it "
                    f"{p(['on', 'at'])} {R}",
                    f"{p(['carry', 'move', 'bring'])} {ob} to {R}",
                ]
            )
        if c.kind == "push":
            ob, R = self.block(c.named_obj, allow_bare=False), self.region(c.named_dest)
            return p(
                [
                    f"{p(PUSH_VERBS)} {ob} {p(['to', 'towards', 'over to', 'toward', 'into'])} {R}",
                    f"{p(PUSH_VERBS)} {ob} {p(['to', 'towards'])} {R}",
                    f"give {ob} a {p(['push', 'shove', 'nudge'])} {p(['to', 'towards'])} {R}",
                    f"without lifting it, {p(['slide', 'push'])} {ob} to {R}",
                ]
            )
        if c.kind == "pick":
            ob = self.block(c.named_obj, allow_bare=False)
            return p(
                [
                    f"{p(PICK_VERBS)} {ob}",
                    f"{p(PICK_VERBS)} {ob}",
                    f"pick {ob} up",
                    f"{p(['grab', 'lift', 'pick up'])} {ob} and hold it",
                    f"hold {ob} in the gripper",
                ]
            )
        if c.kind == "home":
            return p(HOME_PHRASES)
        if c.kind == "all":
            B = self.bin(c.named_dest)
            return p(
                [
                    f"{p(MOVE_VERBS[:12])} {p(QUANTIFIER_FORMS)} "
                    f"{p(['blocks', 'cubes', 'bricks', 'block', 'cube'])} {p(IN_PREPS[:4])} {B}",
                    f"{p(['put', 'move', 'drop'])} everything {p(['in', 'into'])} {B}",
                    f"clear the table into {B}",
                    f"{p(['put', 'move', 'drop'])} every single {p(['block', 'cube'])} in {B}",
                    f"gather all the {p(['blocks', 'cubes'])} in {B}",
                ]
            )
        if c.kind == "all_match":
            return p(
                [
                    "sort the blocks by colour",
                    "sort the cubes into the bins by color",
                    "put each block in the bin of the same colour",
                    "put every block into its matching bin",
                    "put each cube in the bin that matches its colour",
                    "tidy up: every block into the bin of its colour",
                    "match the blocks to the bins by colour",
                    "put all the cubes in their own colour bins",
                    "put every block in the bin with the same color",
                    "sort everything into the matching bins",
                    "put the blocks in the bins that match their colors",
                ]
            )
        if c.kind in ("except", "except_match"):
            X = " and ".join(self.block(e, allow_bare=False) for e in c.excl)
            if c.kind == "except":
                B = self.bin(c.named_dest)
                return p(
                    [
                        f"put every block except {X} in {B}",
                        f"{p(['put', 'move', 'drop'])} all the {p(['blocks', 'cubes'])} "
                        f"{p(EXCEPT_WORDS)} "
                        f"{X} {p(['in', 'into'])} {B}",
                        f"{p(['put', 'move'])} everything "
                        f"{p(['except', 'but', 'apart from', 'other than'])} {X} into {B}",
                        f"{p(['put', 'move'])} everything into {B}, but leave {X} where it is",
                        f"except for {X}, put all the blocks in {B}",
                        f"all {p(['blocks', 'cubes'])} but {X} go in {B}",
                        f"move every cube into {B}, not {X} though",
                    ]
                )
            return p(
                [
                    f"sort every block except {X} into the bin of its colour",
                    f"put all the blocks {p(['except', 'but', 'apart from', 'other than'])} {X} "
                    f"in their matching bins",
                    f"except for {X}, put each block in the bin of the same colour",
                    f"sort the blocks by colour but leave {X} alone",
                ]
            )
        if c.kind == "it":
            B = self.bin(c.named_dest)
            return p(
                [
                    f"{p(['put', 'drop', 'place', 'release'])} it {p(IN_PREPS[:4])} {B}",
                    f"{p(['put', 'drop'])} what you're holding {p(['in', 'into'])} {B}",
                    f"drop the block you are holding into {B}",
                    f"put the held block in {B}",
                    f"let go of it over {B}",
                ]
            )
        raise ValueError(c.kind)

    def goal_form(self, c: Clause) -> str | None:
        """The clause as a wish or an end state ("I want the red cube in the green bin")."""
        p = self.pick
        if c.kind == "move":
            ob, B = self.block(c.named_obj), self.bin(c.named_dest)
            return p(
                [
                    f"I want {ob} in {B}",
                    f"{ob} should end up in {B}",
                    f"{ob} needs to be in {B}",
                    f"make sure {ob} is in {B}",
                    f"I'd like {ob} inside {B}",
                    f"{ob} belongs in {B}",
                    f"have {ob} sitting in {B}",
                    f"{ob} goes in {B}",
                    f"end state: {ob} in {B}",
                    f"goal: {ob} inside {B}",
                    f"{ob} in {B}",
                    f"{ob} -> {B}",
                    f"{ob}: {B}",
                    f"{ob} into {B}",
                    f"get {ob} into {B}",
                    f"the final configuration has {ob} in {B}",
                    f"can {ob} be in {B}?",
                    f"{ob} has to go in {B}",
                    f"{ob} should be in {B}",
                ]
            )
        if c.kind == "stack":
            ob, D = self.block(c.named_obj), self.block(c.named_dest)
            return p(
                [
                    f"I want {ob} on top of {D}",
                    f"{ob} should end up on {D}",
                    f"make sure {ob} is stacked on {D}",
                    f"{ob} on {D}",
                    f"{ob} on top of {D}",
                    f"{ob} -> on {D}",
                    f"end state: {ob} stacked on {D}",
                    f"I'd like to see {ob} sitting on {D}",
                    f"{ob} needs to be on top of {D}",
                ]
            )
        if c.kind == "region":
            ob, R = self.block(c.named_obj), self.region(c.named_dest)
            return p(
                [
                    f"I want {ob} on {R}",
                    f"{ob} should be at {R}",
                    f"{ob} -> {R}",
                    f"end state: {ob} at {R}",
                    f"{ob} on {R}",
                ]
            )
        return None

    def clause(self, c: Clause) -> str:
        if c.kind in ARTICULATED_KINDS:
            return articulated_text(self, c)
        if self.r.random() < self.p_goal:
            g = self.goal_form(c)
            if g is not None:
                return g
        return self.imperative(c)
