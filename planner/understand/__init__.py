"""Understand what was said before anything is planned.

Why: not every utterance is a command. A question executed as an order, or a "don't"
planned as a "do", is unsafe whatever the planner's accuracy on commands. This layer reads
the utterance into one of five kinds, each a typed record (:class:`Understanding`) that
``plan --json`` and the episode trace carry:

- ``plan``: a command, rewritten into explicit English for the planners (translated from
  another language, self-corrections applied, conditionals decided, selectors such as "the
  leftmost block" or "two blocks" resolved in the world) plus the prohibitions as
  :class:`bridge.constraints.Constraints` that the bridge enforces on every plan;
- ``answer``: a question or a statement about the world, answered from the world state;
  nothing moves;
- ``clarify``: a reference that fits several things ("the block", "the bin", "it" with
  nothing held); a question back naming the candidates; nothing moves until answered;
- ``stop``: "stop", "cancel", "never mind": nothing is done;
- ``refuse``: impossible on its face ("a block on itself", "put the bin in a block"), with
  the reason, before any motion.

Everything here is exact rules over the shared lexicon (:mod:`bridge.lexicon`) and the world
state; the model is asked only for the commands these rules pass on.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

import planner.rx as re
from bridge import lexicon as L
from bridge.constraints import Constraints
from planner.understand import (
    answers,
    conditionals,
    corrections,
    noise,
    prohibitions,
    smalltalk,
)
from planner.understand import references as refs
from planner.understand.shapes import tidy as _tidy
from planner.understand.translate import translate
from sim.world import WorldState

PLAN, ANSWER, CLARIFY, STOP, REFUSE = "plan", "answer", "clarify", "stop", "refuse"
KINDS = (PLAN, ANSWER, CLARIFY, STOP, REFUSE)


@dataclass
class Understanding:
    """What an utterance was read as. ``text`` is what the planners get for a ``plan``."""

    kind: str
    original: str
    text: str
    language: str = "en"
    constraints: Constraints = field(default_factory=Constraints)
    answer: str | None = None
    question: str | None = None
    candidates: list[str] | None = None
    reason: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def moves(self) -> bool:
        """Only a plan may move the arm."""
        return self.kind == PLAN

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "original": self.original,
            "text": self.text,
            "language": self.language,
            "constraints": self.constraints.to_dict() if self.constraints else None,
            "answer": self.answer,
            "question": self.question,
            "candidates": self.candidates,
            "reason": self.reason,
            "notes": list(self.notes),
        }


#: Politeness that looks like a condition ("if you don't mind", "when you get a moment").
_POLITENESS = re.compile(
    r"(?:\b(?:and|but)\s+)?(?:\bonly\s+)?\b(?:when|if|whenever)\s+(?:you\s+(?:get|"
    r"have)\s+a\s+(?:moment|minute|chance|sec(?:ond)?)|"
    r"you\s+(?:don't|do\s+not)\s+mind(?:\s+me\s+asking)?|it's\s+not\s+too\s+much\s+trouble|"
    r"that\s+makes\s+sense|it's\s+no\s+(?:trouble|bother)(?:\s+at\s+all)?|"
    r"(?:it's|it\s+is|it\s+isn't)\s+not\s+(?:too\s+much\s+)?(?:of\s+a\s+)?(?:trouble|bother)|"
    r"it\s+isn't\s+(?:too\s+much\s+)?(?:of\s+a\s+)?(?:trouble|bother)|you(?:'re|"
    r"\s+are)\s+(?:ready|free|not\s+busy)|"
    r"you\s+get\s+(?:a|the)\s+chance|it\s+is\s+no\s+trouble(?:\s+at\s+all)?|you\s+(?:can|could|"
    r"are\s+able\s+to)\s+(?:reach|get\s+to|manage|do)\s+(?:it|them|that|this)|"
    r"you\s+(?:can|could|would|will|like|want|wish|please)|possible|"
    r"you\s+have\s+(?:a\s+)?(?:time|moment)|it's\s+(?:safe|ok|okay|alright)(?:\s+to\s+do\s+so)?|"
    r"it\s+is\s+(?:safe|ok|okay)(?:\s+to\s+do\s+so)?)\b[,\s-]*"
    r"|[,\s]*should\s+it\s+not\s+be\s+(?:too\s+much\s+)?(?:of\s+a\s+)?(?:bother|trouble)\b[,\s-]*"
)


#: A term of address set off by a comma ("shut that drawer for me, love", "ta, mate",
#: "O patient arm of steel, lift ..."): it names the listener, not a thing.
_VOCATIVE = re.compile(
    r",\s*(?:my\s+)?(?:love|dear|darling|sweetie|sweetheart|honey|hun|mate|buddy|pal|friend|boss|"
    r"chief|champ|old\s+chap|kiddo)(?=\s*(?:[,.!?;]|$))|"
    r"^o\s+(?:\w+\s+){0,4}?(?:arm|robot|machine|friend|one|servant|helper)(?:\s+of\s+\w+)?\s*,\s*"
)
#: An audience addressed first ("now children, is the drawer open?", "ok class, ..."): the
#: question that follows is the one asked.
_AUDIENCE = re.compile(
    r"^(?:(?:ok|okay|now|right|so|alright|all\s+right|well)\s*,?\s+)*(?:children|kids|class|"
    r"everyone|"
    r"everybody|folks|guys|boys\s+and\s+girls|ladies\s+and\s+gentlemen|team|students|visitors)"
    r"(?:\s*,?\s*(?:eyes\s+(?:up\s+)?(?:here|on\s+me)|listen(?:\s+up)?|look))?\s*[,:!.]\s*"
)
#: A sentence that hands the question to the robot and says nothing else ("Let's ask.",
#: "Robot, you tell them.", "Over to you.").
_HAND_OVER = re.compile(
    r"(?:let's\s+(?:ask|see|find\s+out)(?:\s+(?:it|him|her|the\s+robot))?|"
    r"(?:robot\s*,?\s*)?(?:you\s+)?"
    r"(?:tell|show)\s+(?:them|us|the\s+class|everyone|everybody|the\s+kids|the\s+children)|"
    r"over\s+to\s+you(?:\s*,?\s*robot)?|go\s+on(?:\s*,?\s*robot)?|your\s+turn(?:\s*,?\s*robot)?)"
)


def _addressed(t: str) -> str:
    """``t`` without an audience addressed first and sentences that only hand the question
    to the robot; unchanged when a request is left with nothing else."""
    u = _AUDIENCE.sub("", t)
    parts = re.split(r"(?<=[.?!])\s+", u)
    kept = [p for p in parts if not _HAND_OVER.fullmatch(p.strip(" .!?,"))]
    out = " ".join(kept).strip()
    return out or t


#: "which bin is the blue block closest to? ... put the blue block in that bin": the
#: question names the thing the order then points at.
_WHICH_NEAREST = re.compile(
    r"\bwhich\s+(?P<k>bin|block|cube|box|one)\s+is\s+(?P<x>(?:the\s+)?[\w ]+?)\s+"
    r"(?P<s>closest|nearest|farthest|furthest)\s+to\s*\?"
    r"|\bwhich\s+(?P<k2>bin|block|cube|box|one)\s+is\s+(?P<s2>closest|nearest|farthest|"
    r"furthest)\s+to\s+"
    r"(?P<y>(?:the\s+)?[\w ]+?)\s*\?"
)


def _asked_then_named(t: str) -> str:
    """A question that picks out a thing, then an order about "that bin" / "that one":
    the order with the thing the question describes; ``t`` when there is no such pair."""
    m = _WHICH_NEAREST.search(t)
    if m is None:
        return t
    rest = t[m.end() :]
    kind = m["k"] or m["k2"]
    noun = "block" if kind in ("cube", "one") else kind
    that = re.search(rf"\bthat\s+(?:{kind}|{noun}|one)\b", rest)
    if that is None or not re.search(rf"\b(?:{_VERB})\b", rest[: that.start()]):
        return t
    if m["x"]:
        x = m["x"] if m["x"].startswith("the ") else f"the {m['x']}"
        phrase = f"the {noun} {m['s']} to {x}"
    else:
        y = m["y"] if m["y"].startswith("the ") else f"the {m['y']}"
        phrase = f"the {noun} {m['s2']} to {y}"
    order = rest[: that.start()] + phrase + rest[that.end() :]
    return (
        re.sub(
            r"^[\s,.;!?]*(?:.*?[.!?]\s+)*?(?=(?:robot\s*,\s*)?(?:please\s+)?(?:" + _VERB + r")\b)",
            "",
            order,
        ).strip()
        or t
    )


#: "I've already put the green one in the blue bin. Put the rest in the red bin.": what the
#: speaker did, then an order about the rest.
_DONE_BY_ME = re.compile(
    r"^(?:i've|i\s+have|i|we've|we\s+have|we)\s+(?:already\s+|just\s+)?(?:put|placed|moved|"
    r"stacked|dropped|done|sorted)\b"
)
_THE_REST = re.compile(
    r"\b(?:the\s+rest(?:\s+of\s+(?:them|the\s+blocks))?|the\s+others|the\s+other\s+(?:ones|"
    r"blocks|cubes)|"
    r"the\s+remaining\s+(?:ones|blocks|cubes)|everything\s+else|all\s+the\s+others|"
    r"all\s+the\s+rest)\b"
)


def _done_then_rest(t: str, notes: list[str]) -> str:
    """The order after what the speaker says they did, "the rest" read as every block but
    the ones they moved; ``t`` unchanged when it is not said that way."""
    parts = re.split(r"(?<=[.!;])\s+", t)
    if len(parts) < 2 or not _DONE_BY_ME.match(parts[0]):
        return t
    order = " ".join(parts[1:])
    if not re.match(rf"^(?:(?:now|so|then|ok|please)\s*,?\s+)*(?:{_VERB})\b", order):
        return t
    moved = re.findall(
        rf"\b({_C})\b(?!\s+(?:bin|box|basket|container|bucket|crate|tub)s?\b)", parts[0]
    )
    if _THE_REST.search(order) and moved:
        but = " and ".join(f"the {c} block" for c in dict.fromkeys(moved))
        order = _THE_REST.sub(f"all the blocks except {but}", order, count=1)
    notes.append(f"said done first: {parts[0]!r}")
    return order


_PUT = r"(?:put|place|move|drop|stack|set|pop|stick|toss)"
_WHERE = r"(?:in|into|inside|on|onto|on\s+top\s+of|to|next\s+to|beside)\b"
_NOT_THIS = re.compile(
    rf"^(?:please\s+)?(?:don't|do\s+not|never)\s+(?P<v>{_PUT})\s+(?P<x>.+?)\s+(?P<p>{_WHERE}.+?)\s*"
    rf"(?:[,;.!]+|\s+-+)\s*(?:but\s+|instead\s*,?\s*|"
    rf"rather\s*,?\s*)?(?:please\s+)?(?P<v2>{_PUT})\s+(?P<y>[^,.;!?]+?)"
    r"(?:\s+instead)?\s*[.!]*$"
)


def _not_this_but_that(t: str, notes: list[str]) -> str:
    """ "don't put the red block in the blue bin, put the green one": the second order
    keeps the first one's place when it names none; ``t`` unchanged otherwise."""
    m = _NOT_THIS.match(t)
    if m is None or re.search(rf"\b{_WHERE}", m["y"]):
        return t
    y = m["y"].strip()
    if re.fullmatch(rf"(?:the\s+)?(?:{_C})", y):
        y = f"the {y.removeprefix('the ').strip()} one"
    said = f"{m['v2']} {y} {m['p']}"
    notes.append(f"not {m['x']!r} but {y!r}: {said!r}")
    return said


_VERB = "|".join(sorted(L.ACTION_VERBS))
#: A suggestion that is a request: "why don't you put ...", "maybe stack ...?", "I was
#: wondering if you could put ..." (its "don't" forbids nothing).
_SUGGESTION = re.compile(
    rf"^(?:(?:so|well|hmm+|now|ok|okay|and|then)\s*,?\s+)*(?:why\s+(?:don't|do\s+not)\s+(?:you|"
    rf"we)|why\s+not|maybe|perhaps|"
    rf"i\s+was\s+wondering(?:\s+if|\s+whether)?|i\s+wonder\s+if|i\s+wondered\s+if)"
    rf"(?:\s+you\s+(?:could|can|should|might|would))?\s+(?=(?:{_VERB})\b)"
)


def _unsuggested(t: str) -> str:
    """``t`` without the wrapper of a suggestion that is a request ("maybe put ...?"); the
    suggestion's "?" asks nothing."""
    return _SUGGESTION.sub("", t).rstrip(" ?") if _SUGGESTION.match(t) else t


def _normalise(text: str) -> str:
    t = unicodedata.normalize("NFC", text).replace("\u2019", "'").replace("\u2018", "'")
    t = t.replace("\u201c", '"').replace("\u201d", '"')
    t = re.sub(r"\s*[\u2013\u2014]\s*", " - ", t)  # a dash between clauses reads like a hyphen
    t = re.sub(r"[\x00-\x1f\x7f]", " ", t)
    # emoji and pictographs say nothing to plan ("stack red on yellow 🙂")
    t = "".join(" " if unicodedata.category(ch) in ("So", "Sk", "Co") else ch for ch in t)
    return re.sub(r"\s+", " ", t).strip()


def _bare(text: str) -> str:
    return re.sub(r"[^\w\s']", " ", text.lower()).strip()


_DOING = r"(?:put|place|stack|move|push|take|do|grab|tidy|sort|clean)\b"
#: The person says they will do it themselves ("I'm going to put ... myself", "let me put ...").
#: An offer turned down first ("nah, thanks for the offer, but ...", "no need, thanks."),
#: before what the person will do themselves.
_DECLINED = re.compile(
    r"^(?:(?:thanks\s+for\s+the\s+offer|no\s+thank\s+you|no\s+thanks|thank\s+you|no\s+need|"
    r"not\s+necessary|"
    r"that's\s+ok(?:ay)?|it's\s+fine|obrigad[oa]|thanks|nope|nah|no)[\s,.!;-]*)+(?:but\s+)?"
)
_THEMSELVES = re.compile(
    rf"^(?:i'm|i\s+am)\s+(?:going\s+to|gonna|about\s+to)\s+{_DOING}|"
    rf"^(?:i'll|i\s+will|i\s+want\s+to|i'd\s+like\s+to)\s+{_DOING}.*"
    rf"\b(?:myself|on\s+my\s+own|don't\s+help|without\s+you)\b|^let\s+me\s+{_DOING}|"
    r"^(?:i'll|i\s+will|i\s+can|i'm\s+going\s+to)\s+(?:handle|take\s+care\s+of|deal\s+with|"
    r"sort\s+out|see\s+to)\b|"
    r"^leave\s+(?:it|that|this|them|the\s+\w+(?:\s+\w+)?)\s+to\s+me\b"
)


