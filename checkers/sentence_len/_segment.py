"""A rule-based English sentence splitter and word counter for prose units.

The input is one unit of prose (a paragraph, a heading, a list item, a table cell)
with its whitespace already collapsed to single spaces. A boundary is considered only
where a terminator run (``.``, ``!``, ``?``, ``…``, possibly followed by closing
quotes, brackets or emphasis markers) is followed by a space; each such candidate is
then judged by its neighbours:

* before a lower-case next word only a lone period ends a sentence
  (``blake2s. md5 is``, and always after inline code: ```x`. gradeloop reads``), and
  not after an abbreviation, initial, acronym or number (``co. at``, ``e.g. the``,
  ``step 2. then``) nor inside quotes (``"Stop." she``);
  ``Yahoo! in`` goes on; a word with capitals inside (``iOS``) counts as capitalised,
  and so does an emphasised one (``RFC 1521. *header* is``);
* an emphasised letter is a variable, not an initial (``of *x*. `polar(x)` is``),
  and a single capital opening a sentence is a label (``A. The method rounds``);
* ``!`` and ``?`` otherwise end one;
* a bare ellipsis ends one only before a capitalised word that is not ``I``
  (``I`` is capitalised everywhere, so it says nothing about a new sentence);
* an ellipsis followed by a full stop (``....``) ends one;
* a period after a title (``Dr.``, with its capital: ``30 ms. The`` ends one) or a
  Latin marker (``e.g.``) never ends one, nor
  one before a number after ``p.``, ``No.``, ``Fig.`` and the like;
* a period after a known abbreviation, a dotted acronym (``U.S.``, ``a.m.``) or a
  single letter ends a sentence only before a word that commonly opens one
  (``The``, ``How``, ``It``...) or before a title (``Mr.``), unless what precedes
  is a short introductory phrase (``At 5 a.m. Mr. Smith left``);
* any other period before a capital, a digit or inline code ends one.

Inline enumerations (``1) first 2) second``) and bullet characters (``•``) start a
new unit of their own, as a Markdown list item would.
"""

from __future__ import annotations

import re

from ._words import (
    AMBIGUOUS,
    INTRO_PREPOSITIONS,
    LATIN,
    NUMBER_PREFIXES,
    STARTERS,
    TITLE_PREFIXES,
    TITLES,
)

ELISION = "\ue002"  # stands for a bracketed ellipsis "[...]", which never ends a sentence

# possessive runs that start only at a run's first mark: linear on any input
_CANDIDATE = re.compile(r"(?<![.!?…])([.!?…]++)([\"'”’»)\]*_~]*+)(?= )")
_SPACED_DOTS = re.compile(r"\.(?: \.){2,}")
_BRACKET_ELISION = re.compile(r"\[(?:\.\s?){3,}\]|\[…\]")
_BULLET = re.compile(r" (?=[•⁃▪◦‣])")
_ACRONYM = re.compile(r"(?:[a-z]\.)+[a-z]")
_OPENERS = "\"'“‘«([{*_~¿¡"
_CLOSERS = "\"'”’»)]}*_~"
_WORDISH = re.compile(r"[^\W_]|\ue000")
_ENUM_TOKEN = re.compile(r"[•⁃▪◦‣]?\(?(?:\d{1,3}|[a-z])(?:\.\)|[.)])")
_ENUM_START = re.compile(r"(?:[•⁃▪◦‣] ?)?(\(?)(\d{1,3}|[a-z])(\.\)|[.)]) ")
_INTRO_CHARS = 40
_EMPHASIS = "*_"
_PRONOUN_I = re.compile(r"I(?:[’'][a-z]+)?\W*")
_CODE = re.compile("\ue000\\d+\ue001")  # an inline code span's placeholder (_prose)


def split_sentences(unit: str) -> list[str]:
    """Split one prose unit (single-spaced) into sentences, in order."""
    if ". ." in unit:
        unit = _SPACED_DOTS.sub(lambda m: "." * m.group().count("."), unit)
    if "[" in unit:
        unit = _BRACKET_ELISION.sub(ELISION, unit)
    sentences: list[str] = []
    for part in _enumeration_parts(unit):
        sentences.extend(_split_part(part))
    return sentences


def count_words(sentence: str) -> int:
    """The number of words in ``sentence``.

    A word is a whitespace-separated token holding at least one letter or digit, so
    punctuation-only tokens (``—``, ``...``, ``•``, ``-``) are not words, while a
    URL, a hyphenated compound, a number or a masked inline-code span is one word.
    A list marker that opens the sentence (``1.``, ``2)``, ``a.``) is not a word.
    """
    count = 0
    first = True
    for token in sentence.split():
        if not is_word(token):
            continue
        if first:
            first = False
            if _ENUM_TOKEN.fullmatch(token):
                continue
        count += 1
    return count


def is_word(token: str) -> bool:
    """Whether a whitespace-separated token is a word: it holds a letter or a digit."""
    return _WORDISH.search(token) is not None


