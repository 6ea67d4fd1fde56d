"""Shapes of a command the planners read better spelled out.

Why: the rules planner reads one plain shape per clause ("put the red block in the green
bin"), and the model was trained on a corpus of commands. People say the same thing in many
other shapes: with the verb left out, the object first, a wish or a pairing instead of an
order, pronouns that point back at what was just named. Each function below rewrites one
family of shapes into the plain one, in a fixed order (later rewrites read earlier ones).
Nothing here reads the world: references that need it are resolved in
:mod:`planner.understand.references`.
"""

from __future__ import annotations

import planner.rx as re
from bridge import lexicon as L

_C = "|".join(L.COLOURS)
#: A block's noun, "one" included ("the red one").
_ONE = r"(?:block|cube|brick|one)"
#: A container named: "the green bin", "drawer".
_CONTAINER = rf"\b(?:the\s+)?(?:(?:{_C})\s+bin|drawer)\b"


def tidy(t: str) -> str:
    """``t`` with every shape below spelled out (unchanged when it is already plain)."""
    for step in (
        _jargon,
        _places,
        _orders_said_otherwise,
        _references,
        _filled,
        _made_sure,
        _code_like,
        _counted_fragments,
        _verbless,
        _in_order,
    ):
        t = step(t)
    return t.strip()