#: A request put off in the same breath ("..., but let's leave it for later", "..., not
#: now"): nothing is done now.
_DEFERRED = re.compile(
    r"\S[\s,;.!-]+(?:but\s+|though\s+|actually\s+|so\s+|ok(?:ay)?\s*,?\s+)?(?:"
    r"(?:let's|let\s+us|we'll|we\s+will|we\s+can|i'll|you\s+can)\s+(?:leave|save|skip|keep|do|"
    r"hold\s+off\s+on)"
    r"(?:\s+(?:it|that|this|them))?\s+(?:for\s+(?:later|another\s+time|tomorrow|next\s+time)|"
    r"later|another\s+time|"
    r"tomorrow|some\s+other\s+time|next\s+time)|"
    r"not\s+(?:now|yet|today|right\s+now)|maybe\s+later|later\s+maybe|some\s+other\s+time|"
    # "my colleague said to tell you to ..., but he was joking, so don't worry about it"
    r"(?:so\s+)?(?:don't\s+worry\s+about\s+(?:it|that)|ignore\s+(?:it|that|him|her)|(?:he|she|"
    r"they)\s+(?:was|were)\s+"
    r"(?:just\s+|only\s+)?(?:joking|kidding))|"
    # "..., but wait until she's here", "... when I say so"
    r"(?:but\s+)?(?:wait|hold\s+off)\s+(?:until|till|for)\s+[^,.;!?]+|(?:only\s+)?(?:when|"
    r"once)\s+i\s+(?:say|tell\s+you)"
    r"(?:\s+(?:so|go|to))?|on\s+my\s+(?:signal|mark|go|command))[\s.!]*$"
    # "wait until I say go, then ...", "later, when I'm back, ...", "on my signal, ..."
    r"|^(?:(?:please\s+)?(?:wait|hold\s+off)\s+(?:until|till|for)\s+(?:i|my|me|she|he|they|"
    r"someone|her|him|us)\b[^,.;!?]*|"
    r"later(?:\s+on)?|in\s+a\s+(?:bit|while)|(?:when|once)\s+i(?:'m|\s+am|\s+get)\s+back|"
    # "after lunch could you ...": a time the robot cannot tell has come (a minute it can
    # wait out by doing it now: "in a minute, put ... - let me grab my coffee first")
    r"(?:after|before)\s+(?:lunch|dinner|breakfast|the\s+(?:meeting|break|call|show|game)|class|"
    r"work|school|my\s+\w+)|"
    r"tomorrow(?:\s+(?:morning|afternoon|evening))?|tonight|this\s+(?:afternoon|evening)|"
    r"next\s+week|"
    r"(?:when|once)\s+i\s+(?:say|tell\s+you)(?:\s+(?:so|go|to))?|on\s+my\s+(?:signal|mark|go|"
    r"command))\s*[,.;:-]"
    r"|^(?:after|before)\s+(?:lunch|dinner|breakfast|the\s+(?:meeting|break|call)|class|work|"
    r"school)\s+(?:could|can|would|will|please)\b"
)


#: Sarcasm about the state of things: nothing in it is to be done.
_RHETORIC = re.compile(
    r"^(?:oh\s+|well\s+|wow\s+)?(?:great|brilliant|wonderful|fantastic|perfect|lovely|"
    r"marvell?ous|nice(?:\s+one)?|"
    r"well\s+done|thanks\s+a\s+lot|just\s+great|super)\b[\s,!.]+.*\b(?:mess|disaster|chaos|worse|"
    r"wreck|shambles)\b"
)
#: The person says outright that nothing is asked.
_NOT_ASKING = re.compile(
    r"[\s,;.-]*\b(?:not\s+that\s+i'?m\s+asking(?:\s+you)?(?:\s+to)?|"
    r"i'?m\s+not\s+asking\s+you\s+to(?:\s+do\s+it)?|"
    r"(?:i'm\s+)?(?:just|only)\s+(?:curious|wondering|asking)(?:\s+(?:though|whether\s+you(?:'d|"
    r"\s+would)\s+be\s+able\s+to))?|"
    r"please\s+don't\s+actually\s+do\s+(?:it|that|anything)|not\s+(?:telling|"
    r"asking)\s+you\s+to(?:\s+do\s+(?:it|that))?|"
    r"(?:just\s+)?tell\s+me\s*,?\s*(?:but\s+)?(?:don't|do\s+not)\s+do\s+(?:it|that|"
    r"anything)(?:\s+yet)?|"
    r"(?:don't|do\s+not)\s+do\s+(?:it|that)\s+yet|^before\s+you\s+do\s+anything\s*,?|"
    r"if\s+i\s+(?:asked(?:\s+you)?(?:\s+to)?|wanted(?:\s+you)?(?:\s+to)?|told\s+you\s+to)\s*\??\s*$|"
    r"(?:just\s+|purely\s+)?hypothetically(?:\s+speaking)?|don't\s+actually\s+do\s+(?:it|that|"
    r"anything)|"
    r"if\s+you\s+(?:really\s+)?(?:had|needed)\s+to|in\s+theory|theoretically)\b"
    r"(?:\s*,?\s*(?:mind|though|really))?[\s.!,:;]*"
)


def is_stop(text: str) -> bool:
    """The whole utterance is a stop word ("stop!", "never mind", "wait, don't")."""
    chunks = [c for c in re.split(r"[,;.!?]+|\s+[-\u2013\u2014]+\s+", text.lower()) if c.strip()]
    if not chunks:
        return False
    first = _stop_chunk(chunks[0])
    if first and all(
        _stop_chunk(c) or re.match(r"\s*(?:don't|dont|do\s+not|no)\b", c) for c in chunks[1:]
    ):
        return True  # "stop, don't close it!", "cancel that, I changed my mind"
    if all(_stop_chunk(c) or _filler(c) for c in chunks) and any(_stop_chunk(c) for c in chunks):
        return True
    # "Robot, freeze! See, children? It stops when I tell it to.": a stop, then talk that
    # asks nothing and names nothing to move
    lead = next((i for i, c in enumerate(chunks) if not _filler(c)), None)
    return (
        lead is not None
        and _stop_chunk(chunks[lead])
        and not any(_asks_or_acts(c) and not _worry(c) for c in chunks[lead + 1 :])
    )


def _worry(chunk: str) -> bool:
    """ "stop - is that arm going to knock the lamp over?": a fear of what the arm is about
    to do, which the stop answers."""
    return bool(
        re.match(
            r"\s*(?:is|are|will|was|were)\s+(?:that|the|you|it|this)\b.*\b(?:going\s+to|"
            r"about\s+to|gonna)\s+"
            r"(?:knock|hit|break|crash|drop|smash|bump|tip|fall|hurt|spill)\b",
            chunk,
        )
    )


def _asks_or_acts(chunk: str) -> bool:
    words = re.findall(r"[a-z']+", chunk.lower())
    return bool(
        set(words) & (set(L.ACTION_VERBS) | set(L.COLOURS) | {"stack", "home", "block", "bin"})
        or (
            words
            and words[0]
            in {
                "what",
                "where",
                "which",
                "who",
                "how",
                "why",
                "is",
                "are",
                "do",
                "does",
                "can",
                "could",
                "would",
                "will",
                "did",
                "have",
                "has",
            }
        )
    )


_CUES = "|".join(
    sorted({*L.COLOURS, *(w for ws in L.COLOUR_CUES.values() for w in ws)}, key=len, reverse=True)
)
#: The robot's axes as its engineers say them: +y is its left, +x its front (module frame).
_AXIS_SIDE = {("+", "y"): "left", ("-", "y"): "right", ("+", "x"): "front", ("-", "x"): "back"}


#: Where talk to someone else gives way to talk to the robot ("honey, not now - robot, put
#: the green one away", "sweetie, shoes on please - and robot, don't do anything yet").
_TURN_TO_ROBOT = re.compile(
    r"(?:[.!?;]+|\s+-+)\s*(?:and\s+|now\s+|ok\s+)?(?:hey\s+)?robot\s*[,:!]\s*"
)
_SCENE_WORDS = re.compile(
    rf"\b(?:{'|'.join(L.COLOURS)}|blocks?|cubes?|bricks?|bins?|box|drawer|lamp|light|button|"
    r"table|stack|tower|it|that\s+one)\b"
)


def _to_the_robot(t: str) -> str:
    """Only what is said to the robot, where the speaker first talks to someone else about
    nothing on the table; ``t`` unchanged otherwise."""
    turns = list(_TURN_TO_ROBOT.finditer(t))
    if not turns:
        return t
    last = turns[-1]
    before, after = t[: last.start()], t[last.end() :]
    if not after.strip() or _SCENE_WORDS.search(before):
        return t
    return after.strip()


_TOWER_OF = re.compile(
    r"^(?:please\s+)?(?:make|build|stack|do|create)\s+(?:me\s+)?(?:a|one)\s+(?:(?:really|very|"
    r"super|nice|big|tall|high|"
    r"great|huge|little|small)\s+)*(?:tower|stack|pile)\s+(?:with|out\s+of|from|using|"
    r"of)\s+(?P<list>.+?)[\s.!]*$"
)


def _tower_of(t: str) -> str:
    """ "make a really tall tower with the red one and the blue one and the yellow one": the
    blocks stacked in the order said, the first at the bottom."""
    m = _TOWER_OF.match(t)
    if m is None:
        return t
    cols = re.findall(rf"\b({_C})\b", m["list"])
    rest = re.sub(rf"\b(?:the|and|{_C}|ones?|blocks?|cubes?|bricks?)\b|[,&]", "", m["list"]).strip()
    if len(cols) < 2 or len(set(cols)) != len(cols) or rest:
        return t
    pairs = [
        f"the {top} block on the {low} block" for low, top in zip(cols, cols[1:], strict=False)
    ]
    return "stack " + ", then ".join(pairs)


_WARM = {"warm": ("red", "yellow"), "cool": ("green", "blue"), "cold": ("green", "blue")}


def _formal(t: str) -> str:
    """A contract's, a laboratory's and a learner's words for the robot's own: "the block
    coloured yellow", "the receptacle coloured green", "(hereinafter ...)", "shall
    transfer", "shall not disturb any other block", "specimen R" / "receptacle G", "you can
    to put", "on top the", "the warm colours", "keep your gripper away from X"."""
    t = re.sub(r"\s*\((?:hereinafter|hereafter|henceforth)[^)]*\)", "", t)
    t = re.sub(
        rf"\bthe\s+(block|cube|receptacle|bin|box|container)\s+colou?red\s+({_C})\b",
        r"the \2 \1",
        t,
    )
    t = re.sub(r"\b(?:receptacle|vessel)s?\b", "bin", t)
    letters = {"r": "red", "g": "green", "b": "blue", "y": "yellow"}
    t = re.sub(r"\bbin\s+([rgby])\b", lambda m: f"the {letters[m.group(1)]} bin", t)
    t = re.sub(r"\bspecimen\s+([rgby])\b", lambda m: f"the {letters[m.group(1)]} block", t)
    t = re.sub(r"\bthe\s+the\b", "the", t)
    t = re.sub(r"\bspecimens\b", "blocks", t)
    t = re.sub(r"\bspecimen\b", "block", t)
    t = re.sub(
        r"^(?:please\s+)?report\s+the\s+(?:number|count)\s+of\s+(?P<x>blocks|cubes)\s+(?:presently\s+|currently\s+|now\s+)?"
        r"(?:contained\s+|held\s+|located\s+)?in\s+",
        r"how many \g<x> are in ",
        t,
    )
    t = re.sub(
        r"^(?:the\s+arm|the\s+operator|the\s+robot)\s+shall\s+(?:at\s+no\s+time|never|not)\s+(?:make\s+contact\s+with|touch|disturb|move)\b",
        "don't touch",
        t,
    )
    t = re.sub(r"^notwithstanding\s+[^,]+,\s*", "", t)
    t = re.sub(
        r"^(?:the\s+arm|the\s+operator|the\s+robot|you)\s+shall\s+(?:at\s+no\s+time|never)\s+(?:make\s+contact\s+with|touch|disturb|move)\b",
        "don't touch",
        t,
    )
    t = re.sub(r"^(?:the\s+arm|the\s+operator|the\s+robot|you)\s+shall\s+", "", t)
    t = re.sub(r"\btransfer\b", "put", t) if re.match(r"^transfer\b", t) else t
    t = re.sub(
        r",?\s+and\s+shall\s+not\s+(?:disturb|move|touch)\s+any\s+other\s+(?:block|cube|object)(?:\s+in\s+so\s+doing)?",
        ", don't move any other block",
        t,
    )
    # a learner's English: "you can to put ...?", "on top the blue block"
    t = re.sub(rf"\byou\s+can\s+(?:to\s+)?(?=(?:{_VERB})\b)", "can you ", t)
    t = re.sub(r"\bon\s+top\s+(?=the\b)", "on top of ", t)
    # "the warm colours can both go in the red bin": red and yellow
    t = re.sub(
        r"\bthe\s+(warm|cool|cold)\s+colou?rs?(?:\s+(?:ones|blocks))?\b",
        lambda m: " and ".join(f"the {c} block" for c in _WARM[m.group(1)]),
        t,
    )
    t = re.sub(
        r"\b(?P<x>the\s+\w+\s+block(?:\s+and\s+the\s+\w+\s+block)?)\s+can\s+(?:both\s+)?go\s+(?P<p>in|into|on)\b",
        r"put \g<x> \g<p>",
        t,
    )
    # "keep your gripper well away from the green cube": do not touch it
    t = re.sub(
        r"^(?:please\s+)?keep\s+(?:your\s+(?:gripper|hand|claw|fingers|arm)|yourself)\s+(?:well\s+|far\s+)?away\s+from\b",
        "don't touch",
        t,
    )
    t = re.sub(r"^balance\s+", "put ", t)
    t = re.sub(r"^(?:(?:the\s+)?drawer)\s*:\s*(?=(?:open|shut|closed)\b)", "is the drawer ", t)
    t = re.sub(r"\b(drawer)\s+(?:pulled|slid|sticking)\s+out\b", r"\1 open", t)
    t = re.sub(
        r"\bpulled\s+out\b(?=.*\bdrawer\b)|(?<=\bdrawer\s)(?:is\s+)?pulled\s+out\b", "open", t
    )
    return t


