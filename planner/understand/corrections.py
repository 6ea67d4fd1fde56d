"""Self-corrections: "no wait", "sorry", "I meant", "scratch that", "the other way round".

Why: people correct themselves mid-sentence, and a planner that reads both halves moves
both cubes. What follows a correction marker replaces what it corrects: a whole new
command replaces the old one; a fragment ("the blue bin", "yellow", "the yellow one in the
red bin") replaces the last reference of its own kind (a bin for a bin, a cube for a cube,
a region for a region, the last colour for a bare colour); "the other way round" swaps the
two cubes of the clause before it.
"""

from __future__ import annotations

import planner.rx as re
from bridge import lexicon as L
from planner.understand import references as refs

_C = "|".join(L.COLOURS)
_BIN = refs._BIN
_BLOCK = r"(?:block|cube|brick|one)"
_REGION = (
    r"(?:left|right|front|back|middle|center|centre)(?:\s+side)?"
    r"(?:\s+(?:side\s+)?of\s+the\s+table)?"
)
_MARKER = re.compile(
    r"(?:^|[\s,;.!-]+)(?P<m>no\s*,?\s*wait|wait\s*,?\s*no|no\s+no|sorry(?!\s+(?:if|to|for|about|but)\b)|i\s+mean(?:t)?(?:\s+to\s+say)?|"
    r"actually|oops|correction|make\s+that|my\s+bad|on\s+second\s+thoughts?|change\s+of\s+plan|"
    r"(?<!i'd\s)(?<!would\s)(?<!much\s)rather|or\s+rather|scratch\s+that|forget\s+that|no(?=\s*,)|not\s+that(?:\s+one)?|make\s+that|"
    r"um+|uh+|er+m?|hmm+|(?:i've\s+|i\s+)?changed\s+my\s+mind)(?=[\s,;.!:-]|$)[\s,;.!:-]*"
    r"(?:(?:no|wait|sorry|actually|i\s+mean(?:t)?|not\s+that(?:\s+one)?|rather|er+|um+|hmm+|"
    r"(?:hold|hang)\s+on(?:\s+a\s+(?:sec(?:ond)?|moment|minute))?|let\s+me\s+(?:think|see)|"
    r"(?:i've\s+|i\s+)?changed\s+my\s+mind)(?=[\s,;.!:-]|$)[\s,;.!:-]*)*"
)
_SWAP = re.compile(
    r"[\s,;.!-]*(?:(?:no|actually|sorry|wait|i\s+mean|rather|er+|um+)\s*,?\s*)*"
    r"(?:(?:the\s+)?other\s+way\s+(?:round|around)|(?:swap|switch|reverse|flip)\s+(?:them|those|these|it|that|"
    r"the\s+(?:two|order|blocks))(?:\s+(?:round|around|over))?|the\s+reverse|vice\s+versa|"
    r"(?:swap|switch)\s+(?:round|around))[\s.!]*$"
)
_VERBS = set(L.ACTION_VERBS) | {"stack", "pick", "push", "put", "home"}


def _has_verb(text: str) -> bool:
    return any(w in _VERBS for w in re.findall(r"[a-z]+", text))


def _kind(fragment: str) -> str:
    if re.search(rf"\b{_BIN}\b", fragment):
        return "bin"
    if re.search(rf"\b(?:{_REGION})\b", fragment) and not re.search(rf"\b(?:{_C})\b", fragment):
        return "region"
    if re.search(rf"\b{_BLOCK}\b", fragment):
        return "block"
    return "colour"


def _last_ref(text: str, kind: str) -> re.Match[str] | None:
    pattern = {
        "bin": rf"(?:\bthe\s+)?\b(?:{_C})\s+{_BIN}\b|\bthe\s+{_BIN}\s+of\s+\w+\s+colou?r",
        "block": rf"(?:\bthe\s+)?\b(?:{_C})(?:\s+{_BLOCK}\b)?(?!\s+{_BIN})",
        "region": rf"(?:\bthe\s+)?\b{_REGION}\b",
        "colour": rf"\b(?:{_C})\b",
    }[kind]
    found = list(re.finditer(pattern, text))
    return found[-1] if found else None


