"""A seeded generator of (free instruction, command) pairs that teaches the embedded model.

Why this shape: the embedded language model does not plan. It rewrites whatever a person
typed (typos, colour synonyms, "the colour of grass", goal-state phrasing, lists, exclusions,
ordering words, chit-chat) into the *command language* (:mod:`planner.grammar`): the
small, fixed English that the rules planner parses with certainty. Grounding in the scene
(which cubes exist, what is already done, quantifiers over what is present) stays with the
rules planner and the bridge, so the model needs no scene in its prompt, its output is a
dozen tokens, and one corpus serves every scene.

Each sample also carries a random scene line (which cubes exist, what is in a bin, stacked
or held; :func:`planner.embedded.prompt.scene_line`): references such as "the one on top",
"the block in the green bin", "the other one" or "the rest" are resolved against it, and
everything else is copied through whatever the scene says (an absent colour is kept, so the
rules planner refuses it against the real scene).

Everything is drawn from one ``random.Random(seed)``, so a seed names a corpus exactly. The
shipped adapter was trained on such corpora, so a change here that alters what a seed
draws changes the training data (``tests/planner/test_corpus_articulated.py`` pins digests).

The command language itself is :mod:`planner.grammar` (outside this package: the rules
planner, the model's decoding mask and typo repair read it too). One module per concept:

- :mod:`~planner.corpus.forms`: the surface words, most of them the lexicon's
  (:mod:`bridge.lexicon`);
- :mod:`~planner.corpus.writer` and :mod:`~planner.corpus.devices`: a clause as a person
  types it (orders, wishes, end states; the drawer, the light and the button);
- :mod:`~planner.corpus.plans`, :mod:`~planner.corpus.scenes`: random plans and scenes;
- the phenomena: :mod:`~planner.corpus.references`, :mod:`~planner.corpus.lists` (joins,
  ordinals, ordering words), :mod:`~planner.corpus.phrasing`,
  :mod:`~planner.corpus.articulated`, :mod:`~planner.corpus.refusals`;
- :mod:`~planner.corpus.noise`: politeness, register and keyboard slips over a whole sample;
- :mod:`~planner.corpus.sampling`: the profiles, :func:`generate` and :func:`split`;
- :mod:`~planner.corpus.vocabulary`: every command text (the model's decoding mask) and
  the words of a sampled corpus.

The names below are this package's public interface, as they were when it was one module.
"""

from __future__ import annotations

from planner.corpus.articulated import articulated, device_refusal
from planner.corpus.devices import articulated_text
from planner.corpus.forms import (
    ABSENT,
    BIN_NOUNS,
    BINS,
    BLOCK_NOUNS,
    BUTTON_NOUNS,
    COLOR_SYNONYMS,
    CUBES,
    DRAWER_NOUNS,
    EXCEPT_WORDS,
    HOME_PHRASES,
    IN_PREPS,
    LIGHT_NOUNS,
    MORE_THINGS,
    MOVE_VERBS,
    ON_PREPS,
    PICK_VERBS,
    POLITE_POST,
    POLITE_PRE,
    PUSH_VERBS,
    REGION_WORDS,
    REGIONS,
    STACK_VERBS,
    VERBOSE_POST,
    VERBOSE_PRE,
    WORLD_THINGS,
)
from planner.corpus.noise import add_typos, casualise, typo_word
from planner.corpus.phrasing import phrasing
from planner.corpus.plans import random_clause, random_clauses
from planner.corpus.references import reference
from planner.corpus.refusals import (
    FIXED_REFUSALS,
    INJECTIONS,
    OTHER_OBJECTS,
    REFUSE_TEMPLATES,
    absent,
    refusal,
)
from planner.corpus.sampling import (
    PROFILES,
    TABLETOP_PROFILES,
    articulated_sample,
    generate,
    sample,
    split,
)
from planner.corpus.scenes import Scene, articulated_scene, random_scene
from planner.corpus.vocabulary import command_texts, words
from planner.corpus.writer import Writer
from planner.grammar import (
    ARTICULATED_KINDS,
    DEVICE_COMMANDS,
    INJECTION_REASON,
    NO_DEVICE,
    Clause,
    command,
)

__all__ = [
    "ABSENT",
    "ARTICULATED_KINDS",
    "BINS",
    "BIN_NOUNS",
    "BLOCK_NOUNS",
    "BUTTON_NOUNS",
    "COLOR_SYNONYMS",
    "CUBES",
    "DEVICE_COMMANDS",
    "DRAWER_NOUNS",
    "EXCEPT_WORDS",
    "FIXED_REFUSALS",
    "HOME_PHRASES",
    "INJECTIONS",
    "INJECTION_REASON",
    "IN_PREPS",
    "LIGHT_NOUNS",
    "MORE_THINGS",
    "MOVE_VERBS",
    "NO_DEVICE",
    "ON_PREPS",
    "OTHER_OBJECTS",
    "PICK_VERBS",
    "POLITE_POST",
    "POLITE_PRE",
    "PROFILES",
    "PUSH_VERBS",
    "REFUSE_TEMPLATES",
    "REGIONS",
    "REGION_WORDS",
    "STACK_VERBS",
    "TABLETOP_PROFILES",
    "VERBOSE_POST",
    "VERBOSE_PRE",
    "WORLD_THINGS",
    "Clause",
    "Scene",
    "Writer",
    "absent",
    "add_typos",
    "articulated",
    "articulated_sample",
    "articulated_scene",
    "articulated_text",
    "casualise",
    "command",
    "command_texts",
    "device_refusal",
    "generate",
    "phrasing",
    "random_clause",
    "random_clauses",
    "random_scene",
    "reference",
    "refusal",
    "sample",
    "split",
    "typo_word",
    "words",
]
