"""Word lists for the sentence splitter, all lower case and without the final period.

The lists are general English usage, not tuned to any test text: titles and Latin
markers that are always followed by more of the same sentence, abbreviations that
usually precede a number, abbreviations that may or may not end a sentence, and the
words that commonly open one.
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


TITLES = _words(
    """
    mr mrs ms mx dr prof rev fr sr jr st mt ft gen col lt maj capt cmdr sgt cpl pvt adm
    gov sen rep pres supt messrs mmes hon insp det atty mme mlle
    """
)
"""Titles: before a name they never end a sentence ("Dr. Lee", "Mt. Fuji")."""

TITLE_PREFIXES = TITLES - _words("sr jr")  # "John Smith Jr. He left." can end a sentence
"""Titles that never end a sentence: written with a capital only ("Ms. Lee", not the
"30 ms. The" of milliseconds, nor "ft.", "st.", "gen.", "rev.")."""

LATIN = _words("e.g i.e cf viz vs v c.f eg ie")
"""Markers that always introduce more, in any case ("e.g.", "E.g.", "vs.")."""

PREFIXES = TITLE_PREFIXES | LATIN
"""Never the end of a sentence: titles and markers that always introduce more."""

NUMBER_PREFIXES = _words(
    """
    no nos n° nº p pp vol vols fig figs ch chap sec sect art arts eq eqs eqn ref refs
    para paras tab tbl ex op ed edn pt pts pl apt ste rm ver approx ca est nr tel ext
    bldg hwy rte ser rev col
    """
)
"""Abbreviations that usually precede a number ("p. 55", "No. 5", "Fig. 3").

They hold a sentence together only before a number: "The answer is no. Everyone
agreed." still ends after "no".
"""

AMBIGUOUS = _words(
    """
    inc ltd co corp llc plc bros jr sr esq phd ph.d etc al dept univ assn assoc intl
    natl govt mfg avg misc incl excl orig pkg qty std approx
    jan feb apr jun jul aug sep sept oct nov dec mon tue tues thu thur thurs fri
    hr hrs mins secs yr yrs wk wks oz lb lbs sq deg blvd rd pg pgs abbr fwd subj tbsp tsp
    st ft mt
    """
)
"""Abbreviations that may end a sentence ("and Co. They left") or not ("Co. Ltd. said").

Words that are also ordinary English ("sat", "max", "am") are left out: after them a
period followed by a capital is far more often a real sentence end. ``st``, ``ft``
and ``mt`` are here in lower case (street, feet, mount): with a capital they are
titles ("St. Michael's").
"""

STARTERS = _words(
    """
    a an the this that these those it its it's i i'm i've i'd i'll we you he she they
    there here what when where why how who whom which whose if in on at for but and or
    so then thus therefore however also now some many most all each every no not our
    my your his her their as after before since while although though because to with
    without by from during did do does don't is are was were has have had can could will
    would should may might must being let let's please note see use yes once both
    another other otherwise instead finally first next still yet even only just today
    meanwhile moreover furthermore besides hence unfortunately fortunately later such
    any one millions more make run call set check install add remove try read click
    open go keep there's that's it’s i’m that’s there’s let’s don’t
    """
)
"""Words that commonly open a sentence and rarely continue a name after an abbreviation."""

INTRO_PREPOSITIONS = _words(
    "at by before after until till since from around about on in during between near"
)
"""Prepositions that open a short introductory phrase ("At 5 a.m. Mr. Smith left")."""
