"""Questions and statements about the world, answered from the world state.

Why: a question executed as an order is the most dangerous misreading a planner can make
("is the red block in the green bin?" must never move the red block). Anything that reads
as a question or a plain statement is answered here in one sentence and nothing moves; a
question this module cannot answer still moves nothing (it says what it can answer).
"""

from __future__ import annotations

import math

import planner.rx as re
from bridge import lexicon as L
from planner.understand import facts
from planner.understand import references as refs
from sim import scene
from sim.world import WorldState

_C = "|".join(L.COLOURS)
_OTHER_C = "|".join(sorted(L.OTHER_COLORS))
_BIN = refs._BIN
_POLITE = re.compile(
    r"^(?:hey\s+|ok\s+|okay\s+|so\s+|robot,?\s+)*(?:please\s+)?(?:can|could|would|will|won't)"
    r"\s+(?:you|u)\s+(?:please\s+|kindly\s+|maybe\s+|just\s+)?(?P<verb>[a-z]+)"
)
#: Words before a question that say nothing ("wait, is ...", "oh and where ...").
_LEAD = (
    r"(?:(?:hey|ok|okay|so|robot|um+|uh+|wait|oh|hmm+|well|and|but|also|actually|sorry|btw|just|now|"
    r"by\s+the\s+way|excuse\s+me|just\s+curious|out\s+of\s+curiosity|quick\s+question|quick\s+one|"
    r"one\s+more\s+thing|real\s+quick)[\s,:!-]+)*"
)
_ASKS = re.compile(
    rf"^{_LEAD}"
    r"(?:is|are|was|were|does|do|did|has|have|where|what|what's|whats|which|how|who|why|"
    r"tell\s+me|can\s+you\s+(?:see|tell|reach|find|spot)|could\s+you\s+tell|do\s+you\s+(?:know|see)|"
    r"i\s+wonder|any\s+idea|show\s+me\s+where|is\s+there|are\s+there|isn't|aren't|wasn't|doesn't|"
    r"show\s+me\s+the\s+\w+\s+(?:block|cube|brick|one|bin)\s*[?.!]*$|point\s+(?:to|at|out)|locate)\b"
)
_HYPOTHETICAL = re.compile(
    r"^(?:what\s+would\s+you\s+do\s+if\s+i\s+(?:told|asked)\s+you\s+to|if\s+i\s+(?:told|asked)\s+you\s+to|"
    r"what\s+(?:would|will|could)\s+happen\s+if|what\s+if|what\s+happens\s+if|"
    r"would\s+it\s+work\s+if|suppose|imagine|hypothetically,?)\s+(?:you\s+|i\s+)?(?P<cmd>.+)$"
)
#: "how would you stack red on blue?", "what's your plan for sorting them?": the steps,
#: told and not taken.
_HOW_WOULD = re.compile(
    r"^(?:how\s+(?:would|will|do|could|can|should)\s+you\s+|how\s+(?:would\s+|to\s+)?|"
    r"what(?:'s|\s+is|\s+would\s+be)\s+your\s+plan\s+(?:for|to)\s+|walk\s+me\s+through\s+how\s+you(?:'d|\s+would)\s+)"
    r"(?P<cmd>(?:put|place|stack|move|push|pick|take|sort|open|close|press|build|drop|get|tidy|clean|sorting|"
    r"stacking|putting|moving|pushing|picking|opening|closing|pressing|building)\b.*)$"
)
#: Lead-ins of an observation ("looks like ...", "I see ...", "apparently ...").
_OBSERVED = (
    r"(?:(?:i\s+(?:think|believe|guess|suppose|reckon)|i'm\s+(?:pretty\s+)?sure|"
    r"(?:it\s+)?looks\s+like|(?:it\s+)?seems\s+(?:like|that|as\s+if)?|i\s+(?:can\s+)?(?:see|notice)|"
    r"i\s+noticed|apparently|so|oh|hmm+|ok(?:ay)?\s+so|(?:it\s+)?appears|as\s+far\s+as\s+i\s+can\s+tell)"
    r"[\s,]+(?:that\s+)?)"
)
#: A tag that makes a statement a yes/no question ("the green cube is on the table, right?").
_TAG = re.compile(
    r"[\s,]+(?:right|correct|yes|yeah|yep|no|true|innit|isn't\s+it|is\s+it\s+not|aren't\s+they|"
    r"isn't\s+that\s+(?:so|right|true)|am\s+i\s+right|don't\s+you\s+think|or\s+not|hasn't\s+it|"
    r"didn't\s+it|haven't\s+they|have\s+i\s+got\s+(?:that|it)\s+right|is\s+that\s+right|"
    r"did\s+i\s+get\s+that\s+right)\s*[?!.]*$"
)
_COPULA_STATEMENT = re.compile(
    rf"^{_OBSERVED}?"
    rf"(?:the\s+)?(?:(?:{_C})\s+(?:block|cube|brick|one|bin|basket)|drawer|light|lamp|"
    rf"gripper|hand|table|scene|workspace|everything|room|bins|blocks|cubes)(?:\s+(?:seems|appears|looks)\s+to\s+be|\s+(?:is|are|looks|seems|appears|feels)|'s)\s+"
    r"(?!to\b|supposed\b|meant\b|going\b|gonna\b)"
)


_GERUNDS = "|".join(
    "putting placing moving dropping stacking pushing sliding taking grabbing picking lifting "
    "tossing popping setting bringing getting opening closing shutting pressing turning "
    "switching sorting".split()
)
_REQUEST = re.compile(
    rf"\b(?:(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+|possibly\s+|kindly\s+|maybe\s+|"
    rf"just\s+|like\s+|perhaps\s+)*(?P<verb>[a-z]+)|would\s+you\s+mind\s+(?:{_GERUNDS})|"
    rf"(?:would|could)\s+it\s+be\s+possible\s+(?:for\s+you\s+)?to\s+(?P<verb2>[a-z]+)|"
    rf"(?:i'd|i\s+would)\s+(?:like|love)\s+(?:it\s+if\s+)?you\s+(?:to\s+)?(?P<verb3>[a-z]+))"
)


def _is_request(t: str) -> bool:
    """A polite command anywhere in the text ("when you get a moment, could you pop ...",
    "would you mind putting ...", "put it on red, would you?")."""
    for m in _REQUEST.finditer(t):
        verb = m.group("verb") or m.group("verb2") or m.group("verb3")
        if verb is None or verb in L.ACTION_VERBS or verb in ("pop", "kindly"):
            return True
    if re.search(r",\s*(?:would|could|will|can|won't)\s+you\s*\??\s*$", t):
        return any(w in L.ACTION_VERBS for w in re.findall(r"[a-z]+", t))
    return False


_CAN_DO = re.compile(
    r"^(?:hey\s+|so\s+|robot,?\s+)?(?:can|could|do|will)\s+you\s+(?:even\s+|actually\s+)?(?P<v>push|stack|pick\s+up|pick|lift|move|grab|carry|"
    r"open|close|press|sort|throw|fly|jump|talk|see|rotate|turn|spin|slide)\s+(?P<o>blocks|cubes|things|objects|stuff|"
    r"drawers|buttons|bins)(?:\s+(?:at\s+all|too|as\s+well|up))?\s*\?+$"
)


_CANNOT = re.compile(
    r"^(?:hey\s+|so\s+|robot,?\s+)?(?:can|could|do|will)\s+you\s+(?:even\s+|actually\s+)?(?P<v>fly|jump|dance|sing|walk|"
    r"swim|cook|smell|drive|run|write|draw|paint)\b[^,;]*\?+$"
)


def is_capability(text: str) -> bool:
    """ "can you push blocks?": a question about what the robot can do (a kind of thing,
    not a thing of the scene), never a request to do it."""
    t = text.strip().lower()
    return _CAN_DO.match(t) is not None or _CANNOT.match(t) is not None


#: "can you get to the green block?", "are you able to reach it?": whether it is in reach.
_REACH = re.compile(
    r"^(?:(?:can|could)\s+you\s+(?:get\s+(?:to|at)|reach)|(?:are\s+you\s+able|is\s+it\s+possible"
    r"(?:\s+for\s+you)?)\s+to\s+(?:get\s+(?:to|at)|reach))\s+(?=(?:the|a|an|that|this)\b)"
)
#: "can you not see the red block?", "can't you see ...": asked as "can you see ..."
_SEE = re.compile(r"^(?:can't|cannot|can|could(?:n't)?)\s+you\s+(?:not\s+)?(?=see\b)")


#: "can you check whether ...", "could you look and see if ...": a yes/no question asked
#: politely; what the person will do after ("before I put my keys in it") asks nothing.
_CHECK = re.compile(
    r"^(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|please\s+)?(?:check|look|see|find\s+out|make\s+sure|confirm|"
    r"verify|tell\s+me)(?:\s+and\s+see)?\s+(?:whether|if)\s+|^(?:before\s+i\s+[^:,]+[:,]\s*)?(?:please\s+)?(?:confirm|verify)"
    r"\s+(?:that\s+|for\s+me\s+that\s+)?(?=(?:the|your|you|nothing|no)\b)"
)
_AFTERWARDS = re.compile(r"\s+(?:before|so\s+that|so|because|since|as|when)\s+(?:i|we)\b[^?]*")


def is_question(text: str) -> bool:
    """Whether ``text`` asks rather than orders. A polite command ("can you put the red
    block in the bin?") is an order; "can you see the red block?" is a question; a question
    followed by an order ("where's the pink block, put it in the blue bin") is an order."""
    t = text.strip().lower()
    if re.search(
        r"[,;?]\s*(?:and\s+|then\s+)?(?:please\s+)?(?:put|place|move|stack|push|pick|drop|take|grab)\b",
        t,
    ):
        return False
    t = _SEE.sub("can you ", _REACH.sub("can you reach ", t))
    if _CHECK.match(t) or (
        re.match(r"^if\s+i\s+(?:told|asked)\s+you\s+to\b", t)
        and re.search(r",\s*(?:which|what|how|where|would|could)\b[^,]*\?$", t)
    ):
        # "can you check whether the drawer is empty (before I put ...)?"; "if I asked you
        # to stack ..., which block would you pick up first?"
        return True
    m = _POLITE.match(t)
    if (
        m
        and m.group("verb") in ("reach", "see", "find", "spot")
        and re.search(
            r"\s(?:and|then)\s+(?:then\s+)?(?:put|place|move|stack|push|pick|drop|take|grab)\b", t
        )
    ):
        return False  # "can you reach the red block and put it in the bin?": a request
    if not (m and m.group("verb") in ("tell", "see", "reach", "find", "spot", "count", "say")):
        if _is_request(t):
            return False
    if m and m.group("verb") in L.ACTION_VERBS:
        return False
    if (
        m
        and m.group("verb")
        in (
            "tell",
            "see",
            "reach",
            "find",
            "spot",
            "count",
            "say",
            "explain",
            "describe",
            "list",
            "hear",
            "show",
        )
        and not re.match(
            r"^(?:can|could|would|will)\s+you\s+show\s+me\s+how\s+to\s+(?:put|stack|move)", t
        )
    ):
        return True
    if re.match(
        r"^(?:explain|describe|list|name)\b|^tell\s+me\b|^are\s+you\s+(?:ready|there|listening|awake|ok)\b",
        t,
    ):
        return True
    if _HYPOTHETICAL.match(t):
        return True
    if t.startswith("when ") and t.endswith("?") and not re.match(r"when\s+you", t):
        return True
    if re.match(r"^what\s+(?:i|we)(?:'d|\s+would)?\s+(?:really\s+)?(?:like|want|need|love)\b", t):
        return False  # "what I'd like is for the blue block to go ...": a wish
    if re.match(
        r"^(?:have|has|do|does|did)\s+(?!you\b|we\b|i\b|the\s+\w+\s+bin\b|any)", t
    ) and not t.endswith("?"):
        return False  # "have the yellow cube end up on the red one": a causative order
    if _ASKS.match(t):
        # "what about putting ..." / "how about you stack ..." are suggestions: orders
        return not re.match(r"^(?:how|what)\s+about\b", t)
    if re.match(
        r"^(?:please\s+)?(?:put|place|stack|move|push|drop|set|slide|close|open|shut|press|turn\s+(?:on|off))\s+"
        r"(?:the|a|an|one|two|three|all)\b",
        t,
    ):
        return False  # "put the green block on the red one?" (Spanish "¿me pones ...?"): asked for
    return t.endswith("?") and not m