def _pause_or_narrowing(before: str, after: str, word: str, notes: list[str]) -> str | None:
    """The text when the marker is a pause ("put red in the green bin and, um, blue in the
    red bin") or narrows a pair ("the red and the blue block ..., no, just the red one"),
    else None."""
    if re.fullmatch(r"um+|uh+|er+m?|hmm+", word) and re.search(r"\b(?:and|then|also)$", before):
        return f"{before} {after}"
    if (
        re.fullmatch(r"um+|uh+|er+m?|hmm+|well", word)
        and re.match(r"(?:in|into|inside|on|onto|on\s+top\s+of|to|next\s+to|beside)\b", after)
        and not re.search(r"\b(?:in|into|inside|on|onto|to)\b[^,;.?!]*$", before)
    ):
        return f"{before} {after}"  # "put the blue one, hmm, in the box": a pause mid-phrase
    only = re.fullmatch(rf"(?:just|only)\s+(?:the\s+)?({_C})(?:\s+{_BLOCK})?", after)
    if only is None:
        return None
    pair = re.search(
        rf"(?:the\s+)?(?:{_C})(?:\s+{_BLOCK})?(?:\s*,\s*(?:the\s+)?(?:{_C})(?:\s+{_BLOCK})?)*"
        rf"\s+(?:and|&)\s+(?:the\s+)?(?:{_C})(?:\s+(?:{_BLOCK}|blocks|cubes|ones))?",
        before,
    )
    if pair is None or not re.search(rf"\b{only[1]}\b", pair.group(0)):
        return None
    notes.append(f"{word!r}: only the {only[1]} block")
    return before[: pair.start()] + f"the {only[1]} block" + before[pair.end() :]


def _dropped_or_renumbered(before: str, after: str, word: str, notes: list[str]) -> str | None:
    """The text when the repair drops a part ("... and green in the red bin - actually forget
    about the green one") or changes a number ("three blocks, no, two"), else None."""
    forget = re.match(
        rf"(?:just\s+)?(?:forget|skip|drop|never\s+mind|leave\s+out)\s+(?:about\s+)?(?:the\s+)?({_C})"
        rf"(?:\s+(?:one|block|cube|brick))?\s*(?:part|bit)?\s*$",
        after,
    )
    if forget:
        notes.append(f"{word!r}: the part about {forget.group(1)} is dropped")
        return _drop_clause(before, forget.group(1))
    renumbered = _renumbered(before, after)
    if renumbered is not None:
        # "put three, I mean two, blocks in the green bin": the number said next replaces it
        notes.append(f"{word!r}: the count is {renumbered[1]!r}")
        return renumbered[0]
    number = re.fullmatch(r"(?:make\s+(?:it|that)\s+)?(one|two|three|four|[1-4])", after)
    nums = list(re.finditer(r"\b(?:one|two|three|four|[1-4])\b", before)) if number else []
    if number is None or not nums:
        return None
    n = nums[-1]
    notes.append(f"{word!r}: {n.group(0)!r} -> {number.group(1)!r}")
    return before[: n.start()] + number.group(1) + before[n.end() :]


def apply(text: str) -> tuple[str, list[str]]:
    """``(corrected text, notes)``; text with no correction comes back unchanged."""
    told = _told_otherwise(text)
    if told is not None:
        return told, [f"'i meant': {told!r}"]
    dropped = _dropped(text)
    if dropped is not None:
        return dropped
    instead = _neither(text)
    if instead is not None:
        return instead
    return _repaired(text)


#: "stack green on yellow. no, yellow on green. ugh, neither - just put both of them in the
#: blue bin": every reading said so far is turned down and a new order given.
_NEITHER = re.compile(
    r"(?:^|[,;.!?]+|\s+-+)\s*(?:(?:ugh|argh|ah|oh|no|hmm+|well|ok|okay|actually|wait)[\s,]+)*"
    r"(?:neither(?:\s+of\s+(?:those|them|these|that))?|none\s+of\s+(?:that|those|them|this)|"
    r"scrap\s+(?:all\s+)?(?:that|those)|scratch\s+all\s+(?:that|those)|forget\s+(?:both|all\s+(?:of\s+)?(?:that|those)))"
    r"\s*(?:[-,;.!:]+\s*|\s+)(?:just\s+)?(?:please\s+)?"
    r"(?P<cmd>(?:put|place|move|stack|drop|push|pick|take|leave)\b.+)$"
)


