"""Tokens to clauses: where one clause ends and the next begins, the verb and its inverted
forms ("the red block goes in the blue bin", "into the green bin, put the red block"), the
object, the destination and a source ("from the blue bin"), and clauses about a device."""

from __future__ import annotations

from dataclasses import dataclass

from planner.rules.lexing import Phrase, phrase_of
from planner.rules.result import Refuse, Unsure
from planner.rules.vocabulary import (
    BIN_NOUNS,
    BLOCK_NOUNS,
    BOUNDARY,
    DEVICE_EXTRA,
    DEVICE_NOUNS,
    DEVICE_VERBS,
    EXCEPT,
    FILLER,
    KNOWN_COLORS,
    POSTFIX_VERBS,
    PREPS,
    PRONOUN_ONE,
    SOURCE_PREPS,
    STACK,
    VERBS,
)


@dataclass
class ParsedClause:
    verb: str | None
    verb_word: str | None
    obj: Phrase
    prep: str | None
    target: Phrase | None
    unknown: list[str]
    #: a "from/out of" phrase naming a thing rather than a block or bin ("out of the
    #: drawer"): judged against the world (the drawer exists only in the articulated scene)
    source_thing: Phrase | None = None


def _content(t: str) -> bool:
    """A word that carries meaning (not filler, punctuation or a joining word)."""
    return t not in FILLER and t not in {",", "and", "to"}


def split_clauses(tokens: list[str]) -> list[list[str]]:
    """Split at 'then', ';', and at ','/'and' when a new verb or a new destination follows;
    then join a fronted destination to its clause ("into the green bin, put the red block")."""
    clauses: list[list[str]] = []
    cur: list[str] = []
    for i, t in enumerate(tokens):
        if t == ";" or t in BOUNDARY:
            clauses.append(cur)
            cur = []
        elif t in {",", "and"} and cur and _starts_new_clause(cur, tokens[i + 1 :]):
            clauses.append(cur)
            cur = []
        else:
            cur.append(t)
    clauses.append(cur)
    clauses = [c for c in clauses if any(t not in FILLER and t not in {",", "and"} for t in c)]
    return _join_fronted_destinations(clauses)


def _starts_new_clause(cur: list[str], after: list[str]) -> bool:
    """At a ',' or 'and' between ``cur`` and ``after``: does a new clause begin?"""
    nw = next((t for t in after if t not in FILLER or t in VERBS), None)
    if nw is not None and (nw in VERBS or nw in BOUNDARY):
        return True
    rest: list[str] = []
    for u in after:
        if u in {",", ";", "and"} or u in BOUNDARY:
            break
        rest.append(u)
    # "put the red block in the red bin and the blue block in the blue bin": the verb is
    # elided in the second clause; "pick up the red block, and the blue one" stays one
    return _has_prep(cur) and _has_prep(rest) and _verb_index(cur) is not None


def _has_prep(tokens: list[str]) -> bool:
    return any(t in PREPS for t in tokens)


def _fronted_prep(tokens: list[str]) -> int | None:
    """Index of the verb when ``tokens`` open with a destination ("in the blue bin, place
    the green block"): a preposition first, a verb later, no preposition after the verb."""
    first = next((i for i, t in enumerate(tokens) if _content(t) or t == "to"), None)
    vi = _verb_index(tokens)
    if first is None or tokens[first] not in PREPS or vi is None or vi < first:
        return None
    return None if _has_prep(tokens[vi + 1 :]) else vi


def _join_fronted_destinations(clauses: list[list[str]]) -> list[list[str]]:
    """A verbless clause that is only a destination joins the verb clause after it."""
    out: list[list[str]] = []
    i = 0
    while i < len(clauses):
        c = clauses[i]
        lead = next((t for t in c if _content(t)), None)
        if i + 1 < len(clauses) and _verb_index(c) is None and lead == EXCEPT:
            # "except for the blue block, move every cube ...": the exclusion goes last
            out.append(clauses[i + 1] + c)
            i += 2
            continue
        if (
            i + 1 < len(clauses)
            and _verb_index(c) is None
            and _fronted_prep(c + clauses[i + 1]) is not None
        ):
            out.append(c + clauses[i + 1])
            i += 2
        else:
            out.append(c)
            i += 1
    return out


def _verb_index(tokens: list[str]) -> int | None:
    """The clause's verb. A postfix verb ("goes") counts only after some content word: in
    "go put the red block ..." the verb is "put"."""
    for i, t in enumerate(tokens):
        if t in POSTFIX_VERBS and not any(_content(u) for u in tokens[:i]):
            continue
        if t in VERBS:
            return i
    return None