def _jargon(t: str) -> str:
    """Other people's words and framings for the plain ones, each a rewrite: a laboratory's
    ("transfer the red specimen cube to the green receptacle, then return the manipulator to
    rest" is "put the red block in the green bin, then go home"), a game show's, a kitchen's,
    a commentator's, a lawyer's ("provided that", "save for", "shall be deposited in"), a
    tower drawn from the top or said as an order of colours, "either X or Y - your call",
    "I want the table empty", "nudge it across - no need to lift it" (a push, not a
    prohibition)."""
    t = re.sub(
        rf"\b({_C})\s+(?:receptacles?|trays?|tubs?|crates?|buckets?|containers?|vessels?|bins)\b",
        r"\1 bin",
        t,
    )
    t = re.sub(
        rf"\b({_C})\s+(?:specimen|sample|test|item|unit|object|piece)\s+(cube|block|brick)\b",
        r"\1 \2",
        t,
    )
    t = re.sub(
        r"\b(?:return|send|bring|move|take)\s+(?:the\s+)?(?:manipulator|arm|gripper|end[\s-]effector|robot|yourself)"
        r"\s+(?:back\s+)?(?:to\s+(?:its\s+|your\s+|the\s+)?(?:rest(?:\s+position)?|home(?:\s+position)?|start(?:ing)?\s+position|"
        r"neutral(?:\s+position)?)|home)\b|\breturn\s+to\s+(?:rest|home|base)\b",
        "go home",
        t,
    )
    t = re.sub(r"\b(push|nudge|slide|shove|scoot)\s+(.+?)\s+(?:across|over)\s+to\b", r"\1 \2 to", t)
    t = re.sub(r"\b(left|right)-hand\s+side\b", r"\1 side", t)
    # "put the blue block in the green bin, but only after the red block is in the red bin":
    # the condition's state is the first step
    t = re.sub(
        rf"^(?P<a>.+?)\s*,?\s+(?:but\s+)?only\s+(?:after|once|when)\s+(?P<x>the\s+(?:{_C})\s+{_ONE})\s+(?:is|has\s+been)\s+"
        rf"(?:put\s+)?(?P<p>in|on|on\s+top\s+of)\s+(?P<y>the\s+(?:{_C})\s+(?:bin|{_ONE}))[\s.!]*$",
        lambda m: f"put {m['x']} {m['p']} {m['y']}, then {m['a']}",
        t,
    )
    # "take the green cube and set it carefully on top of the yellow cube": one move
    t = re.sub(
        rf"\b(?:take|grab|get|pick\s+up)\s+(?P<x>the\s+(?:{_C})\s+{_ONE})\s+and\s+(?:then\s+)?(?:set|put|place|pop|stick|lay|drop)\s+"
        r"(?:it|that)\s+(?:down\s+)?(?:\w+ly\s+)?(?P<d>(?:on|onto|on\s+top\s+of|in|into|inside)\s+)",
        r"put \g<x> \g<d>",
        t,
    )
    # "the one the colour of blood", "the christmas-tree coloured cube": the colour named
    t = re.sub(
        r"\b(?:the\s+)?(?:one|block|cube)\s+(?:that(?:'s|\s+is)\s+)?the\s+colou?r\s+of\s+(?:a\s+|an\s+|the\s+)?(?P<w>[a-z-]+(?:\s+[a-z]+)?)",
        lambda m: _cue(m["w"], m.group(0)),
        t,
    )
    t = re.sub(
        r"\b(?:the\s+)?(?P<w>[a-z]+(?:[\s-][a-z]+)?)[\s-]colou?red\s+(?P<n>cube|block|one)\b",
        lambda m: _cue(m["w"], m.group(0), m["n"]),
        t,
    )
    # "do the yellow block last: red block in the green bin first, then yellow ...": the order
    # is said again in the steps
    t = re.sub(rf"^do\s+(?:the\s+)?(?:{_C})\s+(?:{_ONE}\s+)?(?:last|first)\s*[:,-]\s*", "", t)
    t = re.sub(r"\s+first\s*,\s*(?:and\s+)?then\s+", ", then ", t)
    t = re.sub(
        rf"(?<=,\sthen\s)((?:the\s+)?(?:{_C})\s+{_ONE}\s+(?:in|into|on|onto)\s+the\s+)",
        r"put \1",
        t,
    )
    t = re.sub(
        rf"^((?:the\s+)?(?:{_C})\s+{_ONE}\s+(?:in|into|on|onto)\s+the\s+\w+\s+\w+,\s+then\s+put\b)",
        r"put \1",
        t,
    )
    # "... when you finish", "... once you're done": said of when, it asks nothing more
    t = re.sub(
        r"[\s,]+(?:when|once|after)\s+you(?:'re|\s+are|\s+have|'ve)?\s+(?:finish(?:ed)?|done|through)\b[\s.!]*$",
        "",
        t,
    )
    # a kitchen's "86 the yellow one - blue bin, on the fly!": get rid of it, there, quickly
    t = re.sub(
        rf"^86\s+(?P<x>(?:the\s+)?(?:{_C})(?:\s+{_ONE})?)\s*[-,:]*\s*(?:(?:in|into)\s+)?(?:the\s+)?(?P<b>(?:{_C})\s+bin)\b",
        r"put \g<x> in the \g<b>",
        t,
    )
    t = re.sub(r"[\s,]+(?:on\s+the\s+fly|pronto|chop\s+chop|stat)\b[\s.!]*$", "", t)
    # a commentator's "watch now as the arm takes the blue block and drops it into the red bin"
    t = re.sub(
        rf"^(?:(?:and\s+)?(?:now|so|right)\s*,?\s*)?(?:(?:ladies\s+and\s+gentlemen|folks|everyone|everybody|people)\s*,?\s*)?"
        rf"watch\s+(?:now\s+)?(?:as|while)\s+(?:the\s+(?:arm|robot)|it|he|she)\s+"
        rf"(?:takes|picks\s+up|grabs|lifts)\s+(?P<x>the\s+(?:{_C})\s+{_ONE})\s+and\s+(?:drops|puts|places|pops|sets)\s+it\s+"
        r"(?:\w+\s+)?(?P<p>into|in|on|onto|on\s+top\s+of)\s+",
        r"put \g<x> \g<p> ",
        t,
    )
    t = re.sub(
        r"[\s,;-]+(?:go\s+on|come\s+on)\b\s*,?\s*(?:show\s+(?:them|us|me|everyone)\s+how\s+it's\s+done)?[\s!.]*$",
        "",
        t,
    )
    # "I want the table empty", "clear the table": every block in a bin
    t = re.sub(
        r"^(?:i(?:\s+want|\s+need|\s+would\s+like|'d\s+like)\s+the\s+table\s+(?:empty|emptied|clear(?:ed)?(?:\s+off)?)|"
        r"(?:clear|empty)\s+(?:off\s+)?the\s+table)\b",
        "put all the blocks in a bin",
        t,
    )
    # "... bins, any of them, I don't care which": the choice is left to the robot
    t = re.sub(
        r"(\bin\s+a\s+bin)[\s,;.]+(?:then\s+)?any\s+(?:bin|one|of\s+them)\s+(?:will\s+do|is\s+fine)[\s.!]*$",
        r"\1",
        t,
    )
    t = re.sub(
        r"\s*[,;.]\s*(?:then\s+)?(?:bins?|blocks?)\s*,\s*any\s+(?:of\s+them|one|bin)(?:\s*,?\s*i\s+don't\s+care\s+which)?[\s.!]*$",
        "",
        t,
    )
    # "whichever one's nearer to you": the nearest one
    t = re.sub(
        r"\bwhichever\s+(?:one's|one\s+is|block\s+is|one)\s+(nearer|closer|farther|further)\s+(to\s+you|from\s+you)\b",
        lambda m: f"the one {'nearest' if m[1] in ('nearer', 'closer') else 'farthest'} {m[2]}",
        t,
    )
    # "I wanted blue stacked on yellow": what should be done
    t = re.sub(
        rf"\bi\s+(?:wanted|want|meant)\s+(?:the\s+)?(?P<x>{_C})(?:\s+{_ONE})?\s+stacked\s+on\s+(?:top\s+of\s+)?(?:the\s+)?(?P<y>{_C})\b",
        r"stack the \g<x> block on the \g<y> block",
        t,
    )
    # a lawyer's "provided that ..., X is to be placed therein; failing that, ...", "save for",
    # "shall be deposited in", "notwithstanding anything said earlier"
    t = re.sub(
        r"^notwithstanding\s+(?:anything|everything)\s+(?:said|stated)\s+(?:earlier|before|above)\s*,\s*",
        "",
        t,
    )
    t = re.sub(
        r"\b(?:provided|providing)\s+that\b|\bon\s+condition\s+that\b|\b(?:so|as)\s+long\s+as\b|^long\s+as\b",
        "if",
        t,
    )
    t = re.sub(
        rf"\b(?P<x>the\s+(?:{_C})\s+{_ONE}|it)\s+(?:is|shall\s+be)\s+(?:to\s+be\s+)?(?:placed|put|deposited|set)\s+therein\b",
        r"put \g<x> in it",
        t,
    )
    t = re.sub(
        r"\b(?P<x>it|the\s+\w+\s+(?:block|cube|one))\s+(?:is|shall\s+be)\s+to\s+be\s+(?P<p>in|on)\s+",
        r"put \g<x> \g<p> ",
        t,
    )
    t = re.sub(r"[;,]\s*failing\s+that\s*,\s*", ", otherwise ", t)
    t = re.sub(r"\bsave\s+for\b|\bwith\s+the\s+exception\s+of\b", "except", t)
    t = re.sub(
        rf"\b(?P<x>(?:the\s+(?:{_C})\s+{_ONE}|it|every\s+block[^;]*?|all\s+(?:the\s+)?blocks[^;]*?))\s*,?\s+(?:is|are|shall\s+be|is\s+to\s+be|are\s+to\s+be)"
        r"\s+(?:to\s+be\s+)?(?:placed|put|deposited|moved|set|stored)\s+(?P<p>in|into|on|onto)\s+",
        r"put \g<x> \g<p> ",
        t,
    )
    t = re.sub(r"\bput\s+(the\s+\w+\s+\w+)\s+therein\b", r"put \1 in it", t)
    t = re.sub(r"\bis\s+to\s+be\s+placed\s+therein\b|\btherein\b", "in it", t)
    t = re.sub(
        rf"\b(?:the\s+)?((?:{_C})\s+{_ONE})\s+(?:shall|is\s+to|must)\s+(?:remain|stay)\s+(?:where\s+it\s+(?:lies|is)|in\s+place|put)\b",
        r"leave the \1 where it is",
        t,
    )
    # "make it look like a traffic light: red on top, then yellow, then green at the bottom"
    t = re.sub(
        r"^(?:make\s+it\s+look\s+|build\s+(?:it\s+|them\s+)?)?like\s+(?:a|an)\s+[^:]+:\s*", "", t
    )
    tower = re.fullmatch(
        rf"(?:the\s+)?({_C})(?:\s+{_ONE})?\s+(?:on\s+(?:the\s+)?top|at\s+the\s+top)\s*,\s*(?:then\s+)?(?:the\s+)?({_C})(?:\s+{_ONE})?"
        rf"\s*,\s*(?:then\s+|and\s+)?(?:the\s+)?({_C})(?:\s+{_ONE})?\s+(?:at\s+the\s+bottom|on\s+the\s+bottom)[\s.!]*",
        t,
    )
    if tower:
        top, mid, low = tower.groups()
        t = f"stack the {mid} block on the {low} block, then stack the {top} block on the {mid} one"
    # "tower time! ruby, then sapphire, then emerald, from bottom to top": a tower in that order
    order = re.fullmatch(
        r"(?:[\w\s]*\btime\s*[!:,]*\s*|build\s+a\s+tower\s*:?\s*)?(?P<a>[a-z]+)\s*,\s*(?:then\s+)?(?P<b>[a-z]+)\s*,\s*"
        r"(?:then\s+|and\s+)?(?P<c>[a-z]+)\s*,?\s*from\s+(?:the\s+)?(?P<d>bottom|top)\s+(?:up\s+)?to\s+(?:the\s+)?(?:top|bottom)[\s.!]*",
        t,
    )
    if order:
        said = [_cue(order[k], "", "block").split(" ")[1:2] for k in "abc"]
        cols = [c[0] for c in said if c]
        if len(cols) == 3 and len(set(cols)) == 3:
            low, mid, top = cols if order["d"] == "bottom" else cols[::-1]
            t = f"stack the {mid} block on the {low} block, then stack the {top} block on it"
    t = re.sub(
        rf"\beither\s+the\s+({_C})(?:\s+{_ONE})?\s+or\s+the\s+(?:{_C})\s+{_ONE}\b",
        r"the \1 block",
        t,
    )
    t = re.sub(r"\b(?:the\s+(?:whole\s+)?lot|every\s+last\s+one)\b", "all the blocks", t)
    t = re.sub(
        r"[\s,;-]+(?:it's\s+)?(?:up\s+to\s+you|your\s+call|your\s+choice|you\s+choose|you\s+decide)\b[\s.!]*$",
        "",
        t,
    )
    # "the blue one - into the red bin with it"
    t = re.sub(
        rf"\b((?:in|into|onto|on)\s+the\s+(?:{_C})\s+(?:bin|block|cube|one))\s+with\s+(?:it|them|him|her)\b",
        r"\1",
        t,
    )
    # "turn on the light, shut that drawer": two orders side by side are done in turn
    t = re.sub(
        r"(?<=[a-z]),\s+(?=(?:shut|close|open|press|turn|switch|put|place|stack|push|move|pick|drop|slide)\s+"
        r"(?:the|that|this|it|on|off|up)\b)",
        lambda m: (
            ", then "
            if _order_before(t, m.start()) and not re.match(r"[^,.;]*\b(?:it|them)\b", t[m.end() :])
            else m.group(0)
        ),
        t,
    )
    t = re.sub(r"\b(?:that|this)\s+(drawer|lamp|light|button)\b", r"the \1", t)
    # "contestant number one, ...: green on blue, thirty seconds on the clock": who is
    # addressed and how long they have ask nothing
    t = re.sub(
        r"^(?:(?:contestant|player|team|class|everyone|everybody|folks|ladies\s+and\s+gentlemen|kids|children)"
        r"(?:\s+(?:number\s+)?\w+)?\s*[,:!]\s*)+",
        "",
        t,
    )
    t = re.sub(
        r"[\s,;-]+(?:you\s+have\s+)?(?:\w+\s+(?:seconds?|minutes?)|a\s+minute)\s+(?:on\s+the\s+clock|to\s+do\s+it|left)\b",
        "",
        t,
    )
    # "nudge ... to the left - no need to lift it": how, not a prohibition
    t = re.sub(
        r"(\b(?:push|nudge|slide|shove|scoot)\b[^.;]*?)[\s,.;-]+(?:there's\s+)?(?:no\s+need\s+to|don't|do\s+not|without)\s+"
        r"(?:lift|lifting|pick|picking)\s+(?:it|them)(?:\s+up)?[\s.!]*$",
        r"\1",
        t,
    )
    return t