_CALL = re.compile(
    r"^(?P<f>move|put|place|stack|push)\s*\(\s*(?P<o>\w+?)(?:_block)?\s*,\s*(?:(?:dest|to|target|"
    r"into|on)\s*=\s*)?"
    r"['\"]?(?P<t>\w+?)['\"]?\s*\)\s*;?"
)


def _as_code(t: str) -> str:
    """A request typed as code: "move(yellow_block, dest=red_bin) // nothing else", "for b in
    (red, green, blue): put(b, bin_of_colour(b))", "print(len([b for b in blocks if
    b.in_bin == 'red_bin']))"; in the words they stand for, ``t`` unchanged otherwise."""
    comment = re.search(r"\s*(?://|#)\s*(?P<c>.*)$", t)
    body, note = (t[: comment.start()], comment["c"]) if comment else (t, "")
    words = None
    m = _CALL.match(body.strip())
    if m:
        target = m["t"].replace("_", " ")
        prep = "in" if target.endswith("bin") or target == "drawer" else "on"
        verb = "push" if m["f"] == "push" else "put"
        words = f"{verb} the {m['o'].replace('_', ' ')} block {prep} the {target}"
        words = re.sub(r"\bblock block\b", "block", words)
    loop = re.match(
        r"^for\s+(?P<v>\w+)\s+in\s+[\[(](?P<items>[^\])]+)[\])]\s*:\s*(?:put|move|"
        r"place)\s*\(\s*(?P=v)\s*,\s*"
        r"(?:bin_of_colou?r|matching_bin|its_bin|same_colou?r_bin)\s*\(\s*(?P=v)\s*\)\s*\)",
        body.strip(),
    )
    if loop:
        cols = re.findall(rf"\b({_C})\b", loop["items"])
        words = ", then ".join(f"put the {c} block in the {c} bin" for c in cols) if cols else None
    count = re.match(
        r"^(?:print\s*\()?\s*len\s*\(\s*\[\s*\w+\s+for\s+\w+\s+in\s+blocks\s+"
        r"if\s+\w+\.in[_ ]bin\s*==\s*"
        r"['\"](?P<b>\w+?)[_ ]?bin['\"]\s*\]\s*\)\s*\)?",
        body.strip(),
    )
    if count:
        words = f"how many blocks are in the {count['b']} bin?"
    if words is None:
        return t
    if re.fullmatch(r"(?:nothing|touch\s+nothing)\s+else\.?|only\s+(?:that|this)", note.strip()):
        words += ", don't move anything else"
    leave = re.search(rf"\b({_C})\b[^,]*,\s*leave\s+it(?:\s+be|\s+alone)?", note)
    if leave:
        words += f", don't move the {leave.group(1)} block"
    return words


_POSITION = {
    "bottom": r"(?:at|on)\s+the\s+(?:bottom|base)|at\s+the\s+base|as\s+the\s+base|first|underneath",
    "middle": r"(?:sandwiched\s+)?in\s+the\s+middle|sandwiched(?:\s+in\s+between)?|next|second|"
    r"in\s+between",
    "top": r"(?:on|at)\s+(?:the\s+)?top|crowning\s+it|last|on\s+top\s+of\s+(?:it|that|them)|"
    r"up\s+top",
}


def _pictured_tower(t: str) -> str:
    """ "a little tower, blue at the base, yellow sandwiched in the middle, red crowning it":
    the blocks stacked bottom to top as their places say; ``t`` unchanged otherwise."""
    if not re.search(r"\b(?:tower|stack|pile)\b|\bat\s+the\s+(?:bottom|base)\b", t):
        return t
    found: dict[str, str] = {}
    for where, pat in _POSITION.items():
        m = re.search(
            rf"\b({_C})(?:\s+(?:one|block|cube))?\s+(?:(?:goes|sits|is|stays)\s+)?(?:{pat})\b", t
        )
        if m:
            found[where] = m.group(1)
    if "bottom" not in found or "top" not in found or len(set(found.values())) != len(found):
        return t
    if "middle" not in found and len(set(re.findall(rf"\b({_C})\b", t)) - set(found.values())) > 0:
        return t  # "red on top, then yellow, then green at the bottom": an order said otherwise
    order = [found[k] for k in ("bottom", "middle", "top") if k in found]
    rest = re.search(
        rf"\b({_C})\s+(?:just\s+)?(?:sits|stays|remains)\s+(?:wherever|where)\s+it\s+is\b", t
    )
    said = ", then ".join(
        f"stack the {b} block on the {a} block" for a, b in zip(order, order[1:], strict=False)
    )
    return said + (f", don't move the {rest.group(1)} block" if rest else "")


