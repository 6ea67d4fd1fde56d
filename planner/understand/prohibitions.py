"""Prohibitions: "don't", "never", "leave X alone", "anywhere but", "without touching".

Why: a planner that sees "don't put the red block in the green bin" as a bag of words
plans exactly that motion. Here each clause gets a polarity. Negative clauses become
:class:`bridge.constraints.Constraints`, which the bridge enforces on every plan; only the
positive clauses are planned, and a colour named only under a negation is gone from the
text the planner (and the grounding check) reads, so it can never ground a motion. A bare
prohibition plans nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import planner.rx as re
from bridge import lexicon as L
from bridge.constraints import Constraints
from sim.world import WorldState

_C = "|".join(L.COLOURS)
_BIN = (
    r"(?:bin|bins|basket|baskets|container|containers|bucket|buckets|tub|tubs|crate|crates|"
    r"box|boxes)"
)
_BLOCK = r"(?:block|blocks|cube|cubes|brick|bricks|one|ones)"
_NEG = (
    r"(?:no\s+(?=\w+ing\b)|don't|dont|do\s+not|never|please\s+don't|please\s+do\s+not|no\s+need\s+to|"
    r"avoid|refrain\s+from|you\s+(?:must|should|may)\s*(?:not|n't)|you\s+mustn't|you\s+shouldn't|"
    r"make\s+sure\s+(?:you\s+)?(?:don't|do\s+not|not\s+to)|be\s+careful\s+not\s+to|try\s+not\s+to|"
    r"without(?:\s+(?:touching|moving|disturbing|using))?|not)"
)
_PROTECT = (
    r"(?:leave|keep|let)\s+(?P<what>[^,;.]+?)\s+(?:alone|where\s+(?:it|they)\s+(?:is|are|was|were)|"
    r"as\s+(?:it|they)\s+(?:is|are)|in\s+place|be|untouched|there|on\s+the\s+table|"
    r"out\s+of\s+(?:it|this))"
)
#: Clause boundaries a negative clause ends at.
_END = (
    r"(?=\s*(?:[,;.!]|\bbut\b|\band\s+(?:then\s+)?(?:put|place|move|stack|push|pick|drop)|"
    r"\bthen\b|$))"
)
_ANYWHERE_BUT = re.compile(
    rf"\b(?:anywhere|somewhere|any\s+bin|any\s+other\s+bin|another\s+bin|a\s+bin|one\s+of\s+the\s+bins)"
    rf"\s+(?:but|except|other\s+than|apart\s+from|besides|aside\s+from|that\s+is\s+not|that's\s+not)"
    rf"\s+(?:the\s+)?(?P<c>{_C})(?:\s+(?:one|{_BIN}))?"
    rf"|\b(?:in|into)\s+(?:a|any)\s+bin\s*,?\s+(?:but\s+|just\s+|only\s+)?not\s+(?:in\s+|into\s+)?"
    rf"the\s+(?P<c2>{_C})"
    rf"(?:\s+(?:one|{_BIN}))?"
)


@dataclass
class Reading:
    """The positive text to plan, the constraints, and what was read."""

    text: str
    constraints: Constraints = field(default_factory=Constraints)
    negated: list[str] = field(default_factory=list)

    @property
    def bare(self) -> bool:
        """Only prohibitions: nothing to plan."""
        rest = re.sub(
            r"\b(?:please|now|just|thanks|thank\s+you|ok|okay|and|but|so|for\s+now|for\s+today|today|"
            r"from\s+now\s+on|at\s+all|anymore|any\s+more|ever|again)\b",
            "",
            self.text,
        )
        return bool(self.negated) and not re.search(r"[a-z]", rest)


def _names(text: str, world: WorldState) -> tuple[set[str], set[str], bool]:
    """(cubes, bins, everything) a clause names."""
    cubes: set[str] = set()
    bins: set[str] = set()
    for m in re.finditer(rf"\b({_C})\b(?:\s+({_BIN}|{_BLOCK}))?", text):
        if m.group(2) and re.fullmatch(_BIN, m.group(2)):
            bins.add(f"{m.group(1)}_bin")
        else:
            cubes.add(f"{m.group(1)}_block")
    if re.search(
        r"\b(?:the|all\s+(?:the\s+)?|any|both|every)\s*(?:bins|boxes|containers|baskets)\b", text
    ):
        bins |= set(world.bin_names)  # "leave the bins alone": nothing goes in any of them
    every = bool(
        re.search(
            r"\b(?:anything|everything|any\s+(?:block|cube)s?|the\s+others?|"
            r"the\s+(?:other\s+)?blocks|all\s+(?:the\s+)?blocks)\b",
            text,
        )
    )
    return cubes, bins, every


def _clause_constraints(
    clause: str, world: WorldState
) -> tuple[set[str], set[str], set[tuple[str, str]]]:
    """What one negative clause forbids: cubes, targets and (cube, target) pairs."""
    objects: set[str] = set()
    targets: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    # split "X ... in/on Y" into the moved part and the destination part
    dest = re.search(
        rf"\b(?:in|into|inside|on|onto|on\s+top\s+of|to|near|next\s+to)\s+(?P<d>(?:the\s+)?"
        rf"(?:{_C})(?:\s+(?:{_BIN}|{_BLOCK}))?|(?:the\s+)?(?:left|right|front|back|middle|center|centre)"
        rf"(?:\s+of\s+the\s+table)?)",
        clause,
    )
    if dest is None:
        anybin = re.search(rf"\b(?:in|into|inside)\s+(?:the|a|any)\s+{_BIN}\b", clause)
        if anybin:
            cubes, _, every = _names(clause[: anybin.start()], world)
            movers = cubes or {Constraints.ANY}
            return objects, targets, {(o, b.name) for o in movers for b in world.bins}
    moved_part = clause[: dest.start()] if dest else clause
    cubes, bins, every = _names(moved_part, world)
    if dest:
        d = dest.group("d")
        dc, db, _ = _names(d, world)
        region = None
        for w, r in L.REGION_WORDS.items():
            if re.search(rf"\b{w}\b", d) and not (dc or db):
                region = r
        dnames = db | dc | ({region} if region else set())
        # a colour alone after "in" is a bin ("don't put it in green")
        if not db and dc and re.search(r"\b(?:in|into|inside)\b", dest.group(0)):
            dnames = {f"{c.split('_')[0]}_bin" for c in dc}
        for t in dnames:
            movers = cubes or ({Constraints.ANY} if every or not cubes else set())
            for o in movers:
                pairs.add((o, t))
        return objects, targets, pairs
    if bins and not cubes:
        targets |= bins  # "don't use the green bin", "never touch the blue bin"
    if every:
        objects |= {o.name for o in world.objects}
    objects |= cubes
    return objects, targets, pairs


def read(text: str, world: WorldState) -> Reading:
    """Split ``text`` into what to do and what not to do."""
    # "rule number one, ...", "number two: ...": the numbering of rules says nothing
    t = re.sub(
        r"\b(?:(?:rule|step)\s+(?:number\s+)?|number\s+)(?:one|two|three|four|five|[1-5])\s*[,:.)-]\s*",
        "",
        text,
    )
    negated: list[str] = []
    objects: set[str] = set()
    targets: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    skills: set[str] = set()
    # "anywhere but the green bin": forbid the bin, let the positive text keep a bin
    for m in list(_ANYWHERE_BUT.finditer(t))[::-1]:
        c = m.group("c") or m.group("c2")
        targets.add(f"{c}_bin")
        negated.append(m.group(0))
        start = m.start()
        pre = re.search(r"\b(?:in|into|to)\s+$", t[:start])
        if pre:
            start = pre.start()
        t = t[:start] + _allowed_bin(world, targets) + t[m.end() :]
        t = re.sub(
            r"\b(?:in|into)\s+(?:one\s+of\s+the\s+bins|a\s+bin|any\s+bin|some\s+bin)\s*,?\s*(?=in\s+the\b)",
            "",
            t,
        )
    # "don't forget the blue one" asks for more, it forbids nothing
    t = re.sub(
        r"(?:,?\s*\band\s+)?\b(?:don't|dont|do\s+not)\s+forget\s+(?:to\s+|about\s+)?",
        ", and also ",
        t,
    )
    t = re.sub(r"^\s*,\s*and\s+also\s+", "", t)
    # "no bin but the blue one gets used", "only use the blue bin": the other bins are off limits
    only = re.search(
        rf"\bno\s+(?:bin|box|basket)\s+(?:but|except|other\s+than|apart\s+from)\s+the\s+(?P<a>{_C})(?:\s+(?:one|bin))?\s+"
        r"(?:gets|is|may\s+be|can\s+be|should\s+be|is\s+to\s+be)\s+used|"
        rf"\b(?:only|just)\s+use\s+the\s+(?P<b>{_C})\s+bin|\buse\s+(?:only|just)\s+the\s+(?P<c>{_C})\s+bin",
        t,
    )
    if only:
        keep = f"{only['a'] or only['b'] or only['c']}_bin"
        targets |= {b.name for b in world.bins if b.name != keep}
        negated.append(only.group(0))
        t = re.sub(
            r"^[\s,.;]*(?:and\s+)?(?:then\s+)?", "", t[: only.start()] + " " + t[only.end() :]
        )
    # "..., then don't touch the yellow block": a prohibition for the whole request
    t = re.sub(
        r"(?<=\w)\s*,?\s+(?:and\s+)?then\s+(?=(?:don't|dont|do\s+not|never|hands\s+off|keep\s+(?:your\s+hands\s+)?off|stay\s+away|keep\s+away|"
        r"no\s+touching)\b)",
        ". ",
        t,
    )
    # "new rule: no stacking", "never stack anything": nothing may go on any block
    nostack = re.search(
        r"(?:^(?:new\s+rule|rule|from\s+now\s+on|house\s+rule)\s*[:,-]?\s*)?\b(?:no\s+(?:more\s+)?stacking|"
        r"(?:don't|dont|do\s+not|never)\s+stack\s+(?:anything|any\s+blocks?|blocks|them|anything\s+on\s+anything)(?:\s+ever)?)"
        r"(?:[\s,.!]*(?:not\s+today|not\s+ever|ever|not\s+now|at\s+all|period)\b)*[\s,.!]*"
        # "no stacking anything on the blue block" names its target: that is the pairs' reading
        r"(?!\s*(?:anything\s+|any\s+\w+\s+|\w+\s+)?(?:on|onto|upon|atop|on\s+top)\b)",
        t,
    )
    if nostack:
        pairs |= {(Constraints.ANY, o.name) for o in world.objects}
        negated.append(nostack.group(0).strip(" ,.!"))
        t = (t[: nostack.start()] + " " + t[nostack.end() :]).strip()
    t = _keep_out(t, targets, negated)
    t = _stays(t, objects, negated)
    t = _wishes(t)
    t = _else(t, world)
    gerund = _gerund(t, world)
    if gerund is not None:
        o, sk, pr, said = gerund
        cons = Constraints(frozenset(o), frozenset(), frozenset(pr), frozenset(sk))
        return Reading("", cons, [said])
    # "hands off X", "keep your hands off X", "stay away from X"
    t = re.sub(
        r"\b(?:keep\s+(?:your\s+)?hands\s+off|hands\s+off|stay\s+away\s+from|keep\s+away\s+from)\b",
        "don't touch",
        t,
    )
    t = re.sub(r"\bwhatever\s+you\s+do\s*,?\s*", "", t)
    t = re.sub(r"\s+though\s*([.!]?)$", r"\1", t)
    t = re.sub(r"\s+(?=without\s+(?:touching|moving|disturbing|using)\b)", ", ", t)
    t = _protect(t, world, objects, targets, skills, negated)
    # "don't ... " up to the end of its clause
    pattern = re.compile(
        rf"(?:^|(?<=[,;.!])|\bbut\b|\band\b|\bjust\b|\bplease\b)\s*{_NEG}\b(?P<body>.*?){_END}"
    )
    for m in list(pattern.finditer(t))[::-1]:
        body = m.group("body")
        dev = _device_skills(body, body)
        if dev and not re.search(rf"\b(?:{_C})\b", body):
            skills |= dev
            negated.append(m.group(0).strip())
            t = t[: m.start()] + " " + t[m.end() :]
            continue
        if not re.search(
            rf"\b(?:{_C}|anything|everything|any|blocks?|cubes?|bins?|others?|it|them)\b", body
        ):
            continue
        if re.match(r"\s*(?:only|just)\b", body):
            continue  # "not only ... but also" is no prohibition
        step = _forbidden_step(body, world)
        if step is not None:
            pairs |= step[0]
            skills |= step[1]
            negated.append(m.group(0).strip())
            t = t[: m.start()] + " " + t[m.end() :]
            continue
        o, tg, pr = _clause_constraints(body, world)
        if re.search(r"\b(?:it|them)\b", body) and not (o or tg or pr):
            continue
        objects |= o
        targets |= tg
        pairs |= pr
        negated.append(m.group(0).strip())
        t = t[: m.start()] + " " + t[m.end() :]
    t = re.sub(r"\s+", " ", t)
    pron = re.search(r"\b(?:it|them)\b", t)
    if negated and pron and not re.search(rf"\b(?:{_C})\s+(?:block|cube|one)\b", t[: pron.start()]):
        named = re.search(rf"\b({_C})\b(?!\s+{_BIN})", " ".join(negated))
        if named:  # "don't put the yellow one in the bin, stack it on red instead"
            t = re.sub(r"\b(?:it|them)\b", f"the {named.group(1)} block", t, count=1)
    t = re.sub(r"\binstead\b", "", t)
    t = re.sub(r"^[\s,;.]*(?:and|but|then|so)\b", "", t.strip())
    t = re.sub(r"(?:\s*[,;]?\s*\b(?:and|but|then|though)\b\s*)+$", "", t)
    t = re.sub(r"(?:\s*[,;]\s*(?:and|but|then)?\s*)+$", "", t).strip(" ,;.")
    t = re.sub(r"\s*,\s*(?:,\s*)+", ", ", t)
    if objects and re.search(
        r"\b(?:all|every|each|everything|the\s+rest|the\s+others|the\s+blocks|the\s+cubes)\b", t
    ):
        t = _exclude(t, objects)
    cons = Constraints(frozenset(objects), frozenset(targets), frozenset(pairs), frozenset(skills))
    return Reading(t, cons, negated)


#: A wish or a rule that forbids, said as the speaker's preference ("I don't want the red
#: block moved", "I'd rather you didn't touch blue", "the green bin is off limits"),
#: rewritten into the plain "don't ..." the clause reader knows.
_WISHES: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(
            rf"\bi\s+(?:really\s+)?(?:don't|dont|do\s+not)\s+want\s+(?P<x>(?:the\s+)?(?:{_C})"
            rf"(?:\s+(?:{_BLOCK}|{_BIN}))?|anything|any\s+(?:blocks?|cubes?))\s+(?:to\s+be\s+|being\s+|"
            rf"getting\s+|to\s+get\s+)?(?:moved|touched|disturbed|used|picked\s+up|stacked|pushed)\b"
        ),
        r"don't touch \g<x>",
    ),
    (
        re.compile(
            rf"\bi\s+(?:really\s+)?(?:don't|dont|do\s+not)\s+want\s+(?P<x>anything|any\s+(?:blocks?|cubes?)|"
            rf"(?:the\s+)?(?:{_C})(?:\s+{_BLOCK})?)\s+(?P<p>in|inside|on|on\s+top\s+of)\s+"
        ),
        r"don't put \g<x> \g<p> ",
    ),
    (
        re.compile(
            r"\bi\s+(?:really\s+)?(?:don't|dont|do\s+not)\s+want\s+(?:you\s+)?to\s+|"
            r"\bi(?:'d|\s+would)\s+(?:much\s+)?(?:rather|prefer)\s+(?:that\s+|if\s+)?you\s+(?:didn't|did\s+not|"
            r"don't|dont|do\s+not|not|wouldn't)\s+(?:to\s+)?|\bi\s+(?:forbid|prohibit)\s+you\s+(?:to\s+|from\s+)?|"
            r"\byou(?:'re|\s+are)\s+not\s+(?:allowed|supposed|permitted)\s+to\s+"
        ),
        "don't ",
    ),
    (
        re.compile(
            rf"\b(?P<x>(?:the\s+)?(?:{_C})(?:\s+(?:{_BLOCK}|{_BIN}))?)\s+(?:is|are)\s+"
            r"(?:off[\s-]+limits|not\s+to\s+be\s+(?:touched|moved|used)|out\s+of\s+bounds)\b"
        ),
        r"don't touch \g<x>",
    ),
]


#: A bare gerund prohibition forbids a kind of step: "no stacking", "no pushing please".
_NO_GERUND = re.compile(
    r"^(?:please\s+)?(?:no|don't\s+do\s+any|no\s+more)\s+(?P<g>stacking|pushing|moving|touching|picking|"
    r"grabbing|lifting|dropping|binning)(?:\s+(?:anything|things|blocks|cubes|stuff|today|now|please|for\s+now))*"
    r"\s*[.!]*$"
)


def _protect(
    t: str,
    world: WorldState,
    objects: set[str],
    targets: set[str],
    skills: set[str],
    negated: list[str],
) -> str:
    """ "leave X alone", "keep X where it is": what is named is protected (the sets grow)."""
    for m in list(re.finditer(_PROTECT, t))[::-1]:
        cubes, bins, every = _names(m.group("what"), world)
        dev = _device_skills(m.group("what"), "")
        if dev:
            skills |= dev
            negated.append(m.group(0))
            t = t[: m.start()] + " " + t[m.end() :]
            continue
        if not (cubes or bins or every):
            continue
        objects |= cubes | ({o.name for o in world.objects} if every else set())
        targets |= bins
        negated.append(m.group(0))
        t = t[: m.start()] + " " + t[m.end() :]
    return t


def _forbidden_step(body: str, world: WorldState) -> tuple[set[tuple[str, str]], set[str]] | None:
    """(pairs, skills) when a negative clause forbids a kind of step, not blocks: "don't push
    anything, just put ..." forbids the push skill; "don't stack anything" every stacking."""
    kind = _KIND_OF_STEP.match(body)
    if kind is None:
        return None
    if kind["v"] == "stack":
        return {(Constraints.ANY, o.name) for o in world.objects}, set()
    return set(), {"push"}