def _cue(words: str, said: str, noun: str = "one") -> str:
    """ "blood" -> "the red one": the one colour a thing's name calls to mind, else ``said``."""
    parts = re.split(r"[\s-]+", words)
    found = {c for c, cues in L.COLOUR_CUES.items() for w in [words, *parts] if w in cues}
    return f"the {found.pop()} {noun}" if len(found) == 1 else said


_ORDER_VERB = re.compile(
    r"\s*(?:please\s+)?(?:shut|close|open|press|turn|switch|put|place|stack|push|move|pick|drop|slide|"
    r"take|grab|set|nudge|transfer|go)\b"
)


def _order_before(t: str, at: int) -> bool:
    """Whether the clause that ends at ``at`` is itself an order (it starts with a verb)."""
    start = max(t.rfind(c, 0, at) for c in ",;.") + 1
    return bool(_ORDER_VERB.match(t, start))


def _places(t: str) -> str:
    """Pronouns and places read from what was named: "in there" / "in it" after a bin or
    the drawer, "close it" after the drawer, "leave it on the table", a device step after
    "and", a scene-setting clause dropped."""

    t = re.sub(r"\s+-+\s+", ", ", t)
    # "you may put the green block in the red bin": permission is the request
    t = re.sub(
        r"^(?:you\s+(?:may|can|could)\s+(?:now\s+|go\s+ahead\s+and\s+)?|feel\s+free\s+to\s+|go\s+ahead\s+and\s+)"
        r"(?=(?:put|place|move|stack|push|pick|drop|take|grab|open|close|press|turn)\b)",
        "",
        t,
    )
    t = re.sub(
        r"[\s,]+(?:please|pls|plz|bitte|por\s+favor|s'il\s+te\s+plaît|thanks|thank\s+you)\s*[.!]*$",
        "",
        t,
    )
    # "open the drawer, drop the yellow cube in there": there is the container just named
    cont = list(re.finditer(_CONTAINER, t))
    there = re.search(r"\b(?:in|into|inside)\s+there\b", t)
    if there and cont and cont[-1].start() < there.start():
        t = t[: there.start()] + f"in {cont[-1].group(0)}" + t[there.end() :]
    # "put the block nearest the blue bin in it": it is the one container named before it
    # (only when no block is named as a thing "it" could be)
    # ("open the drawer, then put the blue block in it": a block holds nothing, so "in it"
    # is the last container named before it)
    # (only as a move's destination: "unless the red bin has something in it" stays)
    into_it = re.search(
        r"\b(?:put|place|drop|set|move|stack|toss|throw|bring|slide|pop|stick)\b"
        r"(?:(?!\b(?:unless|if|when|whenever|but|because|as\s+long|only)\b)[^,;])*?\b(?P<p>(?:in|into|inside)\s+it)\b",
        t,
    )
    if into_it:
        before = t[: into_it.start("p")]
        named = list(re.finditer(_CONTAINER, before))
        if named:
            said = named[-1].group(0).removeprefix("the ")
            t = before + f"in the {said}" + t[into_it.end("p") :]
    t = re.sub(
        r"\bclear\s+(?:off\s+)?the\s+table\b(?=\s+(?:into|in|to)\b)", "put all the blocks", t
    )
    # "leave it on the table": the table's centre (the place skill sets it beside a block there)
    t = re.sub(
        r"(?:^(?:please\s+)?|(?<=\band\s)|(?<=,\s)|(?<=\bthen\s))(?:leave|put|set|place|drop|lay)\s+"
        r"(it|them|the\s+\w+\s+block)\s+(?:back\s+)?"
        r"(?:down\s+)?on\s+the\s+table\b(?!\s+(?:left|right|front|back|cent|middle))",
        r"put \1 on the table center",
        t,
    )
    t = re.sub(r"^there\s+(?:is|are)\s+[^,]*,\s*(?=\w)", "", t)
    # "open the drawer, put the blue block in it and close it": only the drawer opens or shuts
    if re.search(r"\bdrawer\b", t):
        t = re.sub(
            r"\b(close|shut|open)\s+it(?:\s+(?:again|back\s+up|up|after(?:wards)?))?\b",
            r"\1 the drawer",
            t,
        )
        # "push it back in", "slide the drawer shut": the drawer closes
        t = re.sub(
            r"\b(?:push|shove|slide|press|nudge|kick|bump)\s+(?:it|the\s+drawer)\s+(?:back\s+in|back|in|shut|closed)\b",
            "close the drawer",
            t,
        )
        t = re.sub(
            r"\b(?:pull|slide|draw)\s+(?:it|the\s+drawer)\s+(?:out|open)\b", "open the drawer", t
        )
        # "the drawer is sticking out, close the drawer": the scene-setting clause goes
        t = re.sub(
            r"^the\s+drawer\s+is\s+(?:sticking\s+out|open|still\s+open|hanging\s+open|shut|closed)\s*,\s*(?=\w)",
            "",
            t,
        )
    # "put the blue block in the drawer and close the drawer": a device step is a next step
    t = re.sub(
        r"\s+and\s+(?:then\s+)?(?=(?:close|shut|open|press|turn\s+(?:on|off))\s+the\s+(?:drawer|button|light|lamp)\b)",
        ", then ",
        t,
    )
    return t


