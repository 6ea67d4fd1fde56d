"""What a reply means in a conversation: an answer to the robot's question, or a correction
said while it works.

Why: the understanding layer (:mod:`planner.understand`) reads one utterance on its own. In
a conversation an utterance leans on what came before: "the red one" answers "Which block:
red, green or blue?", and "not that one, the yellow one" corrects the task being executed.
This module turns such a reply, together with what it leans on, into the next task text
(explicit English the planners read), never by pasting the two strings together:

- :func:`resolve_answer` reads an answer against the question's candidates: a colour word
  (or a shade, or one in another language), an ordinal ("the first", "the last", "el
  segundo"), a spatial selector ("the left one", "the nearest"), "any of them", or a whole
  new command; the chosen candidate replaces the ambiguous reference in the task.
- :func:`interpret` reads an interjection during execution: a stop, a question (answered,
  nothing stops), an addition ("also ..."), a correction ("no, the yellow one", "put it in
  the blue bin instead"; the same rules as a self-correction within one sentence,
  :mod:`planner.understand.corrections`, applied to the task being executed) or a new task.

Everything is exact rules over the shared lexicon and the world; nothing here moves the arm.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from bridge import lexicon as L
from planner.understand import CLARIFY, PLAN, Understanding, is_stop, understand
from planner.understand import corrections as corr
from planner.understand import references as refs
from planner.understand.translate import translate
from sim.world import WorldState

_C = refs._C
_BIN = refs._BIN
_BLOCK = r"(?:block|cube|brick)"

#: Ordinal words of an answer ("the second", "el primero", "la dernière"), 1-based; -1 is
#: the last. The candidates are counted in the order the question named them.
ORDINAL_WORDS: dict[str, int] = {
    **L.ORDINALS,
    "primero": 1,
    "primera": 1,
    "segundo": 2,
    "segunda": 2,
    "tercero": 3,
    "tercera": 3,
    "cuarto": 4,
    "cuarta": 4,
    "último": -1,
    "última": -1,
    "premier": 1,
    "première": 1,
    "deuxième": 2,
    "seconde": 2,
    "troisième": 3,
    "quatrième": 4,
    "dernier": -1,
    "dernière": -1,
    "erste": 1,
    "ersten": 1,
    "erster": 1,
    "erstes": 1,
    "zweite": 2,
    "zweiten": 2,
    "dritte": 3,
    "dritten": 3,
    "vierte": 4,
    "vierten": 4,
    "letzte": -1,
    "letzten": -1,
    "第一": 1,
    "第二": 2,
    "第三": 3,
    "第四": 4,
    "最後": -1,
    "最后": -1,
}
#: "You choose": the first candidate named (the question lists them in scene order).
_ANY = re.compile(
    r"^(?:any(?:\s+(?:one|of\s+them))?|either(?:\s+one)?|whichever(?:\s+one)?|"
    r"(?:it\s+)?(?:doesn't|does\s+not|don't|do\s+not)\s+(?:matter|care)|you\s+(?:choose|pick|decide)|"
    r"up\s+to\s+you|i\s+don't\s+care)\b"
)
_SPATIAL = re.compile(
    r"\b(?:left|right|front|back|near|nearest|closest|far|farthest|furthest|middle|centre|center|"
    r"leftmost|rightmost|frontmost|backmost|highest|lowest|top|bottom)\b"
)

#: A reply that says where something goes is a whole task, not a choice.
_DESTINATION = re.compile(
    rf"\b(?:in|into|on|onto|inside|to)\s+(?:the\s+)?(?:\w+\s+)?(?:{_BIN}|{_BLOCK}|table|drawer)\b"
)
#: "No" in the languages the robot reads, at the start of a correction ("nein, der gelbe").
_FOREIGN_NO = re.compile(r"^(?:nein|non|nicht|pas\s+celui-là|いいえ|不是|不)[\s,!.]*")

#: Answers the robot asks again for at most (then the run ends with the question).
MAX_REASKS = 2

ANSWERED, UNCLEAR, NEW_TASK, STOPPED = "answered", "unclear", "new_task", "stop"


@dataclass
class AnswerReading:
    """What an answer was read as: ``kind`` is ``answered`` (``choice`` is the candidate and
    ``task`` the task with it in place of the ambiguous reference), ``new_task`` (the answer
    is a whole command; ``task`` is it), ``stop``, or ``unclear`` (ask again)."""

    kind: str
    answer: str
    choice: str | None = None
    task: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "reading": self.kind,
            "answer": self.answer,
            "choice": self.choice,
            "task": self.task,
            "notes": list(self.notes),
        }


def question_kind(u: Understanding) -> str:
    """block, bin or place: what a clarifying question asks for."""
    if (u.question or "").lower().startswith("where"):
        return "place"
    cands = u.candidates or []
    if cands and all(c.endswith("_bin") for c in cands):
        return "bin"
    return "block"


def _phrase(u: Understanding) -> str | None:
    """The ambiguous words, as the understanding layer quoted them in its reason."""
    m = re.match(r"^'(?P<p>[^']+)' fits more than one", u.reason or "")
    return m.group("p") if m else None


def _english(text: str, *, keep_punctuation: bool = False) -> tuple[str, list[str]]:
    """The reply in lower-case English. A reply is short, too short for its language to be
    detected, so a word the translation left as it was is looked up in each language's
    table too ("die rote" is German), for the words a reply turns on (colours, places, no)."""
    t = re.sub(r"\s+", " ", text.replace("\u2019", "'")).strip()
    english, lang = translate(t)
    notes = [f"translated from {L.LANGUAGES[lang]}: {english!r}"] if lang != "en" else []

    def word(m: re.Match[str]) -> str:
        w = m.group(0)
        if lang != "en" or w in L.COLOURS:
            return w
        for tab in L.FOREIGN.values():
            if w in tab and _ANSWER_WORD.fullmatch(tab[w]):
                return tab[w]
        return w

    out = re.sub(r"[\w']+", word, english.lower()).strip()
    if not keep_punctuation:
        out = " ".join(re.findall(r"[\w']+", out))
    else:
        out = out.strip(" .!")
    if lang == "en" and out != " ".join(re.findall(r"[\w']+", english.lower())) and out:
        notes.append(f"read as {out!r}")
    return out, notes


#: What a foreign word of a short answer may be read as: a colour or a place word only
#: (an English word that happens to be in another language's table stays as it is).
_ANSWER_WORD = re.compile(
    rf"(?:{_C}|left|right|front|back|middle|leftmost|rightmost|nearest|no|stop)"
)


def _say(name: str) -> str:
    """How a candidate is named in a task ("the red block", "the green bin", "the drawer")."""
    if name.endswith("_block"):
        return f"the {refs._colour(name)} block"
    if name.endswith("_bin"):
        return f"the {refs._colour(name)} bin"
    return f"the {name.replace('_', ' ')}"


def _by_colour(words: str, cands: list[str]) -> list[str]:
    """The candidates whose colour the reply names; a colour said of the other kind of
    thing ("the blue bin" to "which block?") does not count."""
    from bridge.grounding import colours_named

    other = _BLOCK if cands and cands[0].endswith("_bin") else _BIN
    words = re.sub(rf"\b(?:{_C})\s+{other}s?\b", " ", words)
    said = set(re.findall(rf"\b(?:{_C})\b", words)) | colours_named(words)
    return [c for c in cands if refs._colour(c) in said]


def _by_ordinal(raw: str, words: str, cands: list[str]) -> list[str]:
    tokens = set(re.findall(r"[\w']+", words)) | set(re.findall(r"[\w']+", raw.lower()))
    tokens |= {k for k in ORDINAL_WORDS if not k.isascii() and k in raw}
    if re.fullmatch(r"\s*(?:number\s+|no\.?\s*|#)?[1-4]\s*", words):
        tokens.add(words.strip()[-1])
    idx = {ORDINAL_WORDS[t] for t in tokens if t in ORDINAL_WORDS}
    idx |= {int(t) for t in tokens if t in ("1", "2", "3", "4")}
    if len(idx) != 1:
        return []
    i = idx.pop()
    if i == -1:
        return cands[-1:]
    return [cands[i - 1]] if 1 <= i <= len(cands) else []


def _by_place(words: str, cands: list[str], world: WorldState, kind: str) -> list[str]:
    """A spatial selector ("the left one") among the candidates only: the understanding
    layer's own selectors, in a world that holds nothing else of that kind."""
    if not _SPATIAL.search(words):
        return []
    if kind == "block":
        scoped = world.model_copy(update={"objects": [o for o in world.objects if o.name in cands]})
        phrase = re.sub(r"\bones?\b", "block", words)
        if not re.search(rf"\b{_BLOCK}\b", phrase):
            phrase += " block"
    else:
        scoped = world.model_copy(update={"bins": [b for b in world.bins if b.name in cands]})
        phrase = re.sub(r"\bones?\b", "bin", words)
        if not re.search(rf"\b{_BIN}\b", phrase):
            phrase += " bin"
    if not phrase.startswith("the "):
        phrase = "the " + phrase
    try:
        res = refs.resolve(f"pick {phrase}", scoped)
    except (refs.Ambiguous, refs.Unresolvable):
        return []
    return _by_colour(res.text.removeprefix("pick "), cands) if res.text != f"pick {phrase}" else []


