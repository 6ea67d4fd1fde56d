"""Small talk around a request: greetings, thanks, hedges, stories and polite wrappers.

Why: "Hi there! Hope you're having a good day. When you get a moment, could you please pop
the red block into the green bin? Thanks so much!" holds one command in four sentences. The
sentences that name nothing the robot acts on (no colour, no block or bin, no action
verb) are dropped. Polite wrappers ("could you please", "would you mind putting", "would it
be possible for you to", "if you could ... that would be lovely") are reduced to the verb.
What is left is the request, which the planners read far better. A remark with no request
in it ("nice job", "the green bin is my favourite", "I just put the yellow block in the blue
bin myself") is answered, not executed.
"""

from __future__ import annotations

import planner.rx as re
from bridge import lexicon as L

_C = "|".join(L.COLOURS)
_THINGS = r"(?:block|blocks|cube|cubes|brick|bricks|bin|bins|box|basket|drawer|light|lamp|button)"
#: Gerunds after "would you mind" -> the verb.
_GERUND = {
    "putting": "put",
    "placing": "place",
    "moving": "move",
    "dropping": "drop",
    "stacking": "stack",
    "pushing": "push",
    "sliding": "slide",
    "taking": "take",
    "grabbing": "grab",
    "picking": "pick",
    "lifting": "lift",
    "tossing": "toss",
    "popping": "put",
    "setting": "set",
    "bringing": "bring",
    "getting": "get",
    "opening": "open",
    "closing": "close",
    "shutting": "shut",
    "pressing": "press",
    "turning": "turn",
    "switching": "switch",
    "sorting": "sort",
    "leaving": "leave",
    "keeping": "keep",
}
_WRAPPERS: list[tuple[str, str]] = [
    (
        r"\bwould\s+you\s+(?:mind|object\s+to)\s+(?:(?:terribly|awfully|too\s+much|at\s+all|just|please|"
        r"maybe|possibly)\s+)*(" + "|".join(_GERUND) + r")\b",
        "<G>",
    ),
    (
        r"\b(?:would|could)\s+it\s+be\s+possible\s+(?:for\s+you\s+)?to\b|"
        r"\b(?:can|could|would|will)\s+(?:you|u)[\s,]+(?:(?:please|possibly|kindly|maybe|just|like|"
        r"perhaps|gently|carefully|slowly|quickly)[\s,]+)*(?=(?:"
        + "|".join(sorted(L.ACTION_VERBS))
        + r"|pop|stick|plonk)\b)"
        r"(?!get\s+(?:to|at)\s)",  # "can you get to the green block?" asks about reach
        " ",
    ),
    (r"\bif\s+you\s+could\s+", " "),
    # "might I trouble you to set ...", "would it be all right if you popped ... for me?"
    (r"\bmight\s+i\s+(?:trouble|ask|bother|request)\s+(?:of\s+)?you\s+to\s+", " "),
    (
        r"\bwould\s+it\s+be\s+(?:all\s+right|alright|ok(?:ay)?|possible|fine)\s+(?:if\s+you|for\s+you\s+to)\s+",
        "<PAST>",
    ),
    # "can you show the class how you put the blue block in the green bin?": a demonstration
    # is the doing
    (
        r"\b(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?show\s+(?:me|us|them|everyone|everybody|the\s+\w+)\s+"
        r"how\s+(?:you|to|you\s+would|you\s+can|you'd)\s+(?=(?:"
        + "|".join(sorted(L.ACTION_VERBS))
        + r")\b)",
        " ",
    ),
    (
        r"\b(?:could|can|would|might)\s+((?:the\s+)?\w+\s+(?:block|cube|brick)|the\s+(?:one|block)\s+(?:in|on|at)\s+[^,?]+?)"
        r"\s+(?:end\s+up|go|"
        r"be\s+put|get\s+put|be\s+moved|be)\s+(in|into|on|onto)\b",
        r"<IF_REQUEST>put \1 \2",
    ),
    (
        r"\b((?:the\s+)?\w+\s+(?:block|cube|brick))\s+would\s+look\s+(?:best|good|nice|better|great)\s+(in|on)\b",
        r"put \1 \2",
    ),
    (r"\b(?:i'm|i\s+am)\s+thinking\s+", " "),
    (r"\bno\s+rush(?:\s+at\s+all)?\s*,?\s*(?:but\s+)?", " "),
    (r"\bat\s+some\s+point\s*,?\s*", " "),
    (r",?\s*(?:yeah|yes|ok|okay)?\s*,?\s*(?:go\s+for\s+it|go\s+ahead|do\s+it|please\s+do)\b", " "),
    (r"\b(?:thx|ty|cheers|obviously|of\s+course)\b", " "),
    (r"^(?:ugh|argh|sigh|geez|jeez|man|dude|look|listen)\b[\s,!.]*", " "),
    (r"(?<=\bbin)\s+already\s*[.!]*$|(?<=\bblock)\s+already\s*[.!]*$", " "),
    (
        r",?\s*that\s+would\s+be\s+(?:lovely|great|nice|awesome|perfect|amazing|wonderful|helpful)",
        " ",
    ),
    (r",?\s*(?:would|could|will|can|won't)\s+you\s*\??\s*$", " "),
    (r"\bi\s+know\s+this\s+is\s+a\s+\w+\s+request\s*,?\s*but\s+", " "),
    (r",?\s*(?:she|he|they|it)\s+(?:says|said|thinks|think)\b[^.!?]*", " "),
    (
        r"\b(?:my|our|the)\s+(?:daughter|son|kid|boss|friend|wife|husband|partner|colleague)\s+wants\b",
        "i want",
    ),
    (r"\bwhat\s+i\s+(?:need|want)\s*,?\s*(?:[^,]*,\s*)?is\b", "i want"),
    (
        r"\b(?:or\s+whatever|or\s+something|if\s+that\s+makes\s+sense|basically|anyway|anyways)\b",
        " ",
    ),
    (r"\b(?:first\s+things\s+first|for\s+starters|to\s+start\s+with)\s*:?", " "),
    (r"\bafter\s+that\s*,", " then "),
    (r"\b(?:sitting|resting|lying|placed)\s+(?=on\b|in\b|inside\b)", ""),
    (r"\b(?:pop|stick|plonk|chuck|yeet|dunk|plop|stuff|lob|bung|deposit|stow|tuck)\b", "put"),
    (
        r"\b(?:shift|nudge|scoot|budge|shove|slide)\s+(?=(?:the\s+)?\w+\s+(?:block|cube|brick|one)\s+"
        r"(?:over\s+)?(?:to|towards)\s+the\s+(?:left|right|front|back|middle|center|centre)\b)",
        "push ",
    ),
    (r"\b(?:kill|switch\s+off|turn\s+out)\s+the\s+(light|lamp)s?\b", r"turn off the \1"),
    (r"\blights?\s+out\b", "turn off the light"),
    (
        r"(?:^|(?<=[,.;]\s)|(?<=\band\s)|(?<=\bthen\s))(?:the\s+)?(?:lights?|lamp)\s+off\b",
        "turn off the light",
    ),
    (r"^(?:the\s+)?(?:lights?|lamp)\s+on\b(?!\s+or\b)", "turn on the light"),
    (
        r"\bmake\s+it\s+(?:bright|brighter|light|lighter)(?:\s+(?:in\s+)?here)?\b",
        "turn on the light",
    ),
    (r"\bmake\s+it\s+(?:dark|darker)(?:\s+(?:in\s+)?here)?\b", "turn off the light"),
    (r"\b(?:switch\s+on|put\s+on)\s+the\s+(light|lamp)\b", r"turn on the \1"),
    (r"\bswitch\s+the\s+(light|lamp)\s+(on|off)\b", r"turn \2 the \1"),
    # "can't see a thing, give me some light", "it's too dark in here": the light on
    (
        r"\b(?:give\s+me\s+(?:some\s+|more\s+)?light|(?:i\s+)?(?:can't|cannot|can\s+not)\s+see"
        r"(?:\s+(?:a\s+thing|anything|much))?|(?:it's|it\s+is)\s+(?:too\s+|so\s+|very\s+|pretty\s+|a\s+bit\s+)?"
        r"dark(?:\s+in\s+here)?|(?:i\s+)?need\s+(?:some\s+|more\s+)?light)\b",
        "turn on the light",
    ),
    (
        r"\b(?:it's|it\s+is)\s+(?:too\s+|so\s+|very\s+|a\s+bit\s+)bright(?:\s+in\s+here)?\b",
        "turn off the light",
    ),
    # said twice ("can't see, give me light") it is still one switch
    (r"\b(turn\s+(?:on|off)\s+the\s+light)(?:\s*[,;.!]?\s*(?:and\s+|then\s+|so\s+)?\1)+", r"\1"),
]
#: Words that make "could the red block go in the bin?" a request rather than a question.
_ASKING = re.compile(
    r"\b(?:please|pls|plz|thx|thanks|thank\s+you|ty|cheers|for\s+me|at\s+some\s+point|no\s+rush|"
    r"when\s+you\s+(?:can|get\s+a)|if\s+you\s+(?:can|could|would|don't\s+mind)|i'd\s+appreciate)\b"
)
_REMARK = re.compile(r"^(?:" + "|".join(re.escape(r) for r in L.REMARKS) + r")\b", re.IGNORECASE)


