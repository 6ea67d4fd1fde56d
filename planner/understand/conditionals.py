"""Conditionals on the current world: "if ... , otherwise ...", "unless", "when".

Why: "if the green bin is empty put the red block in it, otherwise in the blue bin" is
one of two commands depending on the scene, and the scene is known exactly. The condition
is read by :mod:`planner.understand.facts` and evaluated on the world state; the branch
that applies is planned, the other is dropped. A condition the reader does not know is not
guessed: the caller refuses with the condition named.
"""

from __future__ import annotations

from dataclasses import dataclass

import planner.rx as re
from bridge import lexicon as L
from planner.understand import facts
from sim.world import WorldState

_C = "|".join(L.COLOURS)
_ELSE = (
    r"(?:[,;.]?\s*(?:otherwise|else|if\s+not|or\s+else|and\s+if\s+not|if\s+it\s+is\s+not|"
    r"if\s+it's\s+not|if\s+(?:it's|it\s+is|the\s+drawer\s+is|the\s+drawer's)\s+(?:shut|closed)|"
    r"if\s+(?:it's|it\s+is|the\s+light\s+is)\s+(?:off|on))\s*[,;]?\s*)"
)


@dataclass
class Branch:
    """The text that applies (may be empty: nothing to do), and why."""

    text: str
    note: str


class UnknownCondition(Exception):
    """The condition is not one the robot can check."""


def _decide(cond: str, world: WorldState) -> bool:
    c = cond.strip().rstrip(",")
    c = re.sub(r"^(?:there's)\b", "there is", c)
    # the state now is what is checked: "isn't in a bin yet", "is still on the table"
    c = re.sub(
        r"\s+(?:yet|already|still|anymore|any\s+more|by\s+now|right\s+now|at\s+the\s+moment|"
        r"currently|now|at\s+all)\b",
        "",
        c,
    ).strip()
    on = re.fullmatch(
        rf"(?:the\s+)?(?P<o>{_C})(?:\s+(?:block|cube|brick|one))?\s+(?P<n>is\s+not|isn't|is)\s+(?:stacked|sitting|resting|"
        r"standing|lying)?\s*on\s+(?:top\s+of\s+)?(?:something|anything|another\s+(?:block|cube|one)|a\s+(?:block|cube))",
        c,
    )
    if on:
        # "if the yellow block is stacked on something": whether it rests on another
        o = world.object(f"{on['o']}_block")
        if o is None:
            raise UnknownCondition(cond.strip())
        return (o.on is not None) != (on["n"] != "is")
    more = re.fullmatch(
        rf"(?:the\s+)?(?P<a>{_C})\s+bin\s+(?:has|holds|contains|has\s+got)\s+(?P<q>more|fewer|less)\s+"
        rf"(?:(?:blocks?|cubes?|things|objects)\s+)?(?:in\s+it\s+)?than\s+(?:the\s+)?(?P<b>{_C})\s+bin"
        r"(?:\s+(?:does|has|do))?(?:\s+in\s+it)?",
        c,
    )
    if more:
        # "if the blue bin has more blocks in it than the red bin": counted in the world
        n = {b.name: sum(o.in_bin == b.name for o in world.objects) for b in world.bins}
        a, b = n.get(f"{more['a']}_bin"), n.get(f"{more['b']}_bin")
        if a is None or b is None:
            raise UnknownCondition(cond.strip())
        return a > b if more["q"] == "more" else a < b
    fact = facts.read(c, world)
    if fact is None:
        # "you are holding nothing", "the green bin has nothing in it"
        m = re.fullmatch(rf"(?:the\s+)?({_C})\s+bin\s+has\s+nothing(?:\s+in\s+it)?", c)
        if m:
            fact = facts.read(f"the {m.group(1)} bin is empty", world)
    if fact is None:
        raise UnknownCondition(cond.strip())
    return fact.holds(world)


