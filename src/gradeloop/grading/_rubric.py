"""Rubrics: named criteria, each filled by a code checker or by the judge."""

from __future__ import annotations

import json
import math
import os
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

from ..errors import RubricError, UnusableFileError
from ._criterion import JUDGE, KEY_PATTERN, Criterion, Scale, criterion_from, unknown_field
from ._files import RUBRIC_LIMIT, read_user_file
from ._guidance import warn_if_fractional, warn_if_long
from ._plugins import load_rubric_plugins
from ._registry import Registry, default_registry
from ._rubric_fields import (
    MAX_DEPTH,
    TOO_DEEP,
    bind_checker,
    check_shape,
    check_weight_sum,
    checker_timeout_problem,
    generator_max_tokens,
    judging_fields,
    reward_table,
)

__all__ = [
    "DEFAULT_CHECKER_TIMEOUT",
    "JUDGE",
    "KEY_PATTERN",
    "MAX_DEPTH",
    "Criterion",
    "Rubric",
    "Scale",
    "checker_timeout_problem",
    "judging_fields",
]


_TOP_LEVEL = {
    "criteria",
    "pass_score",
    "name",
    "plugins",
    "checker_timeout",
    "judge_models",
    "jury",
    "generator",
    "reward",
}

#: Seconds a checker may run on one draft before its key is an error (0: no limit).
DEFAULT_CHECKER_TIMEOUT = 30.0