#: "push anything", "stack any blocks": a kind of step with no particular block.
_KIND_OF_STEP = re.compile(
    r"\s*(?:(?P<v>stack)|push|slide|shove|nudge|roll)\s+(?:anything|any\s+(?:of\s+the\s+)?(?:blocks?|cubes?)|"
    r"things|stuff|(?:the\s+)?blocks|(?:the\s+)?cubes)(?:\s+(?:at\s+all|today|now|please|around|up))*\s*$"
)


def _gerund(
    t: str, world: WorldState
) -> tuple[set[str], set[str], set[tuple[str, str]], str] | None:
    """(objects, skills, pairs, said) that a bare "no stacking" forbids, or None."""
    m = _NO_GERUND.match(t.strip())
    if m is None:
        return None
    g = m.group("g")
    if g == "stacking":
        return set(), set(), {(Constraints.ANY, o.name) for o in world.objects}, m.group(0)
    if g == "pushing":
        return set(), {"push"}, set(), m.group(0)
    if g == "binning":
        return set(), set(), {(Constraints.ANY, b.name) for b in world.bins}, m.group(0)
    return {o.name for o in world.objects}, set(), set(), m.group(0)


def _else(t: str, world: WorldState) -> str:
    """ "and do not move anything else", "but leave the others": every cube the request does
    not name (named, they stay out of the prohibition)."""
    m = re.search(
        r"(?:,?\s*(?:and|but)\s+|[,;]\s*)(?:(?:don't|dont|do\s+not|never)\s+(?:move|touch|disturb)\s+(?:anything|any(?:thing)?\s+"
        r"other|any\s+other\s+(?:block|cube)s?|the\s+others?|the\s+rest)(?:\s+else)?|leave\s+(?:the\s+others|the\s+rest|"
        r"everything\s+else|anything\s+else|the\s+other\s+(?:blocks|cubes|ones))(?:\s+(?:alone|be|where\s+they\s+are))?)\s*[.!]*$",
        t,
    )
    if m is None:
        return t
    named = {f"{c}_block" for c in re.findall(rf"\b({_C})\b(?!\s+{_BIN})", t[: m.start()])}
    others = [o.name for o in world.objects if o.name not in named]
    if not named or not others:
        return t
    said = " and ".join(f"the {o.split('_')[0]} block" for o in others)
    return t[: m.start()] + f", don't touch {said}"


