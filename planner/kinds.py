"""Objects of several kinds and sizes in the words the language layer reads.

The language layer (``planner.understand``, ``planner.rules``, the embedded model's
training) names an object by its colour: "the red block" is ``red_block``. In a scene whose
objects differ in kind and size (the mixed scene: ``red_block``, ``green_big_block``,
``blue_cylinder``, ``yellow_ball``) people name them by kind and size as well: "the ball",
"the big cube", "the blue cylinder", "the small one". This module stands between the two:

- :func:`spoken` rewrites each phrase that names one object by kind or size ("the ball",
  "the big cube") into the colour phrase the layer reads ("the yellow block"); a phrase
  that fits several objects ("the cube" beside two cubes) is left to :func:`ambiguous`,
  which asks which one is meant instead of guessing.
- :func:`scene_names` turns the layer's ``<colour>_block`` names in a proposed plan into
  the scene's own names (``yellow_block`` -> ``yellow_ball``) where the scene has no
  ``<colour>_block`` and exactly one object of that colour.

Both leave a scene of colour-named cubes alone (the tabletop, the articulated scene): their
output is then exactly their input.
"""

from __future__ import annotations

import dataclasses
import json

import planner.rx as re
from bridge.constraints import Constraints
from bridge.lexicon import COLOURS
from planner.rules.result import RulesResult
from sim.objects import KINDS, ObjectSpec
from sim.objects import spec as object_spec
from sim.world import WorldState

#: Size words, by which end of the size order they pick.
BIG = (
    "big",
    "bigger",
    "biggest",
    "large",
    "larger",
    "largest",
    "chunky",
    "chunkier",
    "bulky",
    "fat",
)
SMALL = ("small", "smaller", "smallest", "little", "tiny", "wee", "skinny")


def _kind_of_word() -> dict[str, str]:
    """Every kind word and its plural ("ball", "balls") -> the kind ("sphere")."""
    out: dict[str, str] = {}
    for kind, cls in KINDS.items():
        for w in cls.kind_words:
            out[w] = kind
            out[w + ("es" if w.endswith(("x", "s")) else "s")] = kind
    out.pop("can", None)  # "can you ...": never a kind here
    out.pop("cans", None)
    out.update({"brick": "cube", "bricks": "cube"})
    return out


_KIND_OF = _kind_of_word()
_COLOURS = "|".join(sorted(COLOURS, key=len, reverse=True))
_SIZES = "|".join((*BIG, *SMALL))
_WORDS = "|".join(sorted(_KIND_OF, key=len, reverse=True))
#: "[the] [size] [colour] [size] kind" (or "the big one"): one phrase about objects.
_PHRASE = re.compile(
    rf"\b(?P<det>the|a|an)?\s*(?P<size>{_SIZES})?\s*(?P<colour>{_COLOURS})?\s*"
    rf"(?P<size2>{_SIZES})?\s*(?P<noun>{_WORDS}|one(?!\s+(?:of|more|by|at\s+a\s+time)\b))\b",
    re.IGNORECASE,
)


def is_mixed(world: WorldState) -> bool:
    """Whether ``world`` holds an object that is not a colour-named cube of the usual size
    (only then do kind and size words tell its objects apart)."""
    return any(_unusual(o.name) for o in world.objects)


def _unusual(name: str) -> bool:
    try:
        s = object_spec(name)
    except KeyError:
        return False
    return s.kind != "cube" or name != f"{s.color}_block"


def _matches(
    world: WorldState, kind: str | None, colour: str | None, size: str | None
) -> list[ObjectSpec]:
    """The objects of ``world`` a phrase fits: of ``kind`` (None: any), of ``colour``, and
    with a size word, the biggest (or smallest) of those, where their sizes differ."""
    objs = [object_spec(o.name) for o in world.objects]
    if kind is not None:
        objs = [s for s in objs if s.kind == kind]
    if colour is not None:
        objs = [s for s in objs if s.color == colour]
    if size is not None and len(objs) > 1:
        heights = [s.height for s in objs]
        if len(set(heights)) > 1:
            want = max(heights) if size.lower() in BIG else min(heights)
            objs = [s for s in objs if s.height == want]
    return objs