#: A phrase that names a thing and does nothing else ("and the one in the middle of that
#: row, dear"), which a "that one" after it stands for.
_NAMING = re.compile(
    r"^(?:and\s+|now\s+|then\s+)?(?P<np>(?:the|that)\s+(?:one|block|cube)\s+(?:in|on|at|nearest|closest|next|farthest)\b[^,]*?)"
    r"(?:\s*,\s*(?:dear|love|please|robot|mate|sweetie))?[\s,.!-]*$"
)


def _relevant(sentence: str) -> bool:
    if _NAMING.match(sentence) or re.search(
        r"\bto\s+the\s+side\b|\b(?:push|shove|move|slide)\b.*\baside\b|^aside\b[\s!.]*$|"
        r"\btable\b.*\b(?:empty|emptied|clear|cleared)\b",
        sentence,
    ):
        return True
    words = set(re.findall(r"[a-z']+", sentence))
    if words & set(L.COLOURS) or re.search(rf"\b{_THINGS}\b", sentence):
        return True
    if any(words & cues for cues in L.COLOUR_CUES.values()):
        return True  # a shade or a thing of a colour ("ruby, then sapphire")
    if words & (set(L.ACTION_VERBS) | {"stop", "home", "halt", "cancel", "pick", "want", "need"}):
        return True
    if words & {"tower", "stack", "pile", "build", "goal", "result", "order", "sequence"}:
        return True
    if words & {"no", "never", "don't", "dont", "not"} and words & {
        "stacking",
        "touching",
        "moving",
        "pushing",
        "grabbing",
        "lifting",
    }:
        return True  # a rule: "no more stacking, period."
    if words & {"light", "lights", "lamp", "drawer", "button"} and words & {
        "on",
        "off",
        "open",
        "shut",
    }:
        return True  # "lights off.", "drawer shut."
    return bool(re.search(r"\b(?:it|them)\b", sentence) and words & set(L.ACTION_VERBS))