#: Verb forms after "before" / "after" ("before stacking", "after you've put") as orders.
_FORMS = {
    **L.GERUND_VERBS,
    "stacked": "stack",
    "placed": "place",
    "moved": "move",
    "pushed": "push",
    "picked": "pick",
    "dropped": "drop",
    "took": "take",
    "opened": "open",
    "closed": "close",
    "pressed": "press",
}
_FORM = "|".join(_FORMS) + "|put|stack|place|move|push|pick|drop|take|open|close|press"
_DOER = r"(?:you(?:'ve|\s+have|'re\s+done|\s+are\s+done)?\s+|you\s+)?"
_BEFORE = re.compile(
    rf"^before\s+{_DOER}(?P<a>(?:{_FORM})\b[^,;]*?)\s*,\s*(?:then\s+)?(?P<b>\S.*)$"
)
_AFTER = re.compile(rf"^after\s+{_DOER}(?P<a>(?:{_FORM})\b[^,;]*?)\s*,\s*(?:then\s+)?(?P<b>\S.*)$")
_AFTER_TAIL = re.compile(
    rf"^(?P<b>\S[^,;]*?)\s*,?\s+(?:only\s+)?after\s+{_DOER}(?P<a>(?:{_FORM})\b.+)$"
)


def _in_order(t: str) -> str:
    """ "before stacking blue on yellow, put red in the bin" and "put red in the bin after you
    put green in the red one": the steps in the order they are to happen."""

    def order(a: str) -> str:
        first, _, rest = a.partition(" ")
        return f"{_FORMS.get(first, first)} {rest}".strip()

    m = _BEFORE.match(t)
    if m:
        return f"{m['b']}, then {order(m['a'])}"
    m = _AFTER.match(t) or _AFTER_TAIL.match(t)
    if m:
        return f"{order(m['a'])}, then {m['b']}"
    return t