def _wishes(t: str) -> str:
    # "would you mind not touching blue", "please refrain from moving red": "don't touch blue"
    t = re.sub(
        r"\b(?:would|do|could)\s+you\s+mind\s+not\s+(?P<g>[a-z]+ing)\b",
        lambda m: f"don't {L.GERUND_VERBS.get(m['g'], m['g'])}",
        t,
    )
    # "I'd prefer you leave red alone", "I would rather you kept blue where it is": the
    # preference is the protection that follows it
    t = re.sub(
        r"\bi(?:'d|\s+would)\s+(?:much\s+)?(?:rather|prefer|like)\s+(?:it\s+)?(?:that\s+|if\s+)?you\s+"
        r"(?=(?:leave|left|keep|kept|let)\b)",
        "",
        t,
    )
    t = re.sub(
        r"\b(?:left|kept)\b(?=\s+\S.*\b(?:alone|where|untouched|in\s+place|be)\b)",
        lambda m: {"left": "leave", "kept": "keep"}[m.group(0)],
        t,
    )
    # "could you not stack yellow on green", "there's no need to touch anything", "you don't
    # have to move red": each asks that it is not done
    t = re.sub(
        r"\b(?:(?:could|can|would|will)\s+you\s+(?:please\s+)?(?:just\s+)?not|there(?:'s|\s+is)\s+no\s+need\s+(?:for\s+you\s+)?to|"
        r"no\s+need\s+for\s+you\s+to|you\s+(?:don't|do\s+not|needn't|need\s+not)\s+(?:need\s+to|have\s+to)?|"
        r"you\s+needn't|you\s+need\s+not)\s+(?=(?:put|place|move|stack|push|touch|pick|take|grab|drop|knock|lift|"
        r"disturb|bother|shift|handle)\b)",
        "don't ",
        t,
    )
    # "nobody touches the red one until I say so": a rule for the robot too
    t = re.sub(
        r"\b(?:nobody|no\s+one|no-one)\s+(?:touches|moves|lays\s+a\s+finger\s+on)\b",
        "don't touch",
        t,
    )
    # "you never push anything off the edge": a rule
    t = re.sub(r"\byou\s+(?:must\s+|should\s+|will\s+)?never\s+", "never ", t)
    # "avoid the red block while you put the blue one in the bin": red is spared, blue goes
    t = re.sub(
        rf"\b(?:avoid|mind)\s+(?:touching\s+|hitting\s+|bumping\s+(?:into\s+)?|knocking\s+)?(?P<x>(?:the\s+)?(?:{_C})"
        rf"(?:\s+{_BLOCK})?)\s*,?\s+(?:while|when|as)\s+(?:you(?:'re|\s+are)?\s+)?(?P<g>[a-z]+ing\b)?",
        lambda m: f"don't touch {m['x']}, " + L.GERUND_VERBS.get(m["g"] or "", m["g"] or ""),
        t,
    )
    # "don't move a thing", "don't touch a single thing": anything
    t = re.sub(
        r"\b((?:don't|dont|do\s+not|never)\s+(?:move|touch|disturb|shift)\s+)(?:a\s+(?:single\s+)?thing|one\s+thing)\b",
        r"\1anything",
        t,
    )
    # "under no circumstances touch ...", "on no account move ...": a "don't"
    t = re.sub(
        r"\b(?:under\s+no\s+circumstances|on\s+no\s+account|in\s+no\s+case|at\s+no\s+point|by\s+no\s+means)\s*,?\s*"
        r"(?:should\s+you\s+|are\s+you\s+to\s+|may\s+you\s+|(?:you\s+)?(?:should|must|may)\s+)?",
        "don't ",
        t,
    )
    # "don't go near the ball", "stay away from the red block": don't touch it
    t = re.sub(
        r"\b(don't|dont|do\s+not|never)\s+(?:go|get|come|reach)\s+(?:anywhere\s+)?(?:near|close\s+to|next\s+to)\b",
        r"\1 touch",
        t,
    )
    t = re.sub(r"\b(?:stay|keep)\s+(?:well\s+)?(?:away|clear)\s+(?:from|of)\b", "don't touch", t)
    # "do not, under any circumstances, touch ...": the aside goes, the "do not" stays
    t = re.sub(
        r"\b(don't|dont|do\s+not|never)\s*,?\s*(?:under\s+any\s+circumstances|ever|at\s+all|whatever\s+happens|"
        r"no\s+matter\s+what|for\s+any\s+reason|i\s+repeat)\s*,?\s*",
        r"\1 ",
        t,
    )
    t = re.sub(
        r"\b(?:nothing|no\s+blocks?|no\s+cubes?)\s+(?:goes|should\s+go|may\s+go|is\s+to\s+go|can\s+go|gets\s+put|"
        r"should\s+be\s+put|is\s+allowed)\s+(in|into|inside|on|onto)\s+",
        r"don't put anything \1 ",
        t,
    )
    for pattern, repl in _WISHES:
        t = pattern.sub(repl, t)
    return t.replace("don't moving", "don't move")


