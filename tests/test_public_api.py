from __future__ import annotations

import gradeloop


def _isort_style(name: str) -> tuple[int, str]:
    # ruff's RUF022 order: CONSTANTS, then CamelCase, then everything else
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


def test_all_is_sorted_and_importable() -> None:
    assert list(gradeloop.__all__) == sorted(gradeloop.__all__, key=_isort_style)
    for name in gradeloop.__all__:
        assert hasattr(gradeloop, name), name


def test_the_contract_names_are_public() -> None:
    contract = {
        "Verdict",
        "accepted",
        "as_feedback",
        "Criterion",
        "Rubric",
        "RubricError",
        "CheckResult",
        "hookimpl",
        "checker",
        "get_checker",
        "grade",
        "Evaluation",
    }
    assert contract <= set(gradeloop.__all__)


def test_hookimpl_belongs_to_the_gradeloop_project() -> None:
    assert gradeloop.hookimpl.project_name == "gradeloop"


def test_error_tree_roots_at_gradeloop_error() -> None:
    from gradeloop import errors

    for name in errors.__all__:
        cls = getattr(errors, name)
        if issubclass(cls, Warning):  # warnings are their own root (UserWarning)
            assert name.endswith("Warning") and not issubclass(cls, errors.GradeloopError)
            continue
        assert issubclass(cls, errors.GradeloopError), name