def _read(m: re.Match) -> tuple[str | None, str | None, str | None, bool]:
    """(kind, colour, size word, plural) of one phrase."""
    noun = m["noun"].lower()
    kind = None if noun == "one" else _KIND_OF[noun]
    colour = m["colour"].lower() if m["colour"] else None
    size = (m["size"] or m["size2"] or None) and (m["size"] or m["size2"]).lower()
    plural = noun != "one" and noun not in {w for c in KINDS.values() for w in c.kind_words}
    return kind, colour, size, plural


def _synonyms(text: str) -> str:
    """Kind words the registry cannot list plainly: "the can" (never "can you ...") is the
    cylinder; "the round thing" is the ball."""
    text = re.sub(
        rf"\b(?P<d>the|a|that|this)\s+(?P<m>(?:(?:{_SIZES}|{_COLOURS})\s+)*)can\b(?!\s+(?:you|i|we|it)\b)",
        lambda m: f"{m['d']} {m['m']}cylinder",
        text,
        flags=re.IGNORECASE,
    )
    # "the bigger of the two cubes", "the smaller cube": the size compared is the size named
    text = re.sub(
        r"\bthe\s+(?P<s>bigger|larger|smaller|littler)\s+(?:of\s+the\s+(?:two\s+)?(?:cubes|blocks|boxes)|(?P<k>cube|block|box))\b",
        lambda m: f"the {'big' if m['s'] in ('bigger', 'larger') else 'small'} {m['k'] or 'cube'}",
        text,
        flags=re.I,
    )
    # "the cube that's not the big one": the other size
    text = re.sub(
        r"\bthe\s+(?P<k>cube|block|box)\s+(?:that's|that\s+is|which\s+is|thats)\s+not\s+the\s+(?P<s>big|large|small|little)"
        r"(?:\s+one)?\b",
        lambda m: f"the {'small' if m['s'] in ('big', 'large') else 'big'} {m['k']}",
        text,
        flags=re.I,
    )
    # "the thing that's round all over": the ball
    text = re.sub(
        r"\b(?:thing|one|object|item)\s+(?:that's|that\s+is|which\s+is|thats)\s+(?:round\s+all\s+over|"
        r"completely\s+round|round\s+everywhere|a\s+sphere|spherical)\b",
        "ball",
        text,
        flags=re.I,
    )
    # "the round thing" fits the ball and the upright cylinder alike (asked back by
    # :func:`ambiguous` where both are there); "spherical", "rolling" only the ball
    return re.sub(
        r"\b(?:spherical|rolling)\s+(?:thing|one|object|item|toy|block)\b",
        "ball",
        text,
        flags=re.I,
    )


_ROUND = re.compile(r"\b(?:the|that|this)\s+round\s+(?:thing|one|object|item|toy|block)\b", re.I)


def _round(text: str, world: WorldState) -> list[ObjectSpec] | None:
    """The objects "the round one" fits: every round kind there (ball, cylinder); None
    where the text says no such thing."""
    if not _ROUND.search(text) or re.search(r"\b(?:ball|sphere|cylinder|tube)s?\b", text, re.I):
        return None  # ("the round one, the ball, yes that": the kind is said too)
    return [
        s for s in (object_spec(o.name) for o in world.objects) if s.kind in ("sphere", "cylinder")
    ]


_PLURAL_KINDS = "|".join(
    sorted((w for w in _KIND_OF if w.endswith("s") and w[:-1] in _KIND_OF), key=len, reverse=True)
)