_DID = re.compile(
    rf"^(?:i(?:'ve)?\s+(?:just\s+|already\s+|have\s+)*|"
    # what the robot did, said back to it: only with a mark of the past ("you put the red
    # block in the bin" alone may be an order)
    rf"(?:you|we)(?:'ve|\s+have)?\s+(?:(?:just|also)\s+)*(?:already|just)\s+|(?:you|we)(?:'ve|\s+have)\s+)"
    rf"(?:put|placed|moved|dropped|stacked|set)\s+(?P<x>(?:the\s+)?(?:{_C})"
    rf"(?:\s+(?:block|cube|brick|one))?)\s+(?P<p>in|into|on|onto|on\s+top\s+of)\s+(?P<y>.+?)"
    rf"(?:\s+(?:myself|already|earlier|before|just\s+now))*[.!]*$"
)


def _did(text: str) -> str | None:
    """ "I just put the yellow block in the blue bin myself", "you already put the green
    block in the blue bin" -> "the yellow block is in the blue bin" (a claim about the
    scene now, which is checked)."""
    m = _DID.match(text.strip().lower())
    if m is None:
        return None
    prep = "in" if m["p"] in ("in", "into") else "on"
    return f"{m['x']} is {prep} {m['y']}"


def is_statement(text: str) -> bool:
    """A plain claim about the scene ("the red block is in the green bin.") with no order
    in it: it is checked and answered, never executed."""
    t = text.strip().lower()
    if _did(t) is not None:
        return True
    if (
        re.match(
            r"^(?:this|the|our|my)\s+(?:arm|robot|machine)\b(?:\s+here|\s+there)?(?:\s*,\s*[^,]+,)?\s+(?:can|is\s+able\s+to|could|knows\s+how\s+to)\b",
            t,
        )
        and "?" not in t
    ):
        return (
            True  # said of the robot to others: "this arm, ladies and gentlemen, can pick up ..."
        )
    if re.search(
        r"(?:[,;:-]\s*(?:and\s+|then\s+|so\s+)?|\bso\s+(?:just\s+)?)(?:please\s+)?(?:can\s+you\s+|could\s+you\s+)?"
        r"(?:put|place|move|stack|push|pick|drop|take|grab|clean|tidy|sort|clear|organi[sz]e|fix|empty|close|open|shut)\b",
        t,
    ):
        return False
    if re.search(r"\b(?:should|must|needs?|has\s+to|have\s+to|want|wants|ought)\b", t):
        return False
    if re.search(r"\b(?:off[\s-]+limits|out\s+of\s+bounds|not\s+to\s+be)\b", t):
        return False  # a rule ("the green bin is off limits"), read as a prohibition
    if re.match(
        r"^(?:for\s+the\s+record|fyi|just\s+so\s+you\s+know|note\s+that|heads\s+up|be\s+aware)\b", t
    ) and not (set(re.findall(r"[a-z]+", t)) & set(L.ACTION_VERBS)):
        return True  # "for the record, the red bin has a crack in it": noted, nothing asked
    if re.match(
        r"^(?:i'd\s+like\s+to|i\s+(?:want|need|wanted)\s+to|just\s+wanted\s+to)\s+(?:report|log|note|mention|let\s+you\s+know|"
        r"flag|point\s+out)\b",
        t,
    ) or re.search(r"\bno\s+action\s+(?:needed|required|necessary)\b", t):
        return True  # "I'd like to report that you dropped the green block this morning"
    if _TOLD_OF.search(t) and not re.search(r"\b(?:please|now)\b|\?", t):
        return True  # about another time: "yesterday you stacked ...", "he will ask you to ..."
    if _REPORT.match(t) and not re.search(
        r"\b(?:can|could|would|will)\s+you\b|\bplease\b|\?|\bback\b", t
    ):
        return True  # "I moved the red block myself earlier": what the person did, no order
    if "?" not in t and (
        re.match(
            r"^(?:and\s+)?(?:this|the|our)\s+(?:arm|robot|machine)\b[^.]*?\b(?:was|is|were)\s+(?:built|designed|made|programmed|trained)\b",
            t,
        )
        or re.match(
            r"^i\s+(?:do\s+|really\s+)?(?:like|love|enjoy|hate|prefer|adore)\s+(?:how|the\s+way|it\s+when|that)\b",
            t,
        )
        or re.match(
            r"^(?:back\s+in\s+my\s+day|in\s+my\s+day|when\s+i\s+was\s+(?:young|a\s+(?:kid|child|boy|girl))|years\s+ago|"
            r"once\s+upon\s+a\s+time|long\s+ago)\b",
            t,
        )
    ):
        return True  # said to others, a liking, a memory: nothing asked
    if _DESCRIBED.match(t) and "?" not in t:
        return True  # "the yellow block glows like a small sun this morning": a description
    return bool(_COPULA_STATEMENT.match(t)) or bool(re.match(r"^there\s+(?:is|are)\b", t))


#: Talk about another time than now: what happened before ("yesterday you stacked the green
#: block on the yellow one") or what someone will ask later ("my colleague will come by
#: later and ask you to sort the blocks"). Neither is an order for now.
_TOLD_OF = re.compile(
    r"^(?:(?:yesterday|last\s+(?:time|week|night|month|session)|the\s+other\s+day|earlier(?:\s+today)?|"
    r"this\s+morning|before)\s*,?\s+(?:you|we|i|they|he|she|my\s+\w+|[a-z]+)\s+(?:\w+ed|put|set|did|made|built|took)\b)|"
    r"^(?:you|we|they|he|she|my\s+\w+|(?!(?:please|then|and|just|now|also|so|pls|go)\b)[a-z]+)\s+(?:already\s+)?"
    r"(?:\w+ed|put|set|did|made|built|took)\b.*\b(?:yesterday|last\s+(?:time|week|night)|"
    r"the\s+other\s+day|earlier\s+today|this\s+morning|(?:an?|one|two|three|a\s+few|some)\s+(?:minutes?|hours?|days?)\s+ago|"
    r"a\s+(?:while|moment)\s+ago)\b|"
    r"\b(?:will|'ll|is\s+going\s+to|are\s+going\s+to|am\s+going\s+to|might|may)\s+(?:[\w']+\s+){0,6}?ask\s+you\s+to\b"
)
#: A thing of the scene described with a verb of how it looks or rests ("the yellow block
#: glows like a small sun", "the table looks so tidy"): said, not asked.
_DESCRIBED = re.compile(
    r"^(?:(?:huh|oh|wow|hmm+|look|ha|heh|well|funny|interesting)\s*[,!.]?\s+)*"
    r"(?:the|this|that|my|your|our)\s+(?:[\w-]+\s+){0,2}(?:block|cube|brick|bin|table|arm|robot|light|lamp|drawer|"
    r"scene|room|tower|stack|one)s?\s+(?:\w+ly\s+)?(?:glows|shines|looks|look|seems|seem|sits|sit|stands|stand|lies|lie|"
    r"rests|rest|feels|reminds|gleams|sparkles|waits|sleeps|smells|sounds|glistens|ended\s+up|ends\s+up|landed|"
    r"wound\s+up|rolled|fell|went|got)\b(?![^.?!]*\b(?:could|can|would|will)\s+you\b)"
)
#: The person reports what they did ("I moved the red block earlier", "we already sorted
#: the blocks"): past tense, first person, nothing asked.
_REPORT = re.compile(
    r"^(?:i|we)\s+(?:(?:already|just|also|have|had|'ve)\s+)*(?:moved|touched|took|pushed|picked|shifted|"
    r"stacked|dropped|cleaned|tidied|sorted|knocked|bumped|rearranged|swapped|removed|emptied|"
    r"nudged|turned|opened|closed|switched)\b"
)


# ---------------------------------------------------------------------------- answering
def _where(world: WorldState, name: str) -> str:
    o = world.object(name)
    if o is None:
        return f"there is no {name.replace('_', ' ')} here"
    c = name.split("_")[0]
    if o.held:
        return f"I am holding the {c} block"
    if o.in_bin:
        return f"the {c} block is in the {o.in_bin.replace('_', ' ')}"
    if world.drawer is not None and name in world.drawer.contents:
        return f"the {c} block is in the drawer"
    if o.on:
        return f"the {c} block is on the {o.on.replace('_', ' ')}"
    return f"the {c} block is on the table, {_place(o.pos[0], o.pos[1])}"


def _place(x: float, y: float) -> str:
    """Where on the table, in the robot's own directions."""
    depth = "at the front" if x > 0.07 else "at the back" if x < -0.07 else "in the middle"
    side = "on the left" if y > 0.0 else "on the right" if y < -0.16 else "near the centre line"
    return f"{depth}, {side} (x {x:+.2f} m, y {y:+.2f} m)"


def _listing(names: list[str]) -> str:
    # a scene name carries its noun ("red_bin", "blue_block"): a tie between bins says "bin"
    said = [f"the {n.replace('_', ' ')}" if "_" in n else f"the {n} block" for n in names]
    if not said:
        return "nothing"
    return said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]


def _capabilities(world: WorldState) -> str:
    from skills import registry

    names = sorted(registry.names())
    extra = ""
    if world.drawer is not None:
        extra = ", open and close the drawer, press the button to switch the light"
    return (
        "I can pick up the blocks, place them in a bin or on another block, stack them, "
        f"push them across the table and go home{extra}; I can also answer questions about "
        "where things are" + (f" (skills: {', '.join(names)})" if names else "")
    )