class Rubric(Sequence[Criterion]):
    """An ordered set of criteria, validated against the checker registry.

    >>> rubric = Rubric.from_dict({"criteria": [
    ...     {"key": "short", "description": "At most 50 words.",
    ...      "checker": "length", "options": {"max_words": 50}},
    ...     {"key": "polite", "description": "The tone is polite."},
    ... ]})
    >>> rubric.keys
    ('short', 'polite')
    """

    def __init__(
        self,
        criteria: Iterable[Criterion],
        *,
        pass_score: float | None = None,
        name: str | None = None,
        path: str | Path | None = None,
        registry: Registry | None = None,
        plugins: Sequence[str] = (),
        checker_timeout: float = DEFAULT_CHECKER_TIMEOUT,
        _lines: Sequence[int | None] = (),
        judge_models: Sequence[str] = (),
        jury: Mapping[str, Any] | None = None,
        generator_max_tokens: int | None = None,
        reward: Mapping[str, Any] | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        problem = checker_timeout_problem(checker_timeout)
        if problem is not None:
            raise RubricError(problem, path=self.path)
        self.checker_timeout = float(checker_timeout)
        self.name = name
        #: ``[generator] max_tokens``: the ceiling of the loop's drafts (None: the
        #: generator's own default); ``--max-tokens`` overrides it.
        self.generator_max_tokens = generator_max_tokens
        #: ``[reward]``: the reward shape (and ``signed``) gradeloop.rewards uses when
        #: its call names none (``{}``: the defaults)
        self.reward = reward_table({"reward": reward}, self.path)
        self.plugins = tuple(plugins)  # already loaded (from_dict does it), kept for to_dict
        # the judges the CLI builds when no --judge-model is given (several: a jury)
        self.judge_models, self.jury = judging_fields(judge_models, jury, self.path)
        items = list(criteria)
        if not items:
            raise RubricError(
                "the rubric has no criteria; add at least one [[criteria]]", path=self.path
            )
        seen: set[str] = set()
        for i, c in enumerate(items):
            if c.key in seen:
                raise RubricError(
                    f"duplicate key {c.key!r}; every criterion needs its own key",
                    path=self.path,
                    key=c.key,
                    line=_line(_lines, i),
                )
            seen.add(c.key)
        if pass_score is not None and not (math.isfinite(pass_score) and 0 <= pass_score <= 10):
            raise RubricError(
                f"pass_score must be between 0 and 10, not {pass_score}", path=self.path
            )
        check_weight_sum(items, self.path, _lines)
        if sum(c.weight for c in items) <= 0:
            raise RubricError(
                "every weight is 0; give at least one criterion a weight > 0", path=self.path
            )
        for c in items:
            warn_if_long(c.key, c.anchors, c.examples, self.path)
            if c.scale == "score" and c.checker in (None, "judge"):
                warn_if_fractional(c.key, c.threshold, self.path)
        reg = registry or default_registry()
        self._criteria = tuple(
            bind_checker(c, reg, self.path, _line(_lines, i)) for i, c in enumerate(items)
        )
        self.pass_score = pass_score
        self._by_key = {c.key: c for c in self._criteria}
        # Derived once: a Rubric does not change, and grading reads these per draft.
        every = self._criteria
        self._keys = tuple(self._by_key)
        self._code = tuple(c for c in every if c.source == "code")
        self._judge = tuple(c for c in every if c.source == "judge")
        self._judge_keys = tuple(c.key for c in self._judge)
        self._shadowed = tuple(c for c in every if c.shadow is not None)
        self._judge_shadow_keys = tuple(c.key for c in every if c.shadow_source == "judge")
        self._scored_keys = frozenset(c.key for c in every if c.scale == "score")

    # -- construction --------------------------------------------------------------

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        *,
        path: str | Path | None = None,
        registry: Registry | None = None,
        _lines: Sequence[int | None] = (),
    ) -> Rubric:
        """Build a rubric from ``{"criteria": [...], "pass_score": optional}``.

        Optional ``"name"`` labels reports; optional ``"plugins"`` lists modules or
        ``.py`` files of checkers to load first (paths from ``path``'s folder, else the
        working directory).
        """
        if not isinstance(data, Mapping):
            raise RubricError("a rubric is a table with a 'criteria' list", path=path)
        check_shape(data, path)
        unknown = set(data) - _TOP_LEVEL
        if unknown:
            field = sorted(unknown)[0]
            raise RubricError(unknown_field(field, _TOP_LEVEL, "rubric"), path=path)
        where = Path(path) if path is not None else None
        plugins = load_rubric_plugins(data.get("plugins"), where, registry or default_registry())
        raw = data.get("criteria")
        if not isinstance(raw, list):
            raise RubricError(
                "the rubric needs a 'criteria' list ([[criteria]] tables in TOML)", path=path
            )
        criteria = []
        for i, item in enumerate(raw):
            criteria.append(criterion_from(item, i, path, _line(_lines, i)))
        pass_score = data.get("pass_score")
        if pass_score is not None and (
            isinstance(pass_score, bool) or not isinstance(pass_score, int | float)
        ):
            raise RubricError(
                f"pass_score must be a number from 0 to 10, not {pass_score!r}", path=path
            )
        name = data.get("name")
        timeout = data.get("checker_timeout", DEFAULT_CHECKER_TIMEOUT)
        problem = checker_timeout_problem(timeout)
        if problem is not None:
            raise RubricError(problem, path=path)
        return cls(
            criteria,
            pass_score=pass_score,
            name=name if isinstance(name, str) else None,
            path=path,
            registry=registry,
            plugins=plugins,
            checker_timeout=timeout,
            _lines=_lines,
            judge_models=data.get("judge_models", ()),
            jury=data.get("jury"),
            generator_max_tokens=generator_max_tokens(data, path),
            reward=reward_table(data, path),
        )

    @classmethod
    def load(cls, path: str | Path, *, registry: Registry | None = None) -> Rubric:
        """Load a rubric from a TOML file (or JSON, by the ``.json`` suffix)."""
        if not isinstance(path, str | os.PathLike):
            raise RubricError(f"a rubric path is a string or a path, not {type(path).__name__}")
        p = Path(path)
        try:
            text = read_user_file(p, limit=RUBRIC_LIMIT, what="rubric").decode("utf-8")
        except UnusableFileError as exc:
            if "\0" in str(p):  # never print the NUL itself
                raise RubricError(f"the rubric path {str(p)!r} {exc.reason}") from None
            raise RubricError(exc.reason, path=p) from None
        except FileNotFoundError:
            # the one not-found shape of every file a user names: "<what> file not found:
            # PATH; check the path" (draft, task, labels... share it)
            error = RubricError(f"rubric file not found: {p}; check the path")
            error.path = p
            raise error from None
        except IsADirectoryError:
            raise RubricError("is a directory; give the rubric file", path=p) from None
        except UnicodeDecodeError:
            raise RubricError("is not UTF-8 text; save it as UTF-8", path=p) from None
        except OSError as exc:
            raise RubricError(f"cannot be read ({exc.strerror})", path=p) from None
        if p.suffix.lower() == ".json":
            try:
                data = json.loads(text)
            except json.JSONDecodeError as exc:
                raise RubricError(f"invalid JSON: {exc.msg}", path=p, line=exc.lineno) from None
            except RecursionError:
                raise RubricError(TOO_DEEP, path=p) from None
            return cls.from_dict(data, path=p, registry=registry)
        try:
            data = tomllib.loads(text)
        except RecursionError:
            raise RubricError(TOO_DEEP, path=p) from None
        except tomllib.TOMLDecodeError as exc:
            # Python < 3.14 keeps the position only in the message text
            found = re.search(r"\s*\(at line (\d+), column \d+\)$", str(exc))
            msg = str(exc)[: found.start()] if found else str(exc)
            line = int(found.group(1)) if found else None
            raise RubricError(f"invalid TOML: {msg}", path=p, line=line) from None
        return cls.from_dict(data, path=p, registry=registry, _lines=_criteria_lines(text))

    def to_dict(self) -> dict[str, Any]:
        """The rubric as a plain dict, in the shape :meth:`from_dict` reads."""
        out: dict[str, Any] = {
            "criteria": [c.model_dump(exclude_defaults=True) for c in self._criteria]
        }
        if self.pass_score is not None:
            out["pass_score"] = self.pass_score
        if self.name:
            out["name"] = self.name
        if self.plugins:
            out["plugins"] = list(self.plugins)
        if self.checker_timeout != DEFAULT_CHECKER_TIMEOUT:
            out["checker_timeout"] = self.checker_timeout
        if self.judge_models:
            out["judge_models"] = list(self.judge_models)
        if self.jury:
            out["jury"] = dict(self.jury)
        if self.generator_max_tokens is not None:
            out["generator"] = {"max_tokens": self.generator_max_tokens}
        if self.reward:
            out["reward"] = dict(self.reward)
        return out

    # -- access ---------------------------------------------------------------------

    @property
    def keys(self) -> tuple[str, ...]:
        """Every criterion key, in rubric order."""
        return self._keys

    @property
    def code_criteria(self) -> tuple[Criterion, ...]:
        return self._code

    @property
    def judge_criteria(self) -> tuple[Criterion, ...]:
        return self._judge

    @property
    def judge_keys(self) -> tuple[str, ...]:
        return self._judge_keys

    @property
    def shadowed(self) -> tuple[Criterion, ...]:
        """The criteria that name a shadow source, in rubric order."""
        return self._shadowed

    @property
    def judge_shadow_keys(self) -> tuple[str, ...]:
        """Code-filled keys the judge is asked about too, as their shadow."""
        return self._judge_shadow_keys

    @property
    def scored_keys(self) -> frozenset[str]:
        """The keys on the 1-10 scale."""
        return self._scored_keys

    def criteria_block(self) -> str:
        """Every criterion as a ``<criteria>`` block for a prompt."""
        lines = "\n".join(c.prompt_line() for c in self._criteria)
        return f"<criteria>\n{lines}\n</criteria>"

    def __iter__(self) -> Iterator[Criterion]:
        return iter(self._criteria)

    def __len__(self) -> int:
        return len(self._criteria)

    @overload
    def __getitem__(self, index: int) -> Criterion: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Criterion]: ...
    @overload
    def __getitem__(self, index: str) -> Criterion: ...
    def __getitem__(self, index: int | slice | str) -> Criterion | Sequence[Criterion]:
        if isinstance(index, str):
            return self._by_key[index]
        return self._criteria[index]

    def __contains__(self, item: object) -> bool:
        if isinstance(item, str):
            return item in self._by_key
        return item in self._criteria

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Rubric):
            return NotImplemented
        return (
            self._criteria == other._criteria
            and self.pass_score == other.pass_score
            and self.checker_timeout == other.checker_timeout
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Rubric(keys={list(self.keys)!r}, pass_score={self.pass_score!r})"


def _line(lines: Sequence[int | None], i: int) -> int | None:
    return lines[i] if i < len(lines) else None


def _criteria_lines(text: str) -> list[int | None]:
    """The line of each ``[[criteria]]`` header, so errors can point at it."""
    return [
        n
        for n, line in enumerate(text.splitlines(), start=1)
        if re.match(r"^\s*\[\[\s*criteria\s*\]\]", line)
    ]