_HURRY = re.compile(
    r"(?:[\s,.;!-]+(?:go(?:[\s,!]+go)*|go\s+ahead|off\s+you\s+go|do\s+it|chop\s+chop|hurry(?:\s+up)?|"
    r"make\s+it\s+(?:snappy|quick)|on\s+the\s+double)|[\s,]+(?<!right\s)(?<!just\s)(?<!for\s)(?:now|asap|quick(?:ly)?|right\s+away|"
    r"straight\s+away))+[\s.!]*$"
)


def strip(text: str) -> str:
    """The request without the talk around it (the text itself when nothing is dropped)."""
    original = text
    # a trailing hurry ("..., go", "... now!", "asap") asks for nothing more
    text = _HURRY.sub("", text) or text
    m = re.match(
        r"^(?:where(?:'s|\s+is)|is\s+there|do\s+you\s+see|have\s+you\s+got)\s+(?P<np>(?:a|an|the)\s+\w+\s+"
        r"(?:block|cube|brick|one))\s*[?,;]\s*(?:and\s+|then\s+)?(?P<cmd>.+)$",
        text,
    )
    if m and re.search(r"\b(?:it|that\s+one)\b", m["cmd"]):
        np = re.sub(r"^(?:a|an)\s+", "the ", m["np"])
        text = re.sub(r"\b(?:it|that\s+one)\b", np, m["cmd"], count=1)
    # "the green block is a bit close to the edge, so could you slide it over ...": "it" is
    # the block the description names
    text = re.sub(
        rf"(?:^|(?<=[.!?]\s))(?P<np>the\s+(?:{_C})\s+(?:block|cube|brick|one))\s+(?:is|'s|looks|seems)\b[^,.!?]*,\s*"
        r"(?:so\s+)?(?P<rest>(?:(?:could|can|would|will)\s+you\b|(?:please\s+)?(?:"
        + "|".join(sorted(L.ACTION_VERBS | {"pull"}))
        + r")\b)[^.!?]*?\bit\b[^.!?]*[.!?]?)",
        lambda m: re.sub(r"\bit\b", m["np"], m["rest"], count=1),
        text,
    )
    text = _buried(text)
    text = _unwrap(text)
    parts = [p.strip() for p in re.split(r"(?<=[.!?;])\s+|\.{2,}\s*|\s+-+\s+", text) if p.strip()]
    # a colon ends a preface of chat ("last thing today I promise: green block, blue bin"),
    # never a list's "red: blue bin" or a "goal: ..."
    parts = [q for p in parts for q in _preface(p)]
    if len(parts) > 1:
        kept = [p for p in parts if _relevant(p)]
        # "The green block looks lonely. Put it on top of the red block": the description
        # names what "it" is
        merged: list[str] = []
        for p in kept:
            named = _NAMING.match(merged[-1]) if merged else None
            if named and re.search(r"\bthat\s+one\b", p) and not _acts(named["np"]):
                # "and the one in the middle of that row - could that one go in the red bin?"
                p = re.sub(r"\bthat\s+one\b", named["np"], p, count=1)
                merged.pop()
            if (
                merged
                and re.search(r"\b(?:it|them)\b", p)
                and not _acts(merged[-1])
                and re.search(
                    r"\b(?:is|looks|seems|sits|lies|appears|'s|went|ended\s+up|landed|got|fell|rolled|wound\s+up)\b",
                    merged[-1],
                )
                # "the blue block is sitting on top of the red one": the first block named,
                # the subject, is what "it" is
                and len(re.findall(rf"\b(?:{_C})\b", merged[-1])) >= 1
            ):
                m = re.search(rf"\b(?:the\s+)?({_C})\s+(?:block|cube|brick|one)\b", merged[-1])
                if m:
                    p = re.sub(r"\b(?:it|them)\b", f"the {m.group(1)} block", p, count=1)
                    merged.pop()
            merged.append(p)
        if any(_acts(p) for p in merged):
            # a description beside the command ("three blocks are bunched together and one is
            # off on its own - put the lonely one in the red bin") is dropped
            # (a rule is kept: "the yellow block is off limits. put all the blocks in the bin")
            merged = [
                p
                for p in merged
                if _acts(p)
                or _RULE.search(p)
                or p.rstrip().endswith("?")
                or re.match(
                    r"(?:step\s+\w+\s*:\s*)?(?:(?:tell|show)\s+me|is|are|where|what|which|how|does|whichever|failing\s+that|otherwise|else|if\s+not)\b",
                    p,
                )
                or not re.search(r"\b(?:is|are)\b", p)
            ]
        if merged and len(merged) < len(parts):
            text = ", ".join(p.rstrip(".!;:") if not p.endswith("?") else p for p in merged)
    text = _unwrap(text)
    text = re.sub(r"\s+", " ", text).strip(" ,")
    if text == original:
        return original  # nothing dropped or unwrapped: the words go on as written
    text = re.sub(
        r"^(?:(?:hi|hello|hey|yo|ok|okay|so|alright|well|um+|uh+|hmm+|yeah|yes|right|sure|ugh|argh|sigh|geez|"
        r"jeez|man|dude|oh|look|listen|right\s+then|dear|love|sweetie|honey|darling|mate)\b[\s,!]*)+",
        "",
        text,
    )
    text = re.sub(
        r"(?:[\s,.!?]*\b(?:thanks|thank\s+you|cheers|please|(?:much|greatly|really)\s+appreciated|thx|ta)\b(?:\s+\w+){0,2}[\s.!]*)+$",
        "",
        text,
    )
    return text.strip(" ,")