def _neither(text: str) -> tuple[str, list[str]] | None:
    """The new order after a "neither" that turns down what was said before it, with
    "both of them" / "them" read as the blocks said before; None when not said so."""
    m = _NEITHER.search(text)
    if m is None or not text[: m.start()].strip():
        return None
    said = list(dict.fromkeys(re.findall(rf"\b({_C})\b(?!\s+{_BIN})", text[: m.start()])))
    cmd = m["cmd"].strip(" .!")
    if len(said) >= 2:
        both = " and ".join(f"the {c} block" for c in said)
        cmd = re.sub(
            r"\b(?:both\s+of\s+them|both|the\s+two\s+of\s+them|them\s+both|them)\b",
            both,
            cmd,
            count=1,
        )
    return cmd, [f"'neither': {cmd!r} replaces {text[: m.start()].strip()!r}"]


#: Where a request may be dropped without a correction word before it ("open the drawer,
#: would you? ...oh, forget it, leave it shut"): a new clause that opens with a take-back.
_DROP_AT = re.compile(
    r"(?:^|[,;.!?]+|\s+-+\s+)\s*(?=(?:(?:oh|ah|hmm+|well|nah|no)[\s,]+)*(?:forget\s+(?:it|that|about\s+it)|"
    r"never\s+mind|cancel\s+(?:it|that)|don't\s+bother)\b)"
)


def _dropped(text: str) -> tuple[str, list[str]] | None:
    """A request dropped by what follows it, when everything after the take-back only takes
    it back or says how to leave things; None otherwise."""
    for m in _DROP_AT.finditer(text):
        before, after = text[: m.start()].strip(" ,;.!?-"), text[m.end() :]
        if not before:
            continue
        back = _takes_back(after.strip(" ,;.!?-"))
        if back:
            note = f"{after.strip()!r} takes back {before!r}"
            return (LEFT_AS_IS if back == "leave" else ""), [note]
    return None


def _ended(head: str, before: str, after: str, word: str, notes: list[str]) -> str | None:
    """What is left when the correction ends the request: the question said again
    (:func:`_asked_again`), nothing ("put red into the red bin - actually no, don't"), or
    :data:`LEFT_AS_IS` ("... actually, don't. leave it where it is"); None otherwise."""
    asked = _asked_again(head, after, word)
    if asked is not None:
        return asked
    back = _takes_back(after)
    if back:
        notes.append(f"{word!r}: {after!r} takes back {before!r}")
        return LEFT_AS_IS if back == "leave" else ""
    return None


def _asked_again(head: str, after: str, word: str) -> str | None:
    """ "do you know what a block is? I mean really know": an "I mean" after a question that
    names nothing to move says the question again; the question, or None."""
    if (
        re.fullmatch(r"i\s+mean(?:t)?", word)
        and head.rstrip().endswith("?")
        and not re.search(rf"\b(?:{_C})\b|\b(?:{'|'.join(sorted(_VERBS))})\b", after)
    ):
        return head.rstrip()
    return None


def _named_first(before: str, after: str, word: str) -> tuple[str, str]:
    """ "... in the box? the green box, I mean.": the correction said before "I mean" is the
    fragment; ``(before, after)`` unchanged otherwise."""
    if after or not re.fullmatch(r"i\s+mean(?:t)?", word):
        return before, after
    last = re.search(r"^(?P<b>.*[?.;,!])\s*(?P<a>[^?.;,!]+)$", before)
    said = last["a"].strip() if last is not None else ""
    if last is not None and re.fullmatch(
        rf"(?:(?:in|into|on|onto|to)\s+)?(?:the\s+)?(?:(?:{_C})(?:\s+(?:{_BLOCK}|{_BIN}))?|"
        rf"\w+\s+(?:{_BLOCK}|{_BIN}))",
        said,
    ):
        return last["b"].strip(" ,;.!-"), said
    return before, after


