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
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

import numpy as np

from bridge import lexicon as L
from sim import scene
from sim.world import WorldState
from skills.base import cube_of
from skills.place import MAX_TOWER

# ----------------------------------------------------------------------------- vocabulary
# The words are the shared lexicon's (bridge.lexicon): one definition for the rules, the
# understanding layer and the bridge's grounding check.
BLOCK_NOUNS = set(L.BLOCK_NOUNS)
BIN_NOUNS = set(L.RULES_BIN_NOUNS)
KNOWN_COLORS = set(scene.CUBE_COLORS) | set(scene.BIN_COLORS)
OTHER_COLORS = set(L.OTHER_COLORS)
#: Shades of the scene's own colours (navy, golden, maroon...) are neither refused as absent
#: colours nor guessed: they are words the rules do not know, so a model is asked.
OTHER_THINGS = set(L.OTHER_THINGS)
REGION_WORDS = dict(L.REGION_WORDS)
# verb -> category
MOVE, STACK, PUSH, PICK, HOME, SORT = "move", "stack", "push", "pick", "home", "sort"
VERBS = {
    **{
        v: MOVE
        for v in (
            "put",
            "place",
            "drop",
            "move",
            "set",
            "bring",
            "transfer",
            "deposit",
            "toss",
            "throw",
            "carry",
            "relocate",
            "store",
            "stow",
            "load",
            "get",
            "take",
            "lay",
            "insert",
            "return",
            "dump",
            "position",
            "shift",
        )
    },
    **{v: STACK for v in ("stack", "pile")},
    **{v: PUSH for v in ("push", "slide", "shove", "nudge", "drag", "scoot", "slip")},
    **{v: PICK for v in ("pick", "grab", "lift", "grasp", "raise", "hold", "seize", "fetch")},
    **{v: SORT for v in ("sort", "organize", "organise", "tidy")},
    "home": HOME,
    "reset": HOME,
    "park": HOME,
    # "I need / I want / I'd like X in Y" (normalised to "want", see _PHRASES)
    "want": MOVE,
    # verbs that follow their object: "the red block goes in the blue bin"
    "goes": MOVE,
    "go": MOVE,
    "belongs": MOVE,
    "belong": MOVE,
}
#: Verbs whose object comes before them ("X goes in Y", "X should be on Y").
POSTFIX_VERBS = {"goes", "go", "belongs", "belong"}
#: Move verbs that mean "pick" when no destination follows ("take the red block").
PICK_LIKE = {"take", "get", "grab", "fetch", "lift", "raise"}
PREPS = {"in", "into", "inside", "to", "onto", "on", "at", "toward", "towards", "over", "within"}
SOURCE_PREPS = {"from", "out"}
QUANTS = {"all", "every", "each", "both", "everything", "any"}
#: Marks the blocks a quantifier leaves out ("every block except the red one").
EXCEPT = "except"
PRONOUN_ONE = {"it", "this"}
PRONOUN_MANY = {"them", "those", "these", "they"}
MATCH = {"same", "matching", "corresponding", "its", "their", "own", "respective", "match"}
HOME_WORDS = {"home", "rest", "start", "starting", "initial", "neutral"}
FILLER = {
    "the",
    "a",
    "an",
    "please",
    "can",
    "could",
    "would",
    "will",
    "you",
    "now",
    "first",
    "also",
    "carefully",
    "gently",
    "slowly",
    "quickly",
    "robot",
    "kindly",
    "i",
    "need",
    "like",
    "me",
    "ahead",
    "up",
    "thanks",
    "pls",
    "plz",
    "hi",
    "hello",
    "down",
    "of",
    "side",
    "table",
    "s",
    "there",
    "one",
    "ones",
    "color",
    "colors",
    "colored",
    "by",
    "just",
    "with",
    "your",
    "gripper",
    "arm",
    "spot",
    "position",
    "location",
    "area",
    "part",
    "ok",
    "okay",
    "hey",
    "let",
    "lets",
    "us",
    "should",
    "must",
    "then",
    "and",
    "too",
    "as",
    "well",
    "back",
    "again",
    "pose",
    "single",
    "block's",
    "is",
    "that",
    "which",
    "surface",
    "top",
    "away",
}
#: The bridge bounds refusal text; longer reasons are cut, not rejected.
MAX_REFUSAL = 200
#: Prefix of the refusal emitted when the world already satisfies the instruction; the
#: closed loop reads it as success, not as a refusal.
NOTHING_TO_DO = "nothing to do"
#: Words that end a clause (the next clause may omit its verb).
BOUNDARY = {"then", "afterwards", "finally", "lastly", "next", "after"}
#: The articulated scene's devices (only where the world has them: on the tabletop scene a
#: drawer is another thing that is not there, as before). Device name -> words for it.
DEVICE_NOUNS = {"drawer": "drawer", "button": "button", "light": "light", "lamp": "light"}
#: Device clause verbs -> what they do ("on"/"off" decide a turn/switch of the light).
DEVICE_VERBS = {
    "open": "open",
    "close": "close",
    "shut": "close",
    "press": "press",
    "push": "press",
    "hit": "press",
    "click": "press",
    "tap": "press",
    "toggle": "press",
    "turn": "turn",
    "switch": "turn",
}
#: Words a device clause may hold besides its verb, its noun and filler.
DEVICE_EXTRA = {"on", "off", "up", "please", ",", "and"}

