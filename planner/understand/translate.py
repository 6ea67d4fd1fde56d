"""Other languages into the English the robot reads, through the shared lexicon.

Why not a translation model: the robot's domain is a few dozen words (colours, cubes, bins,
the table's parts, its skills' verbs, quantifiers, negation, questions), and a table lookup
is exact, instant, offline and testable. What comes out is English word order close enough
for the rules planner (which already reads "the block red in the bin green") and for the
embedded model, and it is what the bridge's grounding check then reads, so a Chinese
instruction that the model plans correctly is no longer rejected for naming no English
colour.

Word order: Spanish, French, Italian and Portuguese put colour adjectives after the noun
(reordered here, and Italian and Portuguese superlatives too: "il blocco più a sinistra");
German puts the verb last after a modal and "nicht" after the object (both moved); Chinese
把 and Japanese を put the object before the verb (moved back).
"""

from __future__ import annotations

import unicodedata

import planner.rx as re
from bridge import lexicon as L
from sim.objects import KINDS

_CJK = re.compile(r"[\u4e00-\u9fff]")
_KANA = re.compile(r"[\u3040-\u30ff]")
_WORD = re.compile(r"[\w'’-]+|[?!,.;:¿¡]", re.UNICODE)

#: Function words that mark a language (a few of them decide it; English words never do).
_MARKERS: dict[str, frozenset[str]] = {
    "es": frozenset(
        """el la los las un una del al y en pon coloca mete mueve bloque cubo contenedor
        caja rojo roja verde azul amarillo amarilla está dónde donde cuántos qué luego
        después por favor apila empuja recoge coge toma levanta no muevas toques
        izquierda derecha encima sobre cesta todos cada excepto para detente nada muevan
        mueve bloques cubos cajas hay dentro""".split()
    ),
    "fr": frozenset(
        """le la les un une des du au et dans sur mets place pose dépose range bloc cube
        bac boîte panier rouge vert verte bleu bleue jaune est où combien puis ensuite
        empile pousse prends ramasse ne pas gauche droite tous chaque sauf arrête
        s'il plaît touche cubes blocs bacs y a-t-il""".split()
    ),
    "de": frozenset(
        """der die das den dem ein eine einen und in im ins auf leg lege stell stelle
        setz pack würfel behälter kiste korb rot rote roten roter grün grüne grünen blau
        blaue blauen gelb gelbe gelben ist wo wie viele dann danach staple schieb nimm
        heb nicht bitte links rechts alle außer kannst du schublade hör hört aufhören
        mach mache""".split()
    ),
    # Italian and Portuguese share many words with Spanish ("la", "del", "verde", "todos",
    # "para"): their markers are the words the other languages do not have, so a Spanish,
    # French or German sentence scores no more than before (a tie goes to the older language)
    "it": frozenset(
        """il gli nel nello nella negli nelle sul sullo sulla sui sulle della dello delle
        degli alla allo alle dal dalla metti mettete mettere sposta sposti spostare muovi
        muovere impila impilare spingi spingere prendi prendere raccogli afferra solleva
        tocca toccare apri chiudi accendi spegni premi blocco blocchi cubetto cubetti
        scatola scatole contenitore cestino tavolo sinistra destra cassetto lampada
        pulsante rosso rossa rossi rosse giallo gialla gialli gialle azzurro azzurra blu
        verdi dov'è quanti quante cosa c'è sono tutti tutte ogni tranne eccetto poi
        fermati annulla altrimenti scusa anzi più vicino favore puoi potresti può è
        niente nulla luce torna tieni qualsiasi qualunque""".split()
    ),
    "pt": frozenset(
        """o os uma umas uns na nas nos num numa da das ao aos em coloque ponha põe bote
        coloca cesto cestos azul por favor
        mova mexa empilhe empilha empurre empurra pegue pega apanhe feche fecha ligue
        desligue apague aperte bloco blocos peça peças caixa caixas esquerda direita
        gaveta lâmpada botão vermelho vermelha vermelhos vermelhas amarelo amarela amarelos
        amarelas azuis onde quantos quantas há tem tudo exceto não senão desculpa desculpe
        aliás pare parem chega cancele você então depois estiver estão acenda acende
        gaveta volte volta regresse pra qualquer""".split()
    ),
}
#: Italian elisions written as one word ("nell'angolo", "dell'altro"): each counts as Italian.
_IT_ELISION = re.compile(r"^(?:nell|dell|sull|all|dall|quell|dov|cos)['’]\w")
#: Words of those languages that are English words too: they never decide the language.
_ENGLISH = frozenset(
    """the a in on and is no not put place pose range cube block table stop die den
    an was set box""".split()
)
#: German colour stems (the adjective's endings vary: rot, rote, roten, roter, rotes).
_DE_COLOURS = {"rot": "red", "grün": "green", "grun": "green", "blau": "blue", "gelb": "yellow"}
#: The object kinds' nouns ("ball", "cylinders"): a colour or a size follows them too.
_KIND_NOUNS = frozenset(
    w + s for c in KINDS.values() for w in c.kind_words if w != "can" for s in ("", "s")
)
_NOUN_AFTER_COLOUR = L.BLOCK_NOUNS | L.BIN_WORDS | _KIND_NOUNS | {"one", "ones"}
#: English colour words after a noun ("block red") or after "the" + noun.
_COLOURS = set(L.COLOURS)
#: Size words that follow their noun in Spanish, Italian and Portuguese ("il cubo grande").
_SIZES = frozenset({"big", "small"})


