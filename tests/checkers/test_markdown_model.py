"""The fence model's fast paths: the language cache's bounds and the fast constructor."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradeloop_checkers.markdown import _model


@pytest.fixture(autouse=True)
def _empty_language_cache() -> Iterator[None]:
    """Leave the cache as the other tests expect it: these fill it to its bound."""
    yield
    _model._LANGUAGES.clear()


def test_language_cache_is_bounded_in_entries_and_key_length() -> None:
    _model._LANGUAGES.clear()
    for n in range(3 * _model._CACHED_INFOS):
        assert _model.language_of(f"lang{n}") == f"lang{n}"
    assert len(_model._LANGUAGES) == _model._CACHED_INFOS
    _model._LANGUAGES.clear()
    long_info = "python " + "x" * _model._CACHED_INFO_LENGTH
    assert _model.language_of(long_info) == "python"
    assert long_info not in _model._LANGUAGES


def test_language_cache_keeps_short_infos_and_answers_alike() -> None:
    _model._LANGUAGES.clear()
    assert _model.language_of("{.Python}") == "python"
    assert _model._LANGUAGES == {"{.Python}": "python"}
    assert _model.language_of("{.Python}") == "python"  # from the cache


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_cached_language_is_the_uncached_one(info: str) -> None:
    first = _model.language_of(info)
    assert _model.language_of(info) == first
    m = _model._LANGUAGE.match(info)
    assert first == (m.group(1).lower() if m else "")