_POINT_RE = re.compile(
    r"[\[(]\s*x?\s*=?\s*(-?\d*\.?\d+)\s*(?:m\b)?\s*,\s*y?\s*=?\s*(-?\d*\.?\d+)\s*(?:m\b)?\s*[\])]"
)
_PHRASES: list[tuple[str, str]] = [
    # politeness and wishes: "I'd like you to put ...", "hey robot, I need X in Y please"
    (r"\b(?:(?:i|we) (?:would like|want|need)|id like|wed like) (?:you )?to\b", " "),
    (r"\bthank(?:s| you)\b", " "),
    (r"\bfor me\b", " "),
    (r"\bgo ahead and\b", " "),
    (r"\bgo and\b", " "),
    (r"\b(?:(?:i|we) (?:would like|want|need)|id like|wed like)\b", " want "),
    # "X should be / needs to be / has to go in Y" reads as "X goes in Y"
    (
        r"\b(?:should|must|needs? to|has to|have to|ought to|(?:is|are) supposed to) "
        r"(?:be|go|end up)\b",
        " goes ",
    ),
    (r"\bends? up\b", " goes "),
    # "slide it over to the middle", "move it across to the left"
    (r"\b(?:over|across|right|all the way) (to|onto|into|towards?)\b", r" \1 "),
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
    # what is left of "the rest" after the home phrases is the remaining blocks, not home
    (r"\bthe rest\b", " the others "),
    # "every block on the table": the blocks not yet put away, which "every block" plans
    (
        r"\b((?:every|each|all(?:\s+the)?)\s+(?:blocks?|cubes?|bricks?))\s+(?:that\s+is\s+|that's\s+)?on\s+the\s+table\b",
        r"\1",
    ),
    (r"\bcolour", " color"),
    (r"\bblock's\b", " block "),
    # exclusions: "except (for)", "other than", "apart from", "excluding", and "but" after
    # a quantifier ("all blocks but the blue one"; elsewhere "but" is not understood)
    (r"\b(?:except for|except|other than|apart from|excluding|besides)\b", " except "),
    (r"\b((?:all|every|each|everything|any)\b(?:\s+(?!but\b)[a-z]+){0,2}?)\s+but\b", r"\1 except"),
]


@dataclass
class RulesResult:
    """What the rules planner made of an instruction."""

    steps: list[dict]
    confident: bool
    confidence: float
    refuse: str | None = None
    notes: list[str] = field(default_factory=list)
    #: What the instruction asks to hold at the end (goal grammar), when every clause can
    #: be said in it (a push to an [x, y] point cannot); None otherwise.
    goal: list[str] | None = None
    #: Why a well-understood instruction cannot be done with these skills (an unsure
    #: result's reason that is about the world, not the words); None otherwise.
    infeasible: str | None = None

    def to_dict(self) -> dict:
        out: dict = {"steps": list(self.steps)}
        if self.refuse:
            out["refuse"] = self.refuse[:MAX_REFUSAL]
        elif self.goal is not None and self.confident:
            out["goal"] = list(self.goal)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))


class _Refuse(Exception):
    pass


class _Unsure(Exception):
    pass


class _Infeasible(_Unsure):
    """Understood, but no skill can do it here (a tower of three: ``place`` stacks only
    onto a cube on the table). Unsure for free text, whose parse may be wrong, so the model
    is asked; the model's own command grounded to this is refused with the reason."""


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
    #: colours after "except": blocks a quantifier leaves out
    excluded: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (
            self.colors
            or self.other_colors
            or self.noun
            or self.quant
            or self.pronoun
            or self.match
            or self.region
            or self.point
            or self.home
        )


@dataclass
class _Clause:
    verb: str | None
    verb_word: str | None
    obj: _Phrase
    prep: str | None
    target: _Phrase | None
    unknown: list[str]
    #: a "from/out of" phrase naming a thing rather than a block or bin ("out of the
    #: drawer"): judged against the world (the drawer exists only in the articulated scene)
    source_thing: _Phrase | None = None


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


def _phrase_of(tokens: list[str], points: list[list[float]]) -> _Phrase:  # noqa: C901 - token table
    p = _Phrase()
    excluding = False
    for t in tokens:
        if t == EXCEPT:
            excluding = True
        elif excluding and t in KNOWN_COLORS:
            p.excluded.append(t)
        elif excluding and t in OTHER_COLORS:
            p.other_colors.append(t)
        elif t in KNOWN_COLORS:
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


def _content(t: str) -> bool:
    """A word that carries meaning (not filler, punctuation or a joining word)."""
    return t not in FILLER and t not in {",", "and", "to"}


def _split_clauses(tokens: list[str]) -> list[list[str]]:
    """Split at 'then', ';', and at ','/'and' when a new verb or a new destination follows;
    then join a fronted destination to its clause ("into the green bin, put the red block")."""
    clauses: list[list[str]] = []
    cur: list[str] = []
    for i, t in enumerate(tokens):
        if t == ";" or t in BOUNDARY:
            clauses.append(cur)
            cur = []
        elif t in {",", "and"} and cur and _starts_new_clause(cur, tokens[i + 1 :]):
            clauses.append(cur)
            cur = []
        else:
            cur.append(t)
    clauses.append(cur)
    clauses = [c for c in clauses if any(t not in FILLER and t not in {",", "and"} for t in c)]
    return _join_fronted_destinations(clauses)