def _plain_words(t: str) -> str:
    """An engineer's and a poet's words for the robot's own: "actuate the gripper on X"
    (pick X up), "the end effector" (the gripper), "the +y extreme" (the leftmost), "the
    azure stone" (a block), "the vessel" (a bin), "lay it to rest within" (put it in), "the
    vessel that shares its sky" (the bin of the same colour)."""
    t = re.sub(
        r"\b(?:actuate|close|engage|fire)\s+the\s+(?:gripper|end[\s-]+effector|fingers)\s+(?:on|"
        r"around)\b",
        "pick up",
        t,
    )
    t = re.sub(
        r"\b(?:execute|perform|do|run)\s+(?:a\s+)?pick[\s-]+(?:and|&|n)[\s-]+place\s+(?:of|on|"
        r"with)\s+",
        "put ",
        t,
    )
    t = re.sub(r"\bend[\s-]+effector\b", "gripper", t)
    # "my manager asked me to get the green cube into the red bin. would you mind taking
    # care of that?": the errand passed on is the request
    t = re.sub(
        r"^(?:(?:hi|hey|hello)(?:\s+robot)?\s*,?\s*)?(?:my|our|the)\s+[\w' ]{2,30}?\s+"
        r"(?:asked|told|wants|wanted|needs)\s+(?:me|"
        r"us)\s+to\s+(?P<cmd>[^.;!?]+?)\s*[.;,!]\s*(?:so\s+)?"
        r"(?:(?:would\s+you\s+mind|could\s+you|can\s+you|would\s+you|will\s+you)\s+)?(?:please\s+)?"
        r"(?:tak(?:e|ing)|handl(?:e|ing)|do(?:ing)?|deal(?:ing)?\s+with|sort(?:ing)?\s+out)"
        r"(?:\s+care\s+of)?\s+(?:that|it|this)\b.*$",
        r"\g<cmd>",
        t,
    )
    # "new rule, effective immediately: the yellow block stays exactly where it is"
    t = re.sub(
        r"^(?:new\s+|house\s+|"
        r"one\s+)?rule(?:\s+\d+)?\s*(?:,\s*effective\s+immediately)?\s*[:,-]\s*",
        "",
        t,
    )
    t = re.sub(
        r"\b(?P<x>the\s+\w+\s+(?:block|one|cube))\s+(?:stays|remains|must\s+stay|should\s+stay|"
        r"is\s+to\s+stay|"
        r"has\s+to\s+stay)\s+(?:exactly\s+|right\s+)?(?:where\s+it\s+is|put|in\s+place|there|"
        r"as\s+it\s+is)\b",
        r"leave \g<x> where it is",
        t,
    )
    # "lamp off? then turn it on first, ...": the question is the order's condition
    t = re.sub(
        r"^(?:is\s+)?(?:the\s+)?(?P<d>lamp|light|drawer)\s+(?P<s>off|on|open|closed|"
        r"shut)\s*\?\s*(?:then|if\s+so|if\s+yes)\s*,?\s*",
        r"if the \g<d> is \g<s>, ",
        t,
    )
    # "pull it back into the middle of the table": moved there
    t = re.sub(
        r"\bpull\s+(?P<x>it|them|the\s+\w+\s+(?:block|one))\s+(?:back\s+)?(?:in)?to\b",
        r"move \g<x> to",
        t,
    )
    # "... before it tips over", "... so it doesn't fall": the reason adds nothing to do
    t = re.sub(
        r"\s+(?:before|so\s+(?:that\s+)?)\s*it\s+(?:tips|falls|topples|rolls|drops|"
        r"doesn't\s+fall|won't\s+fall)(?:\s+(?:over|off|down))?[.!]*$",
        "",
        t,
    )
    # a shade said with its colour ("the sky-blue block", "grass-green"): the colour
    t = re.sub(
        r"\b[a-z]+-(" + "|".join(L.COLOURS) + r")\b(?=\s+(?:block|cube|brick|one|bin|box)s?\b)",
        r"\1",
        t,
    )
    t = _as_code(t)
    t = _pictured_tower(t)
    t = _formal(t)
    # "bet you can't build a tower of three": a dare is the task (or the question) it names
    t = re.sub(
        r"^(?:i\s+)?(?:bet|betcha)\s+(?:you\s+)?(?:can't|cannot|can\s+not|couldn't)\s+", "", t
    )
    t = re.sub(
        r"^(?:two|three|a\s+couple\s+of|some)\s+quick\s+(?:ones|questions)\s*[:,-]\s*", "", t
    )
    # kitchen and workshop words: "plate it", "the far end of the counter", "send it to"
    t = re.sub(r"(?:^(?:please\s+)?|\b)plate\s+(?=(?:it|them|the|that|this)\b)", "put ", t)
    t = re.sub(r"\b(?:counter|bench|worktop|workbench)\b", "table", t)
    t = re.sub(
        r"\b(?:whatever's|whatever\s+is|whatever|the\s+thing|the\s+one)\s+(?:sitting\s+|"
        r"lying\s+)?at\s+the\s+far\s+end\s+of\s+the\s+table\b",
        "the block farthest from you",
        t,
    )
    t = re.sub(
        r"\b(?:whatever's|whatever\s+is)\s+(?:sitting\s+|lying\s+|standing\s+)?(?=(?:beside|"
        r"next\s+to|near|by|on|behind|in\s+front\s+of)\b)",
        "the block ",
        t,
    )
    t = re.sub(
        r"\bsend\s+(it|them|the\s+\w+\s+(?:block|one))\s+(?:to|into)\s+(?=the\s+\w+\s+bin\b)",
        r"put \1 in ",
        t,
    )
    t = re.sub(
        r"\b(?:whichever|the)\s+bin\s+(?:that\s+)?matches\s+its\s+colou?r\b",
        "the bin of the same colour",
        t,
    )
    # "put the green one in the... blue bin i think. ya blue": the hedge and the yes add nothing
    t = re.sub(r"(?<=\w)\s+i\s+think\b(?=\s*[.,!?]|$)", "", t)
    t = re.sub(
        rf"[.,;]\s*(?:ya|yeah|yes|yep|yup|aye)\s*,?\s+(?:the\s+)?(?:{_C})(?:\s+(?:one|bin|block))?\s*[.!]*$",
        "",
        t,
    )
    t = re.sub(r"^(?:mm+|hm+|mhm)\s*,?\s+(?:ok(?:ay)?\s*,?\s+)?", "", t)
    # "whatever else goes on, the blue block stays where it is"
    t = re.sub(
        r"^(?:whatever|no\s+matter\s+what)(?:\s+else)?(?:\s+(?:goes\s+on|happens|you\s+do))?\s*,\s*",
        "",
        t,
    )
    # a mechanic's "swing her over to the blue bin and let go"
    t = re.sub(
        r"\bswing\s+(?:her|him|it)\s+(?:over\s+|across\s+)?(?:to|into)\s+(?P<b>the\s+\w+\s+bin)(?:\s+and\s+(?:let\s+go|drop\s+(?:it|her)|release))?",
        r"put it in \g<b>",
        t,
    )
    # "leave alone the red" (Italian "lascia stare il rosso"): the red one left alone
    t = re.sub(
        rf"\bleave\s+alone\s+(?:the\s+)?({_CUES})(?:\s+(?:one|block|cube))?\b",
        r"leave the \1 block alone",
        t,
    )
    # radio procedure around the request: "robot, this is Dana on channel two, come in,
    # over. request: ... how copy? over."
    t = re.sub(
        r"^(?:robot\s*,\s*)?this\s+is\s+[\w ]{1,30}?(?:\s+on\s+channel\s+\w+)?\s*,\s*"
        r"(?:come\s+in\s*,?\s*)?(?:over\s*[.!,]\s*)?",
        "",
        t,
    )
    t = re.sub(r"^(?:request|requesting|tasking|instruction)\s*[:,-]\s*", "", t)
    t = re.sub(
        r"[\s,.;]+(?:how\s+(?:do\s+you\s+)?copy|do\s+you\s+copy|copy\s+that|"
        r"roger(?:\s+that)?)\s*\??(?=[\s.,!]*(?:over(?:\s+and\s+out)?)?[\s.!]*$)",
        "",
        t,
    )
    t = (
        re.sub(r"(?<=\w)[\s,.;]+over(?:\s+and\s+out)?[\s.!]*$", "", t)
        if re.search(r"\b(?:over|copy|channel|come\s+in)\b", t)
        else t
    )
    t = re.sub(
        r"\b(?:everything|everyone|all|the\s+rest|the\s+others)\s+else\s+(?:holds?|stays?|"
        r"remains?|keeps?)\s+(?:position|put|in\s+place|where\s+(?:it\s+is|they\s+are))\b",
        "don't move anything else",
        t,
    )
    t = re.sub(
        r"\b(?:everything|the\s+rest|the\s+others)\s+(?:holds?|hold)\s+position\b",
        "don't move anything else",
        t,
    )
    t = re.sub(
        r"\b(?:all\s+)?(?:the\s+)?other\s+(?:blocks|ones|cubes|specimens)\s+(?:remain|stay|are\s+to\s+remain|must\s+stay)\s+"
        r"(?:in\s+situ|in\s+place|put|where\s+they\s+are|untouched)\b",
        "don't move anything else",
        t,
    )
    t = re.sub(r"^(?:protocol\s+)?step\s+\d+\s*[:.)-]\s*", "", t)
    t = re.sub(r"^(?:please\s+)?relocate\b", "move", t)
    # "specimen Y (the yellow cube)": the name said again in brackets
    t = re.sub(
        rf"\s*\((?:i\.e\.\s*|that\s+is\s*,?\s*)?the\s+(?:{_C})\s+(?:block|cube|bin|one)\)", "", t
    )
    t = re.sub(r"\b(to|into|in)\s+(?:receptacle|bin)\s+are\b", r"\1 the red bin", t)
    t = re.sub(
        r",\s*(?P<x>all\s+the\s+blocks\s+except\s+the\s+\w+\s+block|the\s+rest|the\s+others)\s+leave\s+alone\b",
        r", leave \g<x> alone",
        t,
    )
    # "from here it looks like the blue block is stacked on the red one. have I got that
    # right?": the claim asked about, answered from the scene
    m = re.match(
        r"^(?:from\s+(?:here|where\s+i\s+(?:am|stand|sit))\s*,?\s*)?(?:it\s+looks\s+like|it\s+seems(?:\s+like)?|"
        r"looks\s+like|i\s+think|i\s+reckon)\s+(?P<c>the\s+\w+\s+(?:block|one|cube)\s+(?:is|are)\s+[^.?!]+?)\s*[.,]\s*"
        r"(?:have\s+i\s+got\s+(?:that|it)\s+right|is\s+that\s+right|am\s+i\s+right|did\s+i\s+get\s+that\s+right|right)\s*\?\s*$",
        t,
    )
    if m:
        t = re.sub(r"^(the\s+\w+\s+(?:block|one|cube))\s+(is|are)\s+", r"\2 \1 ", m["c"]) + "?"
    # "okay, you can carry on now. the yellow block was meant to go in the green bin."
    t = re.sub(
        r"^(?:ok(?:ay)?\s*,?\s*)?(?:you\s+can\s+)?(?:carry\s+on|continue|go\s+on|resume)(?:\s+now)?\s*[.,!]\s*(?=\S)",
        "",
        t,
    )
    t = re.sub(
        rf"^(?P<x>the\s+(?:{_C})\s+(?:block|one|cube))\s+(?:was|is)\s+(?:meant|supposed)\s+to\s+(?:go|end\s+up|be)\s+"
        r"(?P<p>in|into|on)\s+",
        r"put \g<x> \g<p> ",
        t,
    )
    # "is the blue block already in its own bin? nah, it isn't, so go ahead and ...": the
    # speaker's own answer makes it an "if not"
    t = re.sub(
        r"\?\s*(?:(?:no|nah|nope)\s*,?\s*)?(?:it\s+isn't|it's\s+not|it\s+is\s+not|they\s+aren't)\s*[,.]?\s*"
        r"(?:so\s+)?(?:go\s+ahead\s+and\s+)?",
        "? if not, ",
        t,
    )
    # "the red leave alone" (German order): the red one left alone
    t = re.sub(rf"\b(?:the\s+)?({_C})(?:\s+one)?\s+leave\s+alone\b", r"leave the \1 block alone", t)
    # "yellow. green bin. go.": a colour and a bin, said bare
    t = re.sub(
        rf"^(?P<c>{_C})(?:\s+(?:one|block|cube))?\s*[.,:;-]+\s*(?:the\s+|in\s+the\s+|"
        rf"into\s+the\s+)?"
        rf"(?P<b>{_C})\s+bin\s*[.!]*(?:\s*(?:go|now|please|thanks|asap)[.!]*)?$",
        r"put the \g<c> block in the \g<b> bin",
        t,
    )
    # "the block that was in the middle when I walked in (it's still there)": no memory of
    # then; what the words say of now
    t = re.sub(
        r"\b(?:that|which)\s+was\s+(?P<w>(?:sitting\s+|right\s+|standing\s+|lying\s+)*(?:in|on|"
        r"at|beside|next\s+to|near|"
        r"closest|nearest|farthest|furthest|by)\b[^,.;()]*?)\s+(?:a\s+(?:second|moment|minute|"
        r"sec)\s+ago|"
        r"when\s+i\s+(?:walked|came)\s+in|at\s+the\s+start|earlier|before|just\s+now)\b",
        r"that is \g<w>",
        t,
    )
    t = re.sub(
        r"\s*\((?:nobody|no\s+one)(?:'s|\s+has)\s+(?:touched|moved)\s+it\s+since\)|"
        r",\s*it's\s+still\s+there\s*,",
        ",",
        t,
    )
    # a work order's label: "job 2: blue -> red bin", "task: ...", "step 1) ..."
    t = re.sub(
        r"^(?:job|task|order|ticket|work\s+order)(?:\s*(?:#|no\.?)?\s*\d+)?\s*[:.)-]\s*", "", t
    )
    # "hey, is the lamp on?": a greeting before a question or an order
    t = re.sub(
        r"^(?:hey|hi|hello|yo|oi)\b[\s,!]*(?=(?:robot\b|is|are|what|where|which|how|do|does|can|"
        r"could|did)\b)",
        "",
        t,
    )
    # "in a minute, put ... - just let me grab my coffee first": a wait the doing outlasts
    t = re.sub(r"^in\s+(?:just\s+)?a\s+(?:minute|moment|sec(?:ond)?|jiffy)\s*,?\s*", "", t)
    t = re.sub(r"[\s,;.-]+(?:just\s+)?let\s+me\s+(?!know\b)[^,.;!?]+?(?:\s+first)?[\s.!]*$", "", t)
    # "the drawer's open already so just drop the red block in it": the reason, then the order
    m = re.match(
        rf"^(?P<why>[^,.;!?]+?)\s*,?\s+so\s+(?:just\s+|now\s+)?(?:please\s+)?(?=(?:{_VERB})\b)", t
    )
    if m and not re.match(
        rf"(?:please\s+)?(?:{_VERB}|don't|do|can|could|would|will|if|when)\b", m["why"]
    ):
        thing = re.search(rf"\b(drawer|(?:{_C})\s+(?:bin|block))\b", m["why"])
        t = t[m.end() :]
        if thing:  # "... so put the red block in it": in the drawer the reason named
            t = re.sub(r"\b(in|into|inside|on|onto)\s+it\b", rf"\1 the {thing[1]}", t)
    # goals said as the end state: "I want all the blocks off the table", "end with the
    # green one on top of ..."
    t = re.sub(
        r"^(?:(?:i\s+(?:want|need)|i'd\s+like|let's\s+(?:get|have))\s+|(?:please\s+)?(?:take|get|"
        r"move|put|clear)\s+)"
        r"(?:all\s+(?:of\s+)?|every\s+one\s+of\s+)?(?:the\s+)?(?:blocks|cubes|bricks|"
        r"everything)\s+off\s+(?:of\s+)?the\s+table\b",
        "clear the table",
        t,
    )
    t = re.sub(
        r"^(?:end\s+(?:up\s+)?with|finish\s+(?:up\s+)?with|i\s+want\s+to\s+(?:end|"
        r"finish)\s+(?:up\s+)?with)\s+"
        r"(?P<x>.+?)\s+(?P<p>on\s+top\s+of|on|in|inside)\s+",
        r"put \g<x> \g<p> ",
        t,
    )
    t = _tower_of(t)
    # "there should be nothing (at all) in the red bin": the bin emptied
    t = re.sub(
        r"^(?:when\s+you(?:'re|\s+are)\s+(?:finished|done)\s*,?\s*)?(?:make\s+sure\s+)?(?:that\s+)?"
        r"there\s+(?:should\s+be|must\s+be|is\s+to\s+be)\s+nothing(?:\s+at\s+all)?\s+(?:left\s+)?in\s+"
        r"(?P<b>the\s+\w+\s+bin)\b",
        r"empty \g<b>",
        t,
    )
    t = re.sub(
        r"^make\s+sure\s+(?:that\s+)?(?:not\s+a\s+single|no)\s+block\s+is\s+(?:left\s+)?(?:lying\s+)?on\s+the\s+table\b[^.]*",
        "clear the table",
        t,
    )
    # "half of them should end up in the blue bin (and the other half stay on the table)"
    t = re.sub(
        r"^(?P<x>(?:the|all|both|every|each|one|two|three|four|half)\b[^,.;!?]*?)\s+(?:should|"
        r"must|needs?\s+to|has\s+to|have\s+to)\s+"
        r"(?:end\s+up|wind\s+up|be|go|get\s+put)\s+(?P<p>in|inside|into|on|on\s+top\s+of)\s+",
        r"put \g<x> \g<p> ",
        t,
    )
    t = re.sub(
        r"\s+and\s+the\s+other\s+(?:half|ones?|two|rest)\s+(?:stays?|"
        r"remains?)\s+(?:on\s+the\s+table|where\s+(?:it\s+is|they\s+are)|put)\b",
        "",
        t,
    )
    t = re.sub(
        r"[.;,]\s*(?:your\s+(?:pick|call|choice)|i\s+don't\s+mind|"
        r"up\s+to\s+you)(?:\s+which(?:\s+(?:half|ones?|two))?)?[.!]*$",
        "",
        t,
    )
    # "make a little tower: the green block on the bottom and the red block on top of it"
    t = re.sub(
        rf"^(?:please\s+)?(?:make|build)\s+(?:me\s+)?(?:a|one)\s+(?:\w+\s+)?(?:tower|"
        rf"stack)\s*[:,-]\s*(?:with\s+)?"
        rf"(?P<a>the\s+(?:\w+\s+)?(?:{_C})\s+(?:block|one|cube))\s+(?:on|"
        rf"at)\s+the\s+bottom\s*(?:,|and|then)\s*(?:then\s+)?"
        rf"(?P<b>the\s+(?:\w+\s+)?(?:{_C})\s+(?:block|one|cube))\s+(?:on\s+top(?:\s+of\s+(?:it|"
        rf"that))?|at\s+the\s+top)[\s.!]*$",
        r"stack \g<b> on \g<a>",
        t,
    )
    # "get both blocks into bins": each into a bin of its own choosing
    t = re.sub(
        r"\b(?P<v>get|put|place|move|drop|toss|pop|throw|sort)\s+"
        r"(?P<o>(?:both|all|the|these|those)\s+(?:of\s+the\s+)?(?:\w+\s+)?(?:blocks|cubes|ones)|"
        r"them|both\s+of\s+them)\s+"
        r"(?P<p>in|into)\s+(?:the\s+)?(?:bins|boxes|baskets|containers)\b",
        r"\g<v> \g<o> \g<p> a bin",
        t,
    )
    # "see the red block? pick it up, ...": the thing pointed out is what "it" is
    m = re.match(
        rf"^(?:do\s+you\s+|can\s+you\s+)?see\s+(?P<x>the\s+(?:{_C})\s+(?:block|one|cube|"
        rf"brick))\s*\?[\s,]*",
        t,
    )
    if (
        m
        and re.search(r"\bit\b", t[m.end() :])
        and re.match(
            rf"(?:(?:now|then|ok|okay|good|right)\s*,?\s*)?(?:please\s+)?(?:{_VERB})\b",
            t[m.end() :],
        )
    ):
        t = re.sub(r"\bit\b", m["x"], t[m.end() :], count=1)
    # "carry it over to the blue one and set it down on that": put it on the blue one
    t = re.sub(
        r"\b(?:carry|bring|take|move)\s+(?P<o>it|them)\s+(?:over\s+|across\s+)?(?:to|towards)\s+"
        r"(?P<x>the\s+[\w ]+?)\s+"
        r"and\s+(?:set|put|place|lay|drop|pop)\s+(?:it|them)\s+(?:down\s+)?"
        r"(?:on(?:\s+top\s+of)?\s+(?:that|it|that\s+one)|on\s+top|there)\b",
        r"put \g<o> on \g<x>",
        t,
    )
    # "2. green block: same thing, only the red bin this time": the same order, another place
    t = re.sub(
        rf"(?:the\s+)?(?P<x>(?:{_C})\s+(?:block|one|cube))\s*[:,-]?\s*(?:the\s+)?same\s+(?:thing|"
        rf"again|deal)"
        rf"(?:\s+as\s+(?:before|above))?\s*,?\s*(?:only|but|except)\s+(?:in\s+|into\s+|with\s+)?"
        rf"(?P<y>the\s+(?:{_C})\s+bin)(?:\s+this\s+time)?",
        r"put the \g<x> in \g<y>",
        t,
    )
    t = re.sub(
        rf"\bsame\s+(?:for|with)\s+(?:the\s+)?(?P<x>(?:{_C})\s+(?:block|one|"
        rf"cube))\s*,?\s*(?:only|but)\s+"
        rf"(?:in|into)\s+(?P<y>the\s+(?:{_C})\s+bin)(?:\s+this\s+time)?",
        r"put the \g<x> in \g<y>",
        t,
    )
    # "drop the red one in the green bin - oh, and where's the blue one, by the way?": the
    # order is done; the question after it moves nothing (kept in the reading's notes)
    t = (
        re.sub(
            r"(?<=\w)\s*(?:[-,;.]+|\s+and)\s*(?:oh\s*,?\s*)?(?:and\s+)?(?:also\s+|"
            r"by\s+the\s+way\s*,?\s*|btw\s*,?\s*)?"
            r"(?:where(?:'s|\s+is|\s+are)|what(?:'s|\s+is)\s+in|is\s+the\s+\w+\s+(?:block|bin|"
            r"one|drawer|lamp)|how\s+many)\b"
            r"[^.!?]*(?:,\s*by\s+the\s+way)?\s*\?\s*$",
            "",
            t,
        )
        if re.match(rf"^(?:please\s+)?(?:{_VERB})\b", t)
        else t
    )
    # "..., once it's there, leave it there": nothing more after the order
    t = re.sub(
        r"[.;,]\s*(?:once|when)\s+(?:it's|it\s+is)\s+(?:there|done|in|on)\b[^.?!]*[.!]*$", "", t
    )
    # "the red block goes in the blue bin": where it is to go
    t = re.sub(
        r"(?P<lead>^|[,.;]\s|\b(?:and|then|first|so|next|now|after\s+that|finally|last)\s)"
        rf"(?P<x>(?:the\s+)?(?:{_C})(?:\s+(?:block|cube|brick|one))?)\s+goes\s+"
        r"(?P<p>in|into|on|onto|on\s+top\s+of|inside)\b",
        r"\g<lead>put \g<x> \g<p>",
        t,
    )
    t = re.sub(r"\s+and\s+(?:that's|thats)\s+(?:it|all)\b[\s,;.!-]*(?=\S|$)", ", ", t).strip(" ,")

    def side(m: re.Match) -> str:
        sign = "+" if m["s"].strip() in ("+", "positive") else "-"
        where = _AXIS_SIDE[(sign, m["a"])]
        most = {"left": "leftmost", "right": "rightmost", "front": "frontmost", "back": "backmost"}
        return f"the {most[where]} {m['n']}" if m["n"] else f"the {where} side"

    t = re.sub(
        r"(?:\b(?:whichever\s+|the\s+|a\s+)?(?P<n>block|cube|one)\s+(?:that\s+)?(?:sits|is|"
        r"lies)?\s*(?:at|on|nearest)\s+|\b)the\s+"
        r"(?P<s>\+|-|positive\s+|negative\s+)\s*(?P<a>[xy])(?:[\s-]*(?:axis))?[\s-]*(?:extreme|"
        r"end|edge|limit|side|most|direction)\b",
        side,
        t,
    )
    t = re.sub(rf"\b(?P<c>{_CUES})\s+(?:stone|gem|jewel|rock|piece|token)s?\b", r"\g<c> block", t)
    t = re.sub(r"\b(?:vessel|urn|chalice|basin|coffer|casket|cradle|nest)s?\b", "bin", t)
    t = re.sub(
        r"\blay\s+(it|them)\s+(?:(?:softly|gently|carefully|down)\s+)*(?:to\s+rest\s+)?(?:within|"
        r"in|inside)\b",
        r"put \1 in",
        t,
    )
    t = re.sub(r"\bwithin\s+(?=the\s+(?:\w+\s+)?bin\b)", "in ", t)
    t = re.sub(rf"\bthe\s+bin\s+of\s+(?:the\s+)?({_CUES})\b", r"the \1 bin", t)
    t = re.sub(r"^(?:gently\s+|softly\s+)?(?:gather|collect|pluck|scoop\s+up|cradle)\b", "take", t)
    return re.sub(
        r"\bbin\s+(?:that|which)\s+(?:shares|matches|has)\s+its\s+(?:sky|colou?r|hue|shade|tint)\b",
        "bin of the same colour",
        t,
    )