def answer(text: str, world: WorldState) -> str:  # noqa: C901 - one question form a branch
    """One sentence answering ``text`` from ``world``; nothing is moved."""
    t = text.strip().lower().rstrip("?!. ")
    t = re.sub(rf"^{_LEAD}", "", t)
    # "just tell me where red is, don't move it": the tail only says nothing moves
    t = re.sub(
        r"(?:\s*[,;.]\s*(?:but\s+|and\s+)?|\s+(?:but|and)\s+)(?:please\s+)?(?:don't|do\s+not|no\s+need\s+to)\s+(?:move|touch|do|pick|"
        r"start)\b[^?]*$",
        "",
        t,
    ).rstrip("?!. ")
    t = re.sub(r"[\s,]+or\s+not$", "", t)
    # "is the yellow block in the bin?" where there are three: in any of them
    if len(world.bins) > 1:
        t = re.sub(
            r"^(is|are)\s+(.+?)\s+in\s+the\s+(?:bin|box|basket|container)$", r"\1 \2 in a bin", t
        )
    # "none of the blocks are stacked on each other, right?": asked as whether any is
    t = re.sub(
        r"^(?:none|no\s+one)\s+of\s+(?:the\s+|these\s+|those\s+)?(?:blocks|cubes|them)\s+(?:are|is)\s+stacked"
        r"(?:\s+on\s+(?:each\s+other|one\s+another|another))?(?:[\s,]+(?:right|correct|yeah|eh|yes))?$",
        "is anything stacked",
        t,
    )
    t = re.sub(
        r"^no\s+blocks?\s+(?:are|is)\s+stacked(?:[\s,]+(?:right|correct))?$",
        "is anything stacked",
        t,
    )
    # "did somebody leave the drawer open while I was gone?": what it is now (who did it,
    # the robot cannot know)
    t = re.sub(
        r"^did\s+(?:somebody|someone|anybody|anyone|you)\s+(?:leave|put|turn|switch)\s+(?:the\s+)?(?P<d>drawer|lamp|light)\s+"
        r"(?P<s>open|closed|shut|on|off)\b.*$",
        r"is the \g<d> \g<s>",
        t,
    )
    # "anything stacked on the green block?": the "is" left out
    t = re.sub(
        r"^(anything|something)\s+(?=(?:stacked\s+|sitting\s+)?on\b)",
        r"is \1 ",
        t,
    )
    # "is the red one even in a bin yet?", "what's currently in the end effector?": the
    # words of impatience or of time ask nothing more
    t = re.sub(
        r"\s+(?:even|yet|currently|at\s+the\s+moment|at\s+present|by\s+now)\b(?=\s|$)", "", t
    )
    t = re.sub(r"\bend[\s-]+effector\b", "gripper", t)
    t = re.sub(
        r"^(?:what(?:'s|\s+is|\s+do\s+you\s+have)|is\s+(?:there\s+)?anything|what\s+are\s+you\s+carrying)\s+in\s+"
        r"(?:the|your|my)\s+(?:gripper|hand|claw|fingers|grip)$",
        "what are you holding",
        t,
    )
    t = re.sub(r"^(?:status\s+check|quick\s+check|check|sanity\s+check|report)\s*[:,-]\s*", "", t)
    # "which one on the table is closest to you?": one of the blocks
    t = re.sub(
        r"^which\s+one\s+(?:on\s+the\s+table\s+)?(?=is\s+(?:closest|nearest|farthest|furthest)\b)",
        "which block ",
        t,
    )
    # a negative question asks the same as the positive one ("isn't the red block in ...?")
    t = re.sub(r"^(?:isn't|is\s+not)\s+", "is ", t)
    t = re.sub(r"^(?:aren't|are\s+not)\s+", "are ", t)
    t = re.sub(r"^(?:wasn't)\s+", "was ", t)
    t = re.sub(r"^(?:doesn't|does\s+not)\s+", "does ", t)
    t = re.sub(
        r"^(?:show\s+me|point\s+(?:to|at|out)|find|locate)\s+(?=(?:the\s+)?\w+\s+(?:block|cube|brick|one|bin)\b)",
        "where is ",
        t,
    )
    t = re.sub(r"^what(?:'s|\s+is)\s+the\s+colou?r\s+of\s+", "what colour is ", t)
    t = _SEE.sub("can you ", _REACH.sub("can you reach ", t))
    # "don't touch the button - is the lamp on?": the prohibition asks for nothing to be done
    t = re.sub(
        r"^(?:please\s+)?(?:don't|do\s+not|no\s+need\s+to)\s+(?:touch|press|move|push|open|close)\s+[^-:;,.?]+\s*(?:[-:;,.]+|\s+-+)\s*"
        r"(?=(?:i\s+(?:only|just)|i\s+want|is|are|does|do|what|where|which|how|tell)\b)",
        "",
        t,
    )
    # "I only want to know: is the lamp on?": the question after the colon
    t = re.sub(
        r"^(?:i\s+(?:only\s+|just\s+)?(?:want|need|would\s+like|'d\s+like)\s+to\s+know|i'm\s+(?:just\s+)?(?:asking|wondering)|"
        r"question|tell\s+me)\s*[:,-]\s*(?=(?:is|are|does|do|can|what|where|which|how|who)\b)",
        "",
        t,
    )
    # "how many are on the table - not counting the ones in the bins?": the bins are left out
    t = re.sub(
        r"[\s,;-]+(?:not\s+counting|excluding|leaving\s+out)\s+(?:the\s+ones|those|any|the\s+blocks)\s+in\s+(?:the\s+)?bins?\b",
        "",
        t,
    )
    t = re.sub(
        r"^(?:robot\s*,\s*)?(?:would|could|can|will)\s+you\s+tell\s+(?:our\s+guests|us|everyone|them|the\s+\w+)\s+",
        "",
        t,
    )
    # "is the lamp on or off right now?": the time asked about is now
    t = re.sub(r"\s+(?:right\s+now|at\s+the\s+moment|currently|at\s+present|now)(?=\s*\??$)", "", t)
    # "do you believe the red block is in the green bin?": whether it is
    t = re.sub(
        r"^(?:do|would)\s+you\s+(?:believe|think|reckon|know|suppose|say)\s+(?:that\s+)?(?P<s>.+?)\s+(?P<v>is|are)\s+(?P<r>[^?]+)\??$",
        r"\g<v> \g<s> \g<r>?",
        t,
    )
    if _CHECK.match(t):
        t = _AFTERWARDS.sub("", _CHECK.sub("whether ", t))
    # "is that the red one you've got in your hand?": whether it is held
    t = re.sub(
        rf"^is\s+(?:that|this|it)\s+(?P<x>(?:the\s+)?(?:{_C})\s+(?:one|block|cube))\s+(?:that\s+)?you(?:'ve|\s+have)?\s+"
        r"(?:got|holding|have|are\s+holding)(?:\s+in\s+your\s+(?:hand|gripper|fingers))?$",
        r"are you holding \g<x>",
        t,
    )
    t = re.sub(
        r"^(?:are\s+you\s+able\s+to|is\s+it\s+possible\s+(?:for\s+you\s+)?to|"
        r"would\s+you\s+be\s+able\s+to|do\s+you\s+think\s+you\s+(?:can|could))\s+",
        "<feasible> ",
        t,
    )
    t = re.sub(
        r"\s*\b(?:right now|at the moment|currently|"
        r"from where you(?:'re|\s+are|\s+stand)(?:\s+standing)?|"
        r"from\s+(?:there|here|your\s+(?:position|spot|base))|"
        r"as far as you can tell|by any chance)\b\s*,?",
        " ",
        t,
    ).strip(" ,")
    t = re.sub(r"\byour\s+(left|right)\b", r"the \1", t)
    t = re.sub(r"\b(?:that|this)\s+(drawer|lamp|light|button)\b", r"the \1", t)
    # the hand asked about without a cube named: "got anything in your gripper?", "is your
    # hand empty?", "are you holding anything?"
    if not re.search(rf"\b(?:{_C})\b", t) and (
        re.search(
            r"^(?:(?:have|do)\s+you\s+)?(?:got|have|holding|carrying)\s+(?:anything|something|a\s+block|"
            r"a\s+cube)(?:\s+(?:in|inside)\s+your\s+(?:hand|hands|gripper|claw|fingers|grip))?$",
            t,
        )
        or re.search(
            r"^(?:is\s+there\s+)?(?:anything|something)\s+(?:in|inside)\s+your\s+(?:hand|hands|gripper|claw|fingers|grip)$",
            t,
        )
        or re.search(
            r"^(?:is|are)\s+your\s+(?:hand|hands|gripper|claw|fingers|grip)\s+"
            r"(?:empty|free|full|closed)$",
            t,
        )
        or re.search(r"^are\s+you\s+(?:holding|carrying)\s+(?:anything|something)$", t)
    ):
        t = "what are you holding"
    # "list the blocks that are on the table", "name the cubes in the green bin"
    t = re.sub(
        r"^(?:list|name|tell\s+me|give\s+me)\s+(?:all\s+)?(?:the\s+|of\s+the\s+)?(?:blocks|cubes|ones)\s+"
        r"(?:that\s+are|that're|which\s+are|sitting|lying)?\s*(?=in\b|on\b|inside\b|stacked\b|not\b)",
        "which blocks are ",
        t,
    )
    # "what is the yellow block sitting on?": what is under it
    t = re.sub(
        rf"^what(?:'s|\s+is)\s+(?P<x>(?:the\s+)?(?:{_C})(?:\s+(?:block|cube|brick|one))?)\s+"
        r"(?:sitting|standing|resting|lying|stacked|placed|sat|set)?\s*on(?:\s+top\s+of)?$",
        r"what is under \g<x>",
        t,
    )
    m = re.fullmatch(
        rf"is\s+(?:the\s+)?(?P<o>{_C})(?:\s+(?:block|cube|brick|one))?\s+(?:stacked|sitting|resting|"
        r"standing|lying)\s+on\s+(?:top\s+of\s+)?(?:anything|something|another\s+(?:block|cube|one)|"
        r"a\s+(?:block|cube)|any\s+(?:block|cube))",
        t,
    )
    if m:
        return _beneath(world, m["o"], asked=True)
    # "has anything been stacked on the green block?": is anything stacked on it
    t = re.sub(
        r"^(?:has|have)\s+(?:anything|something|any\s+blocks?|a\s+block)\s+been\s+(?:stacked|put|placed|set)\s+"
        r"(?=on\b)",
        "is anything stacked ",
        t,
    )
    # "what's the closest block to the blue bin?": the superlative before the noun
    t = re.sub(
        r"^(?:which|what)(?:'s|\s+is)\s+the\s+(?P<s>closest|nearest|farthest|furthest)\s+(?:block|cube|one)\s+"
        r"(?P<r>(?:to|from)\s+.+)$",
        r"which block is \g<s> \g<r>",
        t,
    )
    # "how many cubes are still just chilling on the table": where they are is what counts
    t = re.sub(
        r"\b(?:just\s+)?(?:chilling|hanging\s+(?:out|around)|lounging|sitting\s+around|lying\s+around|kicking\s+about)\s+"
        r"(?=(?:on|in|inside)\b)",
        "",
        t,
    )
    # "are there any blocks left on the table?": is any block there
    t = re.sub(
        r"^(?:are|is)\s+there\s+(?:still\s+)?(?:any\s+)?(?:blocks?|cubes?|bricks?)\s+"
        r"(?:(?:left|still|remaining|lying|sitting)\s+)*(?=(?:on|in|inside|stacked|not)\b)",
        "are any of the blocks ",
        t,
    )
    t = re.sub(
        r"^(?P<v>is|are)\s+(?:there\s+)?(?P<a>anything|something)\s+(?:(?:left|still|remaining)\s+)+"
        r"(?=(?:on|in|inside)\b)",
        r"is there \g<a> ",
        t,
    )
    # "are there any blocks left (to put away)?": left out on the table
    t = re.sub(
        r"^(?:(?:are|is)\s+there\s+(?:still\s+)?(?:any\s+)?|any\s+)(?:blocks?|cubes?|bricks?)\s+(?:still\s+)?"
        r"(?:left|remaining)"
        r"(?:\s+to\s+(?:sort|put\s+away|move|tidy(?:\s+up)?|clear(?:\s+up)?|do))?$",
        "are any of the blocks on the table",
        t,
    )
    # "which is closer to you, the red block or the blue one?": a choice of two
    m = re.fullmatch(
        rf"(?:which|what)(?:\s+(?:one|block|cube))?(?:'s|\s+is)\s+(?P<c>closer|nearer|farther|further)\s+"
        rf"(?:to|from)\s+(?P<r>you|me|(?:the\s+)?(?:{_C})(?:\s+(?:block|cube|brick|one|{_BIN}))?)\s*[,:-]?\s*"
        rf"(?:the\s+)?(?P<a>{_C})(?:\s+(?:block|cube|brick|one))?\s+or\s+(?:the\s+)?(?P<b>{_C})"
        r"(?:\s+(?:block|cube|brick|one))?",
        t,
    )
    if m:
        compared = _compare(world, m["a"], m["b"], m["r"], m["c"] in ("closer", "nearer"))
        if compared.startswith(("Yes", "No")):
            won = m["a"] if compared.startswith("Yes") else m["b"]
            return f"The {won} block: " + compared.split(": ", 1)[1]
        return compared
    # "which bin holds the yellow block?", "which bin is the red cube in?": where it is
    t = re.sub(
        rf"^(?:which|what)\s+(?:bin|box|container|basket)\s+(?:holds|has|contains|is\s+holding)\s+"
        rf"(?P<x>(?:the\s+)?(?:{_C})(?:\s+(?:block|cube|brick|one))?)$",
        r"where is \g<x>",
        t,
    )
    t = re.sub(
        rf"^(?:which|what)\s+(?:bin|box|container|basket)\s+(?:is|are)\s+(?P<x>(?:the\s+)?(?:{_C})"
        rf"(?:\s+(?:block|cube|brick|one))?)\s+(?:in|inside)$",
        r"where is \g<x>",
        t,
    )
    t = re.sub(r"^wheres\b", "where is", t)
    t = re.sub(
        r"^where\s+(?:did|have)\s+you\s+(?:put|place|placed|leave|left|drop|dropped|move|moved)\s+",
        "where is ",
        t,
    )
    t = re.sub(
        r"^where\s+(?:did|has)\s+(.+?)\s+(?:go|gone|end\s+up|land|get\s+to)$", r"where is \1", t
    )
    t = re.sub(r"^which\s+colou?r\b", "what colour", t)
    t = re.sub(
        r"^(?:can|could)\s+you\s+tell\s+me\s*,?\s+|^tell\s+me\s*,?\s+|^do\s+you\s+know\s*,?\s+",
        "",
        t,
    )
    t = re.sub(r"^i\s+wonder\s+|^any\s+idea\s+", "", t)
    # an embedded question in statement order ("do you know where the blue one went",
    # "tell me if the red block is in the bin")
    t = re.sub(
        r"^where\s+(.+?)\s+(?:is|are|went|has\s+gone|ended\s+up|got\s+to|is\s+now|sits)$",
        r"where is \1",
        t,
    )
    # "(tell me) what colour the block on the left is"
    t = re.sub(r"^what\s+colou?r\s+(.+?)\s+(?:is|are)$", r"what colour is \1", t)
    # "do you see a green block (anywhere)?" asks whether there is one
    t = re.sub(
        r"^(?:do|can|could)\s+you\s+(?:see|spot|find|notice)\s+(?P<x>(?:a|an|any)\s+.+?)(?:\s+anywhere)?$",
        r"is there \g<x>",
        t,
    )
    m = re.fullmatch(r"(?:if|whether)\s+(?P<s>.+?)\s+(?P<v>is|are)\s+(?P<p>.+?)(?:\s+or\s+not)?", t)
    if m:
        t = f"{m['v']} {m['s']} {m['p']}"
    # a tagged statement ("the green cube is on the table, right?")
    if _TAG.search(" " + t + "?") and not re.match(
        r"(?:is|are|was|were|do|does|did|where|what|which|how)\b", t
    ):
        said = statement(t, world)
        if said is not None:
            return said.removesuffix(". I did not move anything")
    m = re.fullmatch(
        rf"(?:was|were|has|have|did)\s+(?:the\s+)?(?P<o>{_C})(?:\s+(?:block|cube|brick|one))?\s+"
        r"(?:been\s+|get\s+|got\s+)?(?:moved|touched|picked\s+up|used|taken|shifted|disturbed)"
        r"(?:\s+(?:before|earlier|already|yet|at\s+all|by\s+you|by\s+anyone))*",
        t,
    )
    if m:
        return _cap(
            "I keep no record of what happened before this request; now "
            + _where(world, f"{m['o']}_block")
        )
    m = re.fullmatch(
        r"is\s+the\s+(?P<d>light|lamp|drawer)\s+(?:on\s+or\s+off|off\s+or\s+on|open\s+or\s+(?:closed|shut)|"
        r"(?:closed|shut)\s+or\s+open)",
        t,
    ) or re.fullmatch(
        r"(?P<d>light|lamp|drawer)\s+(?:on\s+or\s+off|off\s+or\s+on|open\s+or\s+(?:closed|shut))", t
    )
    if m:
        return _device_state(world, m["d"])
    said = _about_the_robot(t, world)
    if said is not None:
        return said
    m = re.fullmatch(
        r"(?:is|are)\s+there\s+(?P<n>one|two|three|four|five|six|[1-6])\s+(?P<w>blocks?|cubes?|bins?)",
        t,
    )
    if m:
        have = len(world.bins) if m["w"].startswith("bin") else len(world.objects)
        noun = "bin" if m["w"].startswith("bin") else "block"
        said = f"there {'is' if have == 1 else 'are'} {have} {noun}{'s' if have != 1 else ''}"
        return ("Yes, " if L.NUMBERS.get(m["n"]) == have else "No, ") + said
    m = re.fullmatch(
        rf"why\s+(?:is|are)\s+(?:the\s+)?(?P<o>{_C})(?:\s+(?:block|cube|brick|one))?\b.*", t
    )
    if m:
        return _cap(
            "I keep no record of how things got where they are; now "
            + _where(world, f"{m['o']}_block")
        )
    m = _FEASIBLE.fullmatch(t)
    if m:
        return _feasible(f"put {m['x']} {m['p']} {m['y']}", world)
    m = re.fullmatch(
        r"(?:can|could|do|will)\s+you\s+(?P<v>push|stack|pick\s+up|pick|lift|move|grab|carry|open|close|press|sort|"
        r"throw|fly|jump|talk|see|rotate|turn|spin|slide)\s+(?P<o>blocks|cubes|things|objects|stuff|drawers|buttons|bins)?"
        r"(?:\s+(?:at\s+all|too|as\s+well))?",
        t,
    )
    if m and (m["o"] or m["v"] in ("fly", "jump", "talk", "rotate", "spin")):
        return _cap(_can_do(world, m["v"]))
    m = _CANNOT.match(t + "?")
    if m:
        return _cap(_can_do(world, m["v"]))
    m = re.fullmatch(
        rf"is\s+(?:the\s+)?(?P<a>{_C})(?:\s+(?:block|cube|brick|one))?\s+(?P<c>closer|nearer|farther|further)\s+"
        rf"(?:to|from)\s+(?P<r>you|me|(?:the\s+)?(?:{_C})(?:\s+(?:block|cube|brick|one|{_BIN}))?)\s+than\s+"
        rf"(?:the\s+)?(?P<b>{_C})(?:\s+(?:block|cube|brick|one))?(?:\s+is)?",
        t,
    )
    if m:
        return _compare(world, m["a"], m["b"], m["r"], m["c"] in ("closer", "nearer"))
    m = re.fullmatch(
        r"(?:which|what)(?:\s+(?:block|cube|one|object|thing))?(?:'s|\s+is)\s+(?:the\s+)?"
        r"(?P<s>biggest|largest|smallest|heaviest|lightest|tallest|shortest)(?:\s+(?:block|cube|one|object|thing))?",
        t,
    )
    if m:
        return _superlative(world, m["s"])
    m = re.fullmatch(
        r"(?:which|what)\s+(?:of\s+the\s+(?:three\s+|3\s+)?bins|bin)(?:'s|\s+is)\s+(?:the\s+)?"
        r"(?P<s>closest|nearest|farthest|furthest)(?:\s+(?:one|bin))?(?:\s+away)?(?:\s+(?:from|to)\s+(?:you|the\s+robot|your\s+base))?",
        t,
    )
    if m and world.bins:
        # the robot's base is behind the table's near edge, on its centre line
        base = scene.BASE_XY
        far = m["s"] in ("farthest", "furthest")
        pick = (max if far else min)(
            world.bins, key=lambda b: (b.pos[0] - base[0]) ** 2 + (b.pos[1] - base[1]) ** 2
        )
        return f"The {pick.name.replace('_', ' ')} is the {m['s']} {'from' if far else 'to'} me"
    if re.fullmatch(
        r"how\s+(?:tall|high|big)\s+(?:is|are)\s+(?:the|that|this|your|my)\s+(?:stacks?|towers?|piles?)(?:\s+now)?|"
        r"how\s+many\s+(?:blocks|cubes|things|objects|levels|layers)\s+(?:high|tall)\s+is\s+(?:the|that|this)\s+"
        r"(?:stack|tower|pile)|how\s+many\s+(?:blocks|cubes|things|objects)\s+(?:are\s+)?(?:there\s+)?(?:in|on)\s+"
        r"(?:the|that|this)\s+(?:stack|tower|pile)",
        t,
    ):
        return _stacks(world)
    if re.fullmatch(
        r"(?:what|which\s+(?:block|cube|one))(?:'s|\s+is)\s+(?:on\s+)?(?:the\s+)?top\s+(?:of\s+)?(?:the\s+)?(?:stack|tower|pile)",
        t,
    ):
        tops = [o.name for o in world.objects if o.on and world.clear(o.name)]
        if not tops:
            return "Nothing is stacked"
        return _cap(f"{_listing(tops)} {'is' if len(tops) == 1 else 'are'} on top")
    if t.startswith("<feasible> "):
        return _feasible(t.removeprefix("<feasible> "), world)
    m = re.fullmatch(
        r"(?:are|is)\s+(?P<q>all|both|any|none|each|every\s+one)\s+(?:of\s+)?(?:the\s+)?(?:blocks|cubes|bricks)"
        r"\s+(?P<pred>.+)",
        t,
    ) or re.fullmatch(
        r"(?:is|are)\s+(?P<q>every|each|any)\s+(?:block|cube|brick)\s+(?P<pred>.+)", t
    )
    if m and not re.match(r"stacked\b", m["pred"]):
        return _quantified(world, m["q"], m["pred"])
    m = re.fullmatch(
        rf"how\s+far\s+(?:away\s+)?(?:is|are)\s+(?P<a>(?:the\s+)?(?:{_C})(?:\s+(?:block|cube|brick|one|{_BIN}))?)"
        rf"(?:\s+(?:from|to)\s+(?P<b>(?:the\s+)?(?:{_C})(?:\s+(?:block|cube|brick|one|{_BIN}))?|you|me))?(?:\s+away)?",
        t,
    )
    if m:
        return _how_far(world, m["a"], m["b"])
    if re.fullmatch(
        r"where(?:'s|\s+is|\s+are)\s+(?:everything|all\s+the\s+blocks|the\s+blocks|all\s+of\s+them|they|things)"
        r"|what(?:'s|\s+is)\s+where|describe\s+the\s+(?:scene|table)|what\s+does\s+the\s+(?:table|scene)\s+look\s+like"
        r"|about\s+the\s+(?:scene|table|blocks)|what(?:'s|\s+is)\s+on\s+the\s+table",
        t,
    ):
        return _cap(
            "; ".join(_where(world, o.name) for o in world.objects) or "There are no blocks"
        )
    m = re.fullmatch(
        r"(?:which|what)\s+bins?\s+(?:is|are)\s+(?:still\s+)?(?P<s>empty|free|unused|available|full|"
        r"occupied|used|not\s+empty)",
        t,
    ) or re.fullmatch(
        r"(?:which|what)\s+bins?\s+(?P<s>ha(?:s|ve)\s+(?:nothing|no\s+blocks?)|"
        r"ha(?:s|ve)\s+(?:something|blocks?|anything))(?:\s+in\s+(?:it|them))?",
        t,
    )
    if m:
        return _which_bins(
            world,
            not re.search(r"empty|free|unused|available|nothing|\bno\b", m["s"])
            or "not empty" in m["s"],
        )
    m = re.fullmatch(
        r"(?:are|is)\s+(?P<q>all|every|any|none\s+of|each)\s+(?:of\s+)?(?:the\s+)?bins?\s+(?:all\s+)?(?P<s>empty|full|used)|"
        r"are\s+the\s+bins\s+(?P<q2>all)\s+(?P<s2>empty|full)",
        t,
    )
    if m:
        # "are all the bins empty?", "is any bin empty?": yes or no, then which
        used = {o.in_bin for o in world.objects if o.in_bin}
        want_empty = (m["s"] or m["s2"]) == "empty"
        fits = [b for b in world.bins if (b.name not in used) == want_empty]
        q = m["q"] or m["q2"]
        yes = len(fits) == len(world.bins) if q in ("all", "every", "each") else bool(fits)
        return ("Yes. " if yes else "No. ") + _which_bins(world, not want_empty)
    m = re.fullmatch(
        rf"(?:which|what)\s+{_BIN}\s+(?:has|holds|contains)\s+(?:the\s+)?(?P<q>fewest|least|most|fewer|more|less)"
        r"(?:\s+(?:blocks|cubes|things|objects|stuff))?(?:\s+in\s+it)?|(?:which|what)\s+bin\s+is\s+(?:the\s+)?"
        r"(?P<s>emptiest|fullest|least\s+full|most\s+full)",
        t,
    )
    if m:
        tally = ", ".join(
            f"the {b.name.replace('_', ' ')} {sum(o.in_bin == b.name for o in world.objects)}"
            for b in world.bins
        )
        try:
            won = refs.resolve(f"the bin with the {m['q'] or 'fewest'} blocks", world).text
            if m["s"]:
                won = refs.resolve(f"the {m['s']} bin", world).text
        except refs.Ambiguous as e:
            return _cap(f"{_listing(e.candidates)} hold as many ({tally})")
        except refs.Unresolvable as e:
            return _cap(str(e))
        return _cap(f"{won} ({tally})")
    m = _HYPOTHETICAL.match(t)
    if m:
        return _hypothetical(m.group("cmd"), world)
    m = _HOW_WOULD.match(t)
    if m:
        return _how_i_would(m.group("cmd"), world)
    if re.match(
        r"^(?:which|what)\s+colou?rs?\s+(?:do|can|would)\s+you\s+(?:recogni[sz]e|know|see|tell\s+apart|understand|name)\b",
        t,
    ):
        bins = ", ".join(b.color for b in world.bins)
        return (
            f"I know the colours of the blocks and bins: {', '.join(L.COLOURS)}"
            + (f" (the bins here are {bins})" if bins else "")
            + ". I did not move anything"
        )
    m = re.match(
        rf"^which\s+bin\s+(?:would\s+you\s+say\s+|do\s+you\s+think\s+|should\s+)?(?:suits|belongs?|fits|goes\s+with|matches|"
        rf"is\s+right\s+for)\s+(?:to\s+)?(?:the\s+)?(?P<c>{_C})\s+(?:block|cube|one)\b",
        t,
    )
    m = m or re.match(
        rf"^which\s+bin\s+(?:do\s+you\s+think|would\s+you\s+say|should)\s+(?:the\s+)?(?P<c>{_C})\s+(?:block|cube|one)\s+"
        r"(?:belongs\s+in|goes\s+in|should\s+go\s+in|fits\s+in|goes\s+with|belongs\s+to|go\s+in)\b",
        t,
    )
    if m:
        has = any(b.color == m["c"] for b in world.bins)
        return (
            f"The {m['c']} bin: it is the {m['c']} block's own colour. I did not move anything"
            if has
            else f"There is no {m['c']} bin; any bin will hold it. I did not move anything"
        )
    said = (
        _apart(t, world)
        or _between(t, world)
        or _easier(t, world)
        or _more_than(t, world)
        or _sitting_on(t, world)
        or _either(t, world)
    )
    if said is not None:
        return said
    # selectors inside the question ("which block is the leftmost?", "where is the one next
    # to the red block?") resolve first
    try:
        first = refs.resolve(t, world)
        if first.notes and re.match(
            r"(?:which|what)(?:'s|\s+is)?\s+(?:the\s+)?(?:block|cube|one)\b|"
            r"(?:which|what)(?:'s|\s+is)\s+the\s+\w+\s+(?:block|cube|one)$",
            t,
        ):
            return _cap(first.notes[0].replace("'", ""))
        if first.notes and re.match(r"what\s+colou?r\b", t):
            return _cap(first.notes[0].replace("'", ""))
        t = first.text
    except refs.Ambiguous as e:
        return _cap(f"{_listing(e.candidates)} fit '{e.phrase.strip()}' equally well")
    except refs.Unresolvable as e:
        return _cap(str(e))
    m = re.fullmatch(
        r"(?:which|what)\s+(?:block|cube|one|bin)\s+(?:is|sits)\s+(?:the\s+)?(?P<sel>.+)", t
    ) or re.fullmatch(r"(?:which|what)(?:'s|\s+is)\s+the\s+(?P<sel>.+?(?:block|cube|one))", t)
    m = m or re.fullmatch(
        r"(?:which|what)(?:'s|\s+is)\s+the\s+(?P<sel>(?:block|cube|one)\s+(?:that\s+is\s+|that's\s+)?"
        r"(?:closest|nearest|farthest|furthest|next|on|at|in|beside|behind|left|right)\b.+)",
        t,
    )
    if m:
        sel = m["sel"].removeprefix("the ")
        noun = "bin" if re.match(r"(?:which|what)\s+bin\b", t) else "block"
        for form in (f"the {sel}", f"the {noun} {sel}", f"the {sel} {noun}"):
            try:
                r = refs.resolve(form, world)
            except refs.Ambiguous as e:
                return _cap(f"{_listing(e.candidates)} fit equally well")
            except refs.Unresolvable as e:
                return _cap(str(e))
            if r.notes:
                return _cap(r.notes[0].replace("'", ""))

    # where is X
    m = re.fullmatch(rf"where(?:'s|\s+is|\s+are)\s+(?:the\s+)?(?P<o>{_C})(?:\s+(?!{_BIN}$)\w+)?", t)
    if m:
        return _cap(_where(world, f"{m['o']}_block"))
    m = re.fullmatch(rf"where(?:'s|\s+is)\s+(?:the\s+)?(?P<b>{_C})\s+{_BIN}", t)
    if m:
        b = world.bin(f"{m['b']}_bin")
        if b is None:
            return f"There is no {m['b']} bin here"
        return f"The {m['b']} bin is on the table, {_place(b.pos[0], b.pos[1])}"
    m = re.fullmatch(
        rf"(?:which|what)\s+bin\s+(?:is|did|has)\s+(?:the\s+)?(?P<o>{_C})(?:\s+\w+)?"
        rf"(?:\s+(?:end\s+up|go|land|get\s+put|been\s+put))?\s+(?:in|into)",
        t,
    ) or re.fullmatch(rf"(?:which|what)\s+bin\s+is\s+(?:the\s+)?(?P<o>{_C})(?:\s+\w+)?\s+in", t)
    if m:
        return _cap(_where(world, f"{m['o']}_block"))
    # is the drawer / the green bin empty
    m = re.fullmatch(
        rf"(?:is|are)\s+(?:the\s+)?(?P<x>drawer|(?:{_C})(?=\s+{_BIN}))(?:\s+{_BIN})?\s+(?:still\s+)?"
        r"(?P<e>empty|full|not\s+empty|occupied)",
        t,
    )
    if m:
        said = _contents(world, "in", m["x"], "bin" if m["x"] != "drawer" else None)
        if said.startswith("There is no"):
            return said
        empty = said.endswith("nothing")
        asked_empty = m["e"] == "empty"
        return ("Yes: " if empty == asked_empty else "No: ") + said[:1].lower() + said[1:]
    # anything in the green bin / the drawer
    m = re.fullmatch(
        rf"(?:is\s+there\s+|are\s+there\s+)?(?:anything|something|any\s+blocks?|any\s+cubes?)\s+"
        rf"(?:in|inside)\s+(?:the\s+)?(?P<x>{_C}|drawer)(?:\s+{_BIN})?",
        t,
    )
    if m:
        said = _contents(world, "in", m["x"], "bin" if m["x"] != "drawer" else None)
        empty = said.endswith("nothing")
        return ("No: " if empty else "Yes: ") + said[:1].lower() + said[1:]
    if re.fullmatch(
        r"(?:is|are)\s+(?:anything|any\s+blocks?|any\s+cubes?)\s+stacked(?:\s+on.*)?", t
    ):
        stacks = [
            f"the {o.name.split('_')[0]} block on the {o.on.split('_')[0]}"
            for o in world.objects
            if o.on
        ]
        return "Yes: " + ", ".join(stacks) if stacks else "No, nothing is stacked"
    # what are you holding
    if re.search(r"\b(?:holding|hold|in\s+your\s+(?:hand|gripper)|carrying|have\s+in)\b", t) and (
        re.match(r"(?:what|which)\b", t)
        or re.match(r"(?:are|do)\s+you\s+(?:holding|have)\s*$", t)
        or re.match(r"where(?:'s|\s+is)\s+the\s+(?:thing|block|cube|one)\s+(?:that\s+)?you", t)
    ):
        held = world.held_object
        if held:
            return f"I am holding the {held.split('_')[0]} block"
        return "I am not holding anything"
    # what's in / on X
    m = re.fullmatch(
        rf"(?:what|which\s+blocks?)(?:'s|\s+is|\s+are)?\s+(?:there\s+)?(?P<rel>in|inside|on|on\s+top\s+of)"
        rf"\s+(?:the\s+)?(?P<x>{_C}|drawer)(?:\s+(?P<n>{_BIN}|block|cube))?",
        t,
    )
    if m:
        return _contents(world, m["rel"], m["x"], m["n"])
    # what's under X
    m = re.fullmatch(
        rf"(?:what|which\s+block)(?:'s|\s+is)?\s+(?:right\s+|directly\s+)?(?:under|underneath|beneath|below)"
        rf"\s+(?:the\s+)?(?P<x>{_C})(?:\s+(?:block|cube|brick|one))?",
        t,
    )
    if m:
        return _beneath(world, m["x"], asked=False)
    # which blocks are (not) in a bin / on the table: the count names them
    m = re.fullmatch(r"which\s+(?:blocks|cubes|ones)\s+(?:are|is)\s+(?P<rest>.+)", t)
    if m and re.search(r"\b(?:bins?|table|drawer|stacked)\b", m["rest"]):
        return _how_many(world, m["rest"])
    # "how many of the bins are purple?", "how many red bins are there?"
    m = re.search(
        rf"\bhow\s+many\s+(?:of\s+the\s+)?(?:(?P<c1>{_C}|{_OTHER_C})\s+)?bins?\s+(?:are|is)\s+(?:there\s+)?(?P<c2>{_C}|{_OTHER_C})?\b",
        t,
    )
    if m and (m["c1"] or m["c2"]):
        colour = m["c1"] or m["c2"]
        n = sum(b.color == colour for b in world.bins)
        return (
            f"{'None' if n == 0 else n} of the {len(world.bins)} bins "
            f"{'is' if n == 1 else 'are'} {colour}: " + _bins(world)
        )
    # "are there four blocks on the table?": the count, and whether it is that
    m = re.fullmatch(
        r"(?:are|is)\s+there\s+(?:still\s+|exactly\s+|only\s+)?(?P<n>one|two|three|four|five|six|seven|eight|nine|ten|\d+)\s+"
        r"(?:blocks?|cubes?|bricks?)(?P<rest>\s+.+)",
        t,
    )
    if m:
        said = _how_many(world, m["rest"])
        got = re.search(r"\b(\d+|no)\s+(?:blocks?|cubes?)", said)
        n = L.NUMBERS.get(m["n"]) or int(m["n"])
        if got:
            have = 0 if got.group(1) == "no" else int(got.group(1))
            return ("Yes. " if have == n else f"No, only {have}. " if have < n else "No. ") + said
        return said
    # how many
    m = re.search(
        rf"\bhow\s+many\s+(?P<c>{_C}|{_OTHER_C})\s+(?:blocks?|cubes?|bricks?|ones?|things|objects)"
        r"(?P<rest>.*)$",
        t,
    )
    if m:
        return _how_many(world, m["rest"], colour=m["c"])
    m = re.match(r"how\s+many\s+(?:blocks|cubes|bricks|things|objects)?(?P<rest>.*)$", t)
    if m:
        return _how_many(world, m["rest"])
    if re.search(r"\bhow\s+many\b", t):
        return _how_many(world, t)
    # what can you do
    if re.search(r"\bwhat\s+(?:can|do)\s+you\s+do\b|\bwhat\s+are\s+your\s+skills\b|\bhelp\b", t):
        return _cap(_capabilities(world))
    if re.search(
        r"\bwhat\s+(?:do\s+you\s+see|is\s+(?:on\s+)?the\s+table|blocks|colou?rs|is\s+there)\b",
        t,
    ) or re.search(r"\bwhich\s+blocks\b", t):
        return "I see " + _listing([o.name for o in world.objects]) + "; " + _bins(world)
    m = re.fullmatch(r"what\s+colou?r\s+is\s+(?:the\s+)?(?P<x>.+)", t)
    if m and re.search(rf"\b({_C})\b", m["x"]):
        c = re.search(rf"\b({_C})\b", m["x"])
        assert c is not None
        return f"It is {c.group(1)}"
    # can you reach X
    m = re.fullmatch(rf"(?:can|could)\s+you\s+reach\s+(?:the\s+)?(?P<o>{_C})(?:\s+\w+)?", t)
    if m:
        o = world.object(f"{m['o']}_block")
        if o is None:
            return f"There is no {m['o']} block here"
        return f"{'Yes' if o.reachable else 'No'}, the {m['o']} block is " + (
            "within reach" if o.reachable else "out of my reach"
        )
    m = re.fullmatch(rf"(?:can|do)\s+you\s+see\s+(?:a|an|the)?\s*(?P<o>{_C})(?:\s+\w+)?", t)
    if m:
        there = world.object(f"{m['o']}_block") is not None
        return f"{'Yes' if there else 'No'}, there is {'a' if there else 'no'} {m['o']} block"
    # yes/no: "is X in Y", "are you holding X", "is the drawer open", "is there a X block"
    fact = _yes_no(t, world) or facts.read(t, world) or _verbless(t, world)
    if fact is not None:
        return _verdict(fact, world)
    if re.fullmatch(r"is\s+there\s+(?:a|an|any)\s+(?P<o>\w+)(?:\s+\w+)?", t):
        return "No, there is nothing like that here; " + _bins(world)
    return (
        "I did not move. I can answer where a block is, what is in a bin or on a block, "
        "what I am holding, how many blocks there are, and whether something is in, on "
        "or under something else"
    )