def _group(text: str, world: WorldState) -> str:
    """ "both cubes", "all the balls", "the two cubes": the objects of that kind by their
    colour phrases ("the red block and the green block"), when the count said fits."""

    def listed(m: re.Match) -> str:
        kind = _KIND_OF[m["k"].lower()]
        found = [s for s in (object_spec(o.name) for o in world.objects) if s.kind == kind]
        want = {"both": 2, "the two": 2, "two": 2}.get(re.sub(r"\s+", " ", m["q"].lower()))
        if len(found) < 2 or (want is not None and len(found) != want):
            return m[0]
        names = [f"the {s.color} block" for s in found]
        return ", ".join(names[:-1]) + " and " + names[-1]

    return re.sub(
        rf"\b(?P<q>both(?:\s+(?:of\s+)?the)?|the\s+two|all\s+(?:of\s+)?the|all)\s+(?P<k>{_PLURAL_KINDS})\b",
        listed,
        text,
        flags=re.IGNORECASE,
    )


_NOT_KIND = re.compile(
    rf"\b(?:the|that)\s+(?:one|thing|object|item)\s+(?:(?:that|which)\s+)?(?:isn't|is\s+not|'s\s+not|is\s+no|"
    rf"that's\s+not|thats\s+not)\s+(?:a|an|the)?\s*(?P<k>{_WORDS})\b|\bthe\s+non-?\s*(?P<k2>{_WORDS})"
    r"(?:\s+(?:one|thing|object))?\b",
    re.IGNORECASE,
)


def _not_of_kind(text: str, world: WorldState) -> tuple[re.Match, list[ObjectSpec]] | None:
    """ "the one that isn't a cube", "the non-cube": the phrase, and the objects of the
    other kinds it fits."""
    m = _NOT_KIND.search(text)
    if m is None:
        return None
    kind = _KIND_OF[(m["k"] or m["k2"]).lower()]
    found = [s for s in (object_spec(o.name) for o in world.objects) if s.kind != kind]
    return m, found


def spoken(text: str, world: WorldState) -> str:
    """``text`` with each phrase that names exactly one object by its kind or size put as
    that object's colour phrase ("put the ball in the red bin" -> "put the yellow block in
    the red bin"); phrases that fit no object or several are left as they are (the layer
    refuses the first, :func:`ambiguous` asks about the second)."""
    if not is_mixed(world):
        return text
    text = _group(_synonyms(text), world)
    round_ = _round(text, world)
    if round_ is not None and len(round_) == 1:
        text = _ROUND.sub(f"the {round_[0].color} block", text, count=1)
    other = _not_of_kind(text, world)
    if other is not None and len(other[1]) == 1:
        m, (one,) = other
        text = f"{text[: m.start()]}the {one.color} block{text[m.end() :]}"

    said: list[str | None] = [None]  # the kind last named: what a later "one" stands for

    def swap(m: re.Match) -> str:
        kind, colour, size, plural = _read(m)
        if kind is None and m["noun"].lower() == "one":
            kind = said[0]  # "stack the big cube on the small one": the small cube
        elif kind is not None:
            said[0] = kind
        if plural or (kind in (None, "cube") and size is None):
            return m[0]  # "the red one", "the green block": the colour names it already
        found = _matches(world, kind, colour, size)
        if len(found) != 1:
            return m[0]
        det = f"{m['det']} " if m["det"] else ""
        lead = " " if m[0][:1].isspace() else ""
        return f"{lead}{det}{found[0].color} block"

    return _PHRASE.sub(swap, text)


def ambiguous(text: str, world: WorldState) -> str | None:
    """The question to ask where a phrase of ``text`` that names one object by kind, size
    or colour fits several ("the cube" beside a 4 cm and a 5 cm cube), else None."""
    if not is_mixed(world):
        return None
    text = _synonyms(text)
    round_ = _round(text, world)
    if round_ is not None and len(round_) > 1:
        options = " or ".join(f"the {_describe(s)}" for s in round_)
        return f"Which one do you mean: {options}?"
    other = _not_of_kind(text, world)
    if other is not None and len(other[1]) > 1:
        options = " or ".join(f"the {_describe(s)}" for s in other[1])
        return f"Which one do you mean: {options}?"
    said: str | None = None
    for m in _PHRASE.finditer(text):
        kind, colour, size, plural = _read(m)
        if kind is None and m["noun"].lower() == "one":
            kind = said
        elif kind is not None:
            said = kind
        if plural or (kind is None and colour is None) or m["det"] in (None, "a", "an"):
            continue
        found = _matches(world, kind, colour, size)
        if len(found) > 1:
            options = " or ".join(f"the {_describe(s)}" for s in found)
            return f"Which one do you mean: {options}?"
    return None