def detect(text: str) -> str:
    """The language code of ``text`` ("en" when nothing else is clearly there)."""
    if _KANA.search(text):
        return "ja"
    if _CJK.search(text):
        return "zh"
    words = [w.lower() for w in _WORD.findall(text)]
    scores = {
        lang: sum(1 for w in words if w in marks and w not in _ENGLISH)
        for lang, marks in _MARKERS.items()
    }
    if any(c in text for c in "¿¡ñ"):
        scores["es"] += 2
    if any(c in text for c in "äöüß"):
        scores["de"] += 2
    if any(c in text for c in "çèêàâîôû"):
        scores["fr"] += 1
    if any(c in text for c in "ãõ"):
        scores["pt"] += 2
    scores["it"] += sum(1 for w in words if _IT_ELISION.match(w))
    for lang in _ROMANCE:
        # a short Italian or Portuguese order has few marker words ("abra a gaveta"):
        # every word known to that language's table counts as one more
        if len(words) >= 2 and all(_known(w, lang) or not w.isalpha() for w in words):
            scores[lang] += 1
    lang, best = max(scores.items(), key=lambda kv: kv[1])
    tied = [k for k, v in scores.items() if v == best]
    if lang not in _ROMANCE and any(k in _ROMANCE for k in tied):
        # Spanish and Portuguese share many words ("empilhe o cubo azul sobre o cubo
        # amarelo" scores 4 for both): the language whose table knows more words wins, the
        # older language when they know as many
        known = {k: sum(1 for w in words if _known(w, k)) for k in tied}
        rival = max((k for k in tied if k in _ROMANCE), key=lambda k: known[k])
        if known[rival] > known[lang]:
            lang = rival
    english = sum(1 for w in words if w in _ENGLISH_COMMON)
    return lang if best >= 2 and best > english else "en"


def _known(word: str, lang: str) -> bool:
    """``word`` is in ``lang``'s table, as written or without its accents."""
    table = L.FOREIGN[lang]
    return word in table or _fold(word) in _folded(lang)


_FOLDED: dict[str, frozenset[str]] = {}


def _folded(lang: str) -> frozenset[str]:
    if lang not in _FOLDED:
        _FOLDED[lang] = frozenset(_fold(k) for k in L.FOREIGN[lang])
    return _FOLDED[lang]


_ENGLISH_COMMON = frozenset(
    """the put block blocks in into on bin bins then please and it move stack push pick
    up cube of to is are what where how which red green blue yellow""".split()
)