def _said_plainly(t: str) -> str:
    """Framings that hide what is asked, taken off before anything is read: a quiz ("pop
    quiz, robot! which bin is farthest?", "true or false: ..."), a task's preface ("here's
    your task: ..."), a tag ("..., right?"), a shouted complaint before its question, a deal,
    a dislocated subject ("the blue block, it is in the red bin?"), "should X be ..." as an
    "if", and "check the green bin - if X is in there" (there is that bin)."""
    t = re.sub(
        r"^(?:(?:pop|surprise|quick|little)\s+quiz|quiz\s+time|"
        r"test\s+time)\b[\s,!.:-]*(?:robot\b[\s,!.:-]*)?",
        "",
        t,
    )
    # "check the green bin for me - if the yellow block is in there, ...": "there" is that bin
    m = re.match(
        rf"^(?:please\s+)?(?:check|look\s+(?:in|at|inside)|have\s+a\s+look\s+(?:in|"
        rf"at))\s+(?:the\s+)?(?P<b>(?:{_C})\s+bin|drawer)"
        r"(?:\s+for\s+me)?[\s,.;:-]+(?=if\b)",
        t,
    )
    if m:
        t = re.sub(
            r"\b(?:in\s+there|in\s+it|inside\s+it|inside)\b",
            f"in the {m['b']}",
            t[m.end() :],
            count=1,
        )
    # "I DIDN'T SAY MOVE ANYTHING. I ASKED WHERE THE RED BLOCK IS. WHERE IS IT.": the question
    t = re.sub(
        r"\bi\s+(?:didn't|did\s+not|never)\s+(?:say|ask(?:\s+you)?|"
        r"tell\s+you)\s+(?:to\s+)?(?:move|touch|do)\s+(?:anything|it|that)\b[.!]*\s*",
        "",
        t,
    )
    t = re.sub(
        r"^i\s+(?:asked|was\s+asking|want\s+to\s+know)\s+where\s+(?P<x>.+?)\s+(?:is|"
        r"was)\b[.!?]*(?:\s*where\s+is\s+it\b[.!?]*)?$",
        r"where is \g<x>?",
        t,
    )
    # "there are seven blocks in the blue bin, right?": asked whether there are
    t = re.sub(
        r"^there\s+(are|is)\s+(.+?)\s*,\s*(?:right|correct|yes|isn't\s+it|aren't\s+there|no|"
        r"yeah)\s*\?.*$",
        r"\1 there \2?",
        t,
    )
    # "quick status check: drawer open or closed?": what follows is asked
    t = re.sub(
        r"^(?:quick\s+)?(?:status\s+(?:check|report|update)|sitrep|questions?)\s*[:,-]\s*", "", t
    )
    # "here's your task: ...", "your mission: ...": what follows is the request
    t = re.sub(
        r"(?:^|(?<=[-,.!:]\s))(?:here's|here\s+is|this\s+is)?\s*(?:your|the|a|"
        r"today's)\s+(?:next\s+)?(?:task|job|challenge|mission|assignment|exercise)"
        r"(?:\s+for\s+(?:you|today))?\s*(?:is\s*)?[:-]\s*",
        "",
        t,
    )
    # "deal: if you put red in green, I'll let you skip the blue one": the task, and the rest spared
    t = re.sub(
        r"^(?:(?:deal|ok(?:ay)?|tell\s+you\s+what|"
        r"here's\s+the\s+deal)\s*[:,-]\s*)?if\s+you\s+(?P<a>(?:put|place|stack|move|push)\s+.+?)\s*,\s*"
        r"(?:i'll|i\s+will)\s+let\s+you\s+(?:skip|off|leave)\s+(?P<b>.+?)[.!]*$",
        lambda m: f"{m['a']}, don't touch {m['b']}",
        t,
    )
    # "tell me, the blue block, it is really in the red bin?": the thing named first is asked about
    t = re.sub(
        r"^(?:tell\s+me\s*,\s*|so\s*,\s*|and\s+)?(?P<np>the\s+\w+\s+(?:block|cube|bin|drawer|"
        r"lamp|light|one))\s*,\s*"
        r"(?:it|that)\s+(?:is|'s)\s+(?:really\s+|indeed\s+|actually\s+|"
        r"definitely\s+)?(?P<rest>[^?]+?)\s*\?$",
        lambda m: f"is {m['np']} {m['rest']}?",
        t,
    )
    # "should the yellow block already be in the blue bin, add the red one to it": an "if"
    t = re.sub(
        r"^should\s+(?P<x>(?:the\s+)?[a-z]+\s+(?:block|cube|one|drawer|light|"
        r"lamp))\s+(?:already\s+|still\s+)?be\s+(?P<s>[^,]+?)\s*,\s*",
        lambda m: f"if {m['x']} is {m['s']}, ",
        t,
    )
    # "lights, please - and while you're over there, shut that drawer"
    t = re.sub(r"^(?:the\s+)?lights?\s*(?:on\s*)?,?\s*please\b", "turn on the light", t)
    t = re.sub(
        r"\b(?:and\s+)?while\s+you(?:'re|\s+are)\s+(?:over\s+)?(?:there|at\s+it|up)\s*,\s*", "", t
    )
    m = re.match(
        r"^(?:true\s+or\s+false|yes\s+or\s+no|right\s+or\s+wrong|fact\s+or\s+fiction)\s*[:,?!-]+\s*"
        r"(?P<s>.+?)\s+(?P<v>is|are)\s+(?P<rest>[^?]+?)[\s.?!]*$",
        t,
    )
    return f"{m['v']} {m['s']} {m['rest']}?" if m else t


def _filler(chunk: str) -> bool:
    """A chunk that says nothing ("oh", "ok", "please", "sorry")."""
    return bool(
        re.fullmatch(
            r"\s*(?:oh|ok|okay|hmm+|well|please|sorry|robot|hey|um+|uh+|no|nah|wait|actually|"
            r"negative|roger|"
            r"behind|heads\s+up|careful|watch\s+out|look\s+out|mind\s+out|"
            r"copy(?:\s+that)?|over(?:\s+and\s+out)?|"
            r"that's\s+it|that\s+will\s+do|that'll\s+do|alright|all\s+right)\s*",
            chunk,
        )
    )


def _stop_chunk(chunk: str) -> bool:
    said = re.sub(r"\s+", " ", _bare(chunk))
    # "pause for a sec", "freeze for a moment": how long does not matter (but "give me a
    # second" and "just a moment" are stop phrases as they stand)
    brief = re.sub(
        r"(?<=\w)\s+(?:for\s+)?(?:a|one|just\s+a)\s+(?:sec|second|moment|minute|min|tick|bit|"
        r"while)s?"
        r"(?:\s+(?:please|now|robot))*$",
        "",
        said,
    )
    return _stop_words(said) or _stop_words(brief)


def _stop_words(b: str) -> bool:
    if b in L.STOP_PHRASES:
        return True  # before "just" and "wait" are taken off ("just a moment")
    b = re.sub(r"\s+", " ", re.sub(r"\brobot\b", "", b)).strip()  # "stop robot stop"
    b = re.sub(
        r"^(?:(?:no|nah|naw|nope|eh|meh|oh|oh well|hey|ok|okay|please|robot|wait|just|uh|um|"
        r"whoa|woah|actually|hmm|well|so|you\s+can|you\s+may|you\s+should|you\s+could|can\s+you|"
        r"you|"
        r"could\s+you|will\s+you|would\s+you|i\s+want\s+you\s+to|i\s+need\s+you\s+to)\s+)+(?=\S)",
        "",
        b,
    )
    b = re.sub(
        r"(?:\s+(?:please|now|for now|for later|till later|until later|for today|right now|"
        r"immediately|thanks|thank you|robot|"
        r"already|then|anyway|mate|buddy))+$",
        "",
        b,
    )
    # "don't continue", "do not go on", "no more": the same as "stop"
    b = re.sub(
        r"^(?:don't|dont|do\s+not|not|no)\s+(?:continue|continuing|go\s+on|proceed|keep\s+going|"
        r"carry\s+on|more)$",
        "stop",
        b,
    )
    return b in L.STOP_PHRASES


def understand(text: str, world: WorldState) -> Understanding:
    """Read ``text`` against ``world``; see the module docstring."""
    original = text
    t = _normalise(text)
    english, lang = translate(t)
    english = noise.clean(english)
    notes: list[str] = [f"translated from {L.LANGUAGES[lang]}: {english!r}"] if lang != "en" else []
    t = _POLITENESS.sub(" ", english.lower()).strip(" ,-")
    t = _VOCATIVE.sub("", t)
    t = _addressed(t)
    # "the block closer to you", "whichever is nearer the green bin": among the blocks, the
    # comparison picks the one the superlative does
    t = re.sub(
        r"\b(?P<np>(?:the|whichever)\s+(?:\w+\s+)?(?:block|cube|brick|one)(?:\s+(?:that's|"
        r"that\s+is|which\s+is|is))?"
        r"|whichever(?:\s+(?:one|block))?\s+is)\s+(?P<c>closer|nearer|farther|"
        r"further)\b(?![^,.;?!]*\bthan\b)"
        r"(?!\s+(?:to\s+|towards\s+)?(?:the\s+)?(?:left|right|front|back|side|edge|middle|"
        r"cent(?:er|re)|away|in|out|up|down)\b)",
        lambda m: (
            f"{m['np']} "
            + {
                "closer": "closest",
                "nearer": "nearest",
                "farther": "farthest",
                "further": "furthest",
            }[m["c"]]
        ),
        t,
    )
    t = _asked_then_named(t)
    t = _to_the_robot(t)
    t = _unsuggested(t)
    t = _said_plainly(t)
    t = _plain_words(t)
    # "why did you grab the green one last run? don't touch green. I wanted ...": the
    # complaint about another run asks nothing of this one
    t = re.sub(
        r"^why\s+did\s+you\s+[^?]*\?\s+(?=.*\b(?:don't|put|stack|move|place|i\s+wanted|i\s+want|"
        r"i\s+meant)\b)",
        "",
        t,
    )

    def out(kind: str, **kw: Any) -> Understanding:
        return Understanding(kind, original, kw.pop("text", t), lang, notes=notes, **kw)

    if not t:
        return out(REFUSE, reason="the instruction is empty")
    if is_stop(t):
        return out(STOP, answer="Stopped; nothing was done")
    unasked = _not_an_order(t, world)
    if unasked is not None:
        return out(ANSWER, answer=unasked)
    if _THEMSELVES.match(_DECLINED.sub("", t)):
        # the person is going to do it: the arm stays out of the way
        return out(ANSWER, answer="Go ahead; I will not move")
    if answers.is_capability(t):
        return out(ANSWER, answer=answers.answer(t, world))
    reply = smalltalk.remark(t)
    if reply is not None:
        return out(ANSWER, answer=reply)
    t = re.sub(
        r"^(?:when|once|after)\s+(?:you(?:'re|\s+are)|you\s+have|you've)\s+(?:done|finished|ready)"
        r"(?:\s+with\s+that)?\s*,?\s*",
        "",
        t,
    )
    t = _asked_condition(t)
    # "if the yellow block's already in a bin, leave it be; if it isn't, put it ...": the
    # second branch is the "otherwise"
    t = re.sub(
        r"^(?P<c>if\s+[^;,]+?)\s*,\s*(?:leave\s+it(?:\s+be|\s+alone|\s+there)?|do\s+nothing|don't\s+do\s+anything)\s*[;,.]\s*"
        r"if\s+(?:it\s+isn't|it\s+is\s+not|it's\s+not|not)\s*,\s*(?P<cmd>.+)$",
        lambda m: (
            re.sub(r"^if\s+(.+?)(?:'s|\s+is)\s+(?:already\s+)?", r"if \1 is not ", m["c"], count=1)
            + ", "
            + m["cmd"]
        ),
        t,
    )
    # "drawer open or closed, lamp on or off?": each a question with its "is" left out
    t = re.sub(
        r"(?:^|(?<=[,:;]\s))(?:the\s+)?(drawer|lamp|light)\s+(?=(?:open|closed|shut|on|"
        r"off)\s+or\s+\w+)",
        r"is the \1 ",
        t,
    )
    # "put red in green - no wait, first tell me where red is": the question is what is left
    t = re.sub(r"(?:^|(?<=[-,.;:]\s))(?:but\s+)?first\s*,?\s+(?=tell\s+me\b|show\s+me\b)", "", t)
    sides = _whose_side(t, world)
    if sides is not None:
        return _clarify(out, sides, "block", "the one on that side", Constraints())
    asked = _questions(t)
    if len(asked) > 1:
        # "is the lamp on, and is the drawer open or shut?": each answered
        return out(ANSWER, answer=". ".join(answers.answer(q, world) for q in asked))
    t = _not_this_but_that(t, notes)
    t = _done_then_rest(t, notes)
    t, cnotes = corrections.apply(t)
    notes += cnotes
    if t == corrections.LEFT_AS_IS:
        return out(ANSWER, text="", answer="All right: I will leave it as it is; nothing was moved")
    stripped = smalltalk.strip(t)
    if stripped and stripped != t:
        notes.append(f"request: {stripped!r}")
        t = _unsuggested(stripped)  # "oh great, a mess. now maybe put ...?": asked all the same
    if not t or is_stop(t):
        return out(STOP, text=t, answer="Stopped; nothing was done")
    if answers.is_question(t):
        return out(ANSWER, answer=answers.answer(t, world))
    if answers.is_statement(t):
        said = answers.statement(t, world)
        return out(ANSWER, answer=said or "Noted; I did not move anything")
    return _command(t, world, out, notes)