def _repaired(text: str) -> tuple[str, list[str]]:
    notes: list[str] = []
    t = text.strip()
    t = _swap(t, notes)
    t = _not_x_but_y(t, notes)
    while True:
        m = _MARKER.search(t)
        if m is None or m.start() == 0 and not t[: m.start()].strip():
            if m is not None and m.start() == 0:
                # a marker at the very start ("sorry, could you ...") corrects nothing
                t = t[m.end() :]
                continue
            break
        before, after = t[: m.start()].strip(" ,;.!-"), t[m.end() :].strip(" ,;.!-")
        before = re.sub(r"[\s,]+or$", "", before)  # "stack blue on yellow, or actually ..."
        # "... in the green bin - oh wait, I meant ...": the hesitation before the marker goes
        before = re.sub(
            r"(?:[\s,;.!-]+(?:oh|ah|wait|well|hmm+|um+|uh+|er+|sorry|no|nah|nope))+$", "", before
        )
        word = re.sub(r"\s+", " ", m.group("m"))
        before, after = _named_first(before, after, word)
        after = _plain_fragment(after)
        paused = _pause_or_narrowing(before, after, word, notes)
        if paused is not None:
            t = paused
            continue
        ended = _ended(t[: m.start()], before, after, word, notes)
        if ended is not None:
            t = ended
            break
        whole = _whole_relation(before, after) or _definite(before, after)
        if whole is not None:
            # "stack blue on yellow, actually yellow on blue"; "in a bin... actually, the bin"
            notes.append(f"{word!r}: {whole!r} replaces {before!r}")
            t = whole
            continue
        if (
            word in ("actually", "rather")
            and not _has_verb(after)
            and not re.match(rf"(?:(?:in|into|on|onto|to)\s+)?(?:the\s+)?(?:{_C})\b", after)
            and not re.match(r"(?:just\s+)?(?:forget|skip|drop|never\s+mind|leave\s+out)\b", after)
        ):
            break  # "put it rather gently" is no correction
        if not after:
            t = before  # a trailing "sorry" corrects nothing
            break
        fragment = not _has_verb(after) and re.match(
            rf"(?:(?:in|into|on|onto|to)\s+)?(?:the\s+)?(?:{_C})\b", after
        )
        if not before or (
            word in ("scratch that", "forget that", "change of plan") and not fragment
        ):
            notes.append(f"{word!r}: only {after!r} counts")
            t = after
            continue
        dropped = _dropped_or_renumbered(before, after, word, notes)
        if dropped is not None:
            t = dropped
            continue
        if re.match(
            r"(?:please\s+)?(?:just\s+)?(?:put|place|move|stack|push|drop|set|bring|slide)\b", after
        ) and re.search(r"\b(?:it|them)\b", after):
            obj = re.search(rf"\b(?:the\s+)?({_C})\s+(?:block|cube|brick|one)\b", before)
            if obj:
                after = re.sub(r"\b(it|them)\b", f"the {obj.group(1)} block", after, count=1)
            # "put it in the middle, no, push it there": "there" is where the first said
            dest = re.search(r"\b(?P<p>in|into|on|onto|to|at)\s+(?P<d>the\s+[a-z ]+?)\s*$", before)
            if dest and re.search(r"\bthere\b", after):
                pushed = re.match(r"(?:please\s+)?(?:just\s+)?(?:push|slide|move)\b", after)
                place = f"to {dest['d']}" if pushed else dest.group(0)
                after = re.sub(r"\b(?:over\s+|in\s+|into\s+)?there\b", place, after, count=1)
        if _has_verb(after) and re.match(
            r"(?:please\s+)?(?:just\s+)?(?:put|place|move|stack|push|pick|drop|set|take|grab|"
            r"bring|go|open|close|shut|press|turn|switch|sort|leave|keep|don't|do\s+not|stop|"
            r"slide|lift|toss|throw|instead)\b",
            after,
        ):
            notes.append(f"{word!r}: {after!r} replaces {before!r}")
            t = after
            continue
        t = _substitute(before, after, notes, word)
    t = re.sub(r"\s+instead\b", "", t).strip()
    return _there(text, t), notes


def _there(said: str, t: str) -> str:
    """ "put yellow in the green bin. actually, scratch that - put the red one in there":
    "there" in the correction is the bin the replaced request named."""
    told = re.search(rf"\b(?:in|into|inside)\s+(?P<d>the\s+(?:{_C})\s+{_BIN})\b", said)
    if told is None or t == said.strip() or re.search(rf"\b(?:{_C})\s+{_BIN}\b", t):
        return t
    return re.sub(r"\b(?:in|into)\s+(?:there|it)\b(?!\s+(?:is|was))", f"in {told['d']}", t, count=1)