def _starts_new_clause(cur: list[str], after: list[str]) -> bool:
    """At a ',' or 'and' between ``cur`` and ``after``: does a new clause begin?"""
    nw = next((t for t in after if t not in FILLER or t in VERBS), None)
    if nw is not None and (nw in VERBS or nw in BOUNDARY):
        return True
    rest: list[str] = []
    for u in after:
        if u in {",", ";", "and"} or u in BOUNDARY:
            break
        rest.append(u)
    # "put the red block in the red bin and the blue block in the blue bin": the verb is
    # elided in the second clause; "pick up the red block, and the blue one" stays one
    return _has_prep(cur) and _has_prep(rest) and _verb_index(cur) is not None


def _has_prep(tokens: list[str]) -> bool:
    return any(t in PREPS for t in tokens)


def _fronted_prep(tokens: list[str]) -> int | None:
    """Index of the verb when ``tokens`` open with a destination ("in the blue bin, place
    the green block"): a preposition first, a verb later, no preposition after the verb."""
    first = next((i for i, t in enumerate(tokens) if _content(t) or t == "to"), None)
    vi = _verb_index(tokens)
    if first is None or tokens[first] not in PREPS or vi is None or vi < first:
        return None
    return None if _has_prep(tokens[vi + 1 :]) else vi