def _orders_said_otherwise(t: str) -> str:
    """An order said as something else: "X goes in Y", "I want X stacked on Y", a bare
    pairing ("red block green bin", "red on blue"), a fragment before the command, a
    fallback after the first choice."""
    # "in whichever bin is closest": the nearest bin
    t = re.sub(
        r"\bwhichever\s+(?:bin|box|basket|container)\s+is\s+(?:the\s+)?(closest|nearest)(?:\s+(?:to\s+it|one))?\b",
        r"the \1 bin",
        t,
    )
    # "the one in front goes in the green bin", "red should go on blue": the move itself
    t = re.sub(
        r"^(?P<x>(?:the|that|this)\s+[^,;]+?|(?:red|green|blue|yellow))\s+(?:goes|should\s+go|must\s+go|needs\s+to\s+go|"
        r"has\s+to\s+go|can\s+go|is\s+to\s+go|belongs)\s+(?P<p>in|into|inside|on|onto|on\s+top\s+of)\s+",
        lambda m: f"put {m['x']} {m['p']} ",
        t,
    )
    # "I said green not red: put the green block in the blue bin": the reminder goes
    t = re.sub(
        r"^(?:i\s+said|like\s+i\s+said|as\s+i\s+said|i\s+told\s+you)\b[^:.!]*[:.!]\s*(?=\w)", "", t
    )
    # "my boss wants the yellow block stacked on the green one"
    t = re.sub(
        rf"^(?:i|we)\s+(?:want|need|would\s+like|'d\s+like)\s+(?P<x>(?:the\s+)?(?:{_C})(?:\s+{_ONE})?)\s+"
        r"(?:stacked|put|placed|moved|dropped|set)\s+(?P<p>in|into|inside|on|onto|on\s+top\s+of)\s+",
        lambda m: f"put {m['x']} {m['p']} ",
        t,
    )
    # "red block green bin", "red on blue": the pairing alone
    t = re.sub(
        rf"^(?:the\s+)?({_C})\s+{_ONE}\s+(?:(?:in|into|to)\s+)?(?:the\s+)?({_C})\s+(?:bin|basket|box)\s*[.!]*$",
        r"put the \1 block in the \2 bin",
        t,
    )
    t = re.sub(
        rf"^({_C})\s+(?:on|onto|on\s+top\s+of)\s+({_C})\s*[.!]*$",
        r"put the \1 block on the \2 block",
        t,
    )
    # "the yellow one. put the yellow one in the red bin": a fragment before the command
    t = re.sub(
        rf"^(?:no[\s,]+)*(?:the\s+)?(?:{_C})\s+(?:one|block|cube)\s*[.!;]\s+(?=(?:put|place|move|stack|push|take|grab|pick)\b)",
        "",
        t,
    )
    # "put X in the green bin, or if that's not possible, the blue bin": the first choice
    # (the bridge refuses it with its reason when it cannot be done)
    t = re.sub(
        r",?\s+(?:or|and|but)\s+if\s+(?:that's|that\s+is|it's|it\s+is|that\s+isn't|it\s+isn't)\s+(?:not\s+)?"
        r"(?:possible|impossible|full|doable|available|an\s+option)\s*,?.*$",
        "",
        t,
    )
    return t


def _references(t: str) -> str:
    """References that need a word: "farthest from it", "the green thing", "them all",
    the count's noun carried over ("and two in the green bin"), "put X away"."""
    # "take the block closest to the green bin and put it on the block farthest from it"
    t = re.sub(
        r"\b(?P<b>bin|basket|box)\s+(?:right\s+)?(?:next\s+to|beside|by|near|closest\s+to|nearest(?:\s+to)?)\s+(?=it\b)",
        r"\g<b> closest to ",
        t,
    )
    dist_it = re.search(r"\b(?:closest|nearest|farthest|furthest)\s+(?:to|from)\s+(it)\b", t)
    if dist_it:
        named = list(
            re.finditer(rf"\b(?:the\s+)?(?:{_C})\s+(?:bin|block|cube)\b", t[: dist_it.start()])
        )
        if named:
            t = t[: dist_it.start(1)] + named[-1].group(0) + t[dist_it.end(1) :]
    # "whichever block is farthest from you", "the block that is right beside the blue cube":
    # a relative clause is the selector it holds (an empty or full bin is read as it is)
    t = re.sub(
        r"\b(?:whichever|whatever|the)\s+(?P<n>block|cube|brick|one|bin)\s+(?:(?:that\s+is|that's|which\s+is|is)"
        r"(?:\s+(?:sitting|lying|standing))?|sits|lies|stands)\s+(?=(?:right\s+|directly\s+|just\s+)?(?:closest|nearest|"
        r"farthest|furthest|closer|nearer|farther|further|beside|next|near|left|"
        r"right|behind|in\s+front|between|on\s+the|at\s+the|under|on\s+top)\b)",
        lambda m: f"the {m['n']} ",
        t,
    )
    # "of the blocks on the left half of the table, put the one closest to you in the blue
    # bin": the group said first narrows the selector after it
    m = re.match(
        r"^(?:of|among|from)\s+(?:all\s+)?the\s+(?:blocks|cubes|ones)\s+(?P<g>(?:on|at)\s+the\s+(?:left|right|front|back)"
        r"(?:\s+(?:side|half|end))?(?:\s+of\s+the\s+table)?)\s*,\s*(?P<v>\w+(?:\s+up)?)\s+the\s+one\s+"
        r"(?P<d>closest|nearest|farthest|furthest)\s+(?P<rest>.+)$",
        t,
    )
    if m:
        t = f"{m['v']} the block {m['g']} {m['d']} {m['rest']}"
    # "stack the blue block on the red" (German "auf den roten"): a colour after "on" is a block
    t = re.sub(
        rf"\b(on|onto|on\s+top\s+of)\s+the\s+({_C})(?=\s*(?:[,.!?;]|$|\s+(?:please|thanks|then|and)\b))",
        r"\1 the \2 one",
        t,
    )
    # "add the blue cube to the blue bin": it goes in
    t = re.sub(
        rf"\badd\s+(?P<x>(?:the\s+)?(?:{_C})(?:\s+{_ONE})?)\s+(?:to|into)\s+(?P<b>(?:the\s+)?(?:{_C})\s+(?:bin|box|basket))",
        r"put \g<x> in \g<b>",
        t,
    )
    # "top the yellow cube with the green cube", "crown red with blue": the second goes on the first
    t = re.sub(
        rf"\b(?:top|cap|crown)\s+(?:off\s+)?(?:the\s+)?(?P<x>{_C})(?:\s+{_ONE})?\s+with\s+(?:the\s+)?(?P<y>{_C})(?:\s+{_ONE})?",
        lambda m: f"stack the {m['y']} block on the {m['x']} block",
        t,
    )
    # "put the red block underneath the green one": the green one goes on the red one
    t = re.sub(
        rf"^(?:please\s+)?(?:put|place|set|slide|move|get)\s+(?:the\s+)?(?P<x>{_C})(?:\s+{_ONE})?\s+"
        rf"(?:underneath|under|beneath|below)\s+(?:the\s+)?(?P<y>{_C})(?:\s+{_ONE})?(?=\s*(?:[,.;!]|$))",
        lambda m: f"stack the {m['y']} block on the {m['x']} block",
        t,
    )
    # "take it down and put it in the blue bin": taking it off is part of the put
    t = re.sub(
        rf"\b(?:take|get|lift)\s+(?P<x>(?:the\s+)?(?:{_C})\s+{_ONE}|it)\s+(?:down|off)(?:\s+(?:of|from)\s+[^,]+?)?\s*,?\s+"
        r"and\s+(?:then\s+)?(?P<v>put|place|drop|set|move)\s+it\b",
        lambda m: f"{m['v']} {m['x']}",
        t,
    )
    # "the green thing", "the red object": a block named by its colour
    t = re.sub(rf"\b({_C})\s+(?:thing|object|item|piece|guy|fella)\b", r"\1 block", t)
    # "I need the red block in the blue bin (asap)": the wish is the order
    t = re.sub(
        rf"^(?:i|we)\s+(?:really\s+)?(?:need|want|would\s+like|'d\s+like)\s+(?=(?:the\s+)?(?:{_C})\s+"
        rf"{_ONE}\s+(?:in|into|inside|on|onto|on\s+top\s+of)\b)",
        "put ",
        t,
    )
    t = re.sub(
        r"^(?:i|we)(?:'d|\s+would)\s+(?:really\s+)?like\s+(?=(?:all|every|both|each)\b[^,]*?\b(?:in|into|on|onto)\s+the\b)",
        "put ",
        t,
    )
    # "..., but not the blue one, that one stays exactly where it is": said twice
    t = re.sub(
        r"\s*,\s*(?:and\s+)?(?:that\s+one|it)\s+(?:stays|remains|should\s+stay|is\s+to\s+stay)\s+(?:exactly\s+|right\s+)?"
        r"(?:where\s+(?:it\s+is|the\s+\w+\s+block\s+is|it\s+was)|put)[\s.!]*$",
        "",
        t,
    )
    t = re.sub(r"\s*,?\s*\b(?:asap|as\s+soon\s+as\s+possible|right\s+away|pronto|quickly)\b", "", t)
    # "stack them all" with nothing named before: every block
    if not re.search(rf"\b(?:{_C})\b", t):
        t = re.sub(r"\b(?:them\s+all|all\s+of\s+them)\b", "all the blocks", t)
    # "one block in the red bin and two in the green bin": the count's noun carries over
    t = re.sub(
        r"\b(?P<c>and|then|,)\s+(?P<n>two|three|one|a\s+couple)\s+(?=(?:in|into|on|onto)\s)"
        r"(?!(?:on|onto)\s+(?:top\s+of\s+)?(?:the\s+)?other\b)",
        lambda m: f"{m['c']} put {m['n']} {'block' if m['n'] == 'one' else 'blocks'} ",
        t,
    )
    # "put the green block away": in a bin (which one is the robot's choice unless named)
    t = re.sub(
        rf"\b(?:put|place|tidy|stow|pack|clear)\s+((?:the\s+\w+\s+{_ONE})|it|them|"
        r"(?:all\s+)?the\s+(?:blocks|cubes)|everything)"
        r"\s+away\b(?!\s+(?:in|into|inside)\b)",
        r"put \1 in a bin",
        t,
    )
    return t


