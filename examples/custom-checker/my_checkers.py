"""Checkers of one project, in a plain file: no package, no install.

The rubric beside this file names it (``plugins = ["my_checkers.py"]``), so
``gradeloop grade`` and ``Rubric.load`` load it before the criteria are checked.
"""

from gradeloop import CheckResult, checker


@checker("no_exclamations")
def no_exclamations(text: str, *, max_count: int = 0) -> CheckResult:
    """At most ``max_count`` exclamation marks."""
    n = text.count("!")
    if n <= max_count:
        return CheckResult(True)
    return CheckResult(False, [f"{n} exclamation marks (at most {max_count}); calm the tone"])


@checker("signed_off")
def signed_off(text: str, *, by: str = "The Support Team") -> bool:
    """The last non-empty line is the sign-off."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return bool(lines) and lines[-1] == by