def substitute(u: Understanding, choice: str) -> str | None:
    """``u``'s task with ``choice`` in place of the reference that fitted several things
    (None when no such reference is found in the words)."""
    text = u.text
    kind = question_kind(u)
    said = _say(choice)
    if kind == "place":
        where = f"in {said}" if choice.endswith("_bin") else f"on {said}"
        pats = [r"\b(?:over\s+)?(?:there|here)\b", r"\b(?:that|this)\s+way\b"]
        repl = where
    elif kind == "bin":
        pats = [rf"\bthe\s+{_BIN}\b", rf"\b(?:a|one\s+of\s+the)\s+{_BIN}s?\b", rf"\b{_BIN}\b"]
        repl = said
    else:
        pats = [
            rf"\b(?:the|that|this)\s+(?:{_BLOCK}|one)\b",
            r"\bone\s+of\s+them\b",
            r"\bthe\s+other(?:\s+one)?\b",
            r"\bit\b",
            r"\bthem\b",
        ]
        repl = said
    phrase = _phrase(u)
    if phrase and kind != "place" and phrase not in ("it", "them"):
        pats.insert(0, re.escape(phrase))
    for p in pats:
        m = re.search(p, text)
        if m:
            return text[: m.start()] + repl + text[m.end() :]
    return None