def ability(text: str) -> str | None:
    """What the arm could do, asked as "could you lift two blocks at once?" by someone who
    says they are not asking for it: the answer, or None when ``text`` asks no such thing.
    One gripper holds one block; only the blocks move (not the bins, the table or the arm's
    base)."""
    m = re.match(
        r"^(?:could|can|would|will)\s+you\s+(?:(?:be\s+able|manage)\s+to\s+|even\s+|possibly\s+)?"
        r"(?P<v>lift|pick\s+up|pick|hold|carry|grab|take|move|stack|push|reach|throw|get|put|place|open|close|press)\s+"
        r"(?P<rest>.+?)[\s?.!]*$",
        text.strip().lower(),
    )
    if m is None:
        return None
    rest = m["rest"]
    if re.search(
        r"\b(?:two|three|four|2|3|4|both|all|several|multiple|many)\b", rest
    ) and re.search(
        r"\b(?:at\s+(?:the\s+same\s+time|once)|together|simultaneously|in\s+one\s+go)\b", rest
    ):
        return (
            "No: my gripper holds one block at a time, so I would take them one after "
            "another. I did not move anything"
        )
    if (
        re.match(
            r"(?:the\s+|a\s+|that\s+|this\s+|your\s+)?(?:\w+\s+)?(?:bins?|table|robot|yourself|wall|floor|lamp)\b",
            rest,
        )
        and m["v"] != "reach"
    ):
        return (
            "No: I can move only the blocks, not the bins, the table or myself. "
            "I did not move anything"
        )
    return "I could, if you ask me to; I did not move anything"