def _device_skills(what: str, verb_text: str) -> set[str]:
    """The skills a prohibition about the drawer, the light or the button forbids."""
    out: set[str] = set()
    if re.search(r"\bdrawer\b", what):
        if re.search(r"\bopen", verb_text):
            out.add("open_drawer")
        elif re.search(r"\b(?:close|shut)", verb_text):
            out.add("close_drawer")
        else:
            out |= {"open_drawer", "close_drawer"}
    if re.search(r"\b(?:light|lamp|button|switch)\b", what):
        out.add("press_button")
    return out


def _allowed_bin(world: WorldState, forbidden: set[str]) -> str:
    for b in world.bins:
        if b.name not in forbidden:
            return f"in the {b.name.split('_')[0]} bin"
    return "in the bin"


def _exclude(text: str, objects: set[str]) -> str:
    """ "put all blocks in the green bin" + forbidden red -> "... except the red block"."""
    if re.search(r"\bexcept\b", text):
        extra = " and ".join(f"the {o.split('_')[0]} block" for o in sorted(objects))
        return re.sub(r"\bexcept\b", f"except {extra} and", text, count=1)
    m = re.search(
        r"\b(?:all|every|each|everything)\b(?:\s+(?:of\s+)?(?:the\s+)?(?:other\s+)?"
        r"(?:blocks?|cubes?|bricks?|ones?))?|\bthe\s+(?:rest|others|blocks|cubes)\b",
        text,
    )
    if m is None:
        return text
    said = " and ".join(f"the {o.split('_')[0]} block" for o in sorted(objects))
    head = m.group(0)
    if re.fullmatch(r"the\s+(?:rest|others)", head):
        head = "all the blocks"  # "leave green where it is and put the others in ..."
    return text[: m.start()] + head + f" except {said}" + text[m.end() :]