def _enumeration_parts(unit: str) -> list[str]:
    """Cut ``unit`` before bullet characters and before the items of an enumeration.

    An enumeration is recognised only when the unit opens with a marker (``1.``,
    ``(a)``, ``2)``...) and later markers of the same style count up from it, so a
    stray ``2.`` in running text cuts nothing.
    """
    pieces = _BULLET.split(unit) if any(b in unit for b in "•⁃▪◦‣") else [unit]
    parts: list[str] = []
    for piece in pieces:
        m = _ENUM_START.match(piece)
        if m is None:
            parts.append(piece)
            continue
        opener, value, closer = m.groups()
        start, pos = 0, m.end()
        while True:
            value = _next_marker(value)
            cut = piece.find(f" {opener}{value}{closer} ", pos)
            if cut < 0:
                break
            parts.append(piece[start:cut])
            start = pos = cut + 1
        parts.append(piece[start:])
    return parts


def _next_marker(value: str) -> str:
    return str(int(value) + 1) if value.isdigit() else chr(ord(value) + 1)


def _split_part(text: str) -> list[str]:
    """Split a unit with no enumeration left in it at the candidates judged real."""
    out: list[str] = []
    start = 0
    for m in _CANDIDATE.finditer(text):
        end = m.end()
        token_start = text.rfind(" ", 0, m.start()) + 1
        next_end = text.find(" ", end + 1)
        following = text[end + 1 :] if next_end < 0 else text[end + 1 : next_end]
        if _is_boundary(text, start, token_start, m, following):
            out.append(text[start:end])
            start = end + 1
    out.append(text[start:])
    return [s for s in out if s]


def _is_boundary(text: str, start: int, token_start: int, m: re.Match[str], following: str) -> bool:
    """Whether the terminator run ``m`` ends the sentence that began at ``start``."""
    nxt = following.lstrip(_OPENERS)
    first = nxt[:1]
    terms = m.group(1)
    if not first:
        return False
    raw = text[token_start : m.start()]
    lower_next = first.islower() and nxt[1:] == nxt[1:].lower()  # "iOS" is a name
    # an emphasised word after a lone period opens a sentence as a capitalised one
    # does: it names a parameter or a term ("as per RFC 1521. *header* is a flag")
    emphasised_next = following[:1] in _EMPHASIS and terms == "." and not m.group(2)
    if lower_next and not emphasised_next:
        return _lower_after_period(raw, m)
    if "!" in terms or "?" in terms:
        return True
    dots = terms.count(".") + 3 * terms.count("…")
    if dots >= 4:
        return True  # an ellipsis and a full stop
    if dots > 1:
        return first.isupper() and _PRONOUN_I.fullmatch(nxt) is None
    word = raw.lstrip(_OPENERS).rstrip(_CLOSERS)
    emphasised = raw[-1:] in _EMPHASIS  # "*x*." is a variable, not an initial
    if token_start == start and len(word) == 1 and word.isupper() and not emphasised:
        return False  # a label opening the sentence: "A. The quantize method rounds..."
    # an introductory phrase is a few words: a bounded slice keeps long units linear
    before = text[start:token_start] if token_start - start <= _INTRO_CHARS else ""
    return _after_period(word, nxt, before, emphasised)


def _lower_after_period(word: str, m: re.Match[str]) -> bool:
    """Whether a lone period before a lower-case word ends a sentence.

    It does ("... blake2s. md5 is normally ..."), unless the word before it is an
    abbreviation, an initial, a dotted acronym or a number ("e.g. the", "J. smith",
    "a.m. today", "step 2. then"), or a quote or bracket closes after the period
    ("'Stop.' she said"): "!", "?" and ellipses never end one here ("Yahoo! is").
    """
    if m.group(1) != "." or m.group(2):
        return False
    word = word.lstrip(_OPENERS).rstrip(_CLOSERS)
    if _CODE.fullmatch(word):
        return True  # inline code is no abbreviation: "... set `x`. gradeloop reads it"
    lower = word.lower()
    if len(word) < 2 or not any(c.isalpha() for c in word):
        return False
    if _prefix(word, lower) or lower in NUMBER_PREFIXES or lower in AMBIGUOUS:
        return False
    return "." not in word and not word.isupper()  # "U.S." and "OK." stay ambiguous


def _prefix(word: str, lower: str) -> bool:
    """A title (with its capital: "Ms." but not the "ms." of milliseconds) or a Latin
    marker ("e.g.", in any case): never the end of a sentence."""
    return lower in LATIN or (lower in TITLE_PREFIXES and word[:1].isupper())


def _after_period(word: str, nxt: str, before: str, emphasised: bool = False) -> bool:
    """Judge a single period after ``word``, followed by the capitalised ``nxt``."""
    lower = word.lower()
    if _prefix(word, lower):
        return False
    if nxt[0].isdigit() and lower in NUMBER_PREFIXES:
        return False
    ambiguous = not emphasised and (
        lower in AMBIGUOUS
        or (len(word) == 1 and word.isalpha())
        or _ACRONYM.fullmatch(lower) is not None
    )
    if not ambiguous:
        return True
    if nxt[0].isdigit():
        return False
    head = nxt.rstrip(_CLOSERS + ".,;:!?").lower()
    if head in STARTERS:
        return True
    if head in TITLES:
        # "at 6 P.M. Mr. Smith left" ends a sentence, "At 5 a.m. Mr. Smith left" does not
        words = before.split()
        return not (0 < len(words) <= 3 and words[0].lower() in INTRO_PREPOSITIONS)
    return False