def _superlative(world: WorldState, word: str) -> str:
    """ "which block is the biggest?" from the objects' specs (size, height, mass)."""
    from sim.objects import spec as object_spec

    if not world.objects:
        return "There are no blocks here"
    specs = {o.name: object_spec(o.name) for o in world.objects}
    if word in ("heaviest", "lightest"):
        value = {n: sp.mass for n, sp in specs.items()}
    elif word in ("tallest", "shortest"):
        value = {n: sp.half_height for n, sp in specs.items()}
    else:
        value = {n: sp.half_height * sp.horizontal_radius for n, sp in specs.items()}
    best = (max if word in ("biggest", "largest", "heaviest", "tallest") else min)(value.values())
    if len(set(value.values())) == 1:
        sp = next(iter(specs.values()))
        return (
            f"They are all the same size and weight: {2 * sp.half_height * 100:.0f} cm "
            f"{sp.kind}s of {sp.mass * 1000:.0f} g"
        )
    won = [n for n, v in value.items() if v == best]
    return _cap(f"{_listing(won)} {'is' if len(won) == 1 else 'are'} the {word}")


def _stacks(world: WorldState) -> str:
    """ "how tall is the stack?": each stack from the top down, its count and its height
    (from the objects' own sizes, so a stack of the mixed scene's cubes reads right)."""
    from sim.objects import spec as object_spec

    below = {o.name: o.on for o in world.objects if o.on}
    tops = [o.name for o in world.objects if o.on and world.clear(o.name)]
    if not tops:
        return "Nothing is stacked: every block stands on its own"
    said = []
    for top in tops:
        chain = [top]
        under = below.get(top)
        while under is not None and len(chain) <= len(world.objects):
            chain.append(under)
            under = below.get(under)
        cm = sum(2 * object_spec(n).half_height for n in chain) * 100
        said.append(
            f"{len(chain)} blocks tall, about {cm:.0f} cm ("
            + " on ".join(f"the {n.replace('_', ' ')}" for n in chain)
            + ")"
        )
    head = "The stack is " if len(said) == 1 else f"There are {len(said)} stacks: "
    return head + "; ".join(said)


