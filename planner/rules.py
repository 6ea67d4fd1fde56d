"""The rules planner: a deterministic parser from instructions to subgoal JSON.

"Rules before models": a small closed vocabulary covers most tabletop instructions
(colours, block/cube, bin/box/container/basket, put/place/drop/move, stack/on top of,
push/slide, pick up, go home, "and then" chains, all/every/each, "the bin of its colour").
The parser knows when it understood *everything*: any word it cannot place lowers its
confidence, and the hybrid planner then asks a model instead of guessing. Instructions that
name things the scene does not have ("the purple block", "the yellow bin") are declined with
a reason: ``{"steps": [], "refuse": "..."}``.

The output is the same JSON a model would write, so it goes through the same bridge.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from sim import scene
from sim.world import WorldState

# ----------------------------------------------------------------------------- vocabulary
BLOCK_NOUNS = {"block", "blocks", "cube", "cubes", "brick", "bricks"}
BIN_NOUNS = {
    "bin", "bins", "box", "boxes", "container", "containers", "basket", "baskets",
    "bucket", "buckets",
}
KNOWN_COLORS = set(scene.CUBE_COLORS) | set(scene.BIN_COLORS)
OTHER_COLORS = {
    "purple", "orange", "pink", "black", "white", "brown", "grey", "gray", "cyan", "magenta",
    "violet", "indigo", "gold", "golden", "silver", "teal", "maroon", "navy", "turquoise",
    "beige", "lime",
}
OTHER_THINGS = {
    "ball", "balls", "sphere", "spheres", "cup", "cups", "mug", "mugs", "bottle", "bottles",
    "apple", "apples", "banana", "bananas", "pen", "pens", "pencil", "pencils", "cylinder",
    "cylinders", "pyramid", "pyramids", "cone", "cones", "toy", "toys", "book", "books",
    "plate", "plates", "bowl", "bowls", "phone", "key", "keys", "can", "cans", "shelf",
    "drawer", "table_leg", "sock", "socks", "marker", "markers", "spoon", "fork", "knife",
}
REGION_WORDS = {
    "center": "table_center", "centre": "table_center", "middle": "table_center",
    "front": "table_front", "back": "table_back", "rear": "table_back",
    "left": "table_left", "right": "table_right",
}
# verb -> category
MOVE, STACK, PUSH, PICK, HOME, SORT = "move", "stack", "push", "pick", "home", "sort"
VERBS = {
    **{v: MOVE for v in (
        "put", "place", "drop", "move", "set", "bring", "transfer", "deposit", "toss",
        "throw", "carry", "relocate", "store", "stow", "load", "get", "take", "lay",
        "insert", "return", "dump", "position", "shift",
    )},
    **{v: STACK for v in ("stack", "pile")},
    **{v: PUSH for v in ("push", "slide", "shove", "nudge", "drag", "scoot", "slip")},
    **{v: PICK for v in ("pick", "grab", "lift", "grasp", "raise", "hold", "seize", "fetch")},
    **{v: SORT for v in ("sort", "organize", "organise", "tidy")},
    "home": HOME, "reset": HOME, "park": HOME,
}
#: Move verbs that mean "pick" when no destination follows ("take the red block").
PICK_LIKE = {"take", "get", "grab", "fetch", "lift", "raise"}
PREPS = {"in", "into", "inside", "to", "onto", "on", "at", "toward", "towards", "over", "within"}
SOURCE_PREPS = {"from", "out"}
QUANTS = {"all", "every", "each", "both", "everything", "any"}
PRONOUN_ONE = {"it", "this"}
PRONOUN_MANY = {"them", "those", "these", "they"}
MATCH = {"same", "matching", "corresponding", "its", "their", "own", "respective", "match"}
HOME_WORDS = {"home", "rest", "start", "starting", "initial", "neutral"}
FILLER = {
    "the", "a", "an", "please", "can", "could", "would", "will", "you", "now", "first",
    "also", "carefully", "gently", "slowly", "quickly", "robot", "kindly", "i", "want",
    "need", "like", "me", "go", "ahead", "up", "down", "of", "side", "table", "s", "there",
    "one", "ones", "color", "colors", "colored", "by", "just", "with", "your", "gripper",
    "arm", "spot", "position", "location", "area", "part", "ok", "okay", "hey", "let",
    "lets", "us", "should", "must", "then", "and", "too", "as", "well", "back", "again",
    "pose", "single", "block's", "is", "that", "which", "surface", "top", "away",
}
#: The bridge bounds refusal text; longer reasons are cut, not rejected.
MAX_REFUSAL = 200
#: Prefix of the refusal emitted when the world already satisfies the instruction; the
#: closed loop reads it as success, not as a refusal.
NOTHING_TO_DO = "nothing to do"
#: Words that end a clause (the next clause may omit its verb).
BOUNDARY = {"then", "afterwards", "finally", "lastly", "next", "after"}

_POINT_RE = re.compile(
    r"[\[(]\s*x?\s*=?\s*(-?\d*\.?\d+)\s*(?:m\b)?\s*,\s*y?\s*=?\s*(-?\d*\.?\d+)\s*(?:m\b)?\s*[\])]"
)
_PHRASES: list[tuple[str, str]] = [
    (r"\bon top of\b", " onto "),
    (r"\bon to\b", " onto "),
    (r"\bin to\b", " into "),
    (r"\binside of\b", " inside "),
    (r"\bpick up\b", " pick "),
    (r"\bpick it up\b", " pick it "),
    (r"\bpick them up\b", " pick them "),
    (r"\bput down\b", " put "),
    (r"\bset down\b", " put "),
    (r"\bnext to\b", " nextto "),
    (r"\bin front of\b", " infrontof "),
    (r"\bafter that\b", " then "),
    (r"\bonce done\b", " then "),
    (r"\blet go\b", " release "),
    (r"\bgo home\b", " home "),
    (r"\bgo back home\b", " home "),
    (r"\breturn home\b", " home "),
    (r"\bcome back home\b", " home "),
    (r"\bmove home\b", " home "),
    (r"\breturn to (?:the )?(?:home|rest|start|starting|initial|neutral)\b", " home "),
    (r"\bgo (?:back )?to (?:the )?(?:home|rest|start|starting|initial|neutral)\b", " home "),
    (r"\bmove (?:the arm )?(?:back )?to (?:the )?(?:home|rest)\b", " home "),
    (r"\bthe arm home\b", " home "),
    (r"\bthe robot home\b", " home "),
    (r"\bcolour", " color"),
    (r"\bblock's\b", " block "),
]


@dataclass
class RulesResult:
    """What the rules planner made of an instruction."""

    steps: list[dict]
    confident: bool
    confidence: float
    refuse: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        out: dict = {"steps": list(self.steps)}
        if self.refuse:
            out["refuse"] = self.refuse[:MAX_REFUSAL]
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))


class _Refuse(Exception):
    pass


class _Unsure(Exception):
    pass


@dataclass
class _Phrase:
    """A noun phrase: what the words between verb/preposition/boundary name."""

    colors: list[str] = field(default_factory=list)
    other_colors: list[str] = field(default_factory=list)
    noun: str | None = None  # "block" | "bin" | "thing:<word>"
    plural: bool = False
    quant: bool = False
    pronoun: str | None = None  # "one" | "many"
    match: bool = False
    region: str | None = None
    point: list[float] | None = None
    home: bool = False
    unknown: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (
            self.colors or self.other_colors or self.noun or self.quant or self.pronoun
            or self.match or self.region or self.point or self.home
        )


@dataclass
class _Clause:
    verb: str | None
    verb_word: str | None
    obj: _Phrase
    prep: str | None
    target: _Phrase | None
    unknown: list[str]


# ----------------------------------------------------------------------------- lexing
def _normalise(text: str) -> tuple[list[str], list[list[float]]]:
    s = " " + text.lower().strip() + " "
    points: list[list[float]] = []

    def _pt(m: re.Match) -> str:
        points.append([float(m.group(1)), float(m.group(2))])
        return f" pt{len(points) - 1} "

    s = _POINT_RE.sub(_pt, s)
    s = s.replace("’", "'")
    s = re.sub(r"[^a-z0-9_,;'\s]", " ", s)
    s = re.sub(r"'s\b", " ", s)
    s = s.replace("'", "")
    s = re.sub(r"([,;])", r" \1 ", s)
    for pat, rep in _PHRASES:
        s = re.sub(pat, rep, s)
    return s.split(), points


def _phrase_of(tokens: list[str], points: list[list[float]]) -> _Phrase:
    p = _Phrase()
    for t in tokens:
        if t in KNOWN_COLORS:
            p.colors.append(t)
        elif t in OTHER_COLORS:
            p.other_colors.append(t)
        elif t in BLOCK_NOUNS:
            p.noun = p.noun or "block"
            p.plural = p.plural or t.endswith("s")
        elif t in BIN_NOUNS:
            p.noun = "bin"
            p.plural = p.plural or (t.endswith("s") and t != "box")
        elif t in OTHER_THINGS:
            p.noun = f"thing:{t}"
        elif t in QUANTS:
            p.quant = True
            if t == "everything":
                p.noun = p.noun or "block"
        elif t in PRONOUN_ONE:
            p.pronoun = "one"
        elif t in PRONOUN_MANY:
            p.pronoun = "many"
        elif t in MATCH:
            p.match = True
        elif t in REGION_WORDS:
            # "the back" is a region; "back" as in "put it back" is filler (handled by caller)
            p.region = REGION_WORDS[t]
        elif re.fullmatch(r"pt\d+", t):
            p.point = points[int(t[2:])]
        elif t in HOME_WORDS:
            p.home = True
        elif t in FILLER or t in {",", "and", "or"}:
            continue
        else:
            p.unknown.append(t)
    return p


def _split_clauses(tokens: list[str]) -> list[list[str]]:
    """Split at 'then', ';', and at ','/'and' when a new verb or a new destination follows."""
    clauses: list[list[str]] = []
    cur: list[str] = []

    def has_prep(ts: list[str]) -> bool:
        return any(t in PREPS for t in ts)

    def next_word(i: int) -> str | None:
        for t in tokens[i + 1:]:
            if t not in FILLER or t in VERBS:
                return t
        return None

    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == ";" or t in BOUNDARY:
            if cur:
                clauses.append(cur)
            cur = []
        elif t in {",", "and"}:
            nw = next_word(i)
            rest: list[str] = []
            for u in tokens[i + 1:]:
                if u in {",", ";", "and"} or u in BOUNDARY:
                    break
                rest.append(u)
            if nw is not None and (nw in VERBS or nw in BOUNDARY):
                if cur:
                    clauses.append(cur)
                cur = []
            elif cur and has_prep(cur) and has_prep(rest) and _verb_index(cur) is not None:
                clauses.append(cur)
                cur = []
            elif cur and not has_prep(cur) and has_prep(rest) and _verb_index(cur) is not None:
                # "pick up the red block, and the blue one ..." stays one clause
                cur.append(t)
            else:
                cur.append(t)
        else:
            cur.append(t)
        i += 1
    if cur:
        clauses.append(cur)
    return [c for c in clauses if any(t not in FILLER and t not in {",", "and"} for t in c)]


def _verb_index(tokens: list[str]) -> int | None:
    for i, t in enumerate(tokens):
        if t in VERBS:
            return i
    return None


def _parse_clause(tokens: list[str], points, prev_verb: str | None) -> _Clause:
    vi = _verb_index(tokens)
    unknown: list[str] = []
    if vi is None:
        verb, verb_word, rest = prev_verb, None, tokens
    else:
        verb_word = tokens[vi]
        verb = VERBS[verb_word]
        for t in tokens[:vi]:
            if t not in FILLER and t not in {",", "and", "to"}:
                unknown.append(t)
        rest = tokens[vi + 1:]
    # "put it back in the bin": 'back' before a preposition is filler, after one a region
    prep_i = next((i for i, t in enumerate(rest) if t in PREPS), None)
    src_i = next((i for i, t in enumerate(rest) if t in SOURCE_PREPS), None)
    if src_i is not None and (prep_i is None or src_i < prep_i):
        # "take the red block from the blue bin (and put it ...)"
        end = prep_i if prep_i is not None else len(rest)
        obj_toks = rest[:src_i]
        src = _phrase_of([t for t in rest[src_i + 1:end] if t not in SOURCE_PREPS], points)
        if src.unknown:
            unknown.extend(src.unknown)
        if src.other_colors or (src.noun or "").startswith("thing:"):
            raise _Refuse(_missing_message(src, "source"))
    else:
        end = prep_i if prep_i is not None else len(rest)
        obj_toks = rest[:end]
    obj_toks = [t for t in obj_toks if not (t == "back")]
    obj = _phrase_of(obj_toks, points)
    target = None
    prep = None
    if prep_i is not None:
        prep = rest[prep_i]
        tgt_toks = rest[prep_i + 1:]
        if any(t in PREPS for t in tgt_toks):
            # "on the left of the ..." etc.: only "X of the table" is understood
            extra = [t for t in tgt_toks if t in PREPS]
            unknown.extend(extra)
            tgt_toks = [t for t in tgt_toks if t not in PREPS]
        target = _phrase_of(tgt_toks, points)
        unknown.extend(target.unknown)
    unknown.extend(obj.unknown)
    return _Clause(verb, verb_word, obj, prep, target, unknown)


def _missing_message(p: _Phrase, role: str) -> str:
    if (p.noun or "").startswith("thing:"):
        word = p.noun.split(":", 1)[1]
        colour = (p.other_colors or p.colors or [""])[0]
        return f"there is no {(colour + ' ' + word).strip()} in the scene; only blocks and bins"
    colour = p.other_colors[0]
    noun = "bin" if p.noun == "bin" else "block"
    return f"there is no {colour} {noun} in the scene"


# ----------------------------------------------------------------------------- planner
class RulesPlanner:
    """Parse an instruction against a world state. Pure and deterministic."""

    name = "rules"

    def parse(self, task: str, world: WorldState) -> RulesResult:
        try:
            return self._parse(task, world)
        except _Refuse as e:
            msg = str(e)
            objs = ", ".join(world.object_names) or "none"
            bins = ", ".join(world.bin_names) or "none"
            return RulesResult(
                steps=[],
                confident=True,
                confidence=1.0,
                refuse=f"{msg} (objects: {objs}; bins: {bins})",
            )
        except _Unsure as e:
            return RulesResult(steps=[], confident=False, confidence=0.0, notes=[str(e)])

    # -- internals --------------------------------------------------------------
    def _parse(self, task: str, world: WorldState) -> RulesResult:
        if not task or not task.strip():
            raise _Unsure("empty instruction")
        if len(task) > 500:
            raise _Unsure("instruction too long for the rules planner")
        tokens, points = _normalise(task)
        clauses = _split_clauses(tokens)
        if not clauses:
            raise _Unsure("no instruction found")
        notes: list[str] = []
        unknown: list[str] = []
        steps: list[dict] = []
        held = world.held_object
        last: list[str] = [held] if held else []
        # symbolic locations so "all"/"each" skip blocks already where asked
        # (a bin name, "on <cube>", or None for on the table)
        in_bin = {
            o.name: o.in_bin or (f"on {o.on}" if o.on else None) or ("held" if o.held else None)
            for o in world.objects
        }
        prev_verb = None
        for toks in clauses:
            c = _parse_clause(toks, points, prev_verb)
            unknown.extend(c.unknown)
            if c.verb is None:
                # no verb anywhere so far: maybe only "home"
                if c.obj.home and c.obj.empty is False and not c.obj.colors:
                    c.verb = HOME
                else:
                    raise _Unsure(f"no action word in {' '.join(toks)!r}")
            prev_verb = c.verb if c.verb != HOME else prev_verb
            self._check_exists(c, world)
            held, last = self._emit(c, world, steps, held, last, in_bin, notes)
        if unknown:
            return RulesResult(
                steps=steps,
                confident=False,
                confidence=max(0.0, round(1.0 - 0.25 * len(unknown), 2)),
                notes=notes + [f"words not understood: {', '.join(dict.fromkeys(unknown))}"],
            )
        if not steps:
            return RulesResult(
                steps=[],
                confident=True,
                confidence=1.0,
                refuse=f"{NOTHING_TO_DO}: the scene already satisfies the instruction",
                notes=notes,
            )
        return RulesResult(steps=steps, confident=True, confidence=1.0, notes=notes)

    @staticmethod
    def _check_exists(c: _Clause, world: WorldState) -> None:
        for role, p in (("object", c.obj), ("target", c.target)):
            if p is None:
                continue
            if p.other_colors or (p.noun or "").startswith("thing:"):
                raise _Refuse(_missing_message(p, role))
            noun = p.noun
            if noun is None and p.colors:
                noun = "bin" if (role == "target" and c.prep in {"in", "into", "inside", "within"}
                                 and c.verb != STACK) else "block"
            for col in p.colors:
                if noun == "bin" and world.bin(f"{col}_bin") is None:
                    raise _Refuse(f"there is no {col} bin in the scene")
                if noun == "block" and world.object(f"{col}_block") is None:
                    raise _Refuse(f"there is no {col} block in the scene")

    def _objects(self, p: _Phrase, world: WorldState, last: list[str], held) -> list[str]:
        if p.noun == "bin":
            raise _Unsure("a bin cannot be moved")
        if p.region or p.point:
            raise _Unsure("expected a block, found a place")
        if p.pronoun == "one":
            if len(last) == 1:
                return list(last)
            raise _Unsure("'it' does not refer to one block")
        if p.pronoun == "many":
            if last:
                return list(last)
            raise _Unsure("'them' refers to nothing")
        present = world.object_names
        if p.colors:
            return [f"{c}_block" for c in dict.fromkeys(p.colors)]
        if p.quant or (p.plural and not p.match):
            return list(present)
        if p.noun == "block" and not p.match:
            if held and not p.plural:
                return [held]
            if len(present) == 1:
                return list(present)
            raise _Unsure("which block?")
        raise _Unsure("no block named")

    def _emit(self, c: _Clause, world, steps, held, last, in_bin, notes):
        verb = c.verb
        t = c.target
        if verb == HOME or (t is not None and t.home and not t.colors) or (
            c.obj.home and not c.obj.colors and c.obj.noun is None
        ):
            if c.obj.colors or (c.obj.noun and c.obj.noun != "bin" and verb != HOME):
                raise _Unsure("cannot take a block home")
            steps.append({"skill": "home"})
            return None, last
        if verb == SORT and (t is None or t.empty or (t.noun == "bin" and t.match)):
            objs = self._objects(c.obj, world, last, held) if not c.obj.empty else list(
                world.object_names
            )
            return self._to_matching(objs, world, steps, held, in_bin, notes, explicit=bool(
                c.obj.colors))
        if verb == PICK or (verb == MOVE and (t is None or t.empty) and c.verb_word in PICK_LIKE):
            if t is not None and not t.empty:
                # "lift the red block onto the blue one" reads as a move
                verb = MOVE
            else:
                objs = self._objects(c.obj, world, last, held)
                if len(objs) != 1:
                    raise _Unsure("can pick only one block at a time")
                if held == objs[0]:
                    return held, objs
                if held is not None:
                    raise _Unsure(f"the gripper would already hold {held}")
                steps.append({"skill": "pick", "object": objs[0]})
                return objs[0], objs
        if t is None or t.empty:
            raise _Unsure("no destination given")
        if verb == PUSH:
            objs = self._objects(c.obj, world, last, held)
            if len(objs) != 1:
                raise _Unsure("push one block at a time")
            if t.point is not None:
                target = list(t.point)
            elif t.region is not None and t.noun is None and not t.colors:
                target = t.region
            else:
                raise _Unsure("push needs a table region or an [x, y] point")
            steps.append({"skill": "push", "object": objs[0], "target": target})
            return held, objs
        # MOVE / STACK / SORT with a destination
        if t.noun == "bin" and t.match and not t.colors:
            objs = self._objects(c.obj, world, last, held)
            return self._to_matching(objs, world, steps, held, in_bin, notes, explicit=bool(
                c.obj.colors) and not c.obj.quant)
        target = self._target(t, c, world)
        if c.obj.match and not c.obj.colors:
            # "the block of the same colour" as the destination
            col = target.split("_", 1)[0]
            if world.object(f"{col}_block") is None:
                raise _Refuse(f"there is no {col} block in the scene")
            objs = [f"{col}_block"]
        else:
            objs = self._objects(c.obj, world, last, held)
        is_cube_target = world.object(target) is not None
        if is_cube_target and len(objs) != 1:
            raise _Unsure("stacking several blocks on one block is ambiguous")
        if is_cube_target and in_bin.get(target) is not None:
            raise _Unsure(f"{target} would not be on the table, so nothing can be stacked on it")
        if target in objs:
            raise _Unsure("cannot put a block on itself")
        is_region = world.region(target) is not None
        if is_region and len(objs) != 1:
            raise _Unsure("several blocks on one region would collide")
        quantified = c.obj.quant or (c.obj.plural and not c.obj.colors)
        moved = []
        for o in objs:
            # a goal the scene already satisfies is skipped, so replanning the same task
            # after a partial execution continues where it stopped instead of redoing it
            done_here = (world.bin(target) is not None and in_bin.get(o) == target) or (
                is_cube_target and in_bin.get(o) == f"on {target}"
            )
            if done_here and held != o:
                notes.append(f"{o} is already {'in' if world.bin(target) else 'on'} {target}")
                continue
            held = self._move(o, target, steps, held)
            if world.bin(target) is not None:
                in_bin[o] = target
            elif is_cube_target:
                in_bin[o] = f"on {target}"
            else:
                in_bin[o] = None
            moved.append(o)
        return held, moved or objs

    @staticmethod
    def _move(obj: str, target: str, steps: list[dict], held: str | None) -> None:
        if held != obj:
            if held is not None:
                raise _Unsure(f"the gripper would still hold {held}")
            steps.append({"skill": "pick", "object": obj})
        steps.append({"skill": "place", "target": target})
        return None

    def _to_matching(self, objs, world, steps, held, in_bin, notes, *, explicit: bool):
        moved = []
        for o in objs:
            col = o.split("_", 1)[0]
            b = f"{col}_bin"
            if world.bin(b) is None:
                if explicit:
                    raise _Refuse(f"there is no {col} bin for {o}")
                notes.append(f"{o} has no bin of its colour; left where it is")
                continue
            if in_bin.get(o) == b and not explicit:
                notes.append(f"{o} is already in {b}")
                continue
            held = self._move(o, b, steps, held)
            in_bin[o] = b
            moved.append(o)
        return held, moved or objs

    @staticmethod
    def _target(t: _Phrase, c: _Clause, world: WorldState) -> str:
        if t.point is not None:
            raise _Unsure("placing at an [x, y] point is not a place target")
        if t.pronoun or t.quant:
            raise _Unsure("unclear destination")
        if t.region and not t.colors and t.noun is None:
            return t.region
        if len(set(t.colors)) > 1:
            raise _Unsure("more than one destination")
        noun = t.noun
        if noun is None and t.colors:
            noun = "bin" if (c.prep in {"in", "into", "inside", "within"} and c.verb != STACK) else (
                "block")
        if noun == "bin":
            if not t.colors:
                if len(world.bins) == 1:
                    return world.bins[0].name
                raise _Unsure("which bin?")
            return f"{t.colors[0]}_bin"
        if noun == "block":
            if not t.colors:
                raise _Unsure("which block?")
            return f"{t.colors[0]}_block"
        raise _Unsure("no destination understood")


_DEFAULT = RulesPlanner()


def parse(task: str, world: WorldState) -> RulesResult:
    """Parse ``task`` against ``world`` with the default rules planner."""
    return _DEFAULT.parse(task, world)