#: A rule said as a description ("the yellow block is off limits", "the red bin is not to
#: be used"): never dropped as talk beside a command.
_RULE = re.compile(
    r"\b(?:off[\s-]+limits|out\s+of\s+bounds|not\s+to\s+be\s+(?:touched|moved|used)|forbidden|not\s+allowed|"
    r"mustn't|must\s+not|can't\s+be\s+(?:moved|touched|used)|(?:stays?|is\s+to\s+stay)\s+(?:put|where|there)|"
    r"gets\s+used|is\s+used|are\s+used|no\s+\w+\s+but)\b"
)

_BURIED = re.compile(
    r"(?:^|[,;.!?]\s*|\band\s+)(?:(?:anyway|anyways|so|oh|but|well|while\s+i\s+remember|before\s+i\s+forget|"
    r"by\s+the\s+way|speaking\s+of\s+which)[\s,]+)*"
    # a polite request: "could you ...", or "I'd really appreciate it (if you would) ..."
    r"(?:(?:i'd|i\s+would)\s+(?:really\s+|very\s+much\s+)?(?:appreciate\s+it|like\s+it|love\s+it)(?:\s+if\s+you\s+(?:would|could))?\s+"
    r"|(?=(?:could|can|would|will)\s+you\s))"
    r"(?P<req>(?:(?:could|can|would|will)\s+you\s+)?(?:please\s+)?(?:just\s+)?(?:put|place|move|stack|push|pick|drop|set|"
    r"take|grab|pop|slide)\b.*?)"
    r"(?=,\s*(?:and\s+)?(?:then\s+)?(?:she|he|i|i'm|we|they|it's|my|her|his|you\s+know)\b|[.;!?](?:\s|$)|$)"
)