def _beneath(world: WorldState, colour: str, asked: bool) -> str:
    """What the ``colour`` block stands on: "what's under X" (``asked`` False) and "is X
    stacked on anything" (True: the answer opens with yes or no)."""
    o = world.object(f"{colour}_block")
    if o is None:
        return f"There is no {colour} block here"
    if o.on:
        return (
            f"{'Yes, the' if asked else 'The'} {colour} block is on the {o.on.split('_')[0]} block"
        )
    return "No; " + _where(world, o.name) if asked else _cap(_where(world, o.name))


def _bins(world: WorldState) -> str:
    bins = [b.name.split("_")[0] for b in world.bins]
    if not bins:
        return "there are no bins"
    return "the bins are " + ", ".join(bins[:-1]) + (" and " if len(bins) > 1 else "") + bins[-1]


def _contents(world: WorldState, rel: str, x: str, noun: str | None) -> str:
    if x == "drawer":
        if world.drawer is None:
            return "There is no drawer here"
        inside = list(world.drawer.contents)
        state = "open" if world.drawer.is_open else "closed"
        return f"The drawer is {state} and holds {_listing(inside)}"
    if noun and re.fullmatch(_BIN, noun) or (rel.startswith("in") and noun is None):
        b = f"{x}_bin"
        if world.bin(b) is None:
            return f"There is no {x} bin here"
        inside = [o.name for o in world.objects if o.in_bin == b]
        return f"The {x} bin holds {_listing(inside)}"
    base = f"{x}_block"
    if world.object(base) is None:
        return f"There is no {x} block here"
    tops = [o.name for o in world.objects if o.on == base]
    return f"On the {x} block: {_listing(tops)}"


def _how_many(world: WorldState, rest: str, colour: str | None = None) -> str:
    """How many blocks are where ``rest`` says (of ``colour`` only, where one is named)."""
    mine = None
    if colour is not None:
        mine = {o.name for o in world.objects if o.name.split("_")[0] == colour}
    if mine is not None and not mine:
        return f"There are 0 {colour} blocks here"
    rest = re.sub(r"\boutside\s+(?:of\s+)?", "not in ", rest.strip())
    m = re.search(rf"\b(?P<b>{_C})\s+{_BIN}\s+(?:has|holds|contains)\b", rest)
    if m:
        rest = f"in the {m['b']} bin"
    objs = list(world.objects)
    where = "here"
    m = re.search(rf"\bin\s+(?:the\s+)?(?P<b>{_C})\s+{_BIN}", rest)
    if m:
        objs = [o for o in objs if o.in_bin == f"{m['b']}_bin"]
        where = f"in the {m['b']} bin"
    elif re.search(r"\bin\s+(?:the\s+)?(?:bins|a\s+bin|any\s+bin)", rest):
        objs = [o for o in objs if o.in_bin]
        where = "in the bins"
    elif re.search(r"\bin\s+the\s+drawer", rest) and world.drawer is not None:
        objs = [o for o in objs if o.name in world.drawer.contents]
        where = "in the drawer"
    elif side := re.search(r"\bon\s+the\s+(left|right)\b", rest):
        picked = set(refs.on_side(world, side.group(1)))
        objs = [o for o in objs if o.name in picked]
        where = f"on the {side.group(1)}"
    elif re.search(r"\bon\s+the\s+table\b", rest):
        objs = [o for o in objs if o.on_table]
        where = "on the table"
    elif re.search(r"\bstacked\b|\bon\s+(?:top\s+of\s+)?(?:other|another)", rest):
        objs = [o for o in objs if o.on]
        where = "stacked on another block"
    elif re.search(r"\bbins\b", rest) and not re.search(r"\bblocks?\b", rest):
        n = len(world.bins)
        return f"There {'is' if n == 1 else 'are'} {n} bin{'s' if n != 1 else ''}"
    if where != "here" and re.search(
        r"\b(?:not|aren't|isn't|out\s+of)\s+(?:yet\s+)?(?:in|on|inside|stacked|the|a|any)\b",
        rest,
    ):
        # "how many blocks are not in a bin?": the others
        objs = [o for o in world.objects if o not in objs]
        where = "not " + where
    if mine is not None:
        objs = [o for o in objs if o.name in mine]
    n = len(objs)
    names = _listing([o.name for o in objs])
    noun = "block" if colour is None else f"{colour} block"
    return f"There {'is' if n == 1 else 'are'} {n} {noun}{'s' if n != 1 else ''} {where}" + (
        f": {names}" if n else ""
    )


def _yes_no(t: str, world: WorldState) -> facts.Fact | None:
    """Turn "is X in Y" / "are you holding X" / "is there ..." into statement order."""
    m = re.fullmatch(r"(?P<aux>is|are|was)\s+(?P<rest>.+)", t)
    if m:
        rest = m["rest"]
        if rest.startswith("there "):
            return facts.read(f"there is {rest[6:]}", world)
        if rest.startswith("you "):
            return facts.read(f"you are {rest[4:]}", world)
        some = re.match(r"(?P<s>anything|something|any\s+block|a\s+block)\s+(?P<p>.+)", rest)
        if some:
            return facts.read(f"{some['s']} is {some['p']}", world)
        # split "the red block in the green bin" into subject + predicate
        s = re.match(
            rf"(?P<subj>(?:the\s+)?(?:{_C})(?:\s+(?:block|cube|brick|one|bin|basket|box))?|"
            r"(?:the\s+)?drawer|(?:the\s+)?light|(?:the\s+)?lamp|(?:your|the)\s+(?:hand|gripper))"
            r"\s+(?P<pred>.+)",
            rest,
        )
        if s:
            return facts.read(f"{s['subj']} is {s['pred']}", world)
    m = re.fullmatch(r"(?:do|does)\s+(?P<subj>.+?)\s+(?:have|contain|hold)\s+(?P<obj>.+)", t)
    if m:
        return facts.read(f"{m['subj']} has {m['obj']}", world)
    return None


def _verbless(t: str, world: WorldState) -> facts.Fact | None:
    """ "blue bin empty?", "red in the green bin?": the question with its "is" left out."""
    m = re.match(
        rf"(?P<subj>(?:the\s+)?(?:{_C})(?:\s+(?:block|cube|brick|one|bin|basket|box))?|"
        r"(?:the\s+)?drawer|(?:the\s+)?light|(?:the\s+)?lamp)\s+(?P<pred>.+)",
        t,
    )
    return facts.read(f"{m['subj']} is {m['pred']}", world) if m else None


