"""References resolved in the world, never guessed.

"the leftmost block", "the one next to the red block", "the cube between green and
yellow", "the second block from the right", "the closest bin", "the block in the green
bin", "two blocks", "one block in each bin", "any block": each is a *selector* that the
world state answers exactly. A resolved selector is rewritten into the plain name ("the red
block"), so the rules planner, the model and the bridge's grounding check all see the same
explicit instruction. A selector that fits several things equally well (within
``TIE_M``) raises :class:`Ambiguous` with the candidates, which the planner turns into a
``clarify`` question instead of a pick.

Directions are the robot's: its base stands behind the table at -x looking along +x, so
its left is +y, its right -y, "front"/"far" is +x and "back"/"near" is -x.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import planner.rx as re
from bridge import lexicon as L
from sim import scene
from sim.world import WorldState

#: Two candidates closer than this (m) along the selector's measure are a tie: ask.
TIE_M = 0.02

_C = "|".join(L.COLOURS)
#: Verbs said after the thing they move ("the block on the left goes in the green bin").
_POSTFIX = r"(?:goes|go|should|belongs|needs|has\s+to|must|gets|can\s+go|wants)"
_BLOCK = r"(?:block|cube|brick|one|thing|object)"
_BIN = r"(?:bin|basket|container|bucket|tub|crate|box)"
_SIZE = r"(?:(?:small|little|big|large|tiny)\s+)?"
_THAT = (
    r"(?:\s+(?:that\s+is|that's|thats|which\s+is|that\s+sits|sitting|lying|right|just|standing))?"
)
#: A named thing: "the red block", "red", "the green bin", "the blue one".
_NAMED = rf"(?:the\s+)?(?P<{{g}}>{_C})(?:\s+(?P<{{g}}n>{_BLOCK}|{_BIN}))?"
_ROBOT = r"(?:you|me|us|the\s+robot|the\s+arm|your\s+base|the\s+base|yourself|the\s+gripper)"


class Ambiguous(Exception):
    """A reference fits several things; ``candidates`` are their scene names."""

    def __init__(self, phrase: str, candidates: list[str], kind: str = "block") -> None:
        super().__init__(phrase)
        self.phrase = phrase
        self.candidates = candidates
        self.kind = kind


class Unresolvable(Exception):
    """A reference fits nothing in the scene ("the block in the green bin" when it is
    empty); the message says why, for a refusal."""


@dataclass
class Resolution:
    """The rewritten text and what each selector resolved to."""

    text: str
    notes: list[str] = field(default_factory=list)


def _xy(world: WorldState, name: str) -> tuple[float, float]:
    o = world.object(name)
    if o is not None:
        return o.pos[0], o.pos[1]
    b = world.bin(name)
    if b is not None:
        return b.pos[0], b.pos[1]
    r = world.region(name)
    if r is not None:
        return r.pos[0], r.pos[1]
    raise KeyError(name)


def _robot_xy() -> tuple[float, float]:
    """Where the robot stands on the table plane: the point "me" and "you" name."""
    return float(scene.BASE_XY[0]), float(scene.BASE_XY[1])


def _colour(name: str) -> str:
    return name.split("_", 1)[0]


def _say(name: str) -> str:
    c, _, kind = name.partition("_")
    return f"the {c} {'block' if kind == 'block' else kind}"


def _pick_best(scored: list[tuple[float, str]], phrase: str, kind: str, tie: float = TIE_M) -> str:
    """The name with the highest score; a near tie is :class:`Ambiguous`."""
    if not scored:
        raise Unresolvable(f"nothing here fits {phrase!r}")
    scored = sorted(scored, key=lambda s: -s[0])
    close = [n for s, n in scored if scored[0][0] - s <= tie]
    if len(close) > 1:
        raise Ambiguous(phrase, close, kind)
    return scored[0][1]


def _pool(world: WorldState, noun: str | None) -> tuple[list[str], str]:
    if noun is not None and re.fullmatch(_BIN, noun):
        return list(world.bin_names), "bin"
    return [o.name for o in world.objects], "block"


def _ref_point(world: WorldState, text: str | None) -> tuple[float, float] | None:
    """Where "to X" points: the robot, a named cube or bin, or a table region."""
    if text is None or re.fullmatch(_ROBOT, text.strip()):
        return _robot_xy()
    m = re.search(rf"\b({_C})\b(?:\s+({_BLOCK}|{_BIN}))?", text)
    if m:
        kind = "bin" if m.group(2) and re.fullmatch(_BIN, m.group(2)) else "block"
        name = f"{m.group(1)}_{kind}"
        if kind == "block" and world.object(name) is None and world.bin(f"{m.group(1)}_bin"):
            name = f"{m.group(1)}_bin"
        try:
            return _xy(world, name)
        except KeyError:
            raise Unresolvable(f"there is no {_say(name)[4:]} here") from None
    for word, region in L.REGION_WORDS.items():
        if re.search(rf"\b{word}\b", text) and world.region(region) is not None:
            return _xy(world, region)
    return None


# ------------------------------------------------------------------------ the selectors
def _superlative(world: WorldState, m: re.Match[str]) -> str:
    word = m.group("sup").replace(" ", "").replace("-", "")
    word = {"left": "leftmost", "right": "rightmost", "front": "frontmost"}.get(word, word)
    word = {"back": "backmost", "rear": "backmost", "far": "frontmost"}.get(word, word)
    axis, sign = L.SUPERLATIVES[word if word in L.SUPERLATIVES else word + "most"]
    names, kind = _pool(world, m.group("noun"))
    names = _colour_filter(names, m.groupdict().get("col"))
    i = 0 if axis == "x" else 1
    return _pick_best([(sign * _xy(world, n)[i], n) for n in names], m.group(0), kind)


def _stack_end(world: WorldState, m: re.Match[str]) -> str:
    """The top (nothing on it, standing on a cube) or the bottom (on no cube, one on it) of
    the stack: one stack names it; several are asked about; none cannot be."""
    top = (m.group("end") or m.group("end2")) in ("top", "topmost", "uppermost")
    under = {o.on for o in world.objects if o.on}
    if top:
        names = [o.name for o in world.objects if o.on and o.name not in under]
    else:
        names = [o.name for o in world.objects if not o.on and o.name in under]
    if not names:
        raise Unresolvable("nothing is stacked here")
    if len(names) > 1:
        raise Ambiguous(m.group(0), sorted(names), "block")
    return names[0]


def _side(world: WorldState, m: re.Match[str]) -> str:
    """ "the block on the left" read as the leftmost block (only where it is a selector)."""
    return _superlative(world, m)


def _colour_filter(names: list[str], colour: str | None) -> list[str]:
    return [n for n in names if colour is None or _colour(n) == colour]


def _distance(world: WorldState, m: re.Match[str]) -> str:
    sign = L.DISTANCE_WORDS[m.group("dist")]
    ref = m.groupdict().get("ref")
    point = _ref_point(world, ref)
    if point is None:
        raise Unresolvable(f"I cannot tell what {ref!r} is")
    names, kind = _pool(world, m.group("noun"))
    ref_names = _named_in(ref or "", world)
    names = [n for n in names if n not in ref_names]
    scored = [(-sign * math.dist(_xy(world, n), point), n) for n in names]
    return _pick_best(scored, m.group(0), kind)


#: A side of the table as a filter: +y is left, -y right, +x front, -x back (robot's view).
_SIDES = {"left": (1, 1), "right": (1, -1), "front": (0, 1), "back": (0, -1), "near": (0, -1)}


def _side_then_distance(world: WorldState, m: re.Match[str]) -> str:
    """ "the block on your right that's closest to you": the cubes on that side (of the
    middle of the cubes there are), then the distance superlative among them."""
    axis, sign = _SIDES[m.group("side")]
    names, kind = _pool(world, m.group("noun"))
    if not names:
        raise Unresolvable(f"nothing here fits {m.group(0)!r}")
    mid = sum(_xy(world, n)[axis] for n in names) / len(names)
    side = [n for n in names if sign * (_xy(world, n)[axis] - mid) > TIE_M / 2]
    point = _ref_point(world, m.group("ref"))
    if point is None:
        raise Unresolvable(f"I cannot tell what {m.group('ref')!r} is")
    ref_names = _named_in(m.group("ref") or "", world)
    d = L.DISTANCE_WORDS[m.group("dist")]
    scored = [(-d * math.dist(_xy(world, n), point), n) for n in side if n not in ref_names]
    return _pick_best(scored, m.group(0), kind)


def _not_colour(world: WorldState, m: re.Match[str]) -> str:
    """ "the block that isn't red": the one cube of another colour, asked when several are;
    "any block that isn't red": the nearest of them (any will do)."""
    colour = m.group("c") or m.group("c2")
    names = [o.name for o in world.objects if _colour(o.name) != colour]
    if not names:
        raise Unresolvable(f"every block here is {colour}")
    if len(names) > 1 and not m.group("any"):
        raise Ambiguous(m.group(0), names, "block")
    point = _robot_xy()
    return min(names, key=lambda n: (math.dist(_xy(world, n), point), n))


def _named_in(text: str, world: WorldState) -> set[str]:
    out: set[str] = set()
    for m in re.finditer(rf"\b({_C})\b(?:\s+({_BLOCK}|{_BIN}))?", text):
        is_bin = bool(m.group(2) and re.fullmatch(_BIN, m.group(2)))
        out.add(f"{m.group(1)}_{'bin' if is_bin else 'block'}")
    return out


def _next_to(world: WorldState, m: re.Match[str]) -> str:
    ref = m.group("ref")
    point = _ref_point(world, ref)
    if point is None:
        raise Unresolvable(f"I cannot tell what {ref!r} is")
    skip = _named_in(ref, world)
    names = [o.name for o in world.objects if o.name not in skip and not o.held]
    scored = [(-math.dist(_xy(world, n), point), n) for n in names]
    return _pick_best(scored, m.group(0), "block")


def _between(world: WorldState, m: re.Match[str]) -> str:
    a, b = _ref_point(world, m.group("a")), _ref_point(world, m.group("b"))
    if a is None or b is None:
        raise Unresolvable(f"I cannot tell what {m.group(0)!r} is between")
    skip = _named_in(m.group("a"), world) | _named_in(m.group("b"), world)
    scored = []
    ab = (b[0] - a[0], b[1] - a[1])
    length2 = ab[0] ** 2 + ab[1] ** 2 or 1e-9
    for o in world.objects:
        if o.name in skip:
            continue
        p = (o.pos[0] - a[0], o.pos[1] - a[1])
        t = (p[0] * ab[0] + p[1] * ab[1]) / length2
        if not 0.0 < t < 1.0:
            continue
        off = abs(p[0] * ab[1] - p[1] * ab[0]) / math.sqrt(length2)
        scored.append((-off, o.name))
    return _pick_best(scored, m.group(0), "block")


def _ordinal(world: WorldState, m: re.Match[str]) -> str:
    n = L.ORDINALS[m.group("ord")]
    side = m.group("side")
    names, kind = _pool(world, m.group("noun"))
    axis, sign = {"left": (1, 1), "right": (1, -1), "front": (0, 1), "back": (0, -1)}[side]
    if side in ("front", "back") and m.group("prep") == "from":
        sign = -sign if side == "front" else sign  # "first from the front" = frontmost
        sign = 1 if side == "front" else -1
    ordered = sorted(names, key=lambda x: -sign * _xy(world, x)[axis])
    if abs(n) > len(ordered):
        raise Unresolvable(f"there are only {len(ordered)} {kind}s")
    i = n - 1 if n > 0 else len(ordered) + n
    # a tie with a neighbour in the order is ambiguous
    val = sign * _xy(world, ordered[i])[axis]
    close = [x for x in ordered if abs(sign * _xy(world, x)[axis] - val) <= TIE_M]
    if len(close) > 1:
        raise Ambiguous(m.group(0), close, kind)
    return ordered[i]


def _middle(world: WorldState, m: re.Match[str]) -> str:
    names, kind = _pool(world, m.group("noun") or m.group("noun2"))
    if kind == "bin":
        ordered = sorted(names, key=lambda x: _xy(world, x)[0])
    else:
        ordered = sorted(names, key=lambda x: -_xy(world, x)[1])
    if len(ordered) % 2 == 0:
        raise Ambiguous(m.group(0), ordered[len(ordered) // 2 - 1 : len(ordered) // 2 + 1], kind)
    return ordered[len(ordered) // 2]


def _other(world: WorldState, m: re.Match[str]) -> str:
    """The cube not named in the text around the match."""
    text = m.string
    named = {f"{c}_block" for c in re.findall(rf"\b({_C})\b(?!\s+{_BIN})", text)}
    left = [o.name for o in world.objects if o.name not in named]
    if not left:
        raise Unresolvable("there is no other block")
    if len(left) > 1:
        raise Ambiguous(m.group(0), left, "block")
    return left[0]


def _loner(world: WorldState, m: re.Match[str]) -> str:
    """The cube farthest from its nearest neighbour."""
    objs = [o for o in world.objects if not o.held]
    scored = []
    for o in objs:
        others = [math.dist(o.pos[:2], p.pos[:2]) for p in objs if p is not o]
        if others:
            scored.append((min(others), o.name))
    return _pick_best(scored, m.group(0), "block")


def _corner(world: WorldState, m: re.Match[str]) -> str:
    dx = 1 if m.group("d") in ("front", "far") else -1
    dy = 1 if m.group("s") == "left" else -1
    scored = [(dx * o.pos[0] + dy * o.pos[1], o.name) for o in world.objects]
    return _pick_best(scored, m.group(0), "block")


def _beside(world: WorldState, m: re.Match[str]) -> str:
    """The nearest cube on that side of the reference (as seen from the robot)."""
    point = _ref_point(world, m.group("ref"))
    if point is None:
        raise Unresolvable(f"I cannot tell what {m.group('ref')!r} is")
    rel = re.sub(r"^to\s+the\s+", "", m.group("rel"))
    axis, sign = {"in front of": (0, 1), "behind": (1, -1), "left of": (1, 1), "right of": (1, -1)}[
        re.sub(r"\s+", " ", rel)
    ]
    if rel == "behind":
        axis = 0
    skip = _named_in(m.group("ref"), world)
    scored = []
    for o in world.objects:
        if o.name in skip:
            continue
        if sign * (o.pos[axis] - point[axis]) <= 0.01:
            continue
        scored.append((-math.dist((o.pos[0], o.pos[1]), point), o.name))
    return _pick_best(scored, m.group(0), "block")


def _closer_than(world: WorldState, m: re.Match[str]) -> str:
    """ "the block closer to the green bin than the red block (is)": the one block, other
    than the one compared with, nearer to (or farther from) the reference than it."""
    point = _ref_point(world, m.group("ref"))
    other = f"{m.group('o')}_block"
    if point is None or world.object(other) is None:
        raise Unresolvable(f"I cannot tell what {m.group(0)!r} is")
    nearer = m.group("c") in ("closer", "nearer")
    limit = math.dist(_xy(world, other), point)
    ref_names = _named_in(m.group("ref") or "", world)
    fits = [
        n
        for n in (o.name for o in world.objects)
        if n != other
        and n not in ref_names
        and (math.dist(_xy(world, n), point) < limit - TIE_M / 2) == nearer
        and abs(math.dist(_xy(world, n), point) - limit) > TIE_M / 2
    ]
    if not fits:
        raise Unresolvable(f"no block is {m.group('c')} than the {m.group('o')} block")
    if len(fits) > 1:
        raise Ambiguous(m.group(0), fits, "block")
    return fits[0]


def _empty_bin(world: WorldState, m: re.Match[str]) -> str:
    empty = [b.name for b in world.bins if not any(o.in_bin == b.name for o in world.objects)]
    if not empty:
        raise Unresolvable("no bin is empty")
    if len(empty) > 1:
        raise Ambiguous(m.group(0), empty, "bin")
    return empty[0]


def _bin_by_count(world: WorldState, m: re.Match[str]) -> str:
    """ "whichever bin has fewer blocks", "the fullest bin": the bin holding the fewest (or
    most) objects; a tie is asked about."""
    most = re.search(r"\b(?:more|most|full|fullest|fuller)\b", m.group(0)) is not None
    held = {b.name: sum(o.in_bin == b.name for o in world.objects) for b in world.bins}
    if not held:
        raise Unresolvable("there is no bin here")
    best = (max if most else min)(held.values())
    won = [n for n, k in held.items() if k == best]
    if len(won) > 1:
        raise Ambiguous(m.group(0), won, "bin")
    return won[0]


def _which_of_two(text: str, world: WorldState) -> str:
    """ "whichever of the red and the green blocks is nearer to you - put that one in the
    blue bin": the one of the two that fits, put where "that one" stands (a tie is asked)."""
    m = re.match(
        rf"^whichever\s+of\s+the\s+(?P<a>{_C})\s+and\s+(?:the\s+)?(?P<b>{_C})\s+(?:blocks?|ones?|cubes?)\s+is\s+"
        r"(?P<d>nearer|closer|farther|further)\s+(?:to\s+|from\s+)?(?:you|me|the\s+robot)\s*[-,:;]*\s*(?P<rest>.+)$",
        text,
    )
    if m is None:
        return text
    names = [f"{m['a']}_block", f"{m['b']}_block"]
    if any(world.object(n) is None for n in names):
        return text
    base = _robot_xy()
    dist = {n: math.dist(_xy(world, n), base) for n in names}
    if abs(dist[names[0]] - dist[names[1]]) <= TIE_M:
        raise Ambiguous(m.group(0), names, "block")
    pick = (min if m["d"] in ("nearer", "closer") else max)(names, key=lambda n: dist[n])
    return re.sub(r"\b(?:that\s+one|that\s+block|it)\b", _say(pick), m["rest"], count=1)