def _code_like(t: str) -> str:
    """Requests typed like code: "put(block, green_bin)", "if red in green_bin: red ->
    red_bin else: blue -> green_bin", "lots of blocks ... like 3 of them", "red in the blue
    bin and vice versa"."""
    t = re.sub(r"\b([a-z]+)_(bin|block|cube)\b", r"\1 \2", t)
    t = re.sub(
        r"\b(put|place|move|stack|push|pick)\s*\(\s*([\w ]+?)\s*,\s*([\w ]+?)\s*\)",
        r"\1 the \2 in the \3",
        t,
    )
    t = re.sub(
        rf"^if\s+(?:the\s+)?(?P<c>{_C})(?:\s+{_ONE})?\s+(?:is\s+)?(?P<p>in|on)\s+(?:the\s+)?(?P<b>(?:{_C})\s+(?:bin|block))\s*:\s*",
        lambda m: f"if the {m['c']} block is {m['p']} the {m['b']}, ",
        t,
    )
    t = re.sub(r"\s+else\s*:\s*", ", otherwise ", t)
    t = re.sub(
        r"\b(?:lots|a\s+lot|loads|a\s+bunch|plenty)\s+of\s+(blocks|cubes)\b(?P<rest>.*?)[,\s]+(?:like|say|about|maybe)\s+"
        r"(?P<n>\d|two|three|four)\s+of\s+them\b",
        lambda m: f"{m['n']} {m.group(1)}{m['rest']}",
        t,
    )
    m = re.match(
        rf"^(?P<v>put|place|move|drop)\s+the\s+(?P<a>{_C})\s+{_ONE}\s+(?P<p>in|into)\s+the\s+(?P<b>{_C})\s+bin"
        r"\s*,?\s+and\s+vice\s+versa[\s.!]*$",
        t,
    )
    if m:
        return (
            f"{m['v']} the {m['a']} block {m['p']} the {m['b']} bin, "
            f"then {m['v']} the {m['b']} block {m['p']} the {m['a']} bin"
        )
    return t