def _clause_words(tokens: list[str]) -> tuple[str | None, list[str], list[str]]:
    """(verb word, words after it in reading order, words before it that are not understood).

    Reorders the two inverted forms into "verb object prep target": a postfix verb
    ("the red block goes in the blue bin") and a fronted destination ("into the green bin,
    put the red block")."""
    vi = _verb_index(tokens)
    if vi is None:
        return None, tokens, []
    verb_word = tokens[vi]
    before, after = tokens[:vi], tokens[vi + 1 :]
    if verb_word in POSTFIX_VERBS:
        return verb_word, before + after, []
    if _fronted_prep(tokens) is not None:
        return verb_word, after + before, []
    unknown = [t for t in before if _content(t) and t not in POSTFIX_VERBS]
    return verb_word, after, unknown


def parse_clause(
    tokens: list[str], points: list[list[float]], prev_verb: str | None
) -> ParsedClause:
    verb_word, rest, unknown = _clause_words(tokens)
    source_thing = None
    verb = VERBS[verb_word] if verb_word is not None else prev_verb
    prep_i = next((i for i, t in enumerate(rest) if t in PREPS), None)
    src_i = next((i for i, t in enumerate(rest) if t in SOURCE_PREPS), None)
    end = prep_i if prep_i is not None else len(rest)
    if src_i is not None and src_i < end:
        # "take the red block from the blue bin (and put it ...)"
        obj_toks = rest[:src_i]
        src = phrase_of([t for t in rest[src_i + 1 : end] if t not in SOURCE_PREPS], points)
        unknown.extend(src.unknown)
        if src.noun == "thing:drawer" and not src.colors and not src.other_colors:
            source_thing = src
        elif src.other_colors or (src.noun or "").startswith("thing:"):
            raise Refuse(missing_message(src, "source"))
    else:
        obj_toks = rest[:end]
    # "put it back in the bin": 'back' before a preposition is filler, after one a region
    obj = phrase_of([t for t in obj_toks if t != "back"], points)
    target = None
    prep = None
    if prep_i is not None:
        prep = rest[prep_i]
        tgt_toks = rest[prep_i + 1 :]
        if _has_prep(tgt_toks):
            # "on the left of the ..." etc.: only "X of the table" is understood
            unknown.extend(t for t in tgt_toks if t in PREPS)
            tgt_toks = [t for t in tgt_toks if t not in PREPS]
        target = phrase_of(tgt_toks, points)
        unknown.extend(target.unknown)
        if target.excluded:
            # "put all blocks in the green bin except the red one": the exclusion is the
            # object's, wherever it is said
            obj.excluded.extend(target.excluded)
            target.excluded = []
    unknown.extend(obj.unknown)
    return ParsedClause(verb, verb_word, obj, prep, target, unknown, source_thing)


def missing_message(p: Phrase, role: str) -> str:
    if p.noun is not None and p.noun.startswith("thing:"):
        word = p.noun.split(":", 1)[1]
        colour = (p.other_colors or p.colors or [""])[0]
        return f"there is no {(colour + ' ' + word).strip()} in the scene; only blocks and bins"
    colour = p.other_colors[0]
    noun = "bin" if p.noun == "bin" else "block"
    return f"there is no {colour} {noun} in the scene"


def device_action(tokens: list[str]) -> str | None:
    """What a clause about the drawer, the button or the light asks: "open", "close",
    "press", "light_on" or "light_off"; None when it names no device or names a block or a
    bin too (a block put *into* the drawer is a move). A device clause with words the rules
    do not know is unsure, so a model reads it."""
    words = [t for t in tokens if t not in FILLER]
    nouns = {DEVICE_NOUNS[t] for t in words if t in DEVICE_NOUNS}
    if not nouns or any(
        t in BLOCK_NOUNS or t in BIN_NOUNS or t in KNOWN_COLORS or t in PRONOUN_ONE for t in words
    ):
        return None
    verbs = [DEVICE_VERBS[t] for t in words if t in DEVICE_VERBS]
    known = DEVICE_NOUNS.keys() | DEVICE_VERBS.keys() | DEVICE_EXTRA
    unknown = [t for t in words if t not in known]
    if len(nouns) != 1 or len(verbs) != 1 or unknown:
        raise Unsure(f"a request about the {'/'.join(sorted(nouns))} the rules do not read")
    noun, verb = nouns.pop(), verbs[0]
    if noun == "drawer" and verb in ("open", "close"):
        return verb
    if noun == "button" and verb == "press":
        return "press"
    if noun == "light" and verb == "turn" and ("on" in words) != ("off" in words):
        return "light_on" if "on" in words else "light_off"
    if noun == "light" and "toggle" in words:
        return "press"
    raise Unsure(f"{verb} the {noun}: not something the rules read")


def is_container_prep(c: ParsedClause) -> bool:
    """Whether a bare colour after the preposition names a bin ("put red into green")."""
    return c.prep in {"in", "into", "inside", "within"} and c.verb != STACK