def _told_otherwise(t: str) -> str | None:
    """ "I told you the red bin for the green block, but I meant the blue bin": the put as
    it should have been said, else None."""
    told = re.search(
        rf"\bi\s+(?:told|asked|gave)\s+you\s+(?:to\s+put\s+)?(?:the\s+)?(?P<x>{_C})\s+{_BIN}\s+for\s+the\s+"
        rf"(?P<o>{_C})\s+{_BLOCK}\s*,?\s*but\s+i\s+meant\s+(?:to\s+say\s+)?(?:the\s+)?(?P<z>{_C})(?:\s+{_BIN})?",
        t,
    )
    return f"put the {told['o']} block in the {told['z']} bin" if told else None


_NUMBER = r"(?:one|two|three|four|five|six|[1-6])"


def _renumbered(before: str, after: str) -> tuple[str, str] | None:
    """ "put three" + "two, blocks in the green bin" -> "put two blocks in the green bin"."""
    said = re.search(rf"\b{_NUMBER}$", before)
    new = re.match(rf"({_NUMBER})\b[\s,]*", after)
    if said is None or new is None:
        return None
    return re.sub(
        r"\s+", " ", f"{before[: said.start()]}{new.group(1)} {after[new.end() :]}"
    ).strip(), new.group(1)


def _plain_fragment(after: str) -> str:
    """A correction said in other words, as the fragment it stands for: "you know what, red
    was right" -> "red"; "my left, so that's your right" -> "the right" (the robot's own)."""
    after = re.sub(
        r"^(?:you\s+know\s+what|come\s+to\s+think\s+of\s+it|on\s+reflection|thinking\s+about\s+it)\s*,?\s*",
        "",
        after,
    )
    after = re.sub(
        r"^(?:make|change)\s+(?:that|it)\s+(?:to\s+|into\s+)?(?=(?:the\s+)?\w)", "", after
    )
    # "..., I said it wrong", "..., my mistake": the admission corrects nothing more
    after = re.sub(
        r"\s*[,;.]?\s*(?:i\s+said\s+it\s+wrong|i\s+misspoke|my\s+mistake|my\s+bad|sorry(?:\s+about\s+that)?)[\s.!]*$",
        "",
        after,
    )
    # "the cylinder, not the ball": the fragment is the first
    after = re.sub(
        rf"^(?P<f>(?:the\s+)?(?:{_C})(?:\s+(?:{_BLOCK}|{_BIN}))?)\s*,?\s+not\s+(?:the\s+)?(?:{_C})(?:\s+(?:{_BLOCK}|{_BIN}))?[\s.!]*$",
        r"\g<f>",
        after,
    )
    m = re.fullmatch(
        rf"(?:the\s+)?(?P<c>{_C})(?:\s+(?P<n>{_BLOCK}|{_BIN}))?\s+(?:(?:was|is|'s|it\s+is)\s+)?"
        r"(?:right|correct|fine|good|ok|okay|better|after\s+all)(?:\s+after\s+all)?(?:\s+then)?"
        r"(?:\s+(?:the\s+first\s+time|at\s+first|before|originally|all\s+along))?"
        # "blue was right the first time. blue bin.": the fragment said again
        rf"(?:\s*[.,;!-]+\s*(?:(?:let's\s+)?(?:go|stick)\s+(?:back\s+)?(?:with|to)\s+)?(?:the\s+)?(?P=c)"
        rf"(?:\s+(?:{_BLOCK}|{_BIN}))?)?[\s.!]*",
        after,
    ) or re.fullmatch(
        rf"(?:let's\s+)?(?:go|stick)\s+(?:back\s+)?(?:with|to)\s+(?:the\s+)?(?P<c>{_C})(?:\s+(?P<n>{_BLOCK}|{_BIN}))?"
        r"(?:\s+after\s+all)?",
        after,
    )
    if m:
        return m["c"] + (f" {m['n']}" if m["n"] else "")
    m = re.fullmatch(
        r"(?:to\s+)?(?:my|the)\s+(?:left|right)\s*,?\s*(?:so\s+)?(?:that's|that\s+is|which\s+is|i\.e\.?|meaning|or)\s+"
        r"(?:to\s+)?your\s+(?P<s>left|right)",
        after,
    )
    if m:
        return f"the {m['s']}"
    return after