def _keep_out(t: str, targets: set[str], negated: list[str]) -> str:
    """ "keep everything out of the red bin": the bin is off limits."""
    for m in list(
        re.finditer(
            rf"\b(?:keep|leave)\s+(?:everything|anything|all\s+(?:the\s+)?blocks|the\s+blocks|blocks)\s+"
            rf"out\s+of\s+(?:the\s+)?(?P<c>{_C})\s+{_BIN}|\b(?:keep|leave)\s+(?:the\s+)?(?P<c2>{_C})\s+{_BIN}\s+"
            rf"(?:empty|clear|free)",
            t,
        )
    )[::-1]:
        targets.add(f"{m.group('c') or m.group('c2')}_bin")
        negated.append(m.group(0))
        t = t[: m.start()] + " " + t[m.end() :]
    return t


def _stays(t: str, objects: set[str], negated: list[str]) -> str:
    """ "X and Y stay (where they are)", "those stay": what is named (or excluded) stays."""
    stay = re.search(
        rf"(?:,\s*)?\b(?:those|these|they|(?:the\s+)?(?:{_C})(?:\s+(?:and|&)\s+(?:the\s+)?(?:{_C}))*"
        rf"(?:\s+(?:ones?|blocks?|cubes?))?)\s+(?:stay|stays|remain|remains)(?:\s+(?:put|where\s+(?:they|it)\s+(?:are|is)|"
        rf"on\s+the\s+table))?\b",
        t,
    )
    if stay:
        said = re.findall(rf"\b({_C})\b", stay.group(0))
        if not said:
            ex = re.search(
                rf"\b(?:except(?:\s+for)?|apart\s+from|other\s+than|besides|but\s+not)\s+((?:(?:the|and|&|,)\s*|"
                rf"(?:{_C})\s*|(?:ones?|blocks?|cubes?)\s*)+)",
                t,
            )
            said = re.findall(rf"\b({_C})\b", ex.group(1)) if ex else []
        objects |= {f"{c}_block" for c in said}
        negated.append(stay.group(0).strip(" ,"))
        t = t[: stay.start()] + t[stay.end() :]
    return t