def _from_before(world: WorldState, m: re.Match[str]) -> str:
    names = [o.name for o in world.objects if not o.held]
    if len(names) == 1:
        return names[0]
    raise Ambiguous(m.group(0), names, "block")


#: Distances said in words: the lexicon's count words and the few larger ones people say.
_NUMBERS = {**L.NUMBERS, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20}


def _offset(world: WorldState, m: re.Match[str]) -> str:
    """The cube nearest the point that far to that side of a named cube (in the robot's
    frame), within half the distance asked (at least 3 cm); none there is said."""
    ref = f"{m['ref']}_block"
    if world.object(ref) is None:
        raise Unresolvable(f"there is no {m['ref']} block")
    n = float(_NUMBERS.get(m["n"]) or m["n"])
    d = n / (1000.0 if m["u"].startswith("m") else 100.0)
    dx, dy = {
        "left": (0.0, d),
        "right": (0.0, -d),
        "front": (d, 0.0),
        "in front": (d, 0.0),
        "back": (-d, 0.0),
        "behind": (-d, 0.0),
    }[re.sub(r"\s+", " ", m["side"])]
    rx, ry = _xy(world, ref)
    goal = (rx + dx, ry + dy)
    others = [o.name for o in world.objects if o.name != ref and not o.held]
    near = sorted(others, key=lambda n_: math.dist(_xy(world, n_), goal))
    if not near or math.dist(_xy(world, near[0]), goal) > max(0.03, d / 2):
        raise Unresolvable(
            f"no block is about {m['n']} {m['u']} {m['side']} of the {m['ref']} block"
        )
    return near[0]