_NOT_X_BUT_Y = re.compile(
    rf"[\s,;.!-]+(?:no[\s,]+)?not\s+(?:the\s+)?(?P<x>{_C})(?:\s+(?P<xn>{_BLOCK}|{_BIN}))?(?:\s*[,;-]\s*|\s+(?=but\b|the\b))(?:but\s+)?"
    rf"(?:the\s+)?(?P<y>{_C})(?:\s+(?P<yn>{_BLOCK}|{_BIN}))?[\s.!]*$"
)


def _not_x_but_y(t: str, notes: list[str]) -> str:
    """ "put the blue block in the red bin. not the red bin, the green one": the last
    mention of X (of the kind named, if any) becomes Y."""
    m = _NOT_X_BUT_Y.search(t)
    if m is None or m.start() == 0:
        return t
    before = t[: m.start()]
    noun = m.group("xn") or m.group("yn")
    kind = "bin" if noun and re.fullmatch(_BIN, noun) else "block" if noun else None
    pattern = {
        "bin": rf"\b{m['x']}\s+{_BIN}\b",
        "block": rf"\b{m['x']}(?:\s+{_BLOCK})?\b(?!\s+{_BIN})",
        None: rf"\b{m['x']}\b",
    }[kind]
    found = list(re.finditer(pattern, before))
    if not found:
        return t
    last = found[-1]
    said = last.group(0).replace(m["x"], m["y"], 1)
    notes.append(f"'not {m['x']}, {m['y']}': {last.group(0)!r} -> {said!r}")
    return before[: last.start()] + said + before[last.end() :]


def _swap(t: str, notes: list[str]) -> str:
    """ "stack yellow on red... actually the other way round" / "swap them": the last two
    colours trade places."""
    m = _SWAP.search(t)
    if m and re.search(r"\band\s+vice\s+versa\b", t):
        return t  # "put red in the blue bin and vice versa": both ways (planner.understand.shapes)
    if m and m.start() > 0:
        before = t[: m.start()]
        cols = list(re.finditer(rf"\b({_C})\b", before))
        if len(cols) >= 2:
            a, b = cols[-2], cols[-1]
            swapped = (
                before[: a.start()]
                + b.group(1)
                + before[a.end() : b.start()]
                + a.group(1)
                + before[b.end() :]
            )
            notes.append(f"'the other way round': {before.strip()!r} -> {swapped.strip()!r}")
            t = swapped
    return t


#: What :func:`apply` returns for a request taken back with word of how to leave things
#: ("... actually, don't. leave it where it is", "open the drawer ... oh, forget it, leave
#: it shut"): nothing to do, and an answer rather than a bare stop.
LEFT_AS_IS = "<left as it is>"
_TAKE_BACK = re.compile(
    r"(?:(?:no|oh|ah|hmm+|well|wait|actually|nah)[\s,]+)*(?:don't|dont|do\s+not|don't\s+do\s+(?:it|that|anything)|"
    r"never\s+mind(?:\s+(?:it|that|the\s+whole\s+thing|all\s+(?:of\s+)?that|everything))?|"
    r"forget\s+(?:it|that|about\s+it|the\s+whole\s+thing|everything)|cancel(?:\s+(?:it|that))?|stop|"
    r"skip\s+it|not\s+that|i(?:'ve|\s+have)?\s+changed\s+my\s+mind|no\s+need|don't\s+bother)"
)
#: "leave it", or how to leave it: "leave it where it is", "leave them as they are", "keep
#: it shut", "let it be".
_LEAVE = re.compile(
    r"(?:just\s+)?(?:leave|keep|let)\s+(?:it|them|that|those|everything|things|the\s+\w+(?:\s+\w+)?)"
    r"(?P<how>(?:\s+(?:where\s+(?:it|they)\s+(?:is|are)|as\s+(?:it|they)\s+(?:is|are|was|were)|alone|"
    r"there|be|shut|closed|open|on|off|for\s+now|like\s+that|as\s+is|in\s+place|please))*)"
)