def _buried(text: str) -> str:
    """A long ramble with one polite request in its middle ("so my sister came over ...,
    and anyway, while I remember, could you put the yellow block on the blue one, and then
    she says ..."): the request alone; any other text as it stands."""
    if len(text.split()) < 20:
        return text
    found = list(_BURIED.finditer(text))
    if len(found) != 1:
        return text
    req = found[0]["req"].strip(" ,")
    if len(req.split()) > 0.6 * len(text.split()):
        return text
    # "looks like the yellow block went into the blue bin. could you move it ...": "it" is
    # the block the talk before it was about (its first, the subject)
    said = re.search(rf"\bthe\s+({_C})\s+(?:block|cube|brick|one)\b", text[: found[0].start("req")])
    if (
        said
        and re.search(r"\b(?:it|them)\b", req)
        and not re.search(rf"\b(?:{_C})\s+(?:block|cube|brick|one)\b", req)
    ):
        req = re.sub(r"\b(?:it|them)\b", f"the {said.group(1)} block", req, count=1)
    return req


def _preface(part: str) -> list[str]:
    m = re.match(r"^([^:]{1,200}):\s+(.+)$", part)
    if m is None:
        return [part]
    head = m.group(1)
    task_words = r"\b(?:build|make|stack|pile|tower|goal|result|following|order|list|steps?|plan)\b"
    words = len(head.split())
    chat = words >= 6 or (words >= 4 and not re.search(task_words, head) and not _acts(head))
    # a short aside before a colon ("for science: stack red on yellow") with an order after it
    chat = chat or (
        words <= 3
        and not re.search(task_words, head)
        and not _acts(head)
        and not re.search(rf"\b{_THINGS}\b", head)
        and _acts(m.group(2))
    )
    if chat and not re.search(rf"\b(?:{_C})\b", head):
        return [head + ":", m.group(2)]
    return [part]