def translate(text: str) -> tuple[str, str]:
    """``(english, language)``; English text comes back unchanged."""
    lang = detect(text)
    if lang == "en":
        return text, lang
    if lang in ("zh", "ja"):
        # each sentence on its own ("赤いブロックには触らないで。黄色いブロックだけ…"): a
        # prohibition and a request must not run together
        said = [p for p in re.split(r"[。．]+", text) if p.strip()]
        return ". ".join(_cjk(p, lang) for p in said) if len(said) > 1 else _cjk(text, lang), lang
    return _western(text, lang), lang


# --------------------------------------------------------------------- Western languages
def _fold(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")


def _western(text: str, lang: str) -> str:
    table = L.FOREIGN[lang]
    folded = {_fold(k): v for k, v in table.items()}
    s = text.lower().replace("’", "'")
    s = s.replace("¿", " ").replace("¡", " ")
    if lang == "de":
        s = re.sub(r"\bzu\s*\?", " closed ?", s)  # "ist die Schublade zu?"
        # separable verbs: "mach die Schublade auf" opens it, "... zu" closes it
        s = re.sub(r"\bmach(?:e|t|en)?\b([^,.!?;]*?)\s+auf\b", r"öffne\1", s)
        s = re.sub(r"\bmach(?:e|t|en)?\b([^,.!?;]*?)\s+zu\b(?!\s+\w)", r"schließe\1", s)
        # "... und leg den roten Würfel hinein": into what was just named
        # (not "in die Kiste hinein", where the clause names it)
        s = re.sub(
            r"([^,.!?;]*?)\b(?:hinein|rein|darein)\b(?=\s*(?:[.,!?;]|$|und\b|dann\b))",
            lambda m: (
                m[0]
                if re.search(r"\b(?:in|ins|im|auf)\b", m[1].split(" und ")[-1])
                else f"{m[1]} {_IN_IT} "
            ),
            s,
        )
    if lang == "es":
        # "déjalo en medio de la mesa": put it there (alone, "déjalo" is "forget it")
        s = re.sub(
            r"\bd[ée]jal([oa]s?)\s+(?=(?:en|sobre|encima|dentro|junto|al|a\s+la)\b)", r"ponl\1 ", s
        )
        # "saca el bloque rojo del contenedor azul": out of it
        s = re.sub(
            r"\b(saca|sácalo|quita)\s+(.+?)\s+(?:del|de\s+la|de\s+el)\s+(?=(?:contenedor|caja|cesta|cajón|cesto)\b)",
            r"\1 \2 out of la ",
            s,
        )
        # "el verde no lo toques": the object named first, then "don't touch it"
        s = re.sub(
            r"\b(el|la|los|las)\s+(\w+)\s+no\s+(?:lo|la|los|las)\s+(toques|muevas|cojas|agarres|tires|empujes)\b",
            r"no \3 \1 \2",
            s,
        )
    # multi-word entries first, longest first (before French elision splits "s'il")
    phrases = sorted((k for k in table if " " in k or "-" in k or "'" in k), key=len, reverse=True)
    if lang in _ROMANCE:
        return _romance(s, lang, table, folded, phrases)
    for p in phrases:
        s = re.sub(rf"(?<![\w]){re.escape(p)}(?![\w])", f" {table[p]} ", s)
    if lang == "fr":
        # "le cube rouge est-il dans la boîte verte ?": the inverted question in plain order
        s = re.sub(r"^\s*(.+?)\s+(est|sont)-(?:t-)?(?:il|elle|ils|elles)\b", r"\2 \1", s)
        s = re.sub(r"\b([ldnsjm]|qu)'", r"\1 ", s)  # l'arbre -> l arbre
    # a "no" between commas is the speaker correcting themselves ("..., no, en la caja azul"),
    # which English says with the same word
    s = re.sub(r",\s*no\s*,", f", {_NO_WAIT} ,", s)
    out: list[str] = []
    for w in _WORD.findall(s):
        if w == _NO_WAIT:
            out.append("no wait")
        elif w == _IN_IT:
            out.append("in it")
        elif w in table:
            out.append(table[w])
        elif _fold(w) in folded:
            out.append(folded[_fold(w)])
        elif lang == "de" and (c := _de_colour(w)):
            out.append(c)
        else:
            out.append(w)
    words = " ".join(x for x in out if x).split()
    words = _adjectives_first(words)
    if lang == "de":
        words = _german_order(words)
    words = _negation_first(words)
    english = " ".join(words)
    english = re.sub(r"\s+([?,.!;:])", r"\1", english)
    return re.sub(r"\s+", " ", english).strip()


#: A placeholder no language's table holds, for a "no" that corrects (it stays "no").
_NO_WAIT = "nowait_"
#: A placeholder for a German "hinein" that ends its clause: "in it" (the thing just named).
_IN_IT = "init_"


# ------------------------------------------------------------ Italian and Portuguese
_ROMANCE = ("it", "pt")
#: Italian articles and prepositions written with an apostrophe ("nell'angolo" -> "nell angolo").
_IT_APOSTROPHE = re.compile(r"\b(l|un|nell|dell|sull|all|dall|quell)'")
#: Portuguese pronouns after a hyphen ("coloque-o", "pega-as").
_PT_CLITIC_IT = re.compile(r"\b(\w+)-(?:o|a|lo|la|no|na)\b")
_PT_CLITIC_THEM = re.compile(r"\b(\w+)-(?:os|as|los|las|nos|nas)\b")
#: English verbs a table value may start with (what an Italian pronoun may be glued to).
_VERB_VALUES = frozenset("put move stack push touch open close press sort go release".split()) | {
    "pick up",
    "turn on",
    "turn off",
}
_SIDE_SUPERLATIVES = frozenset({"leftmost", "rightmost"})
_DISTANCE = frozenset({"closest", "farthest"})


def _romance(
    s: str, lang: str, table: dict[str, str], folded: dict[str, str], phrases: list[str]
) -> str:
    """Italian and Portuguese into English: as for Spanish, with three differences. A
    phrase's English is held apart until the end, as Portuguese "do", "no" and "a" are
    English words too ("don't do anything" must not become "don't of the anything"); an
    Italian pronoun glued to its verb ("mettilo") or a Portuguese one after a hyphen
    ("coloque-o") is the object "it"; and "il blocco più a sinistra", "the block leftmost",
    puts its superlative first as English does."""
    held: list[str] = []

    def hold(value: str) -> str:
        held.append(value)
        return f" {_HELD}{len(held) - 1}x "

    if lang == "it":
        s = _IT_APOSTROPHE.sub(r"\1' ", s)  # "nell'angolo" -> "nell' angolo" (phrases keep "dov'è")

    def held_phrase(m: re.Match[str]) -> str:
        return hold(table[m.group(0)])

    for p in phrases:
        s = re.sub(rf"(?<![\w']){re.escape(p)}(?![\w])", held_phrase, s)
    if lang == "it":
        s = re.sub(r"\b(\w+)'\s", r"\1 ", s)
    else:
        s = _PT_CLITIC_IT.sub(r"\1 " + hold("it").strip(), s)
        s = _PT_CLITIC_THEM.sub(r"\1 " + hold("them").strip(), s)
    s = re.sub(r",\s*(?:no|não|nao)\s*,", f", {_NO_WAIT} ,", s)
    out: list[str] = []
    for w in _WORD.findall(s):
        if w == _NO_WAIT:
            out.append("no wait")
        elif w == _IN_IT:
            out.append("in it")
        elif m := re.fullmatch(rf"{_HELD}(\d+)x", w):
            out.append(held[int(m.group(1))])
        elif w in table:
            out.append(table[w])
        elif _fold(w) in folded:
            out.append(folded[_fold(w)])
        elif lang == "it" and (v := _glued_pronoun(w, table)):
            out.append(v)
        else:
            out.append(w)
    words = " ".join(x for x in out if x).split()
    words = _colour_pairs_first(words)
    words = _adjectives_first(words)
    words = _superlative_first(words)
    words = _negation_first(words)
    english = " ".join(words)
    english = re.sub(r"\b(?:in|into) the table\b", "on the table", english)  # "na mesa"
    english = re.sub(r"\s+([?,.!;:])", r"\1", english)
    return re.sub(r"\s+", " ", english).strip()


#: The mark of a held phrase (letters only, so that no table or phrase can match it).
_HELD = "heldphrase"


def _glued_pronoun(word: str, table: dict[str, str]) -> str | None:
    """ "mettilo" -> "put it", "spostali" -> "move them", "metterlo" -> "put it"."""
    if len(word) < 5 or word[-2:] not in ("lo", "la", "li", "le"):
        return None
    stem = word[:-2]
    for verb in (stem, stem + "e"):
        value = table.get(verb)
        if value in _VERB_VALUES:
            return f"{value} {'it' if word[-1] in 'oa' else 'them'}"
    return None


def _colour_pairs_first(words: list[str]) -> list[str]:
    """ "the blocks red and green" ("i blocchi rossi e verdi") -> "the red and green blocks"."""
    out = list(words)
    i = 0
    while i + 3 < len(out):
        noun, a, conj, b = out[i : i + 4]
        if noun in _NOUN_AFTER_COLOUR and a in _COLOURS and conj == "and" and b in _COLOURS:
            out[i : i + 4] = [a, conj, b, noun]
            i += 4
        else:
            i += 1
    return out


def _superlative_first(words: list[str]) -> list[str]:
    """ "the block leftmost" -> "the leftmost block"; "the block closest to X" stays."""
    out = list(words)
    nouns = _NOUN_AFTER_COLOUR | L.ONE_WORDS
    for i in range(len(out) - 1):
        if out[i] not in nouns:
            continue
        nxt = out[i + 2] if i + 2 < len(out) else ""
        if out[i + 1] in _SIDE_SUPERLATIVES or (out[i + 1] in _DISTANCE and nxt != "to"):
            out[i], out[i + 1] = out[i + 1], out[i]
    return out


def _de_colour(word: str) -> str | None:
    for stem, colour in _DE_COLOURS.items():
        if word.startswith(stem) and len(word) - len(stem) <= 2:
            return colour
    return None


def _adjectives_first(words: list[str]) -> list[str]:
    """ "block red" -> "red block", "block red big" -> "red big block" (the order the kind
    and size reader takes), "bin of green" stays for the rules to read."""
    out = list(words)
    for i in range(len(out) - 1):
        if out[i] in _NOUN_AFTER_COLOUR and (
            out[i + 1] in _COLOURS or (out[i + 1] in _SIZES and out[i] not in L.BIN_WORDS)
        ):
            out[i], out[i + 1] = out[i + 1], out[i]
    return out


_DE_VERBS = {"put", "move", "stack", "push", "pick", "touch", "open", "close", "press", "sort"}


def _negation_first(words: list[str]) -> list[str]:
    """ "not move X" (es "no muevas") and "touch not X" (fr "ne touche pas") -> "don't ..."."""
    out = list(words)
    for i, w in enumerate(out):
        if w != "not":
            continue
        if i + 1 < len(out) and out[i + 1] in _DE_VERBS:
            out[i] = "don't"
        elif i > 0 and out[i - 1] in _DE_VERBS:
            out[i - 1], out[i] = "don't", out[i - 1]
    return out


def _german_order(words: list[str]) -> list[str]:
    """Verb-second/verb-last and a trailing "nicht" into English order."""
    clauses: list[list[str]] = [[]]
    for w in words:
        if w in (",", "then", "and") and clauses[-1]:
            clauses.append([w])
        else:
            clauses[-1].append(w)
    fixed: list[str] = []
    for c in clauses:
        c = list(c)
        lead = [c.pop(0)] if c and c[0] in (",", "then", "and") else []
        tail = [c.pop()] if c and c[-1] in ("?", ".", "!") else []
        if c and c[-1] in _DE_VERBS and not any(w in _DE_VERBS for w in c[:-1]):
            verb = c.pop()  # "kannst du den roten würfel ... legen" -> "can you put ..."
            at = 2 if c[:2] in (["can", "you"], ["could", "you"], ["would", "you"]) else 0
            if c[:1] == ["please"] or c[at : at + 1] == ["please"]:
                at += 1
            c.insert(at, verb)
        if "not" in c and c and c[0] in _DE_VERBS:
            c.remove("not")  # "bewege den roten würfel nicht" -> "don't move the red block"
            c.insert(0, "don't")
        fixed.extend(lead + c + tail)
    return fixed


# ----------------------------------------------------------------- Chinese and Japanese
#: Japanese request endings ("...てもらえますか？", "...てくれませんか"): asked of the robot, not a
#: question about it, so the "?" goes with them.
_JA_REQUEST = re.compile(
    r"(?:(?:もらえ|くれ|いただけ)(?:ます|ません)か|くれる|くれない|もらえる)[？?]?"
)


def _cjk(text: str, lang: str) -> str:
    table = L.FOREIGN_CJK[lang]
    if lang == "ja":
        text = _JA_REQUEST.sub("", text)
    keys = sorted(table, key=len, reverse=True)
    out: list[str] = []
    i = 0
    while i < len(text):
        for k in keys:
            if text.startswith(k, i):
                out.append(f" {table[k]} ")
                i += len(k)
                break
        else:
            run = re.match(r"[A-Za-z][A-Za-z'_-]*", text[i:])
            if run:  # an English word inside ("把那个 yellow 的方块放进 red bin 里") stays whole
                out.append(f" {run.group(0).lower()} ")
                i += run.end()
                continue
            ch = text[i]
            out.append(ch if ch.isascii() else " ")
            i += 1
    words = " ".join(out).split()
    words = _ba_order(words) if lang == "zh" else _wo_order(words)
    english = " ".join(w for w in words if not w.startswith("<")).replace("_", " ")
    # 离绿色箱子最近的方块: "green bin the closest block" is the block closest to the bin
    english = re.sub(
        r"\b(\w+\s+(?:bin|block))\s+the\s+closest\s+(block|bin)\b",
        r"the \2 closest to the \1",
        english,
    )
    english = re.sub(r"(?<!\bthe\s)\b(leftmost|rightmost|frontmost|backmost)\b", r"the \1", english)
    english = re.sub(r"\b(two|three|four|[234])\s+block\b", r"\1 blocks", english)
    # 红色的方块在哪个箱子里: "red block is in which bin" asks which bin it is in
    english = re.sub(
        r"^(?:the\s+)?(?P<x>.+?)\s+(?:now\s+)?is\s+in\s+(?:the\s+)?which\s+(?P<b>bin|box|drawer)\b(?:\s+(?:in|inside))?\s*(?P<q>\?)?",
        lambda m: f"which {m['b']} is the {m['x']} in" + (m["q"] or ""),
        english,
    )
    # 放两个方块到红色箱子里: "put into two blocks red bin" -> "put two blocks into red bin"
    english = re.sub(
        r"^(put|place|move)\s+(into|in|onto|on)\s+(.+?)\s+((?:the\s+)?\w+\s+(?:bin|box|block)|drawer)\s*$",
        r"\1 \3 \2 \4",
        english,
    )
    # 绿色的箱子里什么都不许放: "green bin don't put anything" -> "don't put anything in green bin"
    english = re.sub(
        r"(?P<b>(?:the\s+)?\w+\s+bin)\s+(?:in\s+|into\s+)?don't\s+put\s+anything",
        r"don't put anything in \g<b>",
        english,
    )
    if english.startswith("if "):
        # 如果红色方块在桌子上: a condition keeps its verb ("is on the table")
        english = re.sub(r"\bis\s+in\s+(?:the\s+)?table\b", "is on the table", english)
    else:
        english = _zh_questions(english)
    english = re.sub(r"\s+([?,.!;:])", r"\1", english)
    english = re.sub(r"\?+", "?", english)
    m = re.match(r"^except\s+(?:the\s+)?(\w+)(?:\s+block)?\s*,\s*(.*)$", english)
    if m:  # 除了红色的，把其他方块都放进绿色箱子: the exclusion comes first
        rest = re.sub(r"\bthe\s+other\s+blocks?\b", "all the blocks", m.group(2))
        rest = re.sub(r"\ball the blocks\b", f"all the blocks except the {m.group(1)} block", rest)
        english = rest
    return re.sub(r"\s+", " ", english).strip()


def _verb(tok: str) -> tuple[str, str] | None:
    m = re.fullmatch(r"<V:([^:>]*):([^>]*)>", tok)
    return (m.group(1), m.group(2)) if m else None


def _ba_order(words: list[str]) -> list[str]:
    """把 OBJ VERB(prep) TARGET -> VERB OBJ prep TARGET; a verb without 把 keeps its place."""
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == "<BA>":
            j = i + 1
            while j < len(words) and _verb(words[j]) is None and words[j] not in ("then", ","):
                j += 1
            obj = words[i + 1 : j]
            if j < len(words) and (v := _verb(words[j])):
                out += [v[0], *obj] + ([v[1]] if v[1] else [])
                i = j + 1
                continue
            out += ["put", *obj]
            i = j
            continue
        if v := _verb(w):
            # "绿色方块放到红色箱子里": the object came first without 把
            k = len(out)
            while k > 0 and out[k - 1] not in ("then", ",", "please"):
                k -= 1
            obj = out[k:]
            if obj and any(x in ("block", "bin") for x in obj):
                out[k:] = [v[0], *obj] + ([v[1]] if v[1] else [])
            else:
                out += [v[0]] + ([v[1]] if v[1] else [])
        else:
            out.append(w)
        i += 1
    return out


def _wo_order(words: list[str]) -> list[str]:
    """OBJ を TARGET に VERB -> VERB OBJ prep TARGET, clause by clause."""
    clauses: list[list[str]] = [[]]
    for w in words:
        if w in ("then", ","):
            clauses.append([w])
        else:
            clauses[-1].append(w)
    out: list[str] = []
    for c in clauses:
        lead = [c.pop(0)] if c and c[0] in ("then", ",") else []
        if "<TOP>" in c and ("<IN?>" in c or "<ON?>" in c):
            k = c.index("<TOP>")
            q = "<IN?>" if "<IN?>" in c else "<ON?>"
            j = c.index(q)
            subj, place = c[:k], [x for x in c[k + 1 : j] if not x.startswith("<")]
            out += lead + ["is", "the", *subj, "in" if q == "<IN?>" else "on", "the", *place, "?"]
            continue
        c = [x for x in c if x != "<TOP>"]
        verbs = [x for x in c if _verb(x)]
        negs = [x for x in c if x.startswith("<NEG:")]
        body = [x for x in c if not _verb(x) and not x.startswith("<NEG:")]
        if "<O>" in body:
            k = body.index("<O>")
            obj, rest = body[:k], body[k + 1 :]
        else:
            obj, rest = [], body
        target = [x for x in rest if x not in ("<TO>", "<ON>")]
        if negs:
            out += lead + ["don't", negs[0][5:-1], *obj, *target]
            continue
        if verbs and (v := _verb(verbs[0])):
            prep = "onto" if "<ON>" in rest else v[1]
            out += lead + [v[0], *obj] + ([prep, *target] if target and prep else target)
        else:
            out += lead + [x for x in obj + rest if not x.startswith("<")]
    return out


def _zh_questions(s: str) -> str:
    """ "red block is in green bin ?" -> "is the red block in the green bin?";
    "red block where ?" -> "where is the red block?"."""
    s = s.strip()
    s = re.sub(r"\s*<\w+\??>\s*", " ", s).strip()
    if s.startswith("which "):
        return s  # 哪个: already a question word first
    m = re.fullmatch(r"(?:the\s+)?(.+?)\s+(?:has\s+|is\s+in\s+)?what\s*\?*", s)
    if m and not m.group(1).startswith(("what", "where", "how")):
        return f"what is in the {m.group(1).strip()}?"
    m = re.fullmatch(r"(?:the\s+)?(.+?)\s+(?:has\s+)?how many\s+(?:blocks?)?\s*\?*", s)
    if m and not m.group(1).startswith(("what", "where", "how")):
        return f"how many blocks are in the {m.group(1).strip()}?"
    m = re.fullmatch(r"(.*?)\s*\bwhere\b\s*\??", s)
    if m and m.group(1):
        return f"where is the {m.group(1).replace('is in', '').strip()}?"
    m = re.fullmatch(r"(.+?)\s+is in\s+(.+?)\s*\?+", s)
    if m:
        return f"is the {m.group(1).strip()} in the {m.group(2).strip()}?"
    return s.replace(" is in ", " in ")