def _stacked_one(world: WorldState, m: re.Match[str]) -> str:
    upper = [o.name for o in world.objects if o.on and world.object(o.on) is not None]
    if not upper:
        raise Unresolvable("no block is stacked on another")
    if len(upper) > 1:
        raise Ambiguous(m.group(0), upper, "block")
    return upper[0]


def _in_drawer(world: WorldState, m: re.Match[str]) -> str:
    inside = list(world.drawer.contents) if world.drawer is not None else []
    if not inside:
        raise Unresolvable("there is nothing in the drawer")
    if len(inside) > 1:
        raise Ambiguous(m.group(0), inside, "block")
    return inside[0]


def _relation(world: WorldState, m: re.Match[str]) -> str:
    rel, col = m.group("rel"), m.group("col")
    noun = m.group("coln") or ""
    if rel in ("in", "inside", "from", "out of"):
        bin_name = f"{col}_bin"
        inside = [o.name for o in world.objects if o.in_bin == bin_name]
        if world.bin(bin_name) is None:
            raise Unresolvable(f"there is no {col} bin")
        if not inside:
            raise Unresolvable(f"there is no block in the {col} bin")
        if len(inside) > 1:
            raise Ambiguous(m.group(0), inside, "block")
        return inside[0]
    if re.fullmatch(_BIN, noun):
        raise Unresolvable(f"nothing can be {rel} a bin")
    base = f"{col}_block"
    if world.object(base) is None:
        raise Unresolvable(f"there is no {col} block")
    if rel in ("on", "on top of", "atop", "above"):
        tops = [o.name for o in world.objects if o.on == base]
        if not tops:
            raise Unresolvable(f"nothing is on the {col} block")
        return tops[0]
    under = world.under(base)
    if under is None:
        raise Unresolvable(f"the {col} block is not on another block")
    return under