def _what_is(world: WorldState, rel: str, where: str) -> str:
    """The objects ``rel`` ("in" / "on") the bin, block or drawer named ``where`` ("blue
    block", "red bin", "drawer"), listed ("the red block and the green block"), or ""."""
    name = where.replace(" ", "_")
    if rel == "on":
        found = [o.name for o in world.objects if o.on == name]
    elif name == "drawer":
        found = [o.name for o in world.objects if world.in_drawer(o.name)]
    else:
        found = [o.name for o in world.objects if o.in_bin == name]
    return _listing(found) if found else ""


def _verdict(fact: facts.Fact, world: WorldState) -> str:
    true = fact.holds(world)
    said = fact.says
    some = re.fullmatch(r"something is (in|on) the (.+)", said)
    if true and some:  # "is anything on the blue block?" -> "Yes, the red block is on it"
        named = _what_is(world, some.group(1), some.group(2))
        if named:
            verb = "are" if " and " in named else "is"
            return f"Yes, {named} {verb} {some.group(1)} the {some.group(2)}"
    if true:
        return f"Yes, {said}"
    dev = re.fullmatch(r"the (drawer|light|lamp) is \w+", said)
    if dev:
        return (
            "No, "
            + _device_state(world, dev.group(1))[:1].lower()
            + _device_state(world, dev.group(1))[1:]
        )
    if re.search(r"\b(?:gripper|hand)\b.*\bempty\b", said) and world.held_object:
        return f"No, I am holding the {world.held_object.split('_')[0]} block"
    m = re.match(rf"the ({_C}) block\b", said)
    if m and world.object(f"{m.group(1)}_block") is not None:
        return f"No, {_where(world, m.group(1) + '_block')}"
    some = re.match(r"something is (.+)$", said)
    if some:  # "is anything in the drawer?" -> "No, nothing is in the drawer"
        return f"No, nothing is {some.group(1)}"
    return f"No, it is not the case that {said}"


def statement(text: str, world: WorldState) -> str | None:
    """A reply checking a statement, or None when it is not a claim this reader knows."""
    t = _TAG.sub("", text.strip().lower()).rstrip(".!?")
    if _TOLD_OF.search(t):
        if re.search(r"\bask\s+you\s+to\b", t):
            return "Noted: I will do it when I am asked. I did not move anything"
        return "I keep no record of earlier sessions. I did not move anything"
    t = re.sub(rf"^{_OBSERVED}", "", t)
    t = _did(t) or t
    fact = facts.read(t, world)
    if fact is None:
        return None
    if fact.holds(world):
        return f"Yes, {fact.says}. I did not move anything"
    return _verdict(fact, world) + ". I did not move anything"


def _hypothetical(cmd: str, world: WorldState) -> str:
    """What would happen, from the rules planner's plan and the bridge's simulation."""
    import bridge
    from bridge.validate import simulate
    from planner.rules import parse as rules_parse

    # "... pressed the button? just tell me, don't press it": what follows the question
    # only says not to do it
    cmd = re.sub(r"\?\s+.*$", "?", cmd.strip())

    # "..., which block would you pick up first?": the first step's block is the answer
    first = re.search(
        r"\s*,?\s*(?:which|what)\s+(?:block|cube|one)\s+would\s+you\s+(?:pick\s+up|grab|take|lift|move|pick)\s+first\s*\??$",
        cmd,
    )
    if first:
        cmd = cmd[: first.start()]
    cmd = re.sub(
        r",?\s*(?:what\s+(?:would|will)\s+happen|could\s+you|would\s+you|can\s+you|will\s+you|"
        r"what\s+then)\s*\??$",
        "",
        cmd.strip(),
    )
    cmd = re.sub(r"^(?:you\s+|i\s+)", "", cmd.strip())
    cmd = re.sub(r"^(?:were\s+to\s+|did\s+|would\s+)", "", cmd)
    cmd = re.sub(
        r"^(?:putting|stacking|placing|moving|pushing)\b",
        lambda g: {"putting": "put", "stacking": "stack", "placing": "place"}.get(
            g.group(0), g.group(0)[:-3]
        ),
        cmd,
    )
    cmd = re.sub(
        r"^(?:putting|stacking|placing|moving|pushing|pressing|opening|closing|turning|lifting)\b",
        lambda g: {
            "putting": "put",
            "stacking": "stack",
            "placing": "place",
            "closing": "close",
        }.get(g.group(0), g.group(0)[:-3]),
        cmd,
    )
    cmd = re.sub(
        r"^(?:pushes|presses|placed|dropped|stacked|pushed|moved|picked|pressed|opened|closed|"
        r"turned|switched|lifted|grabbed)\b|\b(?:puts?|placed?|dropped|stacked|pushed|moved|picked|pressed|"
        r"opened|turned|switched|lifted|grabbed)\b(?=\s+(?:the|on|off|up|it|a)\b)",
        _present,
        cmd,
    )
    r = rules_parse(cmd, world)
    if not r.confident:
        return "I am not sure what that would do; nothing has moved"
    plan = r.to_json()
    res = bridge.validate(plan, world)
    if not res.accepted:
        why = res.refusal or "; ".join(x.message for x in res.reasons[:1]) or "it is not possible"
        return f"I could not do that: {why}. Nothing has moved"
    if first:
        picked = [s["object"] for s in res.plan_json() if s.get("skill") in ("pick", "push")]
        if picked:
            return (
                f"I would pick up the {picked[0].replace('_', ' ')} first. Nothing has moved yet: "
                "say it as a command to do it"
            )
    after, _ = simulate(world, res.plan_json())
    changed = []
    for o in after.objects:
        before = world.object(o.name)
        if before is not None and _where(world, o.name) != _where(after, o.name):
            changed.append(re.sub(r",\s+(?:at|in)\s+the.*$", "", _where(after, o.name)))
    changed += _fixtures_changed(world, after)
    what = "; ".join(changed) or "nothing would change"
    return f"Then {what}. Nothing has moved yet: say it as a command to do it"


_APART = re.compile(
    r"^(?:(?:roughly|approximately|about|so)\s*,?\s+)?(?:how\s+far\s+apart\s+are|how\s+(?:many\s+)?"
    r"(?:cm|centimet(?:er|re)s|millimet(?:er|re)s|mm|inches|metres|meters)\s+(?:apart\s+)?(?:are|is\s+it\s+between)|"
    r"what(?:'s|\s+is)\s+the\s+distance\s+(?:between|from)|how\s+far\s+is)\s+"
    rf"(?:the\s+)?(?P<a>{_C})(?:\s+(?:one|block|cube))?\s+(?:and|from|to)\s+(?:the\s+)?(?P<b>{_C})"
    r"(?:\s+(?:ones?|blocks?|cubes?))?(?:\s+(?:apart|from\s+each\s+other))?$"
)


def _apart(t: str, world: WorldState) -> str | None:
    """ "how far apart are the red and blue blocks?": centre to centre, on the table."""
    m = _APART.match(t)
    if m is None:
        return None
    a, b = world.object(f"{m['a']}_block"), world.object(f"{m['b']}_block")
    if a is None or b is None:
        gone = m["a"] if a is None else m["b"]
        return f"There is no {gone} block here. I did not move anything"
    d = ((a.pos[0] - b.pos[0]) ** 2 + (a.pos[1] - b.pos[1]) ** 2) ** 0.5
    return (
        f"About {d * 100:.0f} cm (centre to centre) between the {m['a']} block and the "
        f"{m['b']} block. I did not move anything"
    )


_BETWEEN = re.compile(
    rf"^is\s+(?:the\s+)?(?P<x>{_C})(?:\s+(?:one|block|cube))?\s+(?:in\s+)?between\s+"
    rf"(?:the\s+(?:others|other\s+two)|(?:the\s+)?(?P<a>{_C})(?:\s+(?:one|block|cube))?\s+and\s+(?:the\s+)?"
    rf"(?P<b>{_C})(?:\s+(?:ones?|blocks?|cubes?))?)$"
)


def _between(t: str, world: WorldState) -> str | None:
    """ "is the yellow one between the others?": on the line from one to the other (its
    foot inside the segment, within 5 cm of it), seen from above."""
    m = _BETWEEN.match(t)
    if m is None:
        return None
    x = world.object(f"{m['x']}_block")
    if m["a"]:
        ends = [world.object(f"{m['a']}_block"), world.object(f"{m['b']}_block")]
    else:
        ends = [o for o in world.objects if o.on_table and x is not None and o.name != x.name]
    if x is None or len(ends) != 2 or any(e is None for e in ends):
        return None
    (ax, ay), (bx, by) = ends[0].pos[:2], ends[1].pos[:2]  # type: ignore[union-attr]
    dx, dy = bx - ax, by - ay
    n2 = dx * dx + dy * dy
    u = ((x.pos[0] - ax) * dx + (x.pos[1] - ay) * dy) / n2 if n2 else -1.0
    off = abs((x.pos[0] - ax) * dy - (x.pos[1] - ay) * dx) / n2**0.5 if n2 else 1.0
    names = " and the ".join(e.name.replace("_", " ") for e in ends)  # type: ignore[union-attr]
    if 0.0 < u < 1.0 and off <= 0.05:
        return f"Yes, the {m['x']} block lies between the {names}. I did not move anything"
    return f"No, the {m['x']} block is not between the {names}. I did not move anything"


#: The arm's base, where "easier to reach" is measured from (module frame).
_BASE_XY = (float(scene.BASE_XY[0]), float(scene.BASE_XY[1]))
_EASIER = re.compile(
    r"^which\s+(?:one\s+|block\s+|cube\s+)?(?:is|'s)\s+(?P<w>easier|harder|simpler|quicker)\s+(?:for\s+you\s+)?"
    rf"(?:to\s+(?:reach|get\s+to|grab|pick\s+up|get))?\s*,?\s*:?\s*(?:the\s+)?(?P<a>{_C})(?:\s+(?:one|block|cube))?\s+"
    rf"or\s+(?:the\s+)?(?P<b>{_C})(?:\s+(?:one|block|cube))?$"
)


def _easier(t: str, world: WorldState) -> str | None:
    """ "which is easier for you to reach, red or blue?": the one nearer the arm's base."""
    m = _EASIER.match(t)
    if m is None:
        return None
    objs = [world.object(f"{c}_block") for c in (m["a"], m["b"])]
    if any(o is None for o in objs):
        return None
    d = [((o.pos[0] - _BASE_XY[0]) ** 2 + (o.pos[1] - _BASE_XY[1]) ** 2) ** 0.5 for o in objs]  # type: ignore[union-attr]
    near = 0 if d[0] <= d[1] else 1
    pick = near if m["w"] != "harder" else 1 - near
    c = (m["a"], m["b"])[pick]
    return (
        f"The {c} block: it is {'nearer to' if pick == near else 'farther from'} my base "
        f"({d[pick] * 100:.0f} cm against {d[1 - pick] * 100:.0f} cm). I did not move anything"
    )


_MORE_THAN = re.compile(
    r"^are\s+there\s+(?P<w>more|fewer|less)\s+(?:blocks|cubes)\s+(?P<a>on\s+the\s+table|in\s+(?:the\s+)?bins?)\s+"
    r"than\s+(?P<b>on\s+the\s+table|in\s+(?:the\s+)?bins?|there\s+are\s+in\s+(?:the\s+)?bins?|on\s+it)$"
)


def _more_than(t: str, world: WorldState) -> str | None:
    """ "are there more blocks on the table than in the bins?": the two counts compared."""
    m = _MORE_THAN.match(t)
    if m is None:
        return None
    table = sum(1 for o in world.objects if o.on_table)
    binned = sum(1 for o in world.objects if o.in_bin)
    a, b = (table, binned) if "table" in m["a"] else (binned, table)
    yes = a > b if m["w"] == "more" else a < b
    word = "fewer" if table < binned else "more" if table > binned else "as many"
    return (
        f"{'Yes' if yes else 'No'}: {table} on the table and {binned} in the bins "
        f"({word} on the table). I did not move anything"
    )