def _describe(s: ObjectSpec) -> str:
    word = {"sphere": "ball"}.get(s.kind, s.kind)
    return f"{s.color} {word} ({s.height * 100:.0f} cm)"


#: Comparisons of size and weight, and what each one measures.
_MEASURE = {
    **{w: ("size", 1) for w in ("bigger", "larger", "biggest", "largest")},
    **{w: ("size", -1) for w in ("smaller", "smallest", "littler", "tinier")},
    **{w: ("height", 1) for w in ("taller", "tallest", "higher", "highest")},
    **{w: ("height", -1) for w in ("shorter", "shortest", "lower", "lowest")},
    **{w: ("mass", 1) for w in ("heavier", "heaviest")},
    **{w: ("mass", -1) for w in ("lighter", "lightest")},
}
_COMPARE = re.compile(
    rf"^(?:which|what)(?:\s+(?:one|object|thing|block|cube))?(?:'s|\s+is)\s+(?:the\s+)?(?P<w>{'|'.join(_MEASURE)})"
    r"(?:\s+(?:one|object|thing))?(?:\s*[,:]?\s*(?P<a>.+?)\s+or\s+(?P<b>.+?))?\s*[?.!]*$",
    re.IGNORECASE,
)


def compare(text: str, world: WorldState) -> str | None:
    """ "which one is bigger, the red cube or the green cube?", "which is the heaviest?":
    answered from the objects' specs (the colour view of the language layer makes every
    object a cube of one size, so this is read on the real world), else None."""
    m = _COMPARE.match(text.strip())
    if m is None or not world.objects:
        return None
    what, sign = _MEASURE[m["w"].lower()]
    pool = [object_spec(o.name) for o in world.objects]
    if m["a"]:
        picked = []
        for said in (m["a"], m["b"]):
            p = _PHRASE.search(said)
            if p is None:
                return None
            kind, colour, size, _ = _read(p)
            found = _matches(world, kind, colour, size)
            if len(found) != 1:
                return None
            picked.append(found[0])
        pool = picked

    def value(s: ObjectSpec) -> float:
        if what == "mass":
            return s.mass
        if what == "height":
            return s.height
        return s.height * s.horizontal_radius

    best = max(value(s) for s in pool) if sign > 0 else min(value(s) for s in pool)
    won = [s for s in pool if value(s) == best]
    if len(won) == len(pool):
        return f"They are the same {'weight' if what == 'mass' else 'size'}"
    said = [f"the {_words(s, world)} ({s.height * 100:.0f} cm, {s.mass * 1000:.0f} g)" for s in won]
    word = m["w"].lower()
    word = f"the {word}" if word.endswith("est") else word
    return " and ".join(said).capitalize() + f" {'is' if len(won) == 1 else 'are'} {word}"


_SHAPES_SEEN = re.compile(
    r"^(?:what|which)\s+(?:shapes|kinds?\s+of\s+(?:things|objects|shapes)|objects|things|sorts\s+of\s+(?:things|objects))\s+"
    r"(?:can|do)\s+you\s+see(?:\s+(?:on|around)\s+the\s+table)?|^what\s+shapes\s+are\s+(?:there|on\s+the\s+table)",
    re.IGNORECASE,
)
_WHICH_KIND = re.compile(
    rf"^(?:.*?[,;-]\s*)?is\s+(?:the|that|this)\s+(?P<c>{_COLOURS})\s+(?:thing|one|object|item|shape)\s+an?\s+(?P<a>\w+)"
    r"\s+or\s+an?\s+(?P<b>\w+)",
    re.IGNORECASE,
)