def resolve_answer(question: Understanding, answer: str, world: WorldState) -> AnswerReading:
    """Read ``answer`` to the clarifying ``question`` (a ``clarify`` understanding)."""
    if question.kind != CLARIFY or not question.candidates:
        raise ValueError("resolve_answer needs a clarify understanding with candidates")
    cands = list(question.candidates)
    words, notes = _english(answer)
    if not words:
        return AnswerReading(UNCLEAR, answer, notes=notes + ["the answer is empty"])
    if is_stop(words):
        return AnswerReading(STOPPED, answer, notes=notes)
    kind = question_kind(question)
    # a whole command is a new task, unless it only names the choice ("put the red one")
    whole = understand(answer, world)
    if whole.kind == PLAN and _has_verb(words) and _DESTINATION.search(words):
        return AnswerReading(NEW_TASK, answer, task=whole.text, notes=notes + whole.notes)
    found = _by_colour(words, cands)
    how = "colour"
    if not found:
        found, how = _by_ordinal(answer, words, cands), "ordinal"
    if not found:
        found, how = _by_place(words, cands, world, kind), "place"
    if not found and _ANY.match(words):
        found, how = cands[:1], "any"
    if len(found) != 1:
        why = "names none of" if not found else "fits several of"
        return AnswerReading(UNCLEAR, answer, notes=notes + [f"{words!r} {why} {', '.join(cands)}"])
    choice = found[0]
    task = substitute(question, choice)
    if task is None:
        return AnswerReading(
            UNCLEAR, answer, choice, notes=notes + ["no reference to replace in the task"]
        )
    notes.append(f"{answer!r} is {choice} (by {how}): {task!r}")
    return AnswerReading(ANSWERED, answer, choice, task, notes)