_SITTING_ON = re.compile(
    rf"^what(?:'s|\s+is)\s+(?:the\s+)?(?P<c>{_C})\s+(?:block|one|cube)\s+(?:sitting|resting|standing|lying|placed|stacked)?\s*"
    r"(?:on(?:\s+top\s+of)?|in)$"
)


def _sitting_on(t: str, world: WorldState) -> str | None:
    """ "what's the green block sitting on?": the block under it, its bin or the table."""
    m = _SITTING_ON.match(t)
    if m is None:
        return None
    o = world.object(f"{m['c']}_block")
    if o is None:
        return f"There is no {m['c']} block here. I did not move anything"
    if o.on:
        where = f"on the {o.on.replace('_', ' ')}"
    elif o.in_bin:
        where = f"in the {o.in_bin.replace('_', ' ')}"
    elif o.held:
        where = "in my gripper"
    else:
        where = "on the table"
    return f"The {m['c']} block is {where}. I did not move anything"


_EITHER = re.compile(
    rf"^(?P<v>is|are)\s+either\s+(?:of\s+)?(?:the\s+)?(?P<a>{_C})(?:\s+(?:one|block|cube))?\s+or\s+(?:the\s+)?(?P<b>{_C})"
    r"(?:\s+(?:one|block|cube))?\s+(?P<rest>.+)$"
)


def _either(t: str, world: WorldState) -> str | None:
    """ "is either the red or the blue block in a bin?": asked of each, yes if one holds."""
    m = _EITHER.match(t)
    if m is None:
        return None
    said = [answer(f"is the {c} block {m['rest']}?", world) for c in (m["a"], m["b"])]
    yes = [x for x in said if x.startswith("Yes")]
    if yes:
        return yes[0]
    if all(x.startswith("No") for x in said):
        return "No: " + "; ".join(x.removeprefix("No, ").removeprefix("No: ") for x in said)
    return None


def _how_i_would(cmd: str, world: WorldState) -> str:
    """The steps the rules planner and the bridge would take for ``cmd``, in words."""
    import bridge
    from planner.rules import parse as rules_parse

    cmd = re.sub(r"\?\s+.*$", "", cmd.strip()).rstrip("?. ")
    cmd = re.sub(
        r"^(sorting|stacking|putting|moving|pushing|picking|opening|closing|pressing|building)\b",
        lambda g: {
            "putting": "put",
            "stacking": "stack",
            "closing": "close",
            "building": "build",
        }.get(g.group(1), g.group(1)[:-3]),
        cmd,
    )
    cmd = re.sub(r"\b(them|those|these)\b", "the blocks", cmd)
    r = rules_parse(cmd, world)
    if not r.confident:
        return "I am not sure how I would do that; nothing has moved"
    res = bridge.validate(r.to_json(), world)
    if not res.accepted:
        why = res.refusal or "; ".join(x.message for x in res.reasons[:1]) or "it is not possible"
        return f"I could not do that: {why}. Nothing has moved"
    steps = [_step_words(s) for s in res.plan_json()]
    if not steps:
        return "There is nothing to do: it is so already. Nothing has moved"
    said = ", then ".join(steps)
    return f"I would {said}. Nothing has moved yet: say it as a command to do it"


def _step_words(step: dict) -> str:
    """One subgoal in words ("pick up the red block", "put it on the blue block")."""
    name = lambda k: str(step.get(k, "")).replace("_", " ")  # noqa: E731 - a one-line helper
    skill = step.get("skill")
    if skill == "pick":
        return f"pick up the {name('object')}"
    if skill == "place":
        target = step.get("target", "")
        where = "in" if str(target).endswith("bin") or target == "drawer" else "on"
        return f"put it {where} the {name('target')}"
    if skill == "push":
        return f"push the {name('object')} to the {name('target')}"
    return {
        "open_drawer": "open the drawer",
        "close_drawer": "close the drawer",
        "press_button": "press the button",
        "home": "go back home",
    }.get(str(skill), str(skill).replace("_", " "))


def _fixtures_changed(before: WorldState, after: WorldState) -> list[str]:
    """What the plan's effects would do to the drawer and the lamp, in words."""
    out = []
    d0, d1 = before.drawer, after.drawer
    if d0 is not None and d1 is not None and d0.is_open != d1.is_open:
        out.append(f"the drawer would be {'open' if d1.is_open else 'closed'}")
    if before.light_on is not None and after.light_on is not None:
        if before.light_on != after.light_on:
            out.append(f"the lamp (the light) would be {'on' if after.light_on else 'off'}")
    return out


#: "could the blue block go on top of the yellow one?": a question whether it can be done
#: (asked of the thing, not of the robot); a request says so ("please", "for me", "thx"),
#: see :mod:`planner.understand.smalltalk`.
_FEASIBLE = re.compile(
    rf"(?:could|can|might|would|will)\s+(?P<x>(?:the\s+)?(?:{_C})(?:\s+(?:block|cube|brick|one))?)\s+"
    r"(?:go|fit|be\s+put|get\s+put|be\s+placed|be\s+moved|be\s+stacked|sit|stand|be|end\s+up)\s+"
    r"(?P<p>in|into|inside|on|onto|on\s+top\s+of)\s+(?P<y>.+)"
)


def _feasible(cmd: str, world: WorldState) -> str:
    """Whether ``cmd`` could be done now, from the rules planner and the bridge; nothing moves."""
    import bridge
    from planner.rules import parse as rules_parse

    r = rules_parse(cmd, world)
    if not r.confident:
        return "I am not sure what that would take; nothing has moved"
    res = bridge.validate(r.to_json(), world)
    if not res.accepted:
        why = res.refusal or "; ".join(x.message for x in res.reasons[:1]) or "it is not possible"
        return f"No, I could not: {why}. Nothing has moved"
    return f"Yes, I could {cmd}. Nothing has moved yet: say it as a command to do it"


def _about_the_robot(t: str, world: WorldState) -> str | None:
    """ "can you hear me?", "describe the scene", "explain how you'd stack the blocks",
    "how would you put ...?": about the robot or a plan it would make; nothing moves."""
    if re.fullmatch(
        r"(?:can|do)\s+you\s+(?:hear|understand|read)\s+me|are\s+you\s+(?:there|listening|awake|ready|ok|okay)|hello",
        t,
    ):
        return "Yes, I am here and listening; tell me what to do or ask about the table"
    if re.fullmatch(
        r"(?:(?:can|could|would)\s+you\s+)?(?:describe|list|name)\s+(?:the\s+)?(?:scene|table|blocks|cubes|things|"
        r"objects|what\s+you\s+see)|what\s+are\s+the\s+bins",
        t,
    ):
        return "I see " + _listing([o.name for o in world.objects]) + "; " + _bins(world)
    m = re.fullmatch(
        r"(?:(?:can|could|would)\s+you\s+)?(?:explain|describe|tell\s+me)\s+(?:your\s+plan\s+for|how\s+you(?:'d|\s+would)|"
        r"what\s+you(?:'d|\s+would)\s+do\s+to|how\s+to)\s+(?P<cmd>.+)",
        t,
    ) or re.fullmatch(
        r"(?:how\s+would\s+you|what\s+happens\s+when\s+you|what\s+do\s+you\s+think\s+about|"
        r"would(?=\s+\w+ing\b))\s*(?P<cmd>.+?)(?:\s+be\s+possible)?",
        t,
    )
    if m:
        return _hypothetical(m["cmd"], world)
    return None


def _can_do(world: WorldState, verb: str) -> str:
    skills = {
        "push": "push",
        "stack": "place",
        "pick up": "pick",
        "pick": "pick",
        "lift": "pick",
        "move": "pick",
        "grab": "pick",
        "carry": "pick",
        "sort": "place",
        "open": "open_drawer",
        "close": "close_drawer",
        "press": "press_button",
    }
    from skills import registry

    skill = skills.get(verb)
    if skill and skill in registry.names():
        return (
            f"Yes, I can {verb} them (say which, and where); nothing has moved. "
            + _capabilities(world)
        )
    return f"No, I cannot {verb}. {_capabilities(world)}"


def _located(world: WorldState, phrase: str | None) -> tuple[str, tuple[float, float]] | None:
    """Where "you"/"me" (or nothing), "the X block" or "the X bin" is, and how to say it;
    None when that thing is not here."""
    if phrase is None or phrase.strip() in ("you", "me"):
        return "me", refs._robot_xy()
    c = re.search(rf"\b({_C})\b", phrase)
    assert c is not None
    is_bin = re.search(rf"\b{_BIN}\b", phrase) is not None
    name = f"{c.group(1)}_{'bin' if is_bin else 'block'}"
    thing = world.bin(name) if is_bin else world.object(name)
    if thing is None:
        return None
    return f"the {name.replace('_', ' ')}", (float(thing.pos[0]), float(thing.pos[1]))


def _compare(world: WorldState, a: str, b: str, ref: str, closer: bool) -> str:
    oa, ob = world.object(f"{a}_block"), world.object(f"{b}_block")
    if oa is None or ob is None:
        return "One of those blocks is not here"
    at = _located(world, ref)
    if at is None:
        return "That is not here"
    point = at[1]
    da = math.dist((oa.pos[0], oa.pos[1]), point)
    db = math.dist((ob.pos[0], ob.pos[1]), point)
    yes = da < db if closer else da > db
    said = f"the {a} block is {da * 100:.0f} cm away, the {b} block {db * 100:.0f} cm"
    return f"{'Yes' if yes else 'No'}: {said}"


def _quantified(world: WorldState, q: str, pred: str) -> str:
    """ "are all the blocks on the table?": the claim read for every cube."""
    names = [o.name for o in world.objects]
    if not names:
        return "There are no blocks here"
    verdicts: list[tuple[str, bool]] = []
    for n in names:
        fact = facts.read(f"the {n.split('_')[0]} block is {pred}", world)
        if fact is None:
            return "I am not sure how to check that for every block; nothing has moved"
        verdicts.append((n, fact.holds(world)))
    yes = [n for n, ok in verdicts if ok]
    no = [n for n, ok in verdicts if not ok]
    if q in ("any",):
        return f"Yes: {_listing(yes)}" if yes else f"No, none of the blocks is {pred}"
    if q == "none":
        return "Yes, none is" if not yes else f"No: {_listing(yes)} is {pred}"
    if not no:
        return f"Yes, all {len(names)} are {pred}"
    return "No: " + "; ".join(_where(world, n) for n in no)


def _how_far(world: WorldState, a: str, b: str | None) -> str:
    pa, pb = _located(world, a), _located(world, b)
    if pa is None or pb is None:
        return "One of those is not here"
    d = math.dist(pa[1], pb[1])
    return _cap(f"{pa[0]} is about {d * 100:.0f} cm from {pb[0]}")


def _device_state(world: WorldState, device: str) -> str:
    if device == "drawer":
        if world.drawer is None:
            return "There is no drawer here"
        return f"The drawer is {'open' if world.drawer.is_open else 'closed'}"
    if world.drawer is None and not world.light_on:
        return "There is no lamp here"
    return f"The light is {'on' if world.light_on else 'off'}"


def _which_bins(world: WorldState, full: bool) -> str:
    used = {o.in_bin for o in world.objects if o.in_bin}
    names = [b.name.split("_")[0] for b in world.bins if (b.name in used) == full]
    what = "hold something" if full else "are empty"
    if not names:
        return "None of the bins holds anything" if full else "No bin is empty"
    said = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    verb = ("holds something" if full else "is empty") if len(names) == 1 else what
    return f"The {said} bin{'s' if len(names) > 1 else ''} {verb}"


def _present(m: re.Match[str]) -> str:
    return L.PRESENT_OF.get(m.group(0), m.group(0))


def _cap(text: str) -> str:
    """First letter up, the rest as written ("I" stays "I")."""
    return text[:1].upper() + text[1:]