def _takes_back(after: str) -> str | None:
    """ "... - actually no, don't": the correction takes the whole request back ("back");
    with how to leave things after it ("leave it where it is", "leave it shut"): "leave".
    None when ``after`` says anything else."""
    chunks = [c.strip() for c in re.split(r"[,;.!?]+|\s+-+\s+", after) if c.strip()]
    if not chunks:
        return None
    how = False
    for c in chunks:
        if _TAKE_BACK.fullmatch(c):
            continue
        m = _LEAVE.fullmatch(c)
        if m is None:
            return None
        how = how or bool(m["how"].replace("please", "").strip())
    if how:
        return "leave"
    return "back"


def _whole_relation(before: str, after: str) -> str | None:
    """ "stack blue on yellow, actually yellow on blue": a whole relation with no verb
    replaces the request and keeps its verb. A verb with only a place ("..., sorry, put it
    on the blue one" said as "put onto the blue block") keeps the request's object."""
    if "->" in after and "->" in before:
        return after  # "blue -> red bin. no wait. blue -> blue bin": the whole order again
    place_only = re.fullmatch(
        r"(?:put|place|set|move|stack|drop)\s+(?P<p>(?:on|onto|on\s+top\s+of|in|into|inside)\s+.+)",
        after,
    )
    if place_only and _has_verb(before):
        return _substitute(before, place_only.group("p"), [], "sorry")
    rel = re.fullmatch(
        rf"(?:the\s+)?(?:{_C})(?:\s+{_BLOCK})?\s+(?:on|onto|on\s+top\s+of|in|into|inside)\s+(?:the\s+)?"
        rf"(?:{_C})(?:\s+(?:{_BLOCK}|{_BIN}))?",
        after,
    )
    verb = re.match(r"\s*(?:please\s+)?(put|place|stack|move|drop|set|push|slide)\b", before)
    if rel is not None and verb is None and re.fullmatch(rel.re, before):
        return after  # "red in green, no wait, blue in green": one terse relation for another
    if rel is None or verb is None:
        return None
    return f"{verb.group(1)} {after}"


def _definite(before: str, after: str) -> str | None:
    """ "in a bin... actually, the bin": the indefinite becomes definite (and is then asked
    about), or None when ``after`` is not a bare "the bin" / "the block"."""
    vague = re.fullmatch(
        rf"(?:(?:in|into|on|onto)\s+)?(?:the|that|this)\s+(?P<n>{_BIN}|block|cube|brick|one)", after
    )
    if vague is None or not before:
        return None
    noun = vague.group("n")
    pat = (
        rf"\b(?:a|any|some|one\s+of\s+the)\s+{_BIN}s?\b"
        if re.fullmatch(_BIN, noun)
        else r"\b(?:a|any|some|one\s+of\s+the)\s+(?:block|cube|brick|one)s?\b"
    )
    indef = list(re.finditer(pat, before))
    if not indef:
        return None
    i = indef[-1]
    return before[: i.start()] + f"the {noun}" + before[i.end() :]