_PREFIX = r"(?:\bthe\s+|\bthat\s+|^)"
_NOUN = rf"(?P<noun>{_BLOCK}|{_BIN})"
_SELECTORS: list[tuple[re.Pattern[str], object]] = [
    # "whichever block is stacked on another one", "the cube sitting on top of a block": the
    # stack's upper cube (asked about when there are several)
    (
        re.compile(
            rf"(?:\bwhichever|\bwhatever|\bany|\bthe|\bthat)\s+{_BLOCK}\s+(?:that's\s+|thats\s+|that\s+|which\s+)?(?:is\s+|'s\s+)?"
            r"(?:stacked|sitting|resting|lying|sat|standing|placed)?\s*on\s+(?:top\s+of\s+)?(?:another(?:\s+(?:one|block|cube))?|"
            r"a\s+(?:block|cube|brick)|some\s+other\s+(?:block|cube)|something)\b"
        ),
        lambda world, m: _stacked_one(world, m),
    ),
    # "the same one as before", "the one from last time": no memory of earlier requests,
    # so which one is asked
    (
        re.compile(
            rf"\bthe\s+same\s+{_BLOCK}(?:\s+(?:as|like)\s+(?:before|last\s+time|earlier|yesterday))?|"
            r"\bthe\s+(?:one|block|cube)\s+(?:from|as)\s+(?:before|last\s+time|earlier)\b"
        ),
        lambda world, m: _from_before(world, m),
    ),
    # "the cube roughly ten centimetres to the right of the green one": where that is
    (
        re.compile(
            rf"{_PREFIX}{_BLOCK}\s+(?:that's\s+|that\s+is\s+|which\s+is\s+|sitting\s+)?(?:about\s+|roughly\s+|around\s+|some\s+|"
            r"approximately\s+|maybe\s+)?(?P<n>\d+(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|"
            r"eleven|twelve|fifteen|twenty)\s*(?P<u>cm|centimet(?:re|er)s?|mm|millimet(?:re|er)s?)\s+"
            rf"(?:to\s+the\s+)?(?P<side>left|right|front|back|behind|in\s+front)\s+(?:of\s+)?(?:the\s+)?(?P<ref>{_C})"
            rf"(?:\s+{_BLOCK})?\b"
        ),
        lambda world, m: _offset(world, m),
    ),
    # "the block on your right that's closest to you", "the cube at the back nearest the red bin"
    (
        re.compile(
            rf"{_PREFIX}{_SIZE}{_NOUN}\s+(?:on|at|to)\s+(?:your|the|my)\s+(?P<side>left|right|front|back|near)"
            rf"(?:\s+(?:side|end|half))?(?:\s+of\s+the\s+table)?\s*,?\s*(?:(?:that's|thats|that\s+is|which\s+is|"
            rf"and|the\s+one)\s+)?(?P<dist>closest|nearest|farthest|furthest)"
            rf"(?:\s+(?:(?:to|from|away\s+from)\s+)?(?P<ref>{_ROBOT}|(?:the\s+)?(?:{_C})"
            rf"(?:\s+(?:{_BLOCK}|{_BIN}))?))?(?:\s+away)?"
        ),
        _side_then_distance,
    ),
    # "the block that isn't red", "the one that's not red", "the non-red block"
    (
        re.compile(
            rf"(?:\b(?P<any>any|a|some)\s+|{_PREFIX}){_SIZE}(?:{_BLOCK}\s+(?:that|which)\s+(?:isn't|is\s+not|'s\s+not|is\s+n't)\s+"
            rf"(?P<c>{_C})|non-?\s*(?P<c2>{_C})\s+{_BLOCK})"
        ),
        lambda world, m: _not_colour(world, m),
    ),
    # "the block between the red and the green one"
    (
        re.compile(
            rf"{_PREFIX}{_SIZE}{_BLOCK}{_THAT}\s+between\s+(?P<a>(?:the\s+)?(?:{_C})(?:\s+{_BLOCK})?)"
            rf"\s+and\s+(?P<b>(?:the\s+)?(?:{_C})(?:\s+{_BLOCK}s?)?)"
        ),
        _between,
    ),
    # "the second block from the left", "the first cube on the right"
    (
        re.compile(
            rf"{_PREFIX}(?P<ord>first|second|third|fourth|last|1st|2nd|3rd|4th)\s+"
            rf"(?:{_NOUN}\s+)?(?P<prep>from|on|to)\s+the\s+(?P<side>left|right|front|back)"
        ),
        _ordinal,
    ),
    # "the block furthest to the left", "the one on the far right", "the cube most to the left"
    (
        re.compile(
            rf"{_PREFIX}{_SIZE}{_NOUN}{_THAT}\s+(?:(?:farthest|furthest|most)\s+(?:to\s+the\s+)?|"
            rf"(?:on|at)\s+the\s+(?:far|very)\s+|(?:on|at|to)\s+the\s+extreme\s+)"
            rf"(?P<sup>left|right|front|back)"
        ),
        _superlative,
    ),
    # "the block closest to the green bin", "the cube nearest you", "the one furthest away"
    (
        re.compile(
            rf"{_PREFIX}{_SIZE}{_NOUN}{_THAT}\s+(?P<dist>closest|nearest|farthest|furthest)"
            rf"(?!\s+(?:to\s+the\s+)?(?:left|right|front|back)\b)"
            rf"(?:\s+(?:(?:to|from|away\s+from)\s+)?(?P<ref>{_ROBOT}|(?:the\s+)?(?:{_C})"
            rf"(?:\s+(?:{_BLOCK}|{_BIN}))?|the\s+(?:left|right|front|back|center|centre|middle)"
            rf"(?:\s+of\s+the\s+table)?))?(?:\s+away)?"
        ),
        _distance,
    ),
    # "the closest block (to X)", "the nearest bin", "the farthest cube from you"
    (
        re.compile(
            rf"{_PREFIX}(?P<dist>closest|nearest|farthest|furthest)\s+{_SIZE}{_NOUN}"
            rf"(?:\s+(?:(?:to|from)\s+)?(?P<ref>{_ROBOT}|(?:the\s+)?(?:{_C})"
            rf"(?:\s+(?:{_BLOCK}|{_BIN}))?))?"
        ),
        _distance,
    ),
    # "the one next to the red block", "the cube beside blue"
    (
        re.compile(
            rf"{_PREFIX}{_SIZE}{_BLOCK}{_THAT}\s+(?:next\s+to|beside|by|near|close\s+to|"
            rf"alongside|adjacent\s+to)\s+(?P<ref>(?:the\s+)?(?:{_C})(?:\s+(?:{_BLOCK}|{_BIN}))?)"
        ),
        _next_to,
    ),
    # "the leftmost block", "the left-most red cube", "the rightmost one"
    (
        re.compile(
            rf"{_PREFIX}(?:very\s+)?(?P<sup>left-?most|right-?most|front-?most|fore-?most|"
            rf"back-?most|rear-?most|hind-?most)\s+{_SIZE}(?:(?P<col>{_C})\s+)?{_NOUN}?"
        ),
        _superlative,
    ),
    # "the block that is leftmost", "the block, that is rightmost,"
    (
        re.compile(
            rf"{_PREFIX}{_SIZE}{_NOUN},?\s+(?:that\s+is|that's|which\s+is)\s+(?:the\s+)?"
            rf"(?P<sup>left-?most|right-?most|front-?most|back-?most)(?:\s+one)?,?"
        ),
        _superlative,
    ),
    # "the block in the back left corner", "the front right one"
    (
        re.compile(
            rf"{_PREFIX}(?:{_BLOCK}\s+(?:in|at)\s+the\s+)?(?P<d>front|back|far|near)[\s-]+(?P<s>left|right)"
            rf"(?:\s+(?:corner|one|block|cube))?(?:\s+(?:corner|one|block|cube))?"
        ),
        lambda world, m: _corner(world, m),
    ),
    # "the block in front of the green one", "the cube right behind blue", "just left of"
    (
        re.compile(
            rf"{_PREFIX}{_SIZE}{_BLOCK}{_THAT}\s+(?:(?:just|right|directly|immediately)\s+)?"
            rf"(?P<rel>in\s+front\s+of|behind|(?:to\s+the\s+)?left\s+of|(?:to\s+the\s+)?right\s+of)"
            rf"\s+(?P<ref>(?:the\s+)?(?:{_C})(?:\s+(?:{_BLOCK}|{_BIN}))?)"
        ),
        lambda world, m: _beside(world, m),
    ),
    # "whichever bin is (still) empty", "the empty bin"
    (
        re.compile(
            rf"(?:\bwhichever\s+{_BIN}\s+is\s+(?:still\s+)?empty|{_PREFIX}(?:only\s+)?empty\s+{_BIN}|"
            rf"{_PREFIX}{_BIN}\s+(?:that\s+is|that's|which\s+is)\s+(?:still\s+)?empty)"
        ),
        lambda world, m: _empty_bin(world, m),
    ),
    # "the block closer to the green bin than the red block is"
    (
        re.compile(
            rf"(?:\bwhichever\s+|{_PREFIX}){_NOUN}\s+(?:that(?:'s|\s+is)\s+|which\s+is\s+|is\s+)?(?:sitting\s+|lying\s+|standing\s+)?"
            rf"(?P<c>closer|nearer|farther|further)\s+(?:to|from)\s+(?P<ref>{_ROBOT}|(?:the\s+)?(?:{_C})(?:\s+(?:{_BLOCK}|{_BIN}))?)"
            rf"\s+than\s+(?:the\s+)?(?P<o>{_C})(?:\s+{_BLOCK})?(?:\s+(?:is|does))?"
        ),
        _closer_than,
    ),
    # "whichever bin has fewer blocks", "the bin with the most in it", "the emptiest bin"
    (
        re.compile(
            rf"(?:\bwhichever|\bwhatever|{_PREFIX}|\bthe)\s*{_BIN}\s+(?:that\s+|which\s+)?(?:has|holds|contains|with)\s+"
            r"(?:the\s+)?(?:fewer|fewest|less|least|more|most)(?:\s+(?:blocks|cubes|things|objects|stuff))?"
            r"(?:\s+in\s+it)?(?:\s+(?:so\s+far|now|right\s+now|already))?|"
            rf"{_PREFIX}(?:emptiest|fullest|least\s+full|most\s+full|less\s+full|fuller)\s+{_BIN}"
        ),
        lambda world, m: _bin_by_count(world, m),
    ),
    # "whatever is in the drawer", "the block in the drawer"
    (
        re.compile(
            rf"(?:\bwhatever\s+is\s+in\s+the\s+drawer|{_PREFIX}{_BLOCK}{_THAT}\s+in\s+the\s+drawer"
            rf"(?=\s*(?:out\b|,|and\b|into\b|onto\b|on\b|to\b|in\s+the\s+\w+\s+bin\b)))"
        ),
        lambda world, m: _in_drawer(world, m),
    ),
    # "the lonely one", "the one off on its own", "the isolated block"
    (
        re.compile(
            rf"{_PREFIX}(?:(?:lonely|lone|isolated|separate|solitary|odd)\s+{_BLOCK}|{_BLOCK}{_THAT}"
            rf"\s+(?:(?:off|out)\s+)?(?:on\s+its\s+own|by\s+itself|all\s+alone|apart\s+from\s+the\s+others))"
        ),
        lambda world, m: _loner(world, m),
    ),
    # "the cube on the left into the red bin", "grab the one on the left", "what colour is
    # the block on the right?" (colourless; a selector unless it can be where a block goes:
    # see _side_is_selector)
    (
        re.compile(
            rf"{_PREFIX}{_SIZE}{_NOUN}{_THAT}\s+(?:on|at|to)\s+the\s+(?P<sup>left|right)(?:\s+(?:hand\s+)?side)?"
            rf"(?:\s+of\s+the\s+table)?"
            rf"(?=\s+(?:in|into|on|onto|to|inside)\b|\s*[,.!?]|\s*$|\s+(?:is|are|up|for|please|{_POSTFIX})\b)"
        ),
        _side,
    ),
    # "the block at the front", "the cube in the back of the table" (colourless)
    (
        re.compile(
            rf"{_PREFIX}{_SIZE}{_NOUN}{_THAT}\s+(?:at|on|in)\s+the\s+(?:very\s+)?(?P<sup>front|back|rear)"
            rf"(?:\s+(?:end|edge|side))?(?:\s+of\s+the\s+table)?(?=\s+(?:in|into|on|onto|to|inside|over|{_POSTFIX})\b|\s*[,.!?]|\s*$)"
        ),
        _superlative,
    ),
    # "the one in front goes in the green bin"
    (
        re.compile(
            rf"{_PREFIX}{_SIZE}{_NOUN}{_THAT}\s+in\s+(?P<sup>front)(?!\s+of)"
            rf"(?=\s+(?:in|into|on|onto|to|inside|over)\b|\s*[,.!?]|\s*$)"
        ),
        _superlative,
    ),
    # "the block on top of the stack", "the top cube of the tower", "the bottom block of
    # the pile", "the one at the bottom of the stack"
    (
        re.compile(
            rf"\bthe\s+(?:(?P<end>top|topmost|uppermost|bottom|lowest|bottommost)\s+{_BLOCK}\s+(?:of|in|on)\s+"
            rf"the\s+(?:stack|tower|pile)|{_BLOCK}\s+(?:on|at)\s+(?:the\s+)?(?P<end2>top|bottom)\s+of\s+the\s+"
            r"(?:stack|tower|pile))\b"
        ),
        lambda world, m: _stack_end(world, m),
    ),
    # "the other block": the one not named (asked when several are left)
    (
        re.compile(r"\bthe\s+other\s+(?:block|cube|brick|one)\b"),
        lambda world, m: _other(world, m),
    ),
    # "the left block", "the front cube" (colourless)
    (
        re.compile(rf"{_PREFIX}(?P<sup>left|right|front|back|far)\s+{_NOUN}\b(?!\s+of\b)"),
        _superlative,
    ),
    # "the middle block", "the middle bin", "the one in the middle of the row"
    (
        re.compile(
            rf"{_PREFIX}(?:middle\s+{_NOUN}|(?P<noun2>{_BLOCK}){_THAT}\s+in\s+the\s+middle"
            rf"(?:\s+of\s+(?:the|that|this)\s+(?:row|line))?(?=\s+(?:in|into|on|onto|to|go|goes)\b))"
        ),
        _middle,
    ),
    # "the block in the green bin", "the cube on the red block", "the one under blue"
    (
        re.compile(
            rf"{_PREFIX}{_SIZE}{_BLOCK}{_THAT}\s+(?P<rel>in|inside|from|out\s+of|on\s+top\s+of|on|atop|above|"
            rf"under|underneath|beneath|below)\s+(?:the\s+)?(?P<col>{_C})(?:\s+(?P<coln>{_BLOCK}|{_BIN}))?"
        ),
        _relation,
    ),
]


def resolve(text: str, world: WorldState) -> Resolution:
    """Rewrite every selector in ``text`` into the name it resolves to.

    Raises :class:`Ambiguous` (ask which) or :class:`Unresolvable` (say why)."""
    notes: list[str] = []
    text = re.sub(r"\bright\s+(?=next\s+to\b|beside\b|by\s+the\b)", "", text)
    text = _which_of_two(text, world)
    # "the bin next to the green one" with no green block: the green bin's neighbours
    near = re.search(rf"\bthe\s+bin\s+(?:next\s+to|beside)\s+the\s+({_C})\s+(?:one|bin)\b", text)
    if near and (world.object(f"{near[1]}_block") is None or near.group(0).endswith("bin")):
        ref = world.bin(f"{near[1]}_bin")
        if ref is not None:
            side = sorted(
                (b for b in world.bins if b.name != ref.name),
                key=lambda b: abs(b.pos[0] - ref.pos[0]) + abs(b.pos[1] - ref.pos[1]),
            )
            gap = [abs(b.pos[0] - ref.pos[0]) + abs(b.pos[1] - ref.pos[1]) for b in side]
            if len(side) > 1 and abs(gap[0] - gap[1]) <= TIE_M:
                raise Ambiguous(near.group(0), [b.name for b in side[:2]], "bin")
            if side:
                text = text[: near.start()] + _say(side[0].name) + text[near.end() :]
    # "the one furthest on the left": the leftmost
    text = re.sub(
        r"\bthe\s+(one|block|cube)\s+(?:that's\s+|that\s+is\s+)?(?:furthest|farthest|most)\s+(?:on|to)\s+the\s+(left|right)\b",
        r"the \2most \1",
        text,
    )
    # "counting from your left, the second block": the ordinal from that side
    text = re.sub(
        rf"\b(?:counting|starting|going|numbering)\s+from\s+(?:your|the|my)\s+(left|right|front|back)\s*,?\s+"
        rf"the\s+(\w+)\s+({_BLOCK})\b",
        r"the \2 \3 from the \1",
        text,
    )
    # a selector inside another ("the block next to the one furthest on the left") is read
    # first, then the outer one: a second pass over the selectors when the first changed
    for _ in range(2):
        before = text
        text = _select(text, world, notes)
        if text == before:
            break
    return Resolution(text, notes)