_WHICH_THINGS = (
    r"^(?:which|what)(?:\s+(?:one|ones|object|objects|thing|things|"
    r"of\s+(?:those|these|the|them)(?:\s+(?:things|objects|ones))?))?"
)
_ROLLS = re.compile(
    _WHICH_THINGS + r"\s+(?:would|will|can|could|might|does|do)?\s*roll", re.IGNORECASE
)
_NOT_STACKABLE = re.compile(
    _WHICH_THINGS + r"\s+(?:can(?:not|'t)?|could(?:n't)?)\s+"
    r"(?:(?:nothing|you\s+not|not|you\s+never|never|you|i|we)\s+)?(?:have\s+anything\s+|hold\s+anything\s+)?(?:be\s+)?"
    r"(?:stack(?:ed)?|put|placed?)\s+(?:anything\s+)?(?:on|onto|on\s+top\s+of)(?:\s+it)?\b",
    re.IGNORECASE,
)


def properties(text: str, world: WorldState) -> str | None:
    """ "which of those things would roll away?", "which one can nothing be stacked on?":
    the objects of ``world`` whose kind says so, from their specs; None for other text."""
    t = text.strip().lower()
    if _ROLLS.match(t):
        found = [s for s in (object_spec(o.name) for o in world.objects) if s.rolls]
        what = "rolls" if len(found) == 1 else "roll"
        tail = "; the others stay where they are put" if found else ""
        said = _listed(found) or "Nothing here"
        return f"{said} {what} when pushed or let go{tail}. I did not move anything"
    if _NOT_STACKABLE.match(t):
        found = [s for s in (object_spec(o.name) for o in world.objects) if not s.stackable]
        said = _listed(found)
        if not said:
            return "Every object here can carry another one. I did not move anything"
        return f"Nothing can be stacked on {said}: it would roll off. I did not move anything"
    return None


def _listed(found: list[ObjectSpec]) -> str:
    words = [f"the {_describe(s)}" for s in found]
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)


def describe(text: str, world: WorldState) -> str | None:
    """Questions about what the objects are: "what shapes can you see?", "is that yellow
    thing a ball or a block?" (answered in the scene's own words), else None."""
    t = text.strip().rstrip("?!. ")
    if _SHAPES_SEEN.search(t):
        said = [f"a {_words(object_spec(o.name), world)}" for o in world.objects]
        if not said:
            return "I see no objects on the table"
        listed = said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]
        return f"I see {listed}"
    m = _WHICH_KIND.search(t)
    if m:
        found = _matches(world, None, m["c"].lower(), None)
        if len(found) != 1:
            return None
        s = found[0]
        word = "ball" if s.kind == "sphere" else s.kind
        return f"It is a {_words(s, world)}: a {word}, {s.height * 100:.0f} cm"
    return None


def colour_view(world: WorldState) -> WorldState:
    """``world`` as the language layer reads it: in a scene of several kinds whose objects
    differ in colour, each object named ``<colour>_block`` (``yellow_ball`` ->
    ``yellow_block``, and so in what rests on what, the hand and the drawer); the real
    world itself otherwise. The bridge still checks every plan on the real world (its
    ``<colour>_block`` names put back by :func:`scene_names`)."""
    if not is_mixed(world):
        return world
    rename = {o.name: f"{object_spec(o.name).color}_block" for o in world.objects}
    if len(set(rename.values())) != len(rename):
        return world  # two objects of one colour: colour names would not tell them apart

    def new(n: str | None) -> str | None:
        return rename.get(n, n) if n is not None else None

    objs = [o.model_copy(update={"name": rename[o.name], "on": new(o.on)}) for o in world.objects]
    update: dict = {"objects": objs, "held_object": new(world.held_object)}
    if world.drawer is not None:
        contents = [rename.get(n, n) for n in world.drawer.contents]
        update["drawer"] = world.drawer.model_copy(update={"contents": contents})
    return world.model_copy(update=update)