def _substitute(before: str, after: str, notes: list[str], word: str) -> str:
    """Put the fragment ``after`` in place of the last reference of its kind."""
    frag = re.match(
        rf"(?:(?:in|into|on|onto|to)\s+)?(?P<ref>(?:the\s+)?(?:(?:{_C})(?:\s+(?:{_BLOCK}|{_BIN}))?|"
        rf"{_REGION}))",
        after,
    )
    if frag is None:
        notes.append(f"{word!r}: {after!r} replaces {before!r}")
        return after
    ref = frag.group("ref")
    rest = after[frag.end() :].strip()
    placed = _replace_place(before, frag.group(0), ref, rest)
    if placed is not None:
        notes.append(f"{word!r}: {placed[1]!r} -> {frag.group(0).strip()!r}")
        return placed[0]
    kind = _kind(ref)
    last = list(re.finditer(rf"\b(?:{_C})\b(?:\s+(?P<n>{_BLOCK}|{_BIN})\b)?", before))
    said_col = re.search(rf"\b({_C})\b", ref)
    if (
        re.search(r"\bone$", ref)
        and last
        and last[-1]["n"]
        and re.fullmatch(_BIN, last[-1]["n"])
        and said_col is not None
        and said_col.group(1) in L.BIN_COLOURS
    ):
        # "green block into the red bin, not that one, the blue one": "one" stands for the
        # noun said last
        ref = re.sub(r"\bone$", "bin", ref)
        kind = "bin"
    target = _last_ref(before, kind)
    col = re.search(rf"\b({_C})\b", ref)
    if col and kind in ("block", "bin"):
        # "on the blue bin - I meant the blue block": the same colour names what is corrected
        same = list(
            re.finditer(rf"(?:\bthe\s+)?\b{col.group(1)}\b(?:\s+(?:{_BLOCK}|{_BIN})\b)?", before)
        )
        refs = list(re.finditer(rf"\b(?:{_C})\b(?:\s+(?:{_BLOCK}|{_BIN})\b)?", before))
        last_is_same = bool(refs) and col.group(1) in refs[-1].group(0)
        if same and last_is_same and (target is None or col.group(1) not in target.group(0)):
            target = same[-1]
    if target is None and kind == "bin":
        # "put the red block in the box, I mean the green box": a bin said with no colour
        plain = list(re.finditer(rf"\b(?:the|a|that|this)\s+{_BIN}\b", before))
        target = plain[-1] if plain else None
    if target is None and kind == "block":
        target = _last_ref(before, "colour")
    if target is None and kind in ("block", "colour"):
        last = list(re.finditer(r"\b[a-z]+\b", before))
        if last:  # "put the yelow, I mean yellow, block": the word just said is replaced
            target = last[-1]
            kind = "colour"
    bare = re.search(rf"\b(?:in|into|inside)\s+(?:the\s+)?(?P<c>{_C})\s*$", before)
    if target is None and kind == "bin" and bare:
        # "put the green block in the red... no, the blue bin": the bin was cut off
        notes.append(f"{word!r}: {bare.group('c')!r} -> {ref.strip()!r}")
        new = before[: bare.start("c")] + ref.removeprefix("the ") + (" " + rest if rest else "")
        return re.sub(r"\s+", " ", new).strip()
    if target is None:
        notes.append(f"{word!r}: {after!r} replaces {before!r}")
        return after
    tail = before[target.end() :]
    if kind == "colour":
        # a bare colour keeps the noun it replaces ("red, sorry, blue bin" stays a bin)
        new = before[: target.start()] + ref.removeprefix("the ") + tail
    else:
        new = before[: target.start()] + ref + (tail if not rest else "")
    if rest:
        new = new.rstrip() + " " + rest
    notes.append(f"{word!r}: {target.group(0).strip()!r} -> {ref.strip()!r}")
    return re.sub(r"\s+", " ", new).strip()


def _replace_place(before: str, said: str, ref: str, rest: str) -> tuple[str, str] | None:
    """ "... in the green bin. no wait, in the blue one": a fragment that opens with a
    preposition corrects where things go, the last place said with a preposition, not the
    last cube named. ``(text, what was replaced)``, or None for a fragment without one."""
    if not re.match(r"(?:in|into|on|onto|to)\s", said):
        return None
    places = list(
        re.finditer(
            rf"\b(?:in|into|inside|on|onto|to|on\s+top\s+of)\s+(?P<ref>(?:the\s+)?(?:{_C})"
            rf"(?:\s+(?:{_BLOCK}|{_BIN}))?)\b",
            before,
        )
    )
    if not places:
        return None
    last = places[-1]
    said = said.strip()
    if re.search(rf"\b{_BIN}$", last["ref"]) and re.search(r"\bone$", ref):
        said = re.sub(r"\bone$", "bin", said)  # the place was a bin: "the blue one" is one too
    tail = "" if rest else before[last.end() :]
    new = before[: last.start()] + said + tail + (" " + rest if rest else "")
    return re.sub(r"\s+", " ", new).strip(), last.group(0)


def _drop_clause(text: str, colour: str) -> str:
    """``text`` without the clause that names ``colour`` (clauses split at "and"/"then"/",")."""
    parts = re.split(r"\s*(?:,\s*(?:and\s+|then\s+)?|\s+and\s+then\s+|\s+then\s+|\s+and\s+)", text)
    kept = [p for p in parts if not re.search(rf"\b{colour}\b", p)]
    if not kept:
        return text
    out = ", then ".join(kept)
    if not _has_verb(kept[0]) and _has_verb(text):
        verb = re.match(r"\s*(\w+)", text)
        out = f"{verb.group(1) if verb else 'put'} {out}"
    return out