def _counted_fragments(t: str) -> str:
    """Terse counted orders: "two blocks -> red bin, one -> green bin, fourth stays on the
    table": a bare count is a count of blocks, and what stays where it is asks nothing."""
    t = re.sub(
        r"(?:^|(?<=[,;.]\s)|(?<=\band\s)|(?<=\bthen\s))(?P<n>one|two|three|a\s+single)\s*(?=->|→|=>|:\s)",
        lambda m: f"{m['n']} block{'s' if m['n'] in ('two', 'three') else ''} ",
        t,
    )
    t = re.sub(
        r"[\s,;.]+(?:and\s+)?(?:the\s+)?(?:fourth|last|remaining|other|leftover|4th|third|3rd)(?:\s+(?:one|block|cube))?\s+"
        r"(?:stays|remains|is\s+left|can\s+stay)\s+(?:on\s+the\s+table|where\s+it\s+is|put|there)[\s.!]*$",
        "",
        t,
    )
    # terse steps: "close drawer. lights off." -> "close the drawer, then turn off the light"
    t = re.sub(r"\b(open|close|shut)\s+drawer\b", r"\1 the drawer", t)
    t = re.sub(r"\bpress\s+button\b", "press the button", t)
    # (only a list of terse steps: a sentence of talk after an order is no step)
    if all(len(s.split()) <= 8 for s in re.split(r"\.\s+", t)):
        t = re.sub(
            r"(?<=[a-z])\.\s+(?=[a-z])(?!(?:don't|dont|do\s+not|never|not|no|but|leave|keep|avoid|under|on\s+no|"
            r"in\s+no|at\s+no|by\s+no|stay|without)\b)"
            # (nor a rule said as a description: "the yellow block is off limits")
            r"(?![^.]*\b(?:off[\s-]+limits|out\s+of\s+bounds|not\s+to\s+be|forbidden|not\s+allowed)\b)",
            ", then ",
            t,
        )
    # "green -> green bin; rest -> blue bin": the rest is every block not named before it
    rest = re.search(
        r"\b(?:the\s+rest|the\s+others|all\s+the\s+others|everything\s+else|"
        r"the\s+(?:other|remaining)\s+(?:two|three|ones|blocks|cubes)|the\s+(?:two|three)\s+(?:others|remaining(?:\s+ones)?))\b",
        t,
    )
    named = re.findall(rf"\b({_C})\s+{_ONE}\b(?!\s+bin)", t[: rest.start()]) if rest else []
    if rest and named:
        but = " and ".join(f"the {c} block" for c in dict.fromkeys(named))
        t = t[: rest.start()] + f"all the blocks except {but}" + t[rest.end() :]
    # "two blocks -> red bin": an arrow to a bin is a put
    clauses = re.split(r"(\s*[,;]\s*(?:then\s+)?|(?<=\D)\.\s+|\s+then\s+)", t)
    for i, c in enumerate(clauses):
        m = re.fullmatch(
            rf"(?P<pre>(?:otherwise|else|then)\s+)?(?P<x>(?:{_C})|(?:the\s+)?rest|others|"
            rf"(?:(?:the|a|one|two|three)\s+)?[\w\s]*?(?:blocks?|cubes?|bricks?|ones?)"
            rf"(?:\s+(?:out\s+of|from)\s+(?:the\s+)?(?:drawer|(?:{_C})\s+bin))?)\s*(?:->|→|=>)\s*"
            rf"(?:the\s+)?(?P<y>(?:{_C})\s+bin|drawer)[\s.!]*",
            c,
        )
        src = m and re.fullmatch(
            rf"(?:the\s+)?(?P<o>(?:{_C})\s+{_ONE})\s+(?:out\s+of|from)\s+(?:the\s+)?(?P<c>drawer|(?:{_C})\s+bin)",
            m["x"],
        )
        if m and src:
            # "red block out of drawer -> blue bin": taken out, then put there
            clauses[i] = (
                f"{m['pre'] or ''}take the {src['o']} out of the {src['c']} "
                f"and put it in the {m['y']}"
            )
        elif m and not re.match(r"(?:put|place|move|drop)\b", m["x"]):
            x = m["x"]
            x = f"the {x} block" if x in L.COLOURS else "the rest" if x in ("rest", "others") else x
            clauses[i] = f"{m['pre'] or ''}put {x} in the {m['y']}"
    return "".join(clauses)


def _made_sure(t: str) -> str:
    """An outcome asked for: "make sure the red block is in the blue bin" -> "the red block
    should be in the blue bin"; "make sure no blocks are left on the table, they all go in
    the blue bin" -> "put all the blocks in the blue bin" (the first clause says only what
    the second does)."""
    m = re.match(
        r"^(?:(?:so\s+|and\s+)?(?:make\s+sure|ensure|see\s+to\s+it)\s+(?:that\s+)?)(?P<c>.+)$", t
    )
    if m is None:
        return t
    c = m["c"]
    cleared = re.match(
        r"(?:no|none\s+of\s+the)\s+(?:blocks?|cubes?|bricks?|objects?|things?)\s+(?:are|is|remain|stays?)\s+"
        r"(?:left\s+|still\s+|lying\s+)?(?:on|on\s+top\s+of)\s+the\s+table\s*[,;:.]?\s*(?:and\s+|so\s+)?(?P<rest>.*)$",
        c,
    ) or re.match(
        r"(?:nothing|no\s+block)\s+(?:is|stays|remains)\s+(?:left\s+)?on\s+the\s+table\s*[,;:.]?\s*(?:and\s+|so\s+)?"
        r"(?P<rest>.*)$",
        c,
    )
    if cleared:
        rest = cleared["rest"]
        dest = re.match(
            r"(?:they|those|all\s+of\s+them|the\s+blocks|everything|every\s+block)\s+(?:all\s+)?(?:go|goes|should\s+go|"
            r"belong|need\s+to\s+go|have\s+to\s+go|must\s+go|end\s+up)\s+(?P<p>in|into|inside)\s+(?P<d>.+)$",
            rest,
        ) or re.match(
            r"(?:put|place|drop|move)\s+(?:them\s+all|all\s+of\s+them|them|everything)\s+(?P<p>in|into|inside)\s+(?P<d>.+)$",
            rest,
        )
        return f"put all the blocks {dest['p']} {dest['d']}" if dest else t
    kept = re.match(r"(?P<x>.+?)\s+(?:stays?|remains?)\s+(?P<w>.+)$", c)
    if kept:
        where = re.sub(r"^(?:put|still|unmoved|untouched|there)\b", "where it is", kept["w"])
        return f"keep {kept['x']} {where}"  # a prohibition: it does not move
    said = re.match(
        r"(?P<x>.+?)\s+(?:is|are|ends?\s+up|gets?\s+put|goes|go)\s+(?P<p>in|into|inside|on|onto|on\s+top\s+of)\s+(?P<y>.+)$",
        c,
    )
    if said and not re.search(r"\b(?:not|never|no)\b", said["x"]):
        return f"{said['x']} should be {said['p']} {said['y']}"
    return t