YES, NO = "yes", "no"
_YES = re.compile(
    r"^(?:yes|yeah|yep|yup|correct|right|exactly|sure|ok|okay|please\s+do|do\s+it|go\s+ahead|"
    r"that's\s+(?:it|right)|that\s+is\s+right|affirmative|sí|si|oui|ja|genau|はい|是|对|好)\b"
)
_NO = re.compile(
    r"^(?:no|nope|nah|wrong|incorrect|not\s+(?:that|really|quite)|that's\s+(?:wrong|not\s+it)|"
    r"nein|non|いいえ|不是|不对|不)\b"
)


def confirmation(reply: str, world: WorldState) -> tuple[str, str | None]:
    """A reply to "Do you mean: ...?": ``(yes | no | stop | new_task | unclear, task)``,
    ``task`` the command a reply that is a whole command gives instead."""
    words, _ = _english(reply)
    raw = reply.strip().lower()
    if not words and not raw:
        return UNCLEAR, None
    if _YES.match(words) or _YES.match(raw):
        return YES, None
    whole = understand(reply, world)
    if whole.kind == PLAN and _has_verb(words):
        return NEW_TASK, whole.text
    no = _NO.match(words) or _NO.match(raw)
    if no and not is_stop(words[no.end() :] if _NO.match(words) else ""):
        return NO, None  # a bare "no" is the answer, not a stop word here
    if is_stop(words):
        return STOPPED, None
    return UNCLEAR, None


def reask(question: str) -> str:
    """The question again after an answer that did not say which."""
    return f"Sorry, I did not get that. {question}"


# ----------------------------------------------------------------------------- interjections
STOP, QUESTION, ADDITION, CORRECTION, REPLACE = (
    "stop",
    "question",
    "addition",
    "correction",
    "new_task",
)
INTERJECTION_KINDS = (STOP, QUESTION, ADDITION, CORRECTION, REPLACE)

_ALSO = re.compile(
    r"^(?:and\s+)?(?:also|additionally|in\s+addition|plus|and\s+then|then|after\s+that|afterwards|"
    r"when\s+you(?:'re|\s+are)\s+done|once\s+you(?:'re|\s+are)\s+done)\b[\s,]*"
)
_ALSO_TAIL = re.compile(r"[\s,]+(?:as\s+well|too|also)\s*[.!]*$")
_CORRECTS = re.compile(
    r"^(?:no|nope|not\s+that|wait|actually|sorry|oops|i\s+mean(?:t)?|rather|wrong|change\s+of\s+plan|"
    r"scratch\s+that|make\s+(?:it|that))\b|\binstead\b|^(?:the\s+)?(?:other|another)\b|^(?:the\s+)?"
    rf"(?:{_C})\b"
)


@dataclass
class Interjection:
    """An utterance said while the robot works, read against the task being executed:
    ``kind`` is one of :data:`INTERJECTION_KINDS`; ``task`` the task from now on (None for
    a stop or a question); ``reply`` the robot's answer to a question."""

    kind: str
    utterance: str
    task: str | None = None
    reply: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def stops_motion(self) -> bool:
        """Everything but a question supersedes the motion under way."""
        return self.kind != QUESTION

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "utterance": self.utterance,
            "task": self.task,
            "reply": self.reply,
            "notes": list(self.notes),
        }


def _has_verb(text: str) -> bool:
    verbs = set(L.ACTION_VERBS) | {"stack", "pick", "push", "put", "home", "sort"}
    return any(w in verbs for w in re.findall(r"[a-z]+", text))


def _object_of(task: str, acting_on: str | None) -> str | None:
    """The block the task is about: the one the current skill acts on, else the first named."""
    if acting_on:
        return acting_on
    m = re.search(rf"\b({_C})\s+(?:{_BLOCK}|one)\b", task)
    return f"{m.group(1)}_block" if m else None