def _about_the_world(cond: str) -> bool:
    """A condition that claims something of the scene (so an unread one is refused, not
    ignored): a copula with a cube, a bin, the drawer, the light or the gripper."""
    return bool(
        re.search(r"\b(?:is|are|isn't|aren't|'s|has|have|holds?|contains?)\b", cond)
        and re.search(rf"\b(?:{_C}|bin|block|cube|drawer|light|lamp|gripper|hand|holding)\b", cond)
    )


def _pronoun(text: str, cond: str) -> str:
    """ "it" in the branch: the condition's bin after a preposition, else its cube."""
    bin_m = re.search(rf"\b({_C})\s+bin\b", cond)
    cube_m = re.search(
        rf"\b({_C})\s+(?:block|cube|brick|one)\b|^(?:the\s+)?({_C})\b(?!\s+bin)", cond
    )
    if re.search(r"\b(?:light|lamp)\b", cond):
        # "if the light is off, turn it on"
        text = re.sub(r"\b(turn|switch)\s+it\s+(on|off)\b", r"\1 \2 the light", text)
    if re.search(r"\bdrawer\b", cond) and not bin_m:
        text = re.sub(r"\b(in|into|inside)\s+(?:it|there)\b", r"\1 the drawer", text)
    if bin_m:
        # "move one of them over to the red bin": one of the blocks in the condition's bin
        text = re.sub(
            r"\b(one|two|some|any)\s+of\s+(?:them|those)\b",
            lambda m: f"{m.group(1)} of the blocks in the {bin_m.group(1)} bin",
            text,
        )
        text = re.sub(r"\b(?<!in\s)(?<!into\s)there\b", "in there", text)
        text = re.sub(
            r"\b(in|into|inside|on|onto)\s+(?:it|there)\b",
            lambda m: f"{m.group(1)} the {bin_m.group(1)} bin",
            text,
        )
    if cube_m:
        col = cube_m.group(1) or cube_m.group(2)
        text = re.sub(
            r"\b(put|place|move|drop|take|pick|grab|push|stack)\s+it\b",
            lambda m: f"{m.group(1)} the {col} block",
            text,
        )
    return text


_ACT = (
    r"(?:put|place|move|stack|push|pick|drop|take|grab|go|leave|open|close|press|turn|set|"
    r"bring|slide|lift|toss|throw|sort)"
)


def _comma_after_condition(t: str) -> str:
    """ "if the bin is empty put red in it" -> "if the bin is empty, put red in it"."""
    m = re.match(r"^(?:if|when|unless)\s+", t)
    if m is None:
        return t
    rest = t[m.end() :]
    v = None
    for cand in re.finditer(rf"\s(?:then\s+)?(?={_ACT}\b)", rest):
        if re.search(r"(?:'s|\bis|\bare|n't|\bnot)\s*$", rest[: cand.start()]):
            continue  # "if the drawer's open": a state, not the action
        v = cand
        break
    if v is None or "," in rest[: v.start()]:
        return t
    cut = m.end() + v.start()
    return t[:cut] + "," + t[cut:]


def _in_which_case(t: str) -> str:
    """ "put red on yellow, unless yellow is in a bin, in which case put it on green" ->
    "if yellow is in a bin, put red on green, otherwise put red on yellow" ("it" in the
    second branch is what the first one moves)."""
    m = re.match(
        r"^(?P<a>.+?)\s*,?\s+unless\s+(?P<cond>.+?)\s*[,;]?\s+in\s+which\s+case\s*,?\s*(?:then\s+)?(?P<b>.+)$",
        t,
    )
    if m is None:
        return t
    b = m["b"]
    mover = re.search(rf"\b({_C})(?:\s+(?:block|cube|brick|one))?\b(?!\s+bin)", m["a"])
    if mover:
        b = re.sub(
            r"\b(put|place|move|stack|set|drop|push|slide)\s+(?:it|that\s+one)\b",
            lambda k: f"{k.group(1)} the {mover.group(1)} block",
            b,
        )
    return f"if {m['cond']}, {b}, otherwise {m['a']}"