def _join_fronted_destinations(clauses: list[list[str]]) -> list[list[str]]:
    """A verbless clause that is only a destination joins the verb clause after it."""
    out: list[list[str]] = []
    i = 0
    while i < len(clauses):
        c = clauses[i]
        lead = next((t for t in c if _content(t)), None)
        if i + 1 < len(clauses) and _verb_index(c) is None and lead == EXCEPT:
            # "except for the blue block, move every cube ...": the exclusion goes last
            out.append(clauses[i + 1] + c)
            i += 2
            continue
        if (
            i + 1 < len(clauses)
            and _verb_index(c) is None
            and _fronted_prep(c + clauses[i + 1]) is not None
        ):
            out.append(c + clauses[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return out


def _verb_index(tokens: list[str]) -> int | None:
    """The clause's verb. A postfix verb ("goes") counts only after some content word: in
    "go put the red block ..." the verb is "put"."""
    for i, t in enumerate(tokens):
        if t in POSTFIX_VERBS and not any(_content(u) for u in tokens[:i]):
            continue
        if t in VERBS:
            return i
    return None


def _clause_words(tokens: list[str]) -> tuple[str | None, list[str], list[str]]:
    """(verb word, words after it in reading order, words before it that are not understood).

    Reorders the two inverted forms into "verb object prep target": a postfix verb
    ("the red block goes in the blue bin") and a fronted destination ("into the green bin,
    put the red block")."""
    vi = _verb_index(tokens)
    if vi is None:
        return None, tokens, []
    verb_word = tokens[vi]
    before, after = tokens[:vi], tokens[vi + 1 :]
    if verb_word in POSTFIX_VERBS:
        return verb_word, before + after, []
    if _fronted_prep(tokens) is not None:
        return verb_word, after + before, []
    unknown = [t for t in before if _content(t) and t not in POSTFIX_VERBS]
    return verb_word, after, unknown


def _parse_clause(tokens: list[str], points: list[list[float]], prev_verb: str | None) -> _Clause:
    verb_word, rest, unknown = _clause_words(tokens)
    source_thing = None
    verb = VERBS[verb_word] if verb_word is not None else prev_verb
    prep_i = next((i for i, t in enumerate(rest) if t in PREPS), None)
    src_i = next((i for i, t in enumerate(rest) if t in SOURCE_PREPS), None)
    end = prep_i if prep_i is not None else len(rest)
    if src_i is not None and src_i < end:
        # "take the red block from the blue bin (and put it ...)"
        obj_toks = rest[:src_i]
        src = _phrase_of([t for t in rest[src_i + 1 : end] if t not in SOURCE_PREPS], points)
        unknown.extend(src.unknown)
        if src.noun == "thing:drawer" and not src.colors and not src.other_colors:
            source_thing = src
        elif src.other_colors or (src.noun or "").startswith("thing:"):
            raise _Refuse(_missing_message(src, "source"))
    else:
        obj_toks = rest[:end]
    # "put it back in the bin": 'back' before a preposition is filler, after one a region
    obj = _phrase_of([t for t in obj_toks if t != "back"], points)
    target = None
    prep = None
    if prep_i is not None:
        prep = rest[prep_i]
        tgt_toks = rest[prep_i + 1 :]
        if _has_prep(tgt_toks):
            # "on the left of the ..." etc.: only "X of the table" is understood
            unknown.extend(t for t in tgt_toks if t in PREPS)
            tgt_toks = [t for t in tgt_toks if t not in PREPS]
        target = _phrase_of(tgt_toks, points)
        unknown.extend(target.unknown)
        if target.excluded:
            # "put all blocks in the green bin except the red one": the exclusion is the
            # object's, wherever it is said
            obj.excluded.extend(target.excluded)
            target.excluded = []
    unknown.extend(obj.unknown)
    return _Clause(verb, verb_word, obj, prep, target, unknown, source_thing)


def _missing_message(p: _Phrase, role: str) -> str:
    if p.noun is not None and p.noun.startswith("thing:"):
        word = p.noun.split(":", 1)[1]
        colour = (p.other_colors or p.colors or [""])[0]
        return f"there is no {(colour + ' ' + word).strip()} in the scene; only blocks and bins"
    colour = p.other_colors[0]
    noun = "bin" if p.noun == "bin" else "block"
    return f"there is no {colour} {noun} in the scene"


def _tower_limit(plan: _Plan, target: str, movers: list[str]) -> str | None:
    """Why nothing can be stacked on ``target`` where the plan leaves it, or None: a tower
    must stand on the table, stop at ``MAX_TOWER`` cubes, and have ``target`` on top."""
    on_it = [o for o, w in plan.where.items() if w == f"on {target}" and o not in movers]
    if on_it:
        return f"{on_it[0]} would be on {target}, so nothing else can be stacked on it"
    levels, cur, seen = 1, target, {target}
    while (w := plan.where.get(cur)) is not None:
        if not w.startswith("on "):
            where = "held" if w == "held" else f"in {w}"
            return f"{cur} would be {where}, not on the table, so no tower can stand on it"
        cur = w[3:]
        if cur in seen:
            break
        seen.add(cur)
        levels += 1
    if levels + 1 > MAX_TOWER:
        return f"{target} would top a tower of {levels}; towers stop at {MAX_TOWER} cubes"
    return None


def _drawer_target(t: _Phrase, plan: _Plan) -> str | None:
    """The drawer, when a destination names it ("in the drawer", or "in it" right after a
    clause about the drawer); None for any other destination."""
    d = plan.world.drawer
    if d is None:
        return None
    if t.pronoun == "one" and plan.last_device == "drawer":
        if t.colors or t.noun is not None:
            raise _Unsure("unclear destination")
        return d.name
    if t.noun == "thing:drawer" and not t.colors:
        return d.name
    return None


def _is_drawer(world: WorldState, name: str) -> bool:
    return name in world.drawer_names


def _device_action(tokens: list[str]) -> str | None:
    """What a clause about the drawer, the button or the light asks: "open", "close",
    "press", "light_on" or "light_off"; None when it names no device or names a block or a
    bin too (a block put *into* the drawer is a move). A device clause with words the rules
    do not know is unsure, so a model reads it."""
    words = [t for t in tokens if t not in FILLER]
    nouns = {DEVICE_NOUNS[t] for t in words if t in DEVICE_NOUNS}
    if not nouns or any(
        t in BLOCK_NOUNS or t in BIN_NOUNS or t in KNOWN_COLORS or t in PRONOUN_ONE for t in words
    ):
        return None
    verbs = [DEVICE_VERBS[t] for t in words if t in DEVICE_VERBS]
    known = DEVICE_NOUNS.keys() | DEVICE_VERBS.keys() | DEVICE_EXTRA
    unknown = [t for t in words if t not in known]
    if len(nouns) != 1 or len(verbs) != 1 or unknown:
        raise _Unsure(f"a request about the {'/'.join(sorted(nouns))} the rules do not read")
    noun, verb = nouns.pop(), verbs[0]
    if noun == "drawer" and verb in ("open", "close"):
        return verb
    if noun == "button" and verb == "press":
        return "press"
    if noun == "light" and verb == "turn" and ("on" in words) != ("off" in words):
        return "light_on" if "on" in words else "light_off"
    if noun == "light" and "toggle" in words:
        return "press"
    raise _Unsure(f"{verb} the {noun}: not something the rules read")


def _is_container_prep(c: _Clause) -> bool:
    """Whether a bare colour after the preposition names a bin ("put red into green")."""
    return c.prep in {"in", "into", "inside", "within"} and c.verb != STACK


# ----------------------------------------------------------------------------- planner
@dataclass
class _Plan:
    """The plan being built and the symbolic scene it leaves behind, clause by clause."""

    world: WorldState
    steps: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    held: str | None = None
    #: the blocks the previous clause named or moved: what "it"/"them" refer to
    last: list[str] = field(default_factory=list)
    #: where each block is, symbolically: a bin name, "on <cube>", "held", or None (table);
    #: so "all"/"each" skip blocks already where asked
    where: dict[str, str | None] = field(default_factory=dict)
    #: the goal so far: per block, where the instruction wants it last (insertion order)
    goal: dict[str, str] = field(default_factory=dict)
    home: bool = False
    #: False once a clause asks for something the goal grammar cannot say
    expressible: bool = True
    #: blocks a step of this plan has moved (a push "already done" is judged before)
    moved: set[str] = field(default_factory=set)
    #: the articulated scene's devices as the plan leaves them (None: not in this scene, or
    #: a drawer part way out, which is neither open nor closed)
    drawer_open: bool | None = None
    light: bool | None = None
    #: goals about the devices ("open(drawer)", "light_on"), after the blocks' goals
    device_goal: dict[str, str] = field(default_factory=dict)
    #: the device the previous clause was about ("open the drawer and put X in it")
    last_device: str | None = None

    @classmethod
    def start(cls, world: WorldState) -> _Plan:
        held = world.held_object
        where = {
            o.name: o.in_bin or (f"on {o.on}" if o.on else None) or ("held" if o.held else None)
            for o in world.objects
        }
        d = world.drawer
        for o in world.objects:
            if d is not None and o.name in d.contents:
                where[o.name] = d.name
        return cls(
            world=world,
            held=held,
            last=[held] if held else [],
            where=where,
            # open, closed, or None: not in the scene, or part way out (neither)
            drawer_open=None if d is None or not (d.is_open or d.is_closed) else d.is_open,
            light=world.light_on,
        )

    def want(self, obj: str, literal: str) -> None:
        """The instruction asks ``literal`` about ``obj`` at the end. A later clause about the
        same block replaces a ``held`` (picking is a means); two different destinations are
        a contradiction, declined rather than resolved by whichever comes last."""
        prev = self.goal.pop(obj, None)
        if prev is not None and prev != literal and not prev.startswith("held("):
            raise _Refuse(
                f"the instruction asks for {obj} to end in two places: {prev} and {literal}"
            )
        self.goal[obj] = literal

    def goal_list(self) -> list[str] | None:
        if not self.expressible:
            return None
        # a region is an area: several blocks may end at one, side by side (the place and
        # push skills choose the spot; a full region is their precondition, with its reason)
        out = list(self.goal.values()) + list(self.device_goal.values())
        return out + (["home"] if self.home else [])

    def move(self, obj: str, target: str) -> None:
        """pick (unless already held) and place ``obj`` on ``target``."""
        if self.held != obj:
            if self.held is not None:
                raise _Unsure(f"the gripper would still hold {self.held}")
            self.steps.append({"skill": "pick", "object": obj})
        self.steps.append({"skill": "place", "target": target})
        self.held = None
        self.moved.add(obj)
        if self.world.bin(target) is not None or _is_drawer(self.world, target):
            self.where[obj] = target
        elif self.world.object(target) is not None:
            self.where[obj] = f"on {target}"
        else:
            self.where[obj] = None


class RulesPlanner:
    """Parse an instruction against a world state. Pure and deterministic."""

    name = "rules"

    def parse(self, task: str, world: WorldState) -> RulesResult:
        """What the instruction means here. An unsure parse is retried once on the text with
        its typos repaired (:mod:`planner.spelling`: "stcak red on grene"), so a slip in a
        plain command needs no model."""
        r = self._parse_once(task, world)
        if r.confident or not task:
            return r
        from planner import spelling

        fixed = spelling.repair(task)
        if fixed == task:
            return r
        r2 = self._parse_once(fixed, world)
        if not r2.confident:
            return r
        r2.notes.append(f"read as: {fixed}"[:200])
        return r2

    def _parse_once(self, task: str, world: WorldState) -> RulesResult:
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
            return RulesResult(
                steps=[],
                confident=False,
                confidence=0.0,
                notes=[str(e)],
                infeasible=str(e) if isinstance(e, _Infeasible) else None,
            )

    # -- internals --------------------------------------------------------------
    def _parse(self, task: str, world: WorldState) -> RulesResult:
        if not task or not task.strip():
            raise _Unsure("empty instruction")
        if len(task) > 500:
            raise _Unsure("instruction too long for the rules planner")
        low = task.lower()
        if re.search(r"colou?r|\blike\b|\bmatch", low) and any(
            w in OTHER_THINGS for w in re.findall(r"[a-z]+", low)
        ):
            # "the banana-coloured one", "the block like a cherry": a thing that names a
            # colour, not a missing object; the rules would refuse it, a model can read it
            raise _Unsure("a thing named for its colour")
        if re.search(
            r"\bsame\b.*\bas\b|\bsame (?:bin|box|basket|container|bucket|tub|crate|one)", low
        ):
            # "the same bin as the green block", "... and the yellow one in the same bin":
            # references to where something is or went
            raise _Unsure("a comparison ('the same ... as') the rules do not resolve")
        tokens, points = _normalise(task)
        clauses = _split_clauses(tokens)
        if not clauses:
            raise _Unsure("no instruction found")
        plan = _Plan.start(world)
        unknown: list[str] = []
        prev_verb = None
        for toks in clauses:
            # on a scene without the device the request is refused with that reason
            action = _device_action(toks)
            if action is not None:
                self._emit_device(action, plan)
                continue
            c = _parse_clause(toks, points, prev_verb)
            unknown.extend(c.unknown)
            if c.verb is None:
                # no verb anywhere so far: maybe only "home"
                if c.obj.home and not c.obj.colors:
                    c.verb = HOME
                else:
                    raise _Unsure(f"no action word in {' '.join(toks)!r}")
            prev_verb = c.verb if c.verb != HOME else prev_verb
            self._check_exists(c, world)
            plan.last = self._emit(c, plan)
            plan.last_device = None
        if plan.steps:
            plan.steps = _repair_steps(plan.steps, world, plan.notes)
        if unknown:
            return RulesResult(
                steps=plan.steps,
                confident=False,
                confidence=max(0.0, round(1.0 - 0.25 * len(unknown), 2)),
                notes=plan.notes + [f"words not understood: {', '.join(dict.fromkeys(unknown))}"],
            )
        goal = plan.goal_list()
        if not plan.steps:
            return RulesResult(
                steps=[],
                confident=True,
                confidence=1.0,
                refuse=f"{NOTHING_TO_DO}: the scene already satisfies the instruction",
                notes=plan.notes,
                goal=goal,
            )
        return RulesResult(
            steps=plan.steps, confident=True, confidence=1.0, notes=plan.notes, goal=goal
        )

    @staticmethod
    def _check_exists(c: _Clause, world: WorldState) -> None:
        if c.source_thing is not None and world.drawer is None:
            raise _Refuse(_missing_message(c.source_thing, "source"))
        for role, p in (("object", c.obj), ("target", c.target)):
            if p is None:
                continue
            if p.noun == "thing:drawer" and world.drawer is not None and not p.other_colors:
                if role == "target":
                    continue  # a block goes into the drawer
                raise _Unsure("the drawer itself cannot be moved")
            if p.other_colors or (p.noun or "").startswith("thing:"):
                raise _Refuse(_missing_message(p, role))
            noun = p.noun
            if noun is None and p.colors:
                noun = "bin" if role == "target" and _is_container_prep(c) else "block"
            for col in p.excluded:
                if world.object(f"{col}_block") is None:
                    raise _Refuse(f"there is no {col} block in the scene")
            for col in p.colors:
                if noun == "bin" and world.bin(f"{col}_bin") is None:
                    raise _Refuse(f"there is no {col} bin in the scene")
                if noun == "block" and world.object(f"{col}_block") is None:
                    raise _Refuse(f"there is no {col} block in the scene")

    @staticmethod
    def _objects(p: _Phrase, plan: _Plan) -> list[str]:
        """The blocks a phrase names."""
        if p.noun == "bin":
            raise _Unsure("a bin cannot be moved")
        if p.region or p.point:
            raise _Unsure("expected a block, found a place")
        if p.excluded and not (p.quant or p.plural):
            raise _Unsure("'except' without 'all' or 'every'")
        if p.excluded and p.colors:
            raise _Unsure("both named blocks and exclusions")
        if p.pronoun == "one":
            if len(plan.last) == 1:
                return list(plan.last)
            raise _Unsure("'it' does not refer to one block")
        if p.pronoun == "many":
            if plan.last:
                return list(plan.last)
            raise _Unsure("'them' refers to nothing")
        present = plan.world.object_names
        if p.colors:
            return [f"{c}_block" for c in dict.fromkeys(p.colors)]
        if p.quant or (p.plural and not p.match):
            left = [o for o in present if o.split("_", 1)[0] not in p.excluded]
            if not left:
                raise _Refuse("no block is left after the exclusions")
            return left
        if p.noun == "block" and not p.match:
            if plan.held and not p.plural:
                return [plan.held]
            if len(present) == 1:
                return list(present)
            raise _Unsure("which block?")
        raise _Unsure("no block named")

    # -- one clause -> steps; each returns the blocks "it"/"them" refer to next ---------
    def _emit(self, c: _Clause, plan: _Plan) -> list[str]:
        t = c.target
        if self._is_home(c):
            return self._emit_home(c, plan)
        if c.verb == SORT and (t is None or t.empty or (t.noun == "bin" and t.match)):
            objs = self._objects(c.obj, plan) if not c.obj.empty else list(plan.world.object_names)
            return self._to_matching(objs, plan, explicit=bool(c.obj.colors))
        if t is None or t.empty:
            if c.verb == PICK or (c.verb == MOVE and c.verb_word in PICK_LIKE):
                return self._emit_pick(c, plan)
            raise _Unsure("no destination given")
        if c.verb == PUSH:
            return self._emit_push(c, t, plan)
        # MOVE / STACK / SORT with a destination ("lift the red block onto the blue one"
        # reads as a move too)
        return self._emit_move(c, t, plan)

    @staticmethod
    def _is_home(c: _Clause) -> bool:
        t = c.target
        return (
            c.verb == HOME
            or (t is not None and t.home and not t.colors)
            or (c.obj.home and not c.obj.colors and c.obj.noun is None)
        )

    @staticmethod
    def _emit_device(action: str, plan: _Plan) -> None:
        """open_drawer / close_drawer / press_button for a device clause, skipped (with a
        note) where the plan already leaves the device so."""
        w = plan.world
        plan.last_device = "drawer" if action in ("open", "close") else None  # "... in it"
        if action in ("open", "close"):
            if w.drawer is None:
                raise _Refuse("there is no drawer in the scene; only blocks and bins")
            want = action == "open"
            lit = f"{'open' if want else 'closed'}({w.drawer.name})"
            plan.device_goal[w.drawer.name] = lit
            if plan.drawer_open == want:
                plan.notes.append(f"the drawer is already {'open' if want else 'closed'}")
                return
            if plan.held is not None:
                raise _Unsure(f"the gripper would still hold {plan.held}")
            plan.steps.append({"skill": f"{action}_drawer"})
            plan.drawer_open = want
            return
        if plan.light is None:
            raise _Refuse("there is no button or light in the scene; only blocks and bins")
        want = {"light_on": True, "light_off": False}.get(action, not plan.light)
        plan.device_goal["light"] = "light_on" if want else "not light_on"
        if plan.light == want:
            plan.notes.append(f"the light is already {'on' if want else 'off'}")
            return
        if plan.held is not None:
            raise _Unsure(f"the gripper would still hold {plan.held}")
        plan.steps.append({"skill": "press_button"})
        plan.light = want

    @staticmethod
    def _emit_home(c: _Clause, plan: _Plan) -> list[str]:
        if c.obj.colors or (c.obj.noun and c.obj.noun != "bin" and c.verb != HOME):
            raise _Unsure("cannot take a block home")
        # home opens the gripper: a block picked earlier is not held at the end
        for obj in [o for o, lit in plan.goal.items() if lit.startswith("held(")]:
            del plan.goal[obj]
        plan.home = True
        w = plan.world
        if not plan.steps and plan.held is None and _at_home(w):
            plan.notes.append("the arm is already at home")
            return plan.last
        plan.steps.append({"skill": "home"})
        plan.held = None
        return plan.last

    def _emit_pick(self, c: _Clause, plan: _Plan) -> list[str]:
        objs = self._objects(c.obj, plan)
        if len(objs) != 1:
            raise _Unsure("can pick only one block at a time")
        plan.want(objs[0], f"held({objs[0]})")
        if plan.held == objs[0]:
            return objs
        if plan.held is not None:
            raise _Unsure(f"the gripper would already hold {plan.held}")
        plan.steps.append({"skill": "pick", "object": objs[0]})
        plan.held = objs[0]
        plan.moved.add(objs[0])
        return objs

    def _emit_push(self, c: _Clause, t: _Phrase, plan: _Plan) -> list[str]:
        """``t`` is ``c.target``, passed apart because :meth:`_emit` has ruled out a missing one."""
        objs = self._objects(c.obj, plan)
        if len(objs) != 1:
            raise _Unsure("push one block at a time")
        target: list[float] | str
        if t.point is not None:
            target = list(t.point)
        elif t.region is not None and t.noun is None and not t.colors:
            target = t.region
        else:
            raise _Unsure("push needs a table region or an [x, y] point")
        o = objs[0]
        if isinstance(target, str):
            plan.want(o, f"at({o}, {target})")
            if o not in plan.moved and plan.held != o and plan.world.in_region(o, target):
                # already there: a push would be rejected as no_effect and end the run
                plan.notes.append(f"{o} is already at {target}")
                return objs
        else:
            plan.expressible = False  # no predicate for an [x, y] point
            plan.goal.pop(o, None)
        plan.steps.append({"skill": "push", "object": o, "target": target})
        plan.moved.add(o)
        plan.where[o] = None
        return objs

    def _emit_move(self, c: _Clause, t: _Phrase, plan: _Plan) -> list[str]:
        """``t`` is ``c.target``, passed apart because :meth:`_emit` has ruled out a missing one."""
        world = plan.world
        if t.noun == "bin" and t.match and not t.colors:
            objs = self._objects(c.obj, plan)
            return self._to_matching(objs, plan, explicit=bool(c.obj.colors) and not c.obj.quant)
        target = self._target(t, c, plan)
        if c.obj.match and not c.obj.colors:
            # "the block of the same colour" as the destination
            col = target.split("_", 1)[0]
            if world.object(f"{col}_block") is None:
                raise _Refuse(f"there is no {col} block in the scene")
            objs = [f"{col}_block"]
        else:
            objs = self._objects(c.obj, plan)
        is_cube_target = world.object(target) is not None
        if is_cube_target and len(objs) != 1:
            raise _Unsure("stacking several blocks on one block is ambiguous")
        if is_cube_target:
            why = _tower_limit(plan, target, objs)
            if why is not None:
                raise _Infeasible(why)
        if objs == [target]:  # "stack the red block on the red block": clear, and impossible
            raise _Infeasible(f"{target} cannot be stacked on itself")
        if target in objs:
            raise _Unsure("cannot put a block on itself")
        moved = []
        into_drawer = _is_drawer(world, target)
        lit = (
            "in({o}, {t})"
            if world.bin(target) is not None or into_drawer
            else "on({o}, {t})"
            if is_cube_target
            else "at({o}, {t})"
        )
        for o in objs:
            plan.want(o, lit.format(o=o, t=target))
            # a goal the scene already satisfies is skipped, so replanning the same task
            # after a partial execution continues where it stopped instead of redoing it
            done_here = (
                ((world.bin(target) is not None or into_drawer) and plan.where.get(o) == target)
                or (is_cube_target and plan.where.get(o) == f"on {target}")
                or (
                    world.region(target) is not None
                    and o not in plan.moved
                    and world.in_region(o, target)
                )
            )
            if done_here and plan.held != o:
                plan.notes.append(
                    f"{o} is already {'in' if world.bin(target) else 'on'} {target}"
                    if world.region(target) is None
                    else f"{o} is already at {target}"
                )
                continue
            if into_drawer and not plan.drawer_open:
                # the drawer must be open to take a block: open it first (the gripper is
                # free before a pick; a held block is not put down to do it)
                if plan.held is not None:
                    raise _Unsure(f"the drawer is shut and the gripper holds {plan.held}")
                plan.steps.append({"skill": "open_drawer"})
                plan.drawer_open = True
                plan.notes.append("the drawer is shut: open it first")
            plan.move(o, target)
            moved.append(o)
        return moved or objs

    @staticmethod
    def _to_matching(objs: list[str], plan: _Plan, *, explicit: bool) -> list[str]:
        """Each block into the bin of its colour."""
        moved = []
        for o in objs:
            col = o.split("_", 1)[0]
            b = f"{col}_bin"
            if plan.world.bin(b) is None:
                if explicit:
                    raise _Refuse(f"there is no {col} bin for {o}")
                plan.notes.append(f"{o} has no bin of its colour; left where it is")
                continue
            plan.want(o, f"in({o}, {b})")
            if plan.where.get(o) == b and not explicit:
                plan.notes.append(f"{o} is already in {b}")
                continue
            plan.move(o, b)
            moved.append(o)
        return moved or objs

    @staticmethod
    def _target(t: _Phrase, c: _Clause, plan: _Plan) -> str:
        """The place target a destination phrase names."""
        world = plan.world
        if t.point is not None:
            raise _Unsure("placing at an [x, y] point is not a place target")
        drawer = _drawer_target(t, plan)
        if drawer is not None:
            return drawer
        if t.pronoun == "one" and not t.colors and t.noun in (None, "block") and not t.quant:
            # "... then put the yellow block on top of it": the block of the previous clause
            if len(plan.last) != 1 or _is_container_prep(c):
                raise _Unsure("unclear destination")
            return plan.last[0]
        if t.pronoun or t.quant:
            raise _Unsure("unclear destination")
        if t.region and not t.colors and t.noun is None:
            return t.region
        if len(set(t.colors)) > 1:
            raise _Unsure("more than one destination")
        noun = t.noun
        if noun is None and t.colors:
            noun = "bin" if _is_container_prep(c) else "block"
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


#: At most this many pushes are inserted into one plan to free cubes for picking.
MAX_SEPARATIONS = 4


def _repair_steps(steps: list[dict], world: WorldState, notes: list[str]) -> list[dict]:
    """Replace each step that cannot run because of where a cube stands by steps that can
    (the repairs the bridge's hints name), one at a time, as :func:`_repair` finds them:

    - a pick whose cube the fingers cannot get around (a touching neighbour along the finger
      axis), or that the pick skill's success predictor rates too low: the push that frees
      it first (``not_graspable``, ``low_affordance``);
    - opening or closing the drawer with a cube in its path: that cube pushed out of it
      first;
    - a push to a table region whose fingers cannot come down behind the cube (a bin wall on
      that side), or of a cube that is not on the table: a pick and a place on the region.

    A step nothing repairs is left as it is, for the bridge to refuse with its reason."""
    from bridge.validate import simulate

    steps = list(steps)
    for _ in range(MAX_SEPARATIONS):
        try:
            # the world returned is the one before the first step that cannot run
            before, reasons = simulate(world, steps)
        except Exception:  # a step the bridge will reject anyway, with its own reason
            return steps
        if not reasons:
            return steps
        i = int(reasons[0].path.split("/")[2])
        fix, what = _repair(before, steps[i], reasons[0].code)
        if what is None:
            return steps
        if fix is None:
            notes.append(f"{what} and nothing repairs it")
            return steps
        steps[i : i + 1] = fix
        notes.append(f"{what}: {', then '.join(_say(s) for s in fix)}")
    return steps


def _say(step: dict) -> str:
    args = ", ".join(f"{k}={v}" for k, v in step.items() if k != "skill")
    return f"{step['skill']}({args})"


def _repair(world: WorldState, step: dict, code: str) -> tuple[list[dict] | None, str | None]:
    """The steps to run instead of ``step`` in ``world`` so that it can run (a push, then
    ``step``; or another way to the same effect), or None; and what is in its way (None
    when it is not a case this repairs)."""
    from bridge.reasons import LOW_AFFORDANCE, NOT_GRASPABLE, PRECONDITION_VIOLATED
    from skills.affordance import affordance_repair, clearing_push, separation_push

    skill = step["skill"]
    if skill == "pick" and code in (NOT_GRASPABLE, LOW_AFFORDANCE):
        obj = step["object"]
        what = f"{obj} cannot be picked where it is"
        if code == NOT_GRASPABLE:
            fix = separation_push(world, obj)
        else:
            fix = affordance_repair(world, step)[0]
        return ([fix, step] if fix is not None else None), what
    if code != PRECONDITION_VIOLATED:
        return None, None
    if skill in ("open_drawer", "close_drawer") and world.drawer is not None:
        from skills.drawer import path_blockers

        opening = skill == "open_drawer"
        blocking = path_blockers(world, opening)
        if not blocking:
            return None, None
        name, d = blocking[0], world.drawer
        o = cube_of(world, name)
        away = math.atan2(o.pos[1] - d.pos[1], o.pos[0] - d.pos[0])
        fix = clearing_push(world, name, away, lambda w: name in path_blockers(w, opening))
        return ([fix, step] if fix is not None else None), f"{name} is in the drawer's path"
    if skill == "push" and isinstance(step["target"], str) and world.region(step["target"]):
        from skills.pick import Pick, PickParams
        from skills.place import Place, PlaceParams
        from skills.push import landing_wall

        obj, region = step["object"], step["target"]
        moved = world.object(obj)
        if moved is None or moved.held:
            return None, None
        goal = np.asarray(world.region(region).pos[:2])  # type: ignore[union-attr]
        if moved.on_table:
            if landing_wall(world, obj, goal) is None:
                return None, None
            # the fingers cannot come down behind it (a bin wall there): carry it instead
            why = f"the fingers cannot come down behind {obj} to push it"
        else:  # in a bin, or on another cube: nothing to push it along; carry it there
            why = f"{obj} is not on the table, so it cannot be pushed"
        pick, place = PickParams(object=obj), PlaceParams(target=region)
        if world.held_object is not None or Pick().preconditions(world, pick):
            return None, why
        carried = Pick().effect(world, pick)
        if Place().preconditions(carried, place):
            return None, why
        return [
            {"skill": "pick", "object": obj},
            {"skill": "place", "target": region},
        ], why
    return None, None


def _at_home(world: WorldState) -> bool:
    from skills.home import at_home  # the home skill's own test: "already home" means that

    return at_home(world)


_DEFAULT = RulesPlanner()


def parse(task: str, world: WorldState) -> RulesResult:
    """Parse ``task`` against ``world`` with the default rules planner."""
    return _DEFAULT.parse(task, world)