def _unwrap(text: str) -> str:
    """Polite wrappers reduced to the verb; a polite request asks nothing (no "?")."""
    before = text
    for pattern, repl in _WRAPPERS:
        if repl.startswith("<IF_REQUEST>"):
            # "could the blue cube end up in the blue bin? thx" asks for it; without a word
            # of asking it is a question whether it can be done (answered, nothing moves)
            if _ASKING.search(text):
                text = re.sub(pattern, repl.removeprefix("<IF_REQUEST>"), text)
            continue
        if repl == "<G>":
            text = re.sub(pattern, lambda m: _GERUND[m.group(1)], text)
        elif repl == "<PAST>":
            # "... if you popped the blue block into the green bin": the verb as an order
            text = re.sub(
                pattern + r"(popped|put|placed|moved|dropped|stacked|pushed|set|took|picked|opened|"
                r"closed)\b",
                lambda m: " " + L.PRESENT_OF.get(m.group(1), m.group(1)),
                text,
            )
        else:
            text = re.sub(pattern, repl, text)
    if text != before:
        # the request's "?" asks nothing; a sentence after it is still a sentence of its own
        text = re.sub(r"\?+(?=\s*\S)", ".", text)
        text = re.sub(r"\?+", "", text)
    return text


def _acts(sentence: str) -> bool:
    words = set(re.findall(r"[a-z']+", sentence))
    return bool(words & (set(L.ACTION_VERBS) | {"want", "need", "goes", "go"}))


#: A feeling or a taste about a thing, with no verb of doing (checked after _acts).
_FEELING = re.compile(
    r"^(?:i|we)\s+(?:really\s+|just\s+|kind\s+of\s+|do\s+)?(?:like|love|hate|dislike|adore|enjoy)\b"
    r"(?!\s+(?:you\s+to|it\s+if|it\s+when\s+you|to)\b)|\bmy\s+favou?rite\b"
)
#: A laugh or a smiley alone ("lol", "haha", ":)").
_LAUGH = re.compile(r"\s*(?:(?:lol|lmao|haha+|hehe+|ha|xd|:-?\)|:-?d|;-?\))[\s!.]*)+")


def remark(text: str) -> str | None:
    """A reply to a remark with no request in it, or None when ``text`` asks for something."""
    t = text.strip().lower()
    if _acts(t) and not re.match(r"^i\s+(?:just\s+|already\s+)?(?:put|moved|placed|did)\b", t):
        return None
    if _FEELING.search(t) or _LAUGH.fullmatch(t):
        # "I like the blue block", "blue is my favourite colour", "lol": said, not asked for
        return "Noted; I did not move anything"
    if re.search(rf"\b(?:{_C})\b", t) and not re.match(r"^(?:nice|good|great)\s+(?:job|work)\b", t):
        return None  # "hey robot, red on blue" names what to move: a request
    if re.search(r"\b(?:task|make\s+(?:it|sure)|each\s+bin|every\s+bin)\b", t) and re.search(
        r"\b(?:bins?|blocks?|cubes?)\b", t
    ):
        return None  # "okay class - here's your task: make it so each bin holds one block"
    if _REMARK.match(t) and not re.search(rf"\b(?:{_C})\s+(?:block|cube)\s+(?:in|on|into)\b", t):
        return "Thank you; I did not move anything"
    return None