def split(text: str, world: WorldState) -> Branch | None:
    """The branch of a conditional that applies, or None when ``text`` has no condition."""
    t = _comma_after_condition(_in_which_case(text.strip()))
    # if COND (,|then) A (otherwise B)?
    m = re.match(
        rf"^(?:(?:and|so)\s+)?(?P<kw>if|when|in\s+case|provided\s+(?:that\s+)?|assuming\s+(?:that\s+)?|unless|"
        rf"(?:as|so)\s+long\s+as|only\s+if|whenever)\s+"
        rf"(?P<cond>.+?)(?:\s*,\s*(?:then\s+)?|\s+then\s+)(?P<a>.+?)(?:{_ELSE}(?P<b>.+))?$",
        t,
    )
    if m is None:
        # A if COND (, otherwise B)? / A unless COND
        m = re.match(
            rf"^(?P<a>.+?)\s*,?\s+(?:but\s+)?(?:only\s+)?(?P<kw>if|unless|as\s+long\s+as|provided)\s+"
            rf"(?P<cond>.+?)(?:{_ELSE}(?P<b>.+))?$",
            t,
        )
    if m is None:
        return None
    cond = m.group("cond")
    a_tail = ""
    if (
        m.group("b") is None
        and "," in cond
        and not m.group("a").startswith(("if", "when", "unless"))
    ):
        # "A if C, then B": the condition ends at its comma, the rest goes on after A
        cond, a_tail = cond.split(",", 1)
    if re.match(r"(?:you\s+can|possible|you\s+want|needed|necessary)\b", cond):
        return None  # "if you can" / "if possible" are politeness, not conditions
    a_text, b_text = m.group("a"), m.group("b")
    if a_tail.strip():
        a_text = f"{a_text}, {a_tail.strip()}"
    # "if C, X, then Y": Y is the next step whatever C says (when nothing says "otherwise")
    after = ""
    if b_text is None:
        k = re.search(r",\s*(?:and\s+)?then\s+", a_text)
        if k:
            a_text, after = a_text[: k.start()], a_text[k.end() :]
    cond = _referents(cond, a_text)
    a_text = _action_referents(cond, a_text)
    try:
        holds = _decide(cond, world)
    except UnknownCondition:
        if _about_the_world(cond):
            raise
        return None  # "if you would take ...", "if it's safe to do so": no condition
    if m.group("kw").startswith("unless"):
        holds = not holds
    chosen = _branch(a_text if holds else (b_text or ""), holds, cond, a_text, m.group("a"), world)
    true = holds != m.group("kw").startswith("unless")
    note = f"condition {cond.strip()!r} is {'true' if true else 'false'}"
    if after:
        chosen = f"{chosen}, then {after}" if chosen else after
    return Branch(chosen, note)


def _branch(chosen: str, holds: bool, cond: str, a_text: str, a_raw: str, world: WorldState) -> str:
    """The chosen branch with its pronouns resolved and, for an "otherwise" with no verb,
    the first branch's verb and object."""
    top = re.match(
        rf"(?:anything|something|a\s+block)\s+is\s+(?:stacked\s+)?on\s+(?:top\s+of\s+)?(?:the\s+)?({_C})",
        cond,
    )
    if top and world.object(f"{top.group(1)}_block") is not None:
        above = world.top_of_stack(f"{top.group(1)}_block")
        if above and above != f"{top.group(1)}_block":  # "take it off": the cube on top
            chosen = re.sub(r"\b(?:it|them)\b", f"the {above.split('_')[0]} block", chosen)
    chosen = _pronoun(chosen.strip(" ,."), cond)
    if chosen and not holds and re.search(r"\b(?:it|them)\b", chosen):
        obj = re.search(rf"\b(?:the\s+)?({_C})(?:\s+(?:block|cube|brick|one))?\b(?!\s+bin)", a_text)
        if obj:  # "otherwise put it in the blue bin": "it" is the first branch's cube
            chosen = re.sub(r"\b(?:it|them)\b", f"the {obj.group(1)} block", chosen, count=1)
    # "otherwise in the blue bin": a branch with no verb borrows the first branch's
    if (
        chosen
        and not holds
        and not re.match(
            r"(?:put|place|move|stack|push|pick|drop|take|go|leave|open|close|press|turn)\b", chosen
        )
    ):
        verb_obj = re.match(r"(?P<vo>.+?)\s+(?=(?:in|into|on|onto|to)\b)", _pronoun(a_raw, cond))
        if verb_obj:
            chosen = f"{verb_obj.group('vo')} {chosen}"
    return chosen