_C = "|".join(L.COLOURS)
#: Holding two things at once, asked or stated as the goal ("pick up the red and the blue
#: block at the same time", "end state: you're holding both ... at once"): one gripper.
_TWO_IN_HAND = re.compile(
    r"\b(?:hold(?:ing)?|pick(?:ing)?\s+up|grab(?:bing)?|carry(?:ing)?|lift(?:ing)?|tak(?:e|ing))\s+"
    rf"(?:(?:both|all|two|three|four)\b|"
    rf"(?:the\s+)?(?:{_C})\b[^.?!,;]*?\band\s+(?:the\s+)?(?:{_C})\b)"
    r"(?:(?!\b(?:put|place|in|into|on|onto|then|stack)\b)[^.?!;])*?"
    r"\b(?:at\s+once|at\s+the\s+same\s+time|simultaneously|in\s+one\s+go|together)\b"
)
_BIN = refs._BIN


#: An order quoted inside someone else's words ("my supervisor keeps telling me 'stack the
#: red cube on the green one'", "our contestant will be asked to 'put ...'"): reported, not
#: asked of the robot; the speaker's own "I said '...'" and "do what it says" are orders.
_QUOTED = re.compile(
    r"^(?!i\s|i've\s|i'd\s)(?!.*\b(?:do\s+(?:what|as)|follow|go\s+ahead|"
    r"please\s+do)\b).*\b(?:said|says|say|saying|tell(?:s|ing)?\s+me|"
    r"told\s+(?:me|us|him|her|them)|ask(?:s|ed|ing)?(?:\s+me)?|be\s+asked\s+to|shout(?:s|ed)?|"
    r"yell(?:s|ed)?|wrote|reads?|goes)"
    r"\s*(?:to\s+)?[:,]?\s*['\"\u2018\u201c][^'\"\u2019\u201d]+['\"\u2019\u201d]"
)


#: "radio check, how do you read me? over": asks whether the robot hears, nothing more.
_RADIO_CHECK = re.compile(
    r"\b(?:radio\s+check|comms?\s+check|mic\s+check|how\s+do\s+you\s+read(?:\s+me)?|do\s+you\s+(?:read|hear)\s+me|"
    r"can\s+you\s+hear\s+me|are\s+you\s+receiving)\b"
)


def _not_an_order(t: str, world: WorldState) -> str | None:
    """The reply to a request put off, a complaint, or a wondering that says it asks
    nothing; None for anything else."""
    if _QUOTED.search(t):
        return "Noted: that was said to someone, not asked of me; I did not move anything"
    if _RADIO_CHECK.search(t) and not (set(re.findall(r"[a-z]+", t)) & set(L.ACTION_VERBS)):
        return "Reading you loud and clear; I did not move anything"
    if re.fullmatch(
        r"(?:(?:the\s+)?same\s+(?:as\s+(?:before|last\s+time)|again|thing\s+again)|do\s+(?:it|that)\s+again|"
        r"again|repeat\s+that|one\s+more\s+time|like\s+last\s+time)[\s,.!]*(?:please)?[\s.!]*",
        t,
    ):
        return (
            "I keep no memory of earlier requests: say what to do and I will do it; "
            "I did not move anything"
        )
    if re.match(
        r"^(?:i'm|i\s+am)\s+(?:only|just)\s+(?:watching|looking|observing|here\s+to\s+watch)\b", t
    ):
        return "Enjoy watching; I did not move anything"
    even = re.match(r"^(?:can|could)\s+you\s+(?:even|actually|really)\s+(?P<rest>.+)$", t)
    if even:  # "can you even lift something as chunky as that?": doubt, asked about
        return (
            answers.ability("can you " + even["rest"])
            or "I could, if you ask me to; I did not move anything"
        )
    said = (
        answers.ability(t)
        if re.match(r"^(?:be\s+honest|honestly|truthfully|seriously)\b", t)
        else None
    )
    if said:
        return said
    stripped = re.sub(r"^(?:be\s+honest|honestly|truthfully|seriously)\s*[-,:]*\s*", "", t)
    if re.search(r"\b(?:at\s+the\s+same\s+time|at\s+once|simultaneously)\b", stripped):
        said = answers.ability(stripped)
        if said and said.startswith("No: my gripper"):
            return said  # "could you carry two blocks at the same time?": it cannot
    if _DEFERRED.search(t):
        # "I was going to ask you to put ..., but let's leave it for later": not now
        return "All right, not now; I did not move anything"
    if _RHETORIC.search(t):
        # "oh great, could you possibly make more of a mess?": a complaint, not an order
        return "Sorry about that; I did not move anything. Tell me what to fix"
    if _NOT_ASKING.search(t):
        # "... whether you could lift one of those bins - not that I'm asking you to"
        asked = _NOT_ASKING.sub("", t).strip(" ,-.")
        # "could you put ...? i'm only asking whether you'd be able to": the first question
        asked = (
            re.split(r"(?<=\?)\s+", asked)[0]
            if re.match(r"^(?:could|can|would)\s+you\b", asked)
            else asked
        )
        said = answers.answer(asked, world) if answers.is_question(asked) else None
        return (
            said
            or answers.ability(asked)
            or "Understood, you are not asking; I did not move anything"
        )
    return None


def _whose_side(t: str, world: WorldState) -> list[str] | None:
    """ "move the one on the right ... wait, my right or your right?": a side the speaker
    asks about and never settles names one block in the robot's frame and another in the
    speaker's; the two candidates, or None when nothing like that is asked (or both
    frames name the same block)."""
    m = re.search(
        r"[\s,.;!-]*(?:wait|hmm+|hang\s+on|um+|oh)?[\s,.;!-]*(?:is\s+that\s+|do\s+you\s+mean\s+|"
        r"i\s+mean\s+)?"
        r"(?:my|your)\s+(?:left|right)\s+or\s+(?:your|my|yours|mine)(?:\s+(?:left|right))?\s*\?.*$",
        t,
    )
    if m is None or not re.search(r"\b(?:left|right)", t[: m.start()]):
        return None
    before = t[: m.start()].strip(" ,.;!-")
    swapped = re.sub(
        r"\b(left|right)", lambda s: "right" if s.group(1) == "left" else "left", before
    )
    names: list[str] = []
    for said in (before, swapped):
        try:
            resolved = refs.resolve(said, world).text
        except (refs.Ambiguous, refs.Unresolvable):
            return None
        new = refs._named_in(resolved, world) - refs._named_in(said, world)
        cubes = [n for n in new if world.object(n) is not None]
        if len(cubes) != 1:
            return None
        names.append(cubes[0])
    return names if names[0] != names[1] else None


def _questions(t: str) -> list[str]:
    """The questions of "is the lamp on, and is the drawer open?" (one when ``t`` holds one
    question or anything that is not one)."""
    parts = [
        p.strip(" ,;?")
        for p in re.split(
            r"\s*(?:,\s*(?:and\s+|also\s+)|,\s*(?=is\s+the\s+(?:drawer|lamp|light)\b)|"
            r"\?\s*(?:and\s+|also\s+)?|;\s*|"
            r"\s+and\s+(?=(?:which|where|what|how)\b))"
            r"(?=(?:is|are|where|what|which|how|do|does|did|was|were)\b)",
            t,
        )
        if p.strip(" ,;?")
    ]
    if len(parts) > 1 and all(answers.is_question(p + "?") for p in parts):
        # "is that drawer open? and is there anything inside it?": "it" is what the first named
        first = re.search(
            rf"\b(?:the|that|this)\s+(drawer|lamp|light|(?:{_C})\s+(?:bin|block|cube))\b", parts[0]
        )
        if first:
            parts = [parts[0]] + [re.sub(r"\bit\b", f"the {first.group(1)}", p) for p in parts[1:]]
        return [p + "?" for p in parts]
    return [t]


def _asked_condition(t: str) -> str:
    """ "is the red block in a bin? if not, put it in the green one": the question is the
    condition of the order after it ("if the red block is not in a bin, put it ..."); "make
    that happen" is the relation asked about; "nothing in the green bin, right? if that's
    so, ..." asks whether the bin is empty."""
    t = re.sub(
        r"^(?:(?:quick|just\s+a\s+quick|one)\s+(?:check|question)\s*[,:]\s*)?(?:there's\s+)?nothing\s+in\s+"
        r"(?P<b>the\s+\w+\s+bin)\s*,?\s*(?:right|correct|yeah|is\s+there)?\s*\?\s*if\s+(?:that's|that\s+is|it's|it\s+is)\s+"
        r"(?:so|true|right|the\s+case)\s*,?\s*",
        r"if \g<b> is empty, ",
        t,
    )
    t = re.sub(r"\bif\s+(?:that's|that\s+is)\s+so\b", "if so", t)
    t = re.sub(r"^(?P<v>is|are)\s+(?P<rest>.+?)\s+already\s+", r"\g<v> \g<rest> ", t)
    m = re.match(
        r"^(?P<v>is|are)\s+(?P<s>(?:the\s+)?\w+(?:\s+(?:block|cube|brick|one|bin|drawer|light|"
        r"lamp))?)\s+"
        r"(?P<p>[^?]+?)\s*\?\s*(?:and\s+)?if\s+(?P<a>not|so|yes|no|it\s+isn't|it's\s+not|it\s+is\s+not|"
        r"it\s+is|they\s+aren't|they\s+are)\s*,?\s*(?:then\s+)?(?P<cmd>.+)$",
        t,
    )
    if m is None:
        return t
    neg = m["a"] in ("not", "no", "it isn't", "it's not", "they aren't", "it is not")
    cmd = m["cmd"]
    rel = re.match(
        r"(?:sitting\s+|resting\s+|stacked\s+)?(?P<r>on|in|inside|on\s+top\s+of)\s+(?P<o>.+)$",
        m["p"],
    )
    if rel and re.fullmatch(
        r"(?:please\s+)?(?:make\s+(?:that|it|this)\s+(?:happen|so)|do\s+(?:it|that)|fix\s+(?:it|that))[.!]*",
        cmd,
    ):
        cmd = f"put {m['s']} {rel['r']} {rel['o']}"
    return f"if {m['s']} {m['v']}{' not' if neg else ''} {m['p']}, {cmd}"


#: A follow-up fragment with no verb and no place ("and the blue one too", "same for
#: green"): it refers to a request this one utterance does not hold.
_FRAGMENT = re.compile(
    rf"^(?:and|also|now|same\s+(?:for|with)|likewise|ditto|then|next)\b.*\b(?:{_C})\b|"
    rf"\b(?:{_C})\b.*\b(?:too|as\s+well|also)\s*[.!]*$"
)
_PLACE_WORD = re.compile(r"\b(?:in|into|inside|on|onto|to|towards?|over|under|beside|next)\b|->|:")


def _fragment(t: str) -> str | None:
    """The colour a follow-up fragment names, or None when ``t`` is a request of its own."""
    words = set(re.findall(r"[a-z']+", t))
    if not _FRAGMENT.search(t) or words & set(L.ACTION_VERBS) or _PLACE_WORD.search(t):
        return None
    return re.search(rf"\b({_C})\b", t).group(1)  # type: ignore[union-attr]


#: "put that one on the blue block", "that one over there": a pointing no words resolve.
_THAT_ONE = re.compile(
    r"\b(?P<on>(?:on|onto|on\s+top\s+of)\s+)?(?:that|this)\s+(?:one|block|cube|"
    r"brick)\b(?:\s+over\s+there|\s+here)?"
)
#: What makes a "that one" a thing the words pick out ("that one on the left", "that block
#: next to the red one"), not a pointing.
_QUALIFIED = re.compile(
    r"\s+(?:of|in|inside|on|at|by|near|beside|under|behind|closest|nearest|farthest|next\s+to|"
    r"from|that|which|you|i)\b"
)
_PUTTING = re.compile(r"\b(?:put|place|stack|move|drop|set|push|slide|pop|toss|carry)\b")


def _pointed_at(t: str, world: WorldState) -> list[str] | None:
    """The blocks a "that one" no words resolve could be (each block the request does not
    name otherwise), when there are several; None when the words say which."""
    m = _THAT_ONE.search(t)
    if m is None or re.search(
        r",\s*the\s+(?:one|block)\s+(?:closest|nearest|farthest|furthest|on\s+the|in\s+the|next\s+to|beside|by)\b",
        t,
    ):
        return None  # "that one, the one closest to you, ...": the words say which
    before, rest = t[: m.start()], t[m.end() :]
    if not m["on"] and re.search(rf"\b(?:{_C}|it|them|block|cube|ones?)\b", before):
        return None  # "the red block ... that one": said before
    # after a verb of putting, a place may follow ("put that one on the blue block"); after
    # any other, what follows says which one ("pick up that one on the left")
    q = _QUALIFIED.match(rest)
    if q and not (
        _PUTTING.search(before) and re.match(r"\s+(?:in|inside|on|onto|at|to|into)\b", rest)
    ):
        return None
    said = set(re.findall(rf"\b({_C})\b(?!\s+(?:bin|box|basket|container|bucket)s?\b)", t))
    cands = [o.name for o in world.objects if o.color not in said and not world.in_drawer(o.name)]
    return cands if len(cands) > 1 else None


_UNITS = {
    "mm": 0.001,
    "millimetre": 0.001,
    "millimeter": 0.001,
    "cm": 0.01,
    "centimetre": 0.01,
    "centimeter": 0.01,
    "m": 1.0,
    "metre": 1.0,
    "meter": 1.0,
    "inch": 0.0254,
    "in": 0.0254,
}
#: Directions in the robot's frame (module docstring): +y is its left, +x its front.
_DIRECTION = {
    "left": (0.0, 1.0),
    "right": (0.0, -1.0),
    "front": (1.0, 0.0),
    "forward": (1.0, 0.0),
    "forwards": (1.0, 0.0),
    "away": (1.0, 0.0),
    "back": (-1.0, 0.0),
    "backward": (-1.0, 0.0),
    "backwards": (-1.0, 0.0),
    "closer": (-1.0, 0.0),
    "towards you": (-1.0, 0.0),
}
_MOVED_BY = re.compile(
    r"^(?:please\s+)?(?P<v>move|push|slide|shift|nudge|shove)\s+(?P<x>the\s+(?:"
    + "|".join(L.COLOURS)
    + r")\s+(?:block|one|cube|brick))\s+"
    r"(?:by\s+)?(?:about\s+|roughly\s+|around\s+|exactly\s+|some\s+)?(?P<n>\d+(?:\.\d+)?|"
    + "|".join(w for w in L.NUMBERS if " " not in w)
    + r")\s*"
    r"(?P<u>mm|cm|m|in|(?:milli|centi)?met(?:er|re)s?|inch(?:es)?)\s+"
    r"(?:(?:to|towards)\s+(?:the\s+|your\s+)?)?(?P<d>left|right|front|forwards?|backwards?|back|"
    r"away|closer|towards\s+you)"
    r"(?:\s+(?:side|of\s+(?:where\s+it\s+is|it)))?\s*[.!]*$"
)