def _select(text: str, world: WorldState, notes: list[str]) -> str:
    """One pass of every selector over ``text``."""
    for pattern, fn in _SELECTORS:
        while True:
            m = pattern.search(text)
            if m is None:
                break
            # the relation selector only applies when a destination follows or it is the
            # thing asked about: "take the block in the green bin out" vs "put the block in
            # the green bin" (there "in the green bin" is where it goes)
            if fn is _relation and not _relation_is_selector(text, m):
                break
            if fn is _side and not _side_is_selector(text, m):
                break
            mover = (
                _mover_before(text, m) if fn is _distance and not m.groupdict().get("ref") else None
            )
            if mover is not None and re.fullmatch(_BIN, m.group("noun")):
                # "put the yellow block in the nearest bin": nearest to the yellow block
                name = _nearest_bin_to(world, mover, m.group("dist"), m.group(0))
            else:
                name = fn(world, m)  # type: ignore[operator]
            if fn in (_distance, _superlative, _side) and _named_elsewhere(text, m, name):
                # "put the block nearest the green bin on the yellow one", yellow being the
                # nearest: the block meant is another one than the one it goes on
                rest = [o for o in world.objects if o.name != name]
                if rest:
                    try:
                        name = fn(world.model_copy(update={"objects": rest}), m)
                    except Unresolvable:
                        pass
            said = _say(name)
            notes.append(f"{m.group(0).strip()!r} is {said}")
            after = _it_is_the_ref(text[m.end() :], m)
            text = text[: m.start()] + said + after
    return text


def _it_is_the_ref(after: str, m: re.Match[str]) -> str:
    """ "put the block nearest the red one on top of it": "it" is the cube the selector was
    measured from."""
    ref = m.groupdict().get("ref") or ""
    c = re.search(rf"\b({_C})\b(?!\s+{_BIN})", ref)
    if c is None:
        return after
    return re.sub(
        r"\b(on|onto|on\s+top\s+of|next\s+to|beside)\s+it\b",
        lambda k: f"{k.group(1)} the {c.group(1)} block",
        after,
        count=1,
    )


def _mover_before(text: str, m: re.Match[str]) -> str | None:
    """The one cube named before ``m`` ("put *the yellow block* in the nearest bin")."""
    named = re.findall(rf"\bthe\s+({_C})\s+block\b", text[: m.start()])
    return f"{named[0]}_block" if len(set(named)) == 1 else None


def _nearest_bin_to(world: WorldState, cube: str, dist: str, phrase: str) -> str:
    if world.object(cube) is None:
        raise Unresolvable(f"there is no {_say(cube)[4:]} here")
    sign = L.DISTANCE_WORDS[dist]
    point = _xy(world, cube)
    scored = [(-sign * math.dist(_xy(world, b.name), point), b.name) for b in world.bins]
    return _pick_best(scored, phrase, "bin")


def _named_elsewhere(text: str, m: re.Match[str], name: str) -> bool:
    """Whether the cube ``name`` is also named outside the selector ``m`` ("... on the
    yellow one")."""
    if not name.endswith("_block"):
        return False
    outside = text[: m.start()] + " " + text[m.end() :]
    return bool(re.search(rf"\b{_colour(name)}\b(?!\s+{_BIN})", outside))


def _side_is_selector(text: str, m: re.Match[str]) -> bool:
    """ "put the block on the left" may say where it goes (the left of the table), so with
    a verb that takes a destination the phrase selects only when another destination
    follows; after "grab", "lift", "take" or in a question it can only select."""
    before = text[: m.start()].strip()
    after = text[m.end() :]
    if _DEST.match(after.lstrip()) or after.lstrip().startswith(","):
        return True
    return not re.search(
        r"\b(?:put|place|drop|set|move|stack|push|slide|shove|nudge|roll|bring|carry|"
        r"shift|drag|sweep|transfer|relocate|toss|throw)\s*$",
        before,
    )


_DEST = re.compile(r"\b(?:in|into|inside|on|onto|to|towards?|over|at)\b\s+(?:the\s+)?")


def _relation_is_selector(text: str, m: re.Match[str]) -> bool:
    before = text[: m.start()].strip()
    after = text[m.end() :]
    verb_first = re.search(r"\b(?:put|place|drop|set|move|stack|push|slide)\s*$", before)
    if m.group("rel") in ("in", "inside", "on", "on top of", "atop"):
        # "put the block in the green bin" names a destination unless another one follows
        return not verb_first or bool(_DEST.search(after)) or "out" in after.split()[:2]
    return True


# --------------------------------------------------------------------------- counting
_COUNT = re.compile(
    rf"(?:\bthe\s+(?=(?:two|three|four)\s))?\b(?:at\s+least\s+|exactly\s+|just\s+|any\s+)?(?P<num>two|three|four|five|"
    rf"six|seven|eight|nine|ten|a\s+few|several|a\s+dozen|[2-9]|10|a\s+couple\s+of|a\s+couple|a\s+pair\s+of|couple\s+of)\s+"
    rf"(?:of\s+the\s+|of\s+)?(?:(?:the|your)\s+)?(?:(?:two|three|four|[234])\s+)?{_SIZE}(?:blocks?|cubes?|bricks?|ones|things)\b"
)
#: "the two blocks closest to you", "the two leftmost cubes"
_COUNT_SUP = re.compile(
    rf"\bthe\s+(?P<num>two|three|[23])\s+(?:(?P<sup>leftmost|rightmost|frontmost|backmost)\s+)?"
    rf"(?:blocks|cubes|bricks|ones)(?:\s+(?P<dist>closest|nearest|farthest|furthest)"
    rf"(?:\s+(?:to|from)\s+(?P<ref>{_ROBOT}|(?:the\s+)?(?:{_C})(?:\s+(?:{_BLOCK}|{_BIN}))?))?|"
    rf"\s+(?:on|at|to)\s+the\s+(?:far\s+)?(?P<side>left|right|front|back)(?:\s+side)?)?"
)
_ALL_BUT = re.compile(
    r"\ball\s+but\s+(?P<num>one|two|1|2)\s+(?:of\s+)?(?:the\s+)?(?:blocks|cubes|bricks)\b"
    r"|\bhalf\s+(?:of\s+)?(?:the\s+)?(?:blocks|cubes|bricks)\b"
)
_ANY = re.compile(
    rf"\b(?:any\s+one\s+of\s+the|one\s+of\s+the|any\s+of\s+the|any\s+one|any|a\s+random|"
    rf"some|whichever|a\s+single|a|one)\s+{_SIZE}(?:block|cube|brick|blocks|cubes|bricks)\b"
    rf"(?!\s+(?:of|that|which|from|under|next|closest|nearest|between))"
)
_EACH_BIN = re.compile(
    rf"\b(?P<n>one|a|1|two|three|2|3)\s+(?:{_SIZE}(?:blocks?|cubes?|bricks?)\s+)?(?:in|into)\s+(?:each|every)\s+"
    rf"(?:of\s+the\s+)?(?:bin|bins|basket|baskets|container|containers|box|boxes)\b"
    rf"|\b(?:a|one)\s+(?:block|cube|brick)\s+per\s+(?:bin|basket|container|box)\b"
    rf"|\b(?:give|put\s+in)\s+(?:each|every)\s+(?:bin|basket|container|box)\s+(?:one|a)\s+(?:block|cube|brick)\b"
    rf"|\b(?:each|every)\s+(?:bin|basket|container|box)\s+gets\s+(?:one|a)\s+(?:block|cube|brick)\b"
)
_VERB = r"(?:put|place|drop|move|set|bring|transfer|stack|toss|throw|chuck|pop|load|stow|push)"


def _destination(text: str, world: WorldState) -> str | None:
    m = re.search(
        rf"\b(?P<p>in|into|inside|onto|on\s+top\s+of|on|to)\s+(?:the\s+)?({_C})\s*({_BIN}|{_BLOCK})?",
        text,
    )
    if m is None:
        return None
    colour, noun = m.group(2), m.group(3) or ""
    if not noun and m.group("p").startswith("on") and world.object(f"{colour}_block"):
        return f"{colour}_block"  # "on red" is on the red block; a bin is "in"
    if re.fullmatch(_BIN, noun) or (not noun and world.bin(f"{colour}_bin")):
        return f"{colour}_bin" if world.bin(f"{colour}_bin") else None
    return f"{colour}_block" if world.object(f"{colour}_block") else None