def _filled(t: str) -> str:
    """A container named first: "fill the blue bin with three blocks" -> "put three blocks
    in the blue bin"; "take one block out of the green bin" with nowhere said -> "... and
    put it on the table" (out of the bin is somewhere: the table, not the hand)."""
    m = re.match(
        rf"^(?:fill|load|pack|stock)(?:\s+up)?\s+(?P<c>{_CONTAINER})\s+(?:up\s+)?with\s+(?P<x>.+)$",
        t,
    )
    if m:
        return f"put {m['x']} in {m['c']}"
    # "leave just one block on the table and put the rest in the green bin"
    m = re.match(
        r"^(?:leave|keep)\s+(?:just\s+|only\s+)?(?P<n>one|two|three|a\s+single|[1-3])\s+(?:block|cube|brick)s?\s+"
        r"(?:on\s+the\s+table|out|behind|where\s+(?:it\s+is|they\s+are))\s*,?\s*(?:and\s+)?(?:then\s+)?"
        r"(?P<v>put|move|place|drop|throw|toss)\s+(?:all\s+)?the\s+(?:rest|others|other\s+ones|remaining\s+(?:ones|blocks))"
        r"\s+(?P<p>in|into|on|onto)\s+(?P<c>.+)$",
        t,
    )
    if m:
        n = "one" if m["n"] in ("a single", "1") else m["n"]
        return f"{m['v']} all but {n} of the blocks {m['p']} {m['c']}"
    # "pick three blocks and put them in the red bin": several carried one at a time is a
    # put of each (the rules pick one block at a time)
    m = re.match(
        r"^(?:pick|grab|take|get|collect|gather|lift|fetch)(?:\s+up)?\s+(?P<x>.+?)(?:\s+up)?\s*,?\s+(?:and|then|,)\s+"
        r"(?:then\s+)?(?P<v>put|place|drop|move|set|stick|pop|toss|throw)\s+(?:them|those|these|them\s+all|"
        r"all\s+of\s+them|both\s+of\s+them|them\s+both)\s+(?P<p>(?:in|into|inside|on|onto|on\s+top\s+of)\s+.+)$",
        t,
    )
    if m and re.search(r"\b(?:and|blocks|cubes|bricks|ones|both|all)\b|,", m["x"]):
        return f"{m['v']} {m['x']} {m['p']}"
    m = re.match(
        rf"^(?:take|get|lift|pull|remove|grab|pick)(?:\s+up)?\s+(?P<x>.+?)\s+(?:back\s+)?out\s+of\s+"
        rf"(?P<c>{_CONTAINER}|the\s+bin)[\s.!]*$",
        t,
    )
    if m and not re.search(r"\b(?:and|then|put|place|into?|onto|on)\b", m["x"]):
        one = re.search(r"\b(?:blocks|cubes|them|all|both|two|three|four)\b", m["x"]) is None
        return f"take {m['x']} out of {m['c']} and put {'it' if one else 'them'} on the table"
    return t


#: A number or an indefinite article before a noun: "one block in the red bin", "two cubes
#: into the blue bin", "a single block on the yellow one".
_COUNT = r"(?:one|two|three|four|[1-4]|a|an|a\s+single|any|some|a\s+couple\s+of)"


def _verbless(t: str) -> str:
    """A missing verb ("the red block into the green bin", "green block, blue bin", a list
    of blocks before one destination) and a fronted object ("the green block, put it ...")."""
    t = re.sub(r"^(?:whichever|which\s*ever)\s+(block|cube|one)\s+is\s+", r"the \1 ", t)
    t = re.sub(r"^(?:(?:hey|hi|ok|okay|yo|oi)\s+)?robot\s*[,!:]\s*", "", t)
    # "red on blue", "blue on red, green on yellow": terse stacks
    pairs = re.fullmatch(
        rf"(?:(?:the\s+)?(?:{_C})(?:\s+{_ONE})?\s+(?:on|onto|on\s+top\s+of)\s+(?:the\s+)?(?:{_C})(?:\s+{_ONE})?"
        r"(?:\s*(?:,|;|,?\s+and|,?\s+then)\s*|\s*$))+",
        t,
    )
    if pairs:
        t = ", then ".join(
            f"stack the {a} block on the {b} block"
            for a, b in re.findall(
                rf"(?:the\s+)?({_C})(?:\s+{_ONE})?\s+(?:on|onto|on\s+top\s+of)\s+(?:the\s+)?({_C})",
                t,
            )
        )
    # "block. bin. that... in.": a block and a bin, said in pieces
    t = re.sub(
        r"^(?:the\s+)?(block|cube)\s*,\s*(?:then\s+)?(?:the\s+)?(?:bin|box)\b[\s,.]*$",
        r"put the \1 in the bin",
        t,
    )
    # "green... the green. blue bin. in.": broken phrases, a colour said twice
    t = re.sub(rf"^(?:the\s+)?({_C})(?:\s+{_ONE})?\s*,\s*(?:the\s+)?\1\b", r"the \1", t)
    m = re.match(
        rf"^(?:the\s+)?({_C})(?:\s+{_ONE})?\s*,\s*(?:(?:in|into|to)\s+)?(?:the\s+)?({_C})\s+bin\b",
        t,
    )
    if m:
        t = f"put the {m.group(1)} block in the {m.group(2)} bin" + t[m.end() :]
        # "red cube, blue bin. yellow cube, green bin.": every pair so said
        t = re.sub(
            rf"(?<=,\sthen\s)(?:the\s+)?({_C})(?:\s+{_ONE})?\s*,\s*(?:(?:in|into|to)\s+)?(?:the\s+)?({_C})\s+bin\b",
            r"put the \1 block in the \2 bin",
            t,
        )
    # "the green block, the blue block and the yellow block into the red bin": a list of
    # things before one destination
    listed = re.match(
        rf"^(?:the\s+)?(?:{_C})\s+{_ONE}(?:\s*(?:,|,?\s*and)\s*(?:the\s+)?(?:{_C})\s+"
        rf"{_ONE})+\s+(?:in|into|inside|onto|to)\s",
        t,
    )
    if listed:
        t = "put " + t
    single = not re.search(r"[,;]|\bthen\b|\band\b", t)
    if (
        single
        and re.match(
            rf"^(?:(?:the|both|all(?:\s+the)?|every|each|all\s+of\s+the|{_COUNT})\s+)?(?:(?:{_C})\s+)?(?:block|cube|brick|blocks|cubes|one)s?"
            rf"\s+(?:in|into|inside|onto|on\s+top\s+of|to)\s",
            t,
        )
        or (single and re.match(rf"^(?:{_C})\s+(?:in|into|onto)\s", t))
    ):
        t = "put " + t
    m = re.match(
        rf"^(?P<np>the\s+(?:{_C})\s+(?:block|cube|brick))\s*,\s*(?P<v>\w+)\s+(?:it|them)\b", t
    )
    if m:
        t = f"{m.group('v')} {m.group('np')}" + t[m.end() :]
    return t
