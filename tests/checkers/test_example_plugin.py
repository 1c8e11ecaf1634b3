"""The installable example plugin in examples/gradeloop-readability works as documented."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gradeloop import Rubric, RubricError, grade
from gradeloop.grading import Registry
from tests.support.plugin_dists import make_dist

SRC = Path(__file__).resolve().parents[2] / "examples" / "gradeloop-readability" / "src"


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    # an installed copy: its source on sys.path plus a dist-info naming its entry point
    monkeypatch.syspath_prepend(str(SRC))
    site = tmp_path / "site"
    make_dist(site, "gradeloop-readability", {})
    entry = next(site.glob("*.dist-info")) / "entry_points.txt"
    entry.write_text("[gradeloop]\nreadability = gradeloop_readability\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    sys.modules.pop("gradeloop_readability", None)
    return Registry(allow=["readability"], autoload=False)


def rubric(registry: Registry, **options: object) -> Rubric:
    return Rubric.from_dict(
        {
            "criteria": [
                {
                    "key": "short",
                    "description": "Short paragraphs.",
                    "checker": "max_paragraph_words",
                    "options": options,
                },
            ]
        },
        registry=registry,
    )


def test_the_example_plugin_registers_through_its_entry_point(registry: Registry) -> None:
    assert registry.info("max_paragraph_words").plugin == "readability"
    assert registry.info("no_passive_voice").distribution == "gradeloop-readability"


def test_its_checkers_pass_and_fail(registry: Registry) -> None:
    r = rubric(registry, limit=5)
    assert grade("One two three.\n\nFour five.", r, registry=registry).accepted
    ev = grade("one two three four five six", r, registry=registry)
    assert not ev.accepted and "paragraph 1 has 6 words (max 5)" in ev.verdict.issues[0]


def test_its_options_are_checked_at_load(registry: Registry) -> None:
    with pytest.raises(RubricError, match="criterion 'short'"):
        rubric(registry, limit=0)
    with pytest.raises(RubricError, match="unknown option 'limt'"):
        rubric(registry, limt=3)