def _movable(world: WorldState, forbidden: set[str], dest: str | None) -> list[str]:
    out = []
    for o in world.objects:
        if o.name in forbidden or o.name == dest:
            continue
        if dest is not None and (o.in_bin == dest or o.on == dest):
            continue  # already there: it does not count toward "two more"
        if not world.clear(o.name):
            continue
        out.append(o.name)
    return out


def _by_distance(world: WorldState, names: list[str], dest: str | None) -> list[str]:
    if dest is None:
        point = _robot_xy()
    else:
        point = _xy(world, dest)
    return sorted(names, key=lambda n: (math.dist(_xy(world, n), point), n))


def _join(names: list[str]) -> str:
    said = [_say(n) for n in names]
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]


def another(text: str, world: WorldState, avoid: set[str]) -> Resolution:
    """ "on another block" / "on any other block": the nearest clear cube that is not the one
    moved and not off limits (``avoid``: forbidden cubes and targets)."""
    m = re.search(
        r"\b(?P<prep>on|onto|on\s+top\s+of)\s+(?:another|any\s+other|some\s+other|a\s+different|any|something|anything|some\s+block)"
        r"(?:\s+(?:block|cube|brick|one)\b|(?=\s*(?:[,.;!?]|$|\band\b|\bthen\b)))",
        text,
    )
    if m is None or re.search(
        r"\b(?:is|'s|that|which|stacked|sitting|resting|lying|sat|standing)\s*$|"
        r"^(?:please\s+)?(?:grab|take|pick\s+up|get|fetch|lift)\s+(?:whichever|the)\s+(?:block|cube|one)\s*$",
        text[: m.start()],
    ):
        return Resolution(text, [])  # "whichever block is stacked on another one": a selector
    movers = re.findall(rf"\b({_C})\b(?!\s+{_BIN})", text[: m.start()])
    moved = f"{movers[-1]}_block" if movers else world.held_object
    pool = [
        o.name
        for o in world.objects
        if o.name != moved and o.name not in avoid and world.clear(o.name) and not o.held
    ]
    if not pool:
        raise Unresolvable("no other block is free to stack on")
    point = _xy(world, moved) if moved and world.object(moved) else (0.0, 0.0)
    pick = min(pool, key=lambda n: (math.dist(_xy(world, n), point), n))
    said = f"{m.group('prep')} {_say(pick)}"
    return Resolution(
        text[: m.start()] + said + text[m.end() :], [f"{m.group(0)!r} is {_say(pick)}"]
    )


_ANY_BIN = re.compile(
    rf"\b(?P<prep>in|into|inside)\s+(?:a|any|some|one\s+of\s+the|any\s+of\s+the|any\s+one\s+of\s+the|"
    rf"whichever|a\s+random)\s+(?:{_BIN})s?\b(?!\s+(?:is|that|which|with|where|has|holding|containing|of)\b)(?:\s+(?:you\s+(?:like|want|choose|prefer)|at\s+all))?"
    rf"(?:\s*,?\s*(?:any\s+(?:bin|one)\s+will\s+do|(?:i\s+)?(?:don't|dont|do\s+not)\s+care\s+which"
    rf"(?:\s+(?:one|bin))?|it\s+doesn't\s+matter\s+which(?:\s+(?:one|bin))?))?"
)


def any_bin(text: str, world: WorldState, avoid: set[str]) -> Resolution:
    """ "in a bin", "into any bin": the robot chooses, the bin nearest the cube moved (the
    one named before it, else the one held) that is not off limits (``avoid``). A state
    ("the ones that are already in a bin") is no destination."""
    m = _ANY_BIN.search(text)
    if m is None or re.search(
        r"\b(?:already|still|are|is|was|were|being|that's|that\s+are|which\s+are)\s+$",
        text[: m.start()],
    ):
        return Resolution(text, [])
    pool = [b.name for b in world.bins if b.name not in avoid]
    if not pool:
        raise Unresolvable("every bin is off limits")
    mover = re.findall(rf"\b({_C})\s+(?:block|cube|brick|one)\b", text[: m.start()])
    moved = f"{mover[-1]}_block" if mover else world.held_object
    point = _xy(world, moved) if moved and world.object(moved) else (0.0, 0.0)
    pick = min(pool, key=lambda b: (math.dist(_xy(world, b), point), b))
    said = f"{m.group('prep')} {_say(pick)}"
    return Resolution(
        text[: m.start()] + said + text[m.end() :],
        [f"{m.group(0)!r} is {_say(pick)} (any one will do)"],
    )


def counts(text: str, world: WorldState, forbidden: set[str]) -> Resolution:
    """Rewrite counted and indefinite references into the cubes chosen for them.

    The robot chooses (the request says any will do): cubes not forbidden, clear, not
    already at the destination, nearest the destination first; "one in each bin" gives each
    bin the cube of its colour where there is one, then the nearest left over. Several
    counts in one request ("one block in the red bin and two in the green bin") are chosen
    in turn, none chosen twice."""
    notes: list[str] = []
    taken = set(forbidden)
    for _ in range(4):
        for fn in (
            _every_other,
            _keep_only,
            _tower,
            _split,
            _one_more,
            _each_bin,
            _count_ranked,
            _side_group,
            _all_but,
            _count,
            _any_one,
        ):
            r = fn(text, world, taken)
            if r is not None:
                break
        else:
            break
        if r.text == text:
            break
        text, notes = r.text, notes + r.notes
        taken |= {f"{c}_block" for c in re.findall(rf"\b({_C})\s+block\b", text)}
    return Resolution(text, notes)


_SIDE_GROUP = re.compile(
    r"\b(?:all\s+(?:of\s+)?)?the\s+(?:blocks|cubes|bricks|ones)\s+(?:that\s+are\s+|that're\s+)?on\s+the\s+"
    r"(?P<side>left|right)(?:\s+(?:hand\s+)?side)?(?:\s+of\s+the\s+table)?\b"
)


def on_side(world: WorldState, side: str) -> list[str]:
    """The cubes on the table on ``side`` ("left" or "right") of the middle of those there,
    by more than half the tie distance (the same sides "the block on your right" uses)."""
    axis, sign = _SIDES[side]
    names = [o.name for o in world.objects if not (o.in_bin or o.held)]
    if not names:
        return []
    mid = sum(_xy(world, n)[axis] for n in names) / len(names)
    return [n for n in names if sign * (_xy(world, n)[axis] - mid) > TIE_M / 2]


def _side_group(text: str, world: WorldState, forbidden: set[str]) -> Resolution | None:
    """ "the blocks on the left side": every cube on that side (none there: say so)."""
    m = _SIDE_GROUP.search(text)
    if m is None:
        return None
    side = [n for n in on_side(world, m["side"]) if n not in forbidden]
    if not side:
        raise Unresolvable(f"no block is on the {m['side']}")
    said = _join(side)
    return Resolution(text[: m.start()] + said + text[m.end() :], [f"{m.group(0)!r} is {said}"])


_TOWER = re.compile(
    r"\b(?:(?:stack|pile)\s+(?:up\s+)?(?:all\s+(?:of\s+)?the|all|the|every\s+one\s+of\s+the)\s+(?:(?P<n1>two|three|four|[234])\s+)?"
    r"(?:blocks|cubes|bricks)(?:\s+(?:up|on\s+top\s+of\s+(?:each\s+other|one\s+another)|(?:into|in)\s+(?:a|one)\s+"
    r"(?:single\s+)?(?:tower|stack|pile|column)))?|(?:build|make|stack|create)\s+(?:a|one)\s+(?:single\s+)?"
    r"(?:tower|stack|pile|column)(?:\s+(?:with|of|from|out\s+of|using)\s+(?:all\s+)?(?:the\s+)?"
    r"(?:(?P<n2>two|three|four|[234])\s+)?(?:blocks|cubes|bricks)?|\s+(?:of\s+)?(?P<n3>two|three|four|[234])"
    r"(?:\s+(?:blocks|cubes|bricks))?(?:\s+(?:high|tall))?)?)"
    r"(?=\s*(?:[,.;!?]|$|\band\b|\bthen\b))"
)


def _tower(text: str, world: WorldState, forbidden: set[str]) -> Resolution | None:
    """ "stack all the blocks", "build a tower of three": one tower, on the cube nearest the
    middle of those chosen, each next cube the nearest to the top. Named cubes are not read
    here ("stack red on blue" has its own words)."""
    m = _TOWER.search(text)
    if m is None or re.search(rf"\b(?:{_C})\b", text[m.start() : m.end()]):
        return None
    word = m.group("n1") or m.group("n2") or m.group("n3")
    pool = [o.name for o in world.objects if o.name not in forbidden and world.clear(o.name)]
    count = L.NUMBERS[word] if word else len(pool)
    if count < 2 or len(pool) < count:
        raise Unresolvable(f"only {len(pool)} blocks are free to stack")
    cx = sum(_xy(world, n)[0] for n in pool) / len(pool)
    cy = sum(_xy(world, n)[1] for n in pool) / len(pool)
    base = min(pool, key=lambda n: (math.dist(_xy(world, n), (cx, cy)), n))
    order, left = [base], [n for n in pool if n != base]
    while len(order) < count:
        nxt = min(left, key=lambda n: (math.dist(_xy(world, n), _xy(world, order[-1])), n))
        order.append(nxt)
        left.remove(nxt)
    steps = [f"stack {_say(a)} on {_say(b)}" for b, a in zip(order, order[1:], strict=False)]
    note = f"{m.group(0)!r}: a tower of {count} on {_say(base)}"
    return Resolution(text[: m.start()] + ", then ".join(steps) + text[m.end() :], [note])