def _moved_by(t: str, world: WorldState) -> str:
    """ "move the red block 10 cm to the left": a push to the point that far from where it
    is now (the rules read "[x, y]" as a point); ``t`` unchanged otherwise."""
    m = _MOVED_BY.match(t)
    if m is None:
        return t
    o = world.object(m["x"].split()[1] + "_block")
    if o is None or not o.on_table:
        return t
    n = float(m["n"]) if m["n"][0].isdigit() else float(L.NUMBERS[m["n"]])
    unit = re.sub(r"(?:es|s)$", "", m["u"]) if m["u"] not in ("mm", "cm", "m", "in") else m["u"]
    dist = n * _UNITS.get(unit, 0.01)
    dx, dy = _DIRECTION[re.sub(r"\s+", " ", m["d"])]
    x, y = o.pos[0] + dx * dist, o.pos[1] + dy * dist
    return f"push {m['x']} to [{x:.3f}, {y:.3f}]"


_ALL_BUT = re.compile(
    r"\b(?:(?:out\s+of\s+these|of\s+these)\s*,?\s*)?all\s+(?:of\s+them\s+|the\s+blocks\s+|"
    r"of\s+the\s+blocks\s+)?"
    r"(?:but|except(?:\s+for)?|save)\s+(?P<k>one|two|three|[1-3])\b(?:\s+(?:of\s+them|blocks?))?"
    r"|\bhalf\s+(?:of\s+)?the\s+blocks(?:\s+on\s+the\s+table)?"
)


def _all_but(t: str, world: WorldState) -> str:
    """ "all of them but two go in the green bin", "half of the blocks": as a count of the
    blocks on the table ("two blocks")."""
    m = _ALL_BUT.search(t)
    if m is None:
        return t
    free = sum(1 for o in world.objects if o.on_table)
    k = m["k"]
    n = free - (int(k) if k and k.isdigit() else L.NUMBERS.get(k or "", 0)) if k else free // 2
    if n <= 0:
        return t
    words = {1: "one block", 2: "two blocks", 3: "three blocks", 4: "four blocks"}
    out = f"{t[: m.start()]}{words.get(n, f'{n} blocks')}{t[m.end() :]}"
    out = re.sub(r"\b(blocks?)\s+(?:go|goes)\s+(in|into|on)\b", r"\1 \2", out)
    return re.sub(
        r"^((?:one|two|three|four|\d+)\s+blocks?\s+(?:in|into|on)\b)", r"put \1", out.strip(" ,")
    )


def _on_top_of_all(t: str, world: WorldState) -> str:
    """ "on top of everything" / "of the stack": on the top block of the one stack there is;
    ``t`` unchanged where there is no stack or more than one."""
    m = re.search(
        r"\b(?:on\s+top\s+of|onto|on)\s+(?:everything(?:\s+else)?|"
        r"all\s+(?:of\s+)?(?:the\s+)?(?:others|rest|blocks)|"
        r"the\s+(?:stack|tower|pile|others)|the\s+other\s+(?:blocks|ones))\b"
        r"(?:\s+(?:except|but)\s+(?:for\s+)?the\s+\w+\s+(?:block|one|cube))?",
        t,
    )
    if m is None or not _PUTTING.search(t[: m.start()]):
        return t  # "take the block on top of the stack": which block, not where it goes
    tops = [
        o.name
        for o in world.objects
        if o.on is not None and not any(p.on == o.name for p in world.objects)
    ]
    if len(tops) != 1:
        return t
    return f"{t[: m.start()]}on the {tops[0].replace('_', ' ')}{t[m.end() :]}"


#: "put zero blocks in the bin", "put neither block in the blue bin": nothing to move.
_NONE_TO_MOVE = re.compile(
    r"\b(?:put|place|move|drop|stack|push|take|pick)\s+(?:up\s+)?(?:zero|no|neither|"
    r"none\s+of\s+the|not\s+a\s+single|"
    r"not\s+one)\s+(?:\w+\s+)?(?:blocks?|cubes?|ones?|of\s+them)\b"
)
#: "put a MILLION blocks in the red bin": more than any scene holds.
_TOO_MANY = re.compile(
    r"\b(?:a\s+|one\s+)?(?:million|billion|trillion|zillion|gazillion|bazillion|thousand|hundred|"
    r"dozen|hundreds|thousands|"
    r"millions|billions|infinite|infinity\s+of)\s+(?:of\s+)?(?:the\s+)?(?:blocks|cubes|bricks)\b"
)
#: "Red block and yellow block. Put it in the green bin.": blocks named, then one "it".
_LISTED_THEN = re.compile(
    rf"^(?P<list>(?:the\s+)?(?:{_C})\s+(?:block|one|cube)(?:\s*(?:,|and|"
    rf"&)\s*(?:the\s+)?(?:{_C})\s+(?:block|one|cube))+)"
    r"\s*(?:[.!:;]|,\s*then|\s+then)\s*(?P<cmd>.+)$"
)


_THERE_IS = re.compile(
    rf"^if\s+there(?:'s|\s+is)\s+(?:a|an|any)\s+(?P<c>{_C})\s+(?:block|cube|one)"
    r"(?:\s+(?:anywhere|here|about|around|left|on\s+the\s+table))*\s*,\s*"
    r"(?P<cmd>(?:(?!\b(?:else|otherwise|if\s+not)\b).)+)$"
)


def _if_there_is(t: str, world: WorldState) -> str:
    """ "if there's a yellow block anywhere about, stick it in the red bin": where there is
    one, the order with "it" as that block (where there is none, :func:`_not_as_said`
    answers)."""
    m = _THERE_IS.match(t)
    if m is None or world.object(f"{m['c']}_block") is None:
        return t
    return re.sub(r"\bit\b", f"the {m['c']} block", m["cmd"], count=1)


def _not_as_said(t: str, world: WorldState, out: Any) -> Understanding | None:
    """The refusal, answer or question back for a request that cannot be done as it is
    said: one refused on its face (:func:`_refused_as_said`), more blocks than there are,
    none to move, one "it" after several blocks, or a pointing no words resolve
    (:func:`_pointed_at`); None for the rest."""
    why = _refused_as_said(t)
    if why is None and _TOO_MANY.search(t):
        why = f"there are only {len(world.objects)} blocks here"
    if why is not None:
        return out(REFUSE, reason=why)
    there = _THERE_IS.match(t)
    if there and world.object(f"{there['c']}_block") is None:
        return out(ANSWER, text="", answer=f"Nothing to do: there is no {there['c']} block here")
    if _NONE_TO_MOVE.search(t):
        return out(ANSWER, answer="Nothing to do: no block is to be moved; I did not move anything")
    listed = _LISTED_THEN.match(t)
    it = re.search(r"\bit\b", listed["cmd"]) if listed else None
    if (
        listed
        and it
        and not re.search(rf"\b(?:{_C})\s+(?:block|one|cube)\b", listed["cmd"][: it.start()])
    ):
        names = [f"{c}_block" for c in dict.fromkeys(re.findall(rf"\b({_C})\b", listed["list"]))]
        names = [n for n in names if world.object(n) is not None]
        if len(names) > 1:
            return _clarify(out, names, "block", "it", Constraints())
    pointed = _pointed_at(t, world)
    if pointed is not None:
        return _clarify(out, pointed, "block", "that one", Constraints())
    return None


def _refused_as_said(t: str) -> str | None:
    """Why ``t`` cannot be done as it is said (two blocks in one gripper at once, a follow-up
    fragment that names no request), or None."""
    if _TWO_IN_HAND.search(t):
        return "my gripper holds one block at a time; I can take them one after another"
    if re.match(
        r"^(?:please\s+)?(?:snap|break|cut|split|saw|chop)\s+(?:the\s+)?\w+\s+(?:block|cube)\s+"
        r"in\s+(?:two|half|halves)\b",
        t,
    ):
        return "I cannot break a block: I can pick, place, stack and push the blocks"
    frag = _fragment(t)
    if frag is not None:
        return (
            f"I do not know what to do with the {frag} one: say the whole request "
            f"(for example 'put the {frag} block in a bin')"
        )
    return None


def _command(t: str, world: WorldState, out: Any, notes: list[str]) -> Understanding:
    """A command: conditionals decided, prohibitions taken out, references resolved."""
    t = _tidy(t)
    t = _if_there_is(t, world)
    t = _on_top_of_all(t, world)
    t = _moved_by(t, world)
    t = _all_but(t, world)
    early = _not_as_said(t, world, out)
    if early is not None:
        return early
    try:
        branch = conditionals.split(t, world)
    except conditionals.UnknownCondition as e:
        return out(REFUSE, reason=f"I cannot check whether {e}; say what to do without the 'if'")
    if branch is not None:
        notes.append(branch.note)
        t = branch.text
        if not t.strip():
            return out(ANSWER, text="", answer=f"Nothing to do: the {branch.note}")
    reading = prohibitions.read(t, world)
    if reading.negated:
        notes.append("prohibited: " + "; ".join(reading.negated))
        reading.text = _without_reasons(reading.text)
    if reading.bare or (reading.negated and _only_says_why(reading.text)):
        said = reading.constraints.describe() or "that"
        return out(
            ANSWER,
            text="",
            constraints=reading.constraints,
            answer=f"Understood: I will not do it ({said}); nothing was moved",
        )
    t = _tidy(reading.text)
    t = _into_the_one_bin(t, reading.constraints, world)
    if answers.is_question(t):
        # "don't move anything, just tell me where the red block is"
        return out(
            ANSWER, text="", constraints=reading.constraints, answer=answers.answer(t, world)
        )
    early = _refused_or_asked(t, world, out, reading.constraints)
    if early is not None:
        return early
    try:
        totals = refs.totals(t, world)
        t = totals.text
        notes += totals.notes
        counted = refs.counts(t, world, set(reading.constraints.objects))
        t = counted.text
        notes += counted.notes
        cons = reading.constraints
        avoid = set(cons.objects) | set(cons.targets) | {tg for _, tg in cons.pairs}
        other = refs.another(t, world, avoid)
        t = other.text
        notes += other.notes
        anyb = refs.any_bin(t, world, avoid)
        t = anyb.text
        notes += anyb.notes
        resolved = refs.resolve(t, world)
        t = _tidy(resolved.text)
        notes += resolved.notes
    except refs.Ambiguous as e:
        return _clarify(out, e.candidates, e.kind, e.phrase, reading.constraints)
    except refs.Unresolvable as e:
        return out(REFUSE, constraints=reading.constraints, reason=str(e))
    amb = _ambiguous(t, world)
    if amb is not None:
        return _clarify(out, amb[1], amb[0], amb[2], reading.constraints)
    done = re.fullmatch(rf"(?:please\s+)?put\s+the\s+({_C})\s+block\s+on\s+the\s+table\s+center", t)
    # (only where "the table" was said: "on the table center" asks for the centre region)
    if done and not re.search(r"\b(?:cent(?:er|re)|middle)\b", out(PLAN).original, re.I):
        o = world.object(f"{done[1]}_block")
        if o is not None and o.on_table and not o.held:
            # "put the red block on the table" with it there already: nothing to do
            return out(
                ANSWER,
                text="",
                constraints=reading.constraints,
                answer=f"The {done[1]} block is already on the table; I did not move it",
            )
    as_said = _normalise(out(PLAN).original)
    if t == as_said.lower().strip():
        t = as_said  # nothing was rewritten: the planners get the words as typed
    return out(PLAN, text=t, constraints=reading.constraints)


def _refused_or_asked(t: str, world: WorldState, out: Any, cons: Constraints) -> Any:
    """A request refused on its face, or one that names no side ("blue block. shove it to
    the side."), asked back; None for any other."""
    why = _impossible(t, world)
    if why:
        return out(REFUSE, constraints=cons, reason=why)
    if re.search(
        r"\b(?:push|shove|slide|nudge|move|scoot)\b[^,.;]*?\b(?:to\s+(?:the|one)\s+side|aside|"
        r"out\s+of\s+the\s+way)\b|"
        r"\b(?:to\s+the\s+side|aside)\b.*\b(?:move|push|shove|slide)\s+it\b",
        t,
    ) and not re.search(r"\b(?:left|right)\b", t):
        return out(
            CLARIFY,
            constraints=cons,
            question="Which side should it go to: the left or the right?",
            candidates=["table_left", "table_right"],
            reason="'to the side' names no side",
        )
    return None


def _into_the_one_bin(t: str, cons: Constraints, world: WorldState) -> str:
    """ "no bin but the blue one gets used. now tidy the table": with one bin left, tidying
    puts every block allowed to move in it."""
    left = [b.name for b in world.bins if b.name not in cons.targets]
    if len(left) != 1 or len(world.bins) < 2:
        return t
    spared = sorted(cons.objects)
    return re.sub(
        r"\b(?:(?:now|then|and)\s+)?(?:tidy|clean|clear)(?:\s+up)?(?:\s+(?:the\s+)?(?:table|rest|"
        r"mess|workspace|blocks))?"
        r"(?:\s+up)?\b",
        "put all the blocks"
        + "".join(f" except the {o.replace('_', ' ')}" for o in spared[:1])
        + "".join(f" and the {o.replace('_', ' ')}" for o in spared[1:])
        + f" in the {left[0].replace('_', ' ')}",
        t,
        count=1,
    )


def _without_reasons(rest: str) -> str:
    """The rest beside a prohibition less the clauses that only give its reason ("don't go
    near the ball, it rolls off the table. Cylinder into the green bin"); the rest itself
    when nothing else would be left."""
    parts = re.split(r"(\s*(?:,\s*(?:then\s+)?|;\s*|\.\s+))", rest)
    kept = []
    for i in range(0, len(parts), 2):
        clause = parts[i]
        words = set(re.findall(r"[a-z']+", clause))
        said = re.match(
            rf"^(?:because\s+|since\s+|as\s+)?(?:it|that|they|this|the\s+(?:{_C})\s+\w+?)(?:'s|"
            rf"\s+(?:is|'s|are|was|rolls|falls|"
            r"breaks|cracks|tips|wobbles|might|may|could|will|can|tends|keeps|gets))\b",
            clause.strip(),
        )
        if said and not words & set(L.ACTION_VERBS):
            continue
        kept.append(clause)
    return ", ".join(c.strip() for c in kept if c.strip()) if kept else rest