def interpret(
    utterance: str, task: str, world: WorldState, *, acting_on: str | None = None
) -> Interjection:
    """Read ``utterance``, said while ``task`` (the task text being executed, as the planners
    read it) runs in ``world``; ``acting_on`` is the block the current skill moves, which a
    pronoun in the correction means ("put it in the blue bin instead")."""
    english, notes = _english(_FOREIGN_NO.sub("no, ", utterance.strip()), keep_punctuation=True)
    if not english or is_stop(english):
        return Interjection(STOP, utterance, notes=notes)
    obj = _object_of(task, acting_on or world.held_object)
    alone = understand(english, world)
    if alone.kind == "answer":
        return Interjection(QUESTION, utterance, reply=alone.answer, notes=notes)
    if alone.kind == "stop":
        return Interjection(STOP, utterance, notes=notes)
    m = _ALSO.match(english)
    tail = _ALSO_TAIL.search(english)
    if m or tail:
        rest = english[m.end() :] if m else english
        rest = _ALSO_TAIL.sub("", rest).strip(" ,.")
        if not _has_verb(rest):
            rest = f"put {rest}"  # "also the yellow one in the red bin"
        combined = f"{task.rstrip(' .')}, then {rest}"
        return Interjection(ADDITION, utterance, combined, notes=notes + [f"added: {rest!r}"])
    if _CORRECTS.search(english) or not _has_verb(english):
        swapped = _other_block(english, task, obj)
        if swapped is not None:
            return Interjection(CORRECTION, utterance, swapped[0], notes=notes + swapped[1])
        said = english
        if obj and re.search(r"\b(?:it|that)\b", said) and _has_verb(said):
            said = re.sub(r"\b(?:it|that)\b", _say(obj), said, count=1)
        marker = (
            "" if re.match(r"^(?:no|not\s+that|wait|actually|sorry|i\s+mean)\b", said) else "no, "
        )
        fixed, cnotes = corr.apply(f"{task.rstrip(' .')}, {marker}{said}")
        return Interjection(CORRECTION, utterance, fixed, notes=notes + cnotes)
    return Interjection(REPLACE, utterance, english, notes=notes + ["a new task replaces the old"])


_MARKERS = re.compile(
    r"^(?:(?:no|nope|not\s+that(?:\s+one)?|not\s+this(?:\s+one)?|wait|actually|sorry|oops|"
    r"i\s+mean(?:t)?|rather|wrong(?:\s+one)?)\b[\s,;.!:-]*)+"
)


def _other_block(english: str, task: str, obj: str | None) -> tuple[str, list[str]] | None:
    """ "(not that one,) the yellow one (in the red bin)": the block being moved is the one
    corrected (a bin of the same colour in the task is not), then any destination said."""
    rest = _MARKERS.sub("", english).strip()
    m = re.fullmatch(
        rf"(?:the\s+)?(?P<c>{_C})\s+(?:{_BLOCK}|one)(?:\s+instead)?(?P<tail>\s+.*)?", rest
    )
    if m is None or obj is None:
        return None
    mine = re.search(rf"\b(?:the\s+)?{refs._colour(obj)}\s+(?:{_BLOCK}|one)\b(?!\s+{_BIN})", task)
    if mine is None:
        return None
    new = f"the {m.group('c')} block"
    out = task[: mine.start()] + new + task[mine.end() :]
    notes = [f"the block being moved, {_say(obj)}, is now {new}"]
    tail = (m.group("tail") or "").strip()
    if tail:
        out, more = corr.apply(f"{out}, no, {tail}")
        notes += more
    return re.sub(r"\s+instead\b", "", out), notes


def put_down_first(task: str, world: WorldState) -> str:
    """A task that does not name the block the gripper holds would leave it dangling (the
    planners refuse to move anything else while it is held): it is set down on the table
    first."""
    held = world.held_object
    if not held:
        return task
    named = rf"\b{refs._colour(held)}\s+(?:{_BLOCK}|one)\b(?!\s+{_BIN})"
    if re.search(named, task) or re.search(r"\bit\b", task):
        return task
    return f"put {_say(held)} on the table center, then {task}"