def _chosen(text: str, m: re.Match[str], chosen: list[str], note: str) -> Resolution:
    said = _join(chosen)
    return Resolution(text[: m.start()] + said + text[m.end() :], [f"{m.group(0)!r} {note} {said}"])


_EVERY_OTHER = re.compile(
    r"\b(?:every\s+other|every\s+second|alternate)\s+(?:block|cube|brick|one)s?(?:\s+in\s+(?:that|the|this)\s+row)?"
)
_STARTING = re.compile(
    r"\s*,?\s*(?:starting|beginning)\s+(?:with|from|at)\s+the\s+(?P<s>left|right|front|back)(?:most|\s+end)?"
    r"(?:\s+(?:one|block|cube))?(?:\s*[.,]\s*(?:then\s+)?(?:move|do)\s+(?:it|them|that))?[.!\s]*"
)


def _every_other(text: str, world: WorldState, forbidden: set[str]) -> Resolution | None:
    """ "every other block in that row goes in the blue bin, starting with the leftmost":
    the first, third, ... block in order along the row from the end said (the left by
    default)."""
    m = _EVERY_OTHER.search(text)
    if m is None:
        return None
    start = _STARTING.search(text, m.end())
    side = start["s"] if start else "left"
    axis, sign = _SIDES[side]
    row = sorted((o.name for o in world.objects), key=lambda n: -sign * _xy(world, n)[axis])
    chosen = [n for n in row[::2] if n not in forbidden]
    if start:
        text = text[: start.start()] + text[start.end() :]
    return _chosen(text, m, chosen, "are")


_SPLIT = re.compile(
    rf"\b(?:split|divide|share|spread|distribute)\s+(?:up\s+)?(?:all\s+)?(?:the\s+)?"
    rf"(?:(?:two|three|four|[234])\s+)?(?:blocks|cubes|bricks)\s+(?:evenly\s+|equally\s+)?"
    rf"(?:between|among|across|over)\s+(?:the\s+)?(?P<a>{_C})(?:\s+bin)?\s+and\s+(?:the\s+)?"
    rf"(?P<b>{_C})\s+bins?(?:\s+evenly|\s+equally)?"
)
_MORE = re.compile(
    rf"\b(?:add|put|place|drop)\s+(?:one|a|another)\s+more(?:\s+(?:block|cube|brick))?"
    rf"(?:\s+(?:in|into|to)\s+(?:the\s+)?(?P<c>{_C})\s+bin|\s+(?:in|into)\s+(?:it|there))?"
)