def _only_says_why(rest: str) -> bool:
    """What is left beside a prohibition gives a reason, not a task ("please no touching
    the blue block, it is very fragile"): no verb of doing, a copula or no place at all."""
    # a tag ("..., okay? thanks, love") asks nothing
    rest = re.sub(
        r"\b(?:okay|ok|alright|all\s+right|right|yeah|got\s+it|understood|clear|deal|heard|"
        r"copy)\s*\?",
        "",
        rest,
    )
    words = set(re.findall(r"[a-z']+", rest))
    if words & (
        set(L.ACTION_VERBS) | {"stack", "sort", "goes", "go", "belongs", "should", "needs"}
    ):
        return False
    if (
        "?" in rest
        or words & {"tell", "show", "say", "where", "what", "which", "how", "why"}
        or re.match(r"\s*(?:[,.;:-]\s*)?(?:is|are|does|do|can)\b", rest)
    ):
        return False  # a question beside it is answered
    return bool(words & {"is", "are", "was", "'s", "because", "since"}) or not re.search(
        r"\b(?:in|into|onto|on|to)\b", rest
    )


def _clarify(out: Any, candidates: list[str], kind: str, phrase: str, cons: Constraints) -> Any:
    cols = [c.split("_")[0] for c in candidates]
    said = cols[0] if len(cols) == 1 else ", ".join(cols[:-1]) + " or " + cols[-1]
    noun = "bin" if kind == "bin" else "place" if kind == "place" else "block"
    if kind == "place":
        question = f"Where should it go: {said}?"
    else:
        question = f"Which {noun}: {said}?"
    return out(
        CLARIFY,
        constraints=cons,
        question=question,
        candidates=list(candidates),
        reason=f"{phrase.strip()!r} fits more than one {noun}",
    )


_MOVE = (
    r"(?:put|place|drop|move|set|stack|push|pick\s+up|pick|lift|raise|grab|take|carry|throw|"
    r"toss|slide|shove|bring)"
)


def _impossible(text: str, world: WorldState) -> str | None:
    """Requests that no plan can satisfy, refused before any motion."""
    t = text
    if re.search(
        r"\b(?:pull|take|lift)\s+(?:the\s+)?(?:whole\s+|entire\s+)?drawer\s+(?:off|away|free|out\s+of\s+(?:the|its)\s+"
        r"(?:cabinet|table|frame))\b|\b(?:rip|yank|detach|remove|tear)\s+(?:the\s+)?(?:whole\s+|entire\s+)?drawer"
        r"(?:\s+(?:off|out|away|free))?\b|\b(?:put|place|drop|stack)\s+(?:the\s+)?(?:whole\s+)?drawer\s+(?:in|into|on|onto)\b",
        t,
    ):
        return "the drawer is fixed to its cabinet: I can only open and close it"
    if re.search(
        r"\b(?:throw|toss|drop|chuck|smash)\b[^,;.]*\b(?:on|onto|to)\s+the\s+floor\b|"
        r"\bthrow\s+\w+\s+away\b",
        t,
    ):
        return "I can only put things in the bins, on blocks or on the table, never off it"
    if (
        re.search(r"\b(?:at\s+the\s+same\s+time|simultaneously|at\s+once|both\s+at\s+once)\b", t)
        and len(
            re.findall(
                rf"\b(?:in|into|on|onto)\s+(?:the\s+)?(?:(?:\w+\s+)?(?:bin|block|cube|drawer|"
                rf"one)\b|(?:{_C})\b)",
                t,
            )
        )
        >= 2
    ):
        return "one block can be in only one place at a time"
    thing = re.search(
        rf"\b{_MOVE}\s+(?:up\s+)?(?:the\s+)?(?P<f>drawer|button|lamp|light|cabinet)\s+"
        r"(?:on|onto|in|into|to|on\s+top\s+of)\b",
        t,
    )
    if thing:
        return f"the {thing.group('f')} is fixed in place; I can only move the blocks"
    first = re.match(
        r"^(?:please\s+)?(?:(?:could|can|would|will)\s+you\s+(?:please\s+)?)?(?:just\s+)?([a-z]+)\b",
        t,
    )
    if first and first.group(1) in L.IMPOSSIBLE_VERBS | L.IMPOSSIBLE_ACTS:
        what = "" if first.group(1) in L.IMPOSSIBLE_ACTS else " anything"
        return f"I cannot {first.group(1)}{what}: I can pick, place, stack and push the blocks" + (
            ", open and close the drawer and press the button" if world.drawer else ""
        )
    m = re.search(
        rf"\b{_MOVE}\s+(?:up\s+)?(?:the\s+)?(?:(?:whole|entire|big|heavy)\s+)?(?:(?:{_C})\s+)?"
        r"(?P<thing>bin|bins|table|robot|arm|wall|floor|basket|container)\b",
        t,
    )
    if m and not re.search(r"\b(?:in|into|from|out\s+of|on|onto)\s*$", t[: m.start("thing")]):
        fixed = m.group("thing")
        if fixed in ("bin", "bins", "basket", "container"):
            return "the bins are fixed to the table; I can only move the blocks"
        return f"the {fixed} cannot be moved; I can only move the blocks"
    m = re.search(
        rf"\b(?:put|place|stack|set|drop)\s+(?:the\s+)?(?P<a>{_C})\s+(?:block|cube|brick|one)\s+"
        rf"(?:on|onto|on\s+top\s+of|in|into)\s+(?:(?:it)self|the\s+same\s+(?:block|cube))\b",
        t,
    )
    if m:
        return f"the {m.group('a')} block cannot be put on itself"
    m = re.search(
        rf"\b(?:in|into|inside)\s+(?:the\s+)?(?P<a>{_C})\s+(?:block|cube|brick)\b",
        t,
    )
    if m and re.search(rf"\b{_MOVE}\b", t[: m.start()]):
        return "a block cannot hold anything inside it; put things in a bin or on a block"
    m = re.match(
        rf"^(?:please\s+)?(?:put|place|set|move|drop|park|stand|"
        rf"leave)\s+(?:the\s+)?(?:{_C})\s+(?:block|cube|brick|one)\s+"
        rf"(?P<rel>next\s+to|beside|besides|near|by|alongside|close\s+to|right\s+next\s+to|"
        rf"where\s+the\s+(?:{_C})\s+"
        r"(?:block|cube|brick|one)\s+(?:is|was|sits))\b",
        t,
    )
    if m:
        if m.group("rel").startswith("where"):
            return (
                "that spot is taken by the block there; I can put a block in a bin, on a block "
                "or in a region of the table"
            )
        return (
            f"I cannot put a block {m.group('rel')} another one: I can put it in a bin, on a block "
            "or in a region of the table (left, right, front, back, centre)"
        )
    ords = "|".join(k for k, v in L.ORDINALS.items() if v > 0)
    m = re.search(rf"\bthe\s+(?P<o>{ords})\s+(?P<n>bin|basket|box|block|cube|brick)\b", t)
    if m:
        have = len(world.bins) if m["n"] in ("bin", "basket", "box") else len(world.objects)
        if L.ORDINALS[m["o"]] > have:
            noun = "bin" if m["n"] in ("bin", "basket", "box") else "block"
            return f"there {'is' if have == 1 else 'are'} only {have} {noun}" + (
                "s here" if have != 1 else " here"
            )
    m = re.search(rf"\b{_MOVE}\b[^,;]*\b(?:in|into)\s+(?:the\s+)?(?:robot|gripper|hand|table)\b", t)
    if m and not re.search(r"\bhand\b.*\bhome\b", t):
        return "I can only put blocks in the bins, on other blocks or on the table"
    return None


_AMBIG_NOTES = {
    "which block?": "block",
    "which bin?": "bin",
    "'it' does not refer to one block": "block",
    "'them' refers to nothing": "block",
}


def _bare_block(text: str, world: WorldState) -> str | None:
    """ "the block" with nothing that could say which (no colour, shade, quantifier,
    pronoun or relation after it) in a scene of several: the phrase, else None."""
    from bridge.grounding import colours_named

    bare = re.search(
        r"\b(?:the|that|this)\s+(?:block|cube|brick)\b(?!\s+(?:of|that|which|who|whose|on|under|"
        r"from|"
        r"next|nearest|closest|farthest|furthest|between|beside|by|near|colou?red|like|with|you|"
        r"i|held|"
        r"sitting|resting|lying)\b|\s+in\s+(?:the\s+)?(?:red|green|blue|yellow)\b)",
        text,
    )
    if (
        bare is None
        or len(world.objects) < 2
        or world.held_object
        or re.search(rf"\b(?:{_C})\b(?!\s+{_BIN})", text)
        or re.search(r"\b(?:all|every|each|both|any|blocks|cubes|them|it)\b", text)
    ):
        return None
    plain_bins = set(re.findall(rf"\b({_C})\s+{_BIN}\b", text))
    return None if colours_named(text) - plain_bins else bare.group(0)


_DEICTIC = re.compile(
    # not what the speaker does ("so I can grab something")
    r"(?<!\bi\scan\s)(?<!\bi\swill\s)(?<!\bi'll\s)"
    r"\b(?:pick\s+up|pick|grab|take|lift|get|move|put|place|drop|push|fetch|bring|stack|hand\s+me)"
    r"\s+(?P<d>that|this|one|something|that\s+thing|this\s+thing)\b(?!\s+(?:of|is|which|that|"
    r"more|block|cube|brick|bin))"
)


def _deictic(text: str, world: WorldState) -> str | None:
    """ "grab that", "pick one up", "put this in the red bin": a thing pointed at (or any
    one, said so briefly that it may be a pointing) with nothing held and no colour that
    could say which, in a scene of several."""
    m = _DEICTIC.search(text)
    bare_it = re.match(
        r"^(?:please\s+)?(?:move|pick\s+up|pick|grab|take|lift|get|put|place|drop|push|bring|stack|"
        r"shove|slide|nudge|raise|carry|toss|throw|fetch|hold|set)\s+it\b"
        r"(?:\s+up)?(?:\s+(?:away|over|down|somewhere|there|here|please|now))*\s*[.!]*$",
        text,
    )
    if bare_it and len(world.objects) > 1 and not world.held_object:
        return "it"  # "move it" with nothing held and nothing named: which?
    if (
        m is None
        or len(world.objects) < 2
        or world.held_object
        or re.search(rf"\b(?:{_C})\b(?!\s+{_BIN})", text)
        or re.search(r"\b(?:all|every|each|both|any|blocks|cubes|them|it)\b", text)
    ):
        return None
    from bridge.grounding import colours_named

    if colours_named(text) - set(re.findall(rf"\b({_C})\s+(?:bin|basket|box)\b", text)):
        return None  # a shade or a thing of a colour names the block
    return m.group("d")


#: Words of order in a stack or a sequence that the rules do not read but a model may
#: (spatial words are not among them: the selectors resolve those exactly, or ask).
_NARROWING = re.compile(
    r"\b(?:top|bottom|(?:the|a)\s+(?:stack|tower|pile)|upper|lower|highest|lowest|others|"
    r"remaining|rest|"
    r"last|first|same|either|biggest|smallest|under|below|above|beneath|underneath)\b"
)


def _vague_place(text: str, world: WorldState) -> tuple[str, list[str], str] | None:
    """ "put it over there": where is asked."""
    if re.search(
        r"\b(?:over\s+there|over\s+here|there|here|that\s+way|this\s+way)\s*[.!?]*$", text
    ) and re.search(rf"\b{_MOVE}\b", text):
        return "place", [b.name for b in world.bins], "there"
    top = re.search(rf"\b{_MOVE}\b.*\bon\s+top\s*[.!?]*$", text)
    if top:  # "put the red block on top": on top of which one?
        mover = re.findall(rf"\b({_C})\s+(?:block|cube|brick|one)\b", text)
        cands = [o.name for o in world.objects if o.name.split("_")[0] not in mover]
        if len(cands) > 1:
            return "block", cands, "on top"
    return None


def _ambiguous(text: str, world: WorldState) -> tuple[str, list[str], str] | None:
    """(kind, candidates, phrase) when the rules find a reference that fits several things
    and nothing in the text (no shade, no thing of a colour, no relation) could narrow it."""
    from bridge.grounding import colours_named
    from planner.rules import parse as rules_parse

    phrase = _bare_block(text, world) or _deictic(text, world)
    if phrase is not None:
        return "block", [o.name for o in world.objects], phrase
    r = rules_parse(text, world)
    if r.confident:
        return None
    kind = next((_AMBIG_NOTES[n] for n in r.notes if n in _AMBIG_NOTES), None)
    pronoun = bool(
        re.search(
            r"\b(?:that|this)\s+one\b|\b(?:one\s+of\s+them|(?<!any\sof\s)them|"
            r"the\s+other(?:\s+one)?)\b",
            text,
        )
        and not re.search(rf"\b(?:{_C})\b(?!\s+{_BIN})", text)
        and not re.search(r"\b(?:all|every|each|both|blocks|cubes)\b", text)
        and not world.held_object
    )
    if kind is None and pronoun:
        kind = "block"
    if kind is None:
        return _vague_place(text, world)
    # a shade, a thing of a colour or a misspelt colour ("blu"), or a word of relation: the
    # model can narrow it
    named = colours_named(text)
    if not pronoun and _NARROWING.search(text):
        return None
    plain = {w for w in re.findall(r"[a-z]+", text) if w in L.COLOURS}
    as_block = {m.group(1) for m in re.finditer(rf"\b({_C})\b(?!\s+{_BIN})", text)}
    if named - plain:
        return None  # a shade or a thing of a colour: the model can narrow it
    if re.search(r"\b(?:of\s+its|their|matching|same|corresponding|respective|own)\b", text):
        return None
    if re.search(r"\b(?:colou?r\s+of|like\s+a|that\s+looks)\b", text):
        return None
    if kind == "bin":
        cands = [b.name for b in world.bins]
        if len(cands) < 2:
            return None
        blocks = [o.name for o in world.objects]
        if not as_block and len(blocks) > 1 and re.search(r"\b(?:block|cube|brick|one)\b", text):
            return "block", blocks, "the block"  # the mover first; the bin is asked next
        return "bin", cands, "the bin"
    held = world.held_object
    if held and re.search(r"\b(?:it|them)\b", text):
        return None
    pron = re.search(r"\b(?:it|them)\b", text)
    if pron and kind == "block" and as_block and re.search(rf"\b(?:{_C})\b", text[: pron.start()]):
        return None  # "grab the green block. now put it in the red bin": it is the green one
    cands = [o.name for o in world.objects if o.name.split("_")[0] not in as_block]
    if len(cands) < 2:
        return None
    return "block", cands, "the block" if "it" not in text.split() else "it"
