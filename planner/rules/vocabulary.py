"""The words the rules planner reads and what each does in a command.

The colours, nouns, things, regions, verbs, quantifiers and device words are the shared
lexicon's (:mod:`bridge.lexicon`): one definition for the rules, the understanding layer,
the bridge's grounding check, the training corpus and typo repair. What is only the parser's
business (prepositions, pronouns, filler, clause boundaries) is defined here.
"""

from __future__ import annotations

from bridge import lexicon as L
from sim import scene

# ----------------------------------------------------------------------------- vocabulary
# The words are the shared lexicon's (bridge.lexicon): one definition for the rules, the
# understanding layer and the bridge's grounding check.
BLOCK_NOUNS = set(L.BLOCK_NOUNS)
BIN_NOUNS = set(L.RULES_BIN_NOUNS)
KNOWN_COLORS = set(scene.CUBE_COLORS) | set(scene.BIN_COLORS)
OTHER_COLORS = set(L.OTHER_COLORS)
#: Shades of the scene's own colours (navy, golden, maroon...) are neither refused as absent
#: colours nor guessed: they are words the rules do not know, so a model is asked.
OTHER_THINGS = set(L.OTHER_THINGS)
REGION_WORDS = dict(L.REGION_WORDS)
# verb -> category
MOVE, STACK, PUSH, PICK, HOME, SORT = "move", "stack", "push", "pick", "home", "sort"
VERBS = dict(L.VERB_SENSES)
#: Verbs whose object comes before them ("X goes in Y", "X should be on Y").
POSTFIX_VERBS = {"goes", "go", "belongs", "belong"}
#: Move verbs that mean "pick" when no destination follows ("take the red block").
PICK_LIKE = {"take", "get", "grab", "fetch", "lift", "raise"}
PREPS = {"in", "into", "inside", "to", "onto", "on", "at", "toward", "towards", "over", "within"}
SOURCE_PREPS = {"from", "out"}
QUANTS = set(L.QUANTIFIERS)
#: Marks the blocks a quantifier leaves out ("every block except the red one").
EXCEPT = "except"
PRONOUN_ONE = {"it", "this"}
PRONOUN_MANY = {"them", "those", "these", "they"}
MATCH = {"same", "matching", "corresponding", "its", "their", "own", "respective", "match"}
HOME_WORDS = {"home", "rest", "start", "starting", "initial", "neutral"}
FILLER = {
    "the",
    "a",
    "an",
    "please",
    "can",
    "could",
    "would",
    "will",
    "you",
    "now",
    "first",
    "also",
    "carefully",
    "gently",
    "slowly",
    "quickly",
    "robot",
    "kindly",
    "i",
    "need",
    "like",
    "me",
    "ahead",
    "up",
    "thanks",
    "pls",
    "plz",
    "hi",
    "hello",
    "down",
    "of",
    "side",
    "table",
    "s",
    "there",
    "one",
    "ones",
    "color",
    "colors",
    "colored",
    "by",
    "just",
    "with",
    "your",
    "gripper",
    "arm",
    "spot",
    "position",
    "location",
    "area",
    "part",
    "ok",
    "okay",
    "hey",
    "let",
    "lets",
    "us",
    "should",
    "must",
    "then",
    "and",
    "too",
    "as",
    "well",
    "back",
    "again",
    "pose",
    "single",
    "block's",
    "is",
    "that",
    "which",
    "surface",
    "top",
    "away",
}

#: Words that end a clause (the next clause may omit its verb).
BOUNDARY = {"then", "afterwards", "finally", "lastly", "next", "after"}
#: The articulated scene's devices (only where the world has them: on the tabletop scene a
#: drawer is another thing that is not there, as before). Device name -> words for it.
DEVICE_NOUNS = dict(L.DEVICE_NOUNS)
#: Device clause verbs -> what they do ("on"/"off" decide a turn/switch of the light).
DEVICE_VERBS = dict(L.DEVICE_VERBS)
#: Words a device clause may hold besides its verb, its noun and filler.
DEVICE_EXTRA = {"on", "off", "up", "please", ",", "and"}
