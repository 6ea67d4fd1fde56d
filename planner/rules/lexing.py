"""Text to tokens, and tokens to noun phrases: what the words between a verb, a preposition
and a clause boundary name."""

from __future__ import annotations

from dataclasses import dataclass, field

import planner.rx as re
from planner.rules.vocabulary import (
    BIN_NOUNS,
    BLOCK_NOUNS,
    EXCEPT,
    FILLER,
    HOME_WORDS,
    KNOWN_COLORS,
    MATCH,
    OTHER_COLORS,
    OTHER_THINGS,
    PRONOUN_MANY,
    PRONOUN_ONE,
    QUANTS,
    REGION_WORDS,
)

POINT_RE = re.compile(
    r"[\[(]\s*x?\s*=?\s*(-?\d*\.?\d+)\s*(?:m\b)?\s*,\s*y?\s*=?\s*(-?\d*\.?\d+)\s*(?:m\b)?\s*[\])]"
)
PHRASES: list[tuple[str, str]] = [
    # politeness and wishes: "I'd like you to put ...", "hey robot, I need X in Y please"
    (r"\b(?:(?:i|we) (?:would like|want|need)|id like|wed like) (?:you )?to\b", " "),
    (r"\bthank(?:s| you)\b", " "),
    (r"\bfor me\b", " "),
    (r"\bgo ahead and\b", " "),
    (r"\bgo and\b", " "),
    (r"\b(?:(?:i|we) (?:would like|want|need)|id like|wed like)\b", " want "),
    # "X should be / needs to be / has to go in Y" reads as "X goes in Y"
    (
        r"\b(?:should|must|needs? to|has to|have to|ought to|(?:is|are) supposed to) "
        r"(?:be|go|end up)\b",
        " goes ",
    ),
    (r"\bends? up\b", " goes "),
    # "slide it over to the middle", "move it across to the left"
    (r"\b(?:over|across|right|all the way) (to|onto|into|towards?)\b", r" \1 "),
    (r"\bon top of\b", " onto "),
    (r"\bon to\b", " onto "),
    (r"\bin to\b", " into "),
    (r"\binside of\b", " inside "),
    (r"\bpick up\b", " pick "),
    (r"\bpick it up\b", " pick it "),
    (r"\bpick them up\b", " pick them "),
    (r"\bput down\b", " put "),
    (r"\bset down\b", " put "),
    (r"\bnext to\b", " nextto "),
    (r"\bin front of\b", " infrontof "),
    (r"\bafter that\b", " then "),
    (r"\bonce done\b", " then "),
    (r"\blet go\b", " release "),
    (r"\bgo home\b", " home "),
    (r"\bgo back home\b", " home "),
    (r"\breturn home\b", " home "),
    (r"\bcome back home\b", " home "),
    (r"\bmove home\b", " home "),
    (r"\breturn to (?:the )?(?:home|rest|start|starting|initial|neutral)\b", " home "),
    (r"\bgo (?:back )?to (?:the )?(?:home|rest|start|starting|initial|neutral)\b", " home "),
    (r"\bmove (?:the arm )?(?:back )?to (?:the )?(?:home|rest)\b", " home "),
    (r"\bthe arm home\b", " home "),
    (r"\bthe robot home\b", " home "),
    # what is left of "the rest" after the home phrases is the remaining blocks, not home
    (r"\bthe rest\b", " the others "),
    # "every block on the table": the blocks not yet put away, which "every block" plans
    (
        r"\b((?:every|each|all(?:\s+the)?)\s+(?:blocks?|cubes?|bricks?))\s+(?:that\s+is\s+|that's\s+)?on\s+the\s+table\b",
        r"\1",
    ),
    (r"\bcolour", " color"),
    (r"\bblock's\b", " block "),
    # exclusions: "except (for)", "other than", "apart from", "excluding", and "but" after
    # a quantifier ("all blocks but the blue one"; elsewhere "but" is not understood)
    (r"\b(?:except for|except|other than|apart from|excluding|besides)\b", " except "),
    (r"\b((?:all|every|each|everything|any)\b(?:\s+(?!but\b)[a-z]+){0,2}?)\s+but\b", r"\1 except"),
]


@dataclass
class Phrase:
    """A noun phrase: what the words between verb/preposition/boundary name."""

    colors: list[str] = field(default_factory=list)
    other_colors: list[str] = field(default_factory=list)
    noun: str | None = None  # "block" | "bin" | "thing:<word>"
    plural: bool = False
    quant: bool = False
    pronoun: str | None = None  # "one" | "many"
    match: bool = False
    region: str | None = None
    point: list[float] | None = None
    home: bool = False
    unknown: list[str] = field(default_factory=list)
    #: colours after "except": blocks a quantifier leaves out
    excluded: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (
            self.colors
            or self.other_colors
            or self.noun
            or self.quant
            or self.pronoun
            or self.match
            or self.region
            or self.point
            or self.home
        )


def normalise(text: str) -> tuple[list[str], list[list[float]]]:
    s = " " + text.lower().strip() + " "
    points: list[list[float]] = []

    def _pt(m: re.Match) -> str:
        points.append([float(m.group(1)), float(m.group(2))])
        return f" pt{len(points) - 1} "

    s = POINT_RE.sub(_pt, s)
    s = s.replace("’", "'")
    s = re.sub(r"[^a-z0-9_,;'\s]", " ", s)
    s = re.sub(r"'s\b", " ", s)
    s = s.replace("'", "")
    s = re.sub(r"([,;])", r" \1 ", s)
    for pat, rep in PHRASES:
        s = re.sub(pat, rep, s)
    return s.split(), points


def phrase_of(tokens: list[str], points: list[list[float]]) -> Phrase:  # noqa: C901 - token table
    p = Phrase()
    excluding = False
    for t in tokens:
        if t == EXCEPT:
            excluding = True
        elif excluding and t in KNOWN_COLORS:
            p.excluded.append(t)
        elif excluding and t in OTHER_COLORS:
            p.other_colors.append(t)
        elif t in KNOWN_COLORS:
            p.colors.append(t)
        elif t in OTHER_COLORS:
            p.other_colors.append(t)
        elif t in BLOCK_NOUNS:
            p.noun = p.noun or "block"
            p.plural = p.plural or t.endswith("s")
        elif t in BIN_NOUNS:
            p.noun = "bin"
            p.plural = p.plural or (t.endswith("s") and t != "box")
        elif t in OTHER_THINGS:
            p.noun = f"thing:{t}"
        elif t in QUANTS:
            p.quant = True
            if t == "everything":
                p.noun = p.noun or "block"
        elif t in PRONOUN_ONE:
            p.pronoun = "one"
        elif t in PRONOUN_MANY:
            p.pronoun = "many"
        elif t in MATCH:
            p.match = True
        elif t in REGION_WORDS:
            # "the back" is a region; "back" as in "put it back" is filler (handled by caller)
            p.region = REGION_WORDS[t]
        elif re.fullmatch(r"pt\d+", t):
            p.point = points[int(t[2:])]
        elif t in HOME_WORDS:
            p.home = True
        elif t in FILLER or t in {",", "and", "or"}:
            continue
        else:
            p.unknown.append(t)
    return p