def in_scene_words(text: str, world: WorldState) -> str:
    """An answer or a question the layer wrote in colour phrases ("the yellow block") in
    the words of the scene's objects ("the yellow ball", "the big green cube")."""
    if not is_mixed(world) or colour_view(world) is world:
        return text
    for o in world.objects:
        s = object_spec(o.name)
        if not _unusual(o.name):
            continue
        said = _words(s, world)
        text = re.sub(rf"\b{s.color} (?:block|cube)\b", said, text)
        text = re.sub(rf"\b{s.color.capitalize()} (?:block|cube)\b", said.capitalize(), text)
    return text


def phrase(name: str, world: WorldState) -> str:
    """How an instruction names object ``name`` of ``world``: "the red block", and in a
    scene of several kinds by kind and size ("the yellow ball", "the big green cube")."""
    s = object_spec(name)
    if not is_mixed(world) or not _unusual(name):
        return f"the {s.color} block"
    return f"the {_words(s, world)}"


def _words(s: ObjectSpec, world: WorldState) -> str:
    """What people call object ``s`` here: "yellow ball", "blue cylinder", and for a cube
    among cubes of other sizes "big green cube" (or "small ...")."""
    if s.kind != "cube":
        return f"{s.color} {'ball' if s.kind == 'sphere' else s.kind}"
    cubes = [object_spec(o.name).height for o in world.objects if o.kind == "cube"]
    if len(set(cubes)) > 1:
        return f"{'big' if s.height == max(cubes) else 'small'} {s.color} cube"
    return f"{s.color} cube"


_BLOCK_NAME = re.compile(r"\b(?P<colour>[a-z]+)_block\b")


def scene_names(raw: str, world: WorldState) -> str:
    """A proposed plan (its raw text: steps and goal literals) with each ``<colour>_block``
    the scene lacks named as the one object of that colour it has (``yellow_block`` ->
    ``yellow_ball``); a colour that no object, or several, have is left for the bridge to
    reject."""
    if not is_mixed(world):
        return raw
    have = set(world.object_names)
    by_colour: dict[str, list[str]] = {}
    for o in world.objects:
        by_colour.setdefault(object_spec(o.name).color, []).append(o.name)

    def swap(m: re.Match) -> str:
        name = f"{m['colour']}_block"
        found = by_colour.get(m["colour"], [])
        if name in have or len(found) != 1:
            return m[0]
        return found[0]

    return _BLOCK_NAME.sub(swap, raw)


def scene_constraints(cons: Constraints, world: WorldState) -> Constraints:
    """Prohibitions read on :func:`colour_view` ("leave the ball alone" -> ``yellow_block``)
    in the scene's names (``yellow_ball``), so the bridge enforces them on the real world."""
    if not is_mixed(world) or not cons:
        return cons
    name = lambda n: scene_names(n, world)  # noqa: E731 - one name at a time
    return dataclasses.replace(
        cons,
        objects=frozenset(name(n) for n in cons.objects),
        targets=frozenset(name(n) for n in cons.targets),
        pairs=frozenset((name(a), name(b)) for a, b in cons.pairs),
    )


def named_back(r: RulesResult, world: WorldState) -> RulesResult:
    """A rules parse made on :func:`colour_view` with its steps and goal in the scene's
    names, and its steps repaired on the real world (the view's objects are all cubes: a
    push of the ball becomes a pick and a place, as the push skill's repair says)."""
    if not is_mixed(world):
        return r
    from planner.rules.repairs import repair_steps  # (the rules package reads this module)

    steps = json.loads(scene_names(json.dumps(r.steps), world))
    notes = list(r.notes)
    if steps:  # what the view could not see (a ball rolls: carry it instead of a push)
        steps = repair_steps(steps, world, notes)
    goal = [scene_names(g, world) for g in r.goal] if r.goal is not None else None
    return dataclasses.replace(r, steps=steps, goal=goal, notes=notes)