def _split(text: str, world: WorldState, forbidden: set[str]) -> Resolution | None:
    """ "split the four blocks evenly between the red and the blue bins": half each, every
    cube to the nearer of the two bins while its share lasts."""
    m = _SPLIT.search(text)
    if m is None:
        return None
    bins = [f"{m.group('a')}_bin", f"{m.group('b')}_bin"]
    if any(world.bin(b) is None for b in bins):
        raise Unresolvable("one of those bins is not here")
    pool = _movable(world, forbidden, None)
    if len(pool) < 2:
        raise Unresolvable("there are not enough blocks to split")
    share = {bins[0]: (len(pool) + 1) // 2, bins[1]: len(pool) // 2}
    pairs: list[tuple[str, str]] = []
    for cube in sorted(
        pool, key=lambda c: min(math.dist(_xy(world, c), _xy(world, b)) for b in bins)
    ):
        near = sorted(bins, key=lambda b: math.dist(_xy(world, cube), _xy(world, b)))
        dest = near[0] if share[near[0]] > 0 else near[1]
        share[dest] -= 1
        pairs.append((cube, dest))
    said = ", then ".join(f"put {_say(o)} in {_say(b)}" for o, b in pairs)
    note = f"{m.group(0)!r}: " + "; ".join(f"{o} -> {b}" for o, b in pairs)
    return Resolution(text[: m.start()] + said + text[m.end() :], [note])


def _one_more(text: str, world: WorldState, forbidden: set[str]) -> Resolution | None:
    """ "add one more" (to the bin named, or the one the sentence was about)."""
    m = _MORE.search(text)
    if m is None:
        return None
    colour = m.group("c")
    if colour is None:
        named = re.findall(rf"\b({_C})\s+bin\b", text[: m.start()])
        if not named:
            return None
        colour = named[-1]
    dest = f"{colour}_bin"
    if world.bin(dest) is None:
        raise Unresolvable(f"there is no {colour} bin")
    pool = _by_distance(world, _movable(world, forbidden, dest), dest)
    if not pool:
        raise Unresolvable("no other block can go there")
    said = f"put {_say(pool[0])} in {_say(dest)}"
    # the whole request is the move; a scene-setting clause before it says nothing more
    return Resolution(said + text[m.end() :], [f"{m.group(0)!r}: {pool[0]} -> {dest}"])


_KEEP_ONLY = re.compile(
    rf"^(?:(?:only|just)\s+(?P<n>one|two|three|a\s+single|[1-3])\s+(?:{_SIZE}(?:blocks?|cubes?|bricks?)\s+)?"
    rf"(?:should|can|may|must|is\s+to|are\s+to|is\s+allowed\s+to|are\s+allowed\s+to)\s+(?:stay|remain|be|be\s+left)|"
    rf"(?:leave|keep)\s+(?:only|just)\s+(?P<n2>one|two|three|a\s+single|[1-3])\s+(?:{_SIZE}(?:blocks?|cubes?|bricks?)\s+)?)"
    rf"\s*(?:in|inside)\s+(?:the\s+)?(?P<b>{_C})\s+{_BIN}\b(?P<rest>.*)$"
)


def _keep_only(text: str, world: WorldState, forbidden: set[str]) -> Resolution | None:
    """ "only one block should stay in the green bin, put the extra one back on the table":
    the blocks over the count leave the bin (to the place said, else the table); the one of
    the bin's colour is kept first."""
    m = _KEEP_ONLY.match(text)
    if m is None:
        return None
    keep = L.NUMBERS.get(m["n"] or m["n2"], 1) if (m["n"] or m["n2"]) != "a single" else 1
    b = f"{m['b']}_bin"
    inside = [o.name for o in world.objects if o.in_bin == b and world.clear(o.name)]
    inside.sort(key=lambda n: (_colour(n) != m["b"], n))
    extra = [n for n in inside[keep:] if n not in forbidden]
    if not extra:
        raise Unresolvable(f"the {m['b']} bin holds {len(inside)}: there is nothing to take out")
    to = re.search(
        r"\b(?:put|move|place|set|drop|take)\s+(?:the\s+)?(?:extra|other|rest|remaining|others|spare)(?:\s+ones?)?"
        r"\s+(?:back\s+)?(?:over\s+)?(?P<p>(?:in|into|on|onto|to)\s+.+?)\s*[.!]*$",
        m["rest"],
    )
    place = to["p"] if to else "on the table"
    place = re.sub(r"^to\s+(?=(?:the\s+)?\w+\s+bin\b)", "in ", place)
    said = ", then ".join(f"put {_say(n)} {place}" for n in extra)
    return Resolution(said, [f"{m.group(0)!r}: {', '.join(extra)} out of {b}"])


def _each_bin(text: str, world: WorldState, forbidden: set[str]) -> Resolution | None:
    m = _EACH_BIN.search(text)
    if m is None:
        return None
    bins = list(world.bin_names)
    pool = _movable(world, forbidden, None)
    each = L.NUMBERS.get(m["n"] or "one", 1) if m["n"] not in ("a", None) else 1
    if each * len(bins) > len(pool):
        raise Unresolvable(
            f"there are not enough blocks: {each} in each of {len(bins)} bins needs "
            f"{each * len(bins)}, and {len(pool)} can be moved"
        )
    pairs: list[tuple[str, str]] = []
    for b in bins:
        same = [c for c in pool if _colour(c) == _colour(b)]
        if same:
            pairs.append((same[0], b))
            pool.remove(same[0])
    for b in bins * each:
        if sum(p[1] == b for p in pairs) >= each:
            continue
        cube = _by_distance(world, pool, b)[0]
        pairs.append((cube, b))
        pool.remove(cube)
    pairs.sort(key=lambda p: bins.index(p[1]))
    verb = re.search(_VERB, text)
    said = ", then ".join(
        f"{verb.group(0) if verb else 'put'} {_say(o)} in {_say(b)}" for o, b in pairs
    )
    note = f"{m.group(0)!r}: " + "; ".join(f"{o} -> {b}" for o, b in pairs)
    # the whole clause becomes the list of moves
    clause = re.search(rf"(?:\b{_VERB}\b[^,;.]*)?{re.escape(m.group(0))}", text)
    span = clause.span() if clause else m.span()
    return Resolution(text[: span[0]] + said + text[span[1] :], [note])


def _count_ranked(text: str, world: WorldState, forbidden: set[str]) -> Resolution | None:
    """ "the two blocks closest to you", "the two leftmost cubes"."""
    m = _COUNT_SUP.search(text)
    if m is None or not (m.group("sup") or m.group("dist") or m.group("side")):
        return None
    count = L.NUMBERS[m.group("num")]
    names = [o.name for o in world.objects if o.name not in forbidden]
    if m.group("sup") or m.group("side"):
        axis, sign = L.SUPERLATIVES[m.group("sup") or m.group("side") + "most"]
        i = 0 if axis == "x" else 1
        ordered = sorted(names, key=lambda x: -sign * _xy(world, x)[i])
    else:
        point = _ref_point(world, m.group("ref")) or _ref_point(world, None)
        assert point is not None
        far = L.DISTANCE_WORDS[m.group("dist")] < 0
        ordered = sorted(names, key=lambda x: math.dist(_xy(world, x), point), reverse=far)
    return _chosen(text, m, ordered[:count], "are")


def _all_but(text: str, world: WorldState, forbidden: set[str]) -> Resolution | None:
    """ "all but one of the blocks", "half of the blocks"."""
    m = _ALL_BUT.search(text)
    if m is None:
        return None
    dest = _destination(text[m.end() :], world)
    pool = _by_distance(world, _movable(world, forbidden, dest), dest)
    total = len(world.objects)
    if m.group(0).startswith("half"):
        count = total // 2
    else:
        count = max(0, total - L.NUMBERS[m.group("num")])
    if count == 0 or len(pool) < count:
        raise Unresolvable(f"only {len(pool)} blocks can be moved there")
    return _chosen(text, m, pool[:count], "are")


def _count(text: str, world: WorldState, forbidden: set[str]) -> Resolution | None:
    """ "two blocks", "a couple of cubes", "two of the three cubes"."""
    m = _COUNT.search(text)
    if m is None:
        return None
    word = re.sub(r"\s+", " ", m.group("num"))
    count = L.NUMBERS.get(word, L.NUMBERS.get(word.replace(" of", ""), 2))
    dest = _destination(text[m.end() :], world)
    pool = _by_distance(world, _movable(world, forbidden, dest), dest)
    if len(pool) < count:
        raise Unresolvable(
            f"only {len(pool)} block{'s' if len(pool) != 1 else ''} can be moved there"
        )
    onto = re.match(
        rf"\s+(?:on|onto|on\s+top\s+of)\s+(?:the\s+)?(?:{_C})(?:\s+{_BLOCK})?\b"
        r"(?:\s*,?\s*(?:with\s+)?(?:one\s+on\s+(?:top\s+of\s+)?the\s+other|stacked|in\s+a\s+(?:tower|stack|pile)))?",
        text[m.end() :],
    )
    if onto and dest is not None and dest.endswith("_block") and count >= 2:
        # two blocks cannot both sit on one: "two blocks on the blue one (, one on the
        # other)" is a tower on it, nearest first
        chosen, below, steps = pool[:count], dest, []
        for cube in chosen:
            steps.append(f"stack {_say(cube)} on {_say(below)}")
            below = cube
        clause = re.search(rf"(?:\b{_VERB}\b\s+)?{re.escape(m.group(0))}", text)
        start = clause.start() if clause else m.start()
        note = f"{m.group(0)!r} in a tower on {_say(dest)}: " + ", ".join(chosen)
        return Resolution(
            text[:start] + ", then ".join(steps) + text[m.end() + onto.end() :], [note]
        )
    return _chosen(text, m, pool[:count], "are")


def totals(text: str, world: WorldState) -> Resolution:
    """A count said as what a bin must end up holding ("I need exactly two blocks in the red
    bin" with one there already; "make it so that each bin holds exactly one block"): the
    blocks still to add, as a plain count ("put a block in the red bin"). A bin that already
    holds its total adds nothing; one that holds more is left for the planners to refuse."""
    each = re.search(
        r"\b(?:make\s+(?:it\s+)?(?:so\s+)?(?:that\s+)?|make\s+sure\s+(?:that\s+)?|so\s+that\s+|i\s+want\s+|i\s+need\s+)?"
        r"(?:each|every)\s+(?:of\s+the\s+)?bins?\s+(?:holds|has|contains|gets|ends\s+up\s+with|to\s+(?:hold|have))\s+"
        r"(?:exactly\s+|just\s+|only\s+)?(?:one|a\s+single|1)\s+(?:block|cube)\b(?:\s+in\s+it|\s+inside)?"
        r"(?:[.!]\s*(?:no\s+more,?\s+no\s+less)?[.!]?)?",
        text,
    )
    loose = [o.name for o in world.objects if not o.in_bin and world.clear(o.name)]
    if each:
        empty = [b.name for b in world.bins if not any(o.in_bin == b.name for o in world.objects)]
        steps = [
            f"put {_say(c)} in the {b.replace('_', ' ')}"
            for b, c in zip(
                empty, _by_distance(world, loose, empty[0]) if empty else [], strict=False
            )
        ]
        note = f"{each.group(0).strip()!r}: " + (", ".join(steps) or "every bin holds one already")
        said = ", then ".join(steps) if steps else ""
        return Resolution(text[: each.start()] + said + text[each.end() :], [note])
    m = re.search(
        rf"\b(?:exactly|precisely|in\s+total|altogether|a\s+total\s+of)\s+(?P<n>one|two|three|four|[1-4])\s+(?:blocks?|cubes?)\s+"
        rf"(?:(?:sitting|lying|resting)\s+)?(?:in|into|inside)\s+(?:the\s+)?(?P<c>{_C})\s+bin\b",
        text,
    )
    if m is None:
        return Resolution(text, [])
    n = L.NUMBERS[m["n"]]
    have = sum(o.in_bin == f"{m['c']}_bin" for o in world.objects)
    if n <= have:
        return Resolution(text, [])
    verb = re.search(
        r"\b(?:i\s+(?:need|want)|(?:i'd|i\s+would)\s+like|get|put|place|make\s+sure\s+there\s+are)\s+$",
        text[: m.start()],
    )
    if re.search(r"\b(?:put|place|move|drop)\s+$", text[: m.start()]) and m.group(0).startswith(
        "exactly"
    ):
        return Resolution(text, [])  # "put exactly two blocks in the bin": two are moved
    start = verb.start() if verb else m.start()
    chosen = _by_distance(world, loose, f"{m['c']}_bin")[: n - have]
    if len(chosen) < n - have:
        return Resolution(text, [])
    said = ", then ".join(f"put {_say(c)} in the {m['c']} bin" for c in chosen)
    return Resolution(
        text[:start] + said + text[m.end() :], [f"{m.group(0)!r} with {have} there: {said}"]
    )


def _any_one(text: str, world: WorldState, forbidden: set[str]) -> Resolution | None:
    """ "any block", "a block", "one of the blocks": the robot picks one."""
    text = re.sub(
        r",?\s*(?:any\s+(?:of\s+them|one)(?:\s+will\s+do)?|(?:it\s+)?doesn't\s+matter\s+which(?:\s+one)?|"
        r"(?:i\s+)?(?:don't|do\s+not|dont)\s+care\s+which(?:\s+(?:one|block|cube|bin))?|"
        r"(?:your|you're)\s+(?:choice|call|pick)|you\s+(?:choose|pick|decide)|"
        r"whichever(?:\s+one)?(?:\s+you\s+like)?)\s*$",
        "",
        text,
    )
    m = _ANY.search(text)
    if m is None or not re.search(
        _VERB + r"|\bpick\b|\bgrab\b|\btake\b|\bwant\b|\bneed\b", text[: m.start()]
    ):
        return None
    if _SELECTORS[0][0].match(text, m.start()):
        return None  # "whichever block is stacked on another one": a selector, no free choice
    if re.fullmatch(r"(?:a|one)\s+\w+s", m.group(0)):
        return None  # "a blocks" is no reference
    taking = re.search(r"\b(?:take|remove|get|grab|pick|lift|fetch)\b", text[: m.start()])
    src = re.match(
        rf"\s+(?:out\s+of|from|in|inside)\s+(?:the\s+)?({_C})\s+bin\b",
        text[m.end() :],
    )
    if (
        src
        and not taking
        and not re.match(r"\s+(?:over\s+)?(?:to|into|in|onto|on)\b", text[m.end() + src.end() :])
    ):
        src = None  # "put a block in the red bin": the bin is where it goes
    if src:
        inside = [o.name for o in world.objects if o.in_bin == f"{src.group(1)}_bin"]
        if not inside:
            raise Unresolvable(f"there is no block in the {src.group(1)} bin")
        tail = text[m.end() + src.end() :]
        if re.match(r"\s+(?:over\s+)?(?:to|into|in|onto|on)\b", tail):
            # "move one of the blocks in the blue bin (over) to the red bin": the source said,
            # the destination is what the planners read
            text = text[: m.end()] + re.sub(r"^\s+over(?=\s)", "", tail)
        return _chosen(text, m, sorted(inside)[:1], "is")
    dest = _destination(text[m.end() :], world)
    # a cube named elsewhere in the request is not the one chosen ("put the red block on a
    # block": a block other than red)
    named = {f"{c}_block" for c in re.findall(rf"\b({_C})\b(?!\s+{_BIN})", text)}
    pool = _by_distance(world, _movable(world, forbidden | named, dest), dest)
    if not pool:
        raise Unresolvable("no block can be moved there")
    r = _chosen(text, m, pool[:1], "is")
    r.notes[0] += " (any one will do)"
    return r