def _action_referents(cond: str, action: str) -> str:
    """ "if the red block is on the table, stack the blue one on it": "it" in the action is
    the cube the condition is about (its subject, the only cube it names)."""
    named = re.findall(rf"\b(?:the\s+)?({_C})\s+(?:block|cube|brick|one)\b", cond)
    bin_named = re.findall(rf"\b({_C})\s+bin\b", cond)
    if len(set(bin_named)) == 1 and re.search(r"\b(?:there|in\s+it|into\s+it)\s*$", action):
        # "as long as the green bin is empty, put the blue block there"
        action = re.sub(r"\b(?:there|in\s+it|into\s+it)\s*$", f"in the {bin_named[0]} bin", action)
    if len(set(named)) == 1 and re.search(r"\b(?:on|onto|on\s+top\s+of)\s+it\b", action):
        # "if there's nothing on the red block, stack blue on it": what goes on it is the
        # only cube the condition names
        return re.sub(
            r"\b(on|onto|on\s+top\s+of)\s+it\b",
            lambda m: f"{m.group(1)} the {named[0]} block",
            action,
            count=1,
        )
    subject = re.match(rf"(?:the\s+)?({_C})\s+(?:block|cube|brick|one)\b", cond)
    if subject is None or len(set(named)) != 1 or not re.search(r"\bit\b", action):
        return action  # "if anything is on the blue block, take it off": it is not blue
    return re.sub(r"\bit\b", f"the {named[0]} block", action, count=1)


def _referents(cond: str, action: str) -> str:
    """ "it"/"there" in a condition: the action's cube, or its bin ("put the green block in
    the blue bin unless there's already something in there")."""
    cube = re.search(rf"\b(?:the\s+)?({_C})\s+(?:block|cube|brick|one)\b", action)
    bin_ = re.search(rf"\b(?:in|into)\s+(?:the\s+)?({_C})\s+bin\b", action)
    if bin_ and not re.search(rf"\b(?:{_C})\s+bin\b", cond):
        cond = re.sub(r"\bin\s+(?:there|it)\b", f"in the {bin_.group(1)} bin", cond)
        # "unless it's already there": there is where the action puts it
        cond = re.sub(r"\b(?:over\s+)?there\s*$", f"in the {bin_.group(1)} bin", cond)
    if bin_ and re.match(
        r"(?:it's|it\s+is)\s+(?:still\s+|already\s+)?(?:not\s+)?(?:empty|full)\b", cond
    ):
        # "put the blue block in the red bin if it's empty": only a bin is empty
        cond = re.sub(r"^(?:it's|it\s+is)\b", f"the {bin_.group(1)} bin is", cond)
    if cube:
        cond = re.sub(r"^(?:it's|it\s+is)\b", f"the {cube.group(1)} block is", cond)
        cond = re.sub(r"^it\b", f"the {cube.group(1)} block", cond)
    else:
        device = re.search(r"\b(drawer|light|lamp)\b", action)
        states = r"(?:already\s+|still\s+)?(?:open|opened|closed|shut|on|off|lit)\b"
        if device and re.match(rf"(?:it's|it\s+is|it)\s+{states}", cond):
            # "close the drawer unless it's already closed" (not "if it's dark in here")
            cond = re.sub(r"^(?:it's|it\s+is)\b", f"the {device.group(1)} is", cond)
            cond = re.sub(r"^it\b", f"the {device.group(1)}", cond)
    cond = re.sub(r"^there's\b", "there is", cond)
    cond = re.sub(r"\b(?:already|still)\s+", "", cond)
    return cond
