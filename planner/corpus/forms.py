"""The surface forms the corpus writes with: which words and phrases a person might use.

The colour, shade, noun, region, verb, quantifier and "except" tables are the shared lexicon's
(:mod:`bridge.lexicon`, the ``*_FORMS`` tables), under the names this package has always
used; what is only the corpus's business (prepositions, ways to say "go home", politeness,
chatty openings) is defined here. Every table is ordered: draws are by index, so a table's
order is part of every corpus a seed names.
"""

from __future__ import annotations

from bridge import lexicon as L

CUBES = L.COLOURS
BINS = L.BIN_COLOURS
ABSENT = L.ABSENT_COLOURS
REGIONS = L.REGION_NAMES

COLOR_SYNONYMS = L.SHADE_FORMS
WORLD_THINGS = L.THING_FORMS
#: More things of a colour, for the ``phrasing`` profile (kept apart so that the ``base``
#: and ``lists`` corpora stay the same for the same seed).
MORE_THINGS = L.MORE_THING_FORMS
BLOCK_NOUNS = L.BLOCK_FORMS
BIN_NOUNS = L.BIN_FORMS
REGION_WORDS = L.REGION_FORMS
MOVE_VERBS = L.MOVE_VERB_FORMS
STACK_VERBS = L.STACK_VERB_FORMS
PUSH_VERBS = L.PUSH_VERB_FORMS
PICK_VERBS = L.PICK_VERB_FORMS
#: Ways of saying "except" after "all the blocks".
EXCEPT_WORDS = L.EXCEPT_FORMS
QUANTIFIER_FORMS = L.QUANTIFIER_FORMS
DRAWER_NOUNS = L.DRAWER_FORMS
LIGHT_NOUNS = L.LIGHT_FORMS
BUTTON_NOUNS = L.BUTTON_FORMS

IN_PREPS = ["in", "into", "inside", "in", "into", "to", "over to"]
ON_PREPS = ["on", "onto", "on top of", "on top of", "onto", "atop", "on to"]
HOME_PHRASES = [
    "go home",
    "return home",
    "go back home",
    "return to home",
    "go to the home position",
    "return to your starting position",
    "go back to the start position",
    "park the arm",
    "return to rest",
    "move back to the home pose",
    "reset your position",
    "home",
    "head back home",
    "back to home",
    "return the arm to its home position",
    "go back to where you started",
    "return to neutral",
]
POLITE_PRE = [
    "please",
    "could you",
    "can you",
    "would you",
    "kindly",
    "would you please",
    "could you please",
    "i need you to",
    "i'd like you to",
    "go ahead and",
    "hey robot,",
    "robot,",
    "ok so",
    "alright,",
    "hi!",
    "hello robot, please",
    "when you get a chance,",
    "if you don't mind,",
    "quick task:",
    "next task:",
    "task:",
    "i want you to",
]
POLITE_POST = [
    "please",
    "thanks",
    "thank you",
    "thx",
    "pls",
    "cheers",
    "if you can",
    "when you can",
    "asap",
    "for me",
    "thanks a lot!",
    "much appreciated",
    "ty",
    "!",
    ".",
    "please and thanks",
]
VERBOSE_PRE = [
    "Hi there! I hope you are having a good day. I'm tidying up the workspace, so",
    "Good morning robot. I have a small job for you today:",
    "Hello! I know you've been busy, but when you have a moment,",
    "So here's the thing, my colleague left the table in a mess and",
    "Hey, thanks for helping out earlier. One more favour:",
    "I'm running an experiment and need the blocks arranged a certain way.",
    "Dear robot, I would be extremely grateful if you could do the following:",
    "Okay, listen carefully because this is important.",
    "We're about to start the demo, so before people arrive",
    "This might sound a bit odd, but",
    "Alright robot, let's get to work.",
    "After lunch I noticed the table is a bit disorganised.",
]
VERBOSE_POST = [
    "Thank you so much, you're a lifesaver!",
    "Let me know if anything is unclear. Thanks in advance!",
    "That would really help me out, thanks.",
    "No rush, take your time and be careful.",
    "I really appreciate your help with this.",
    "Thanks a bunch, talk soon!",
    "Please be gentle, these blocks are new.",
    "That's all for now.",
]
