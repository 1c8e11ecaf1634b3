"""The pytest plugin, registered through the ``pytest11`` entry point ``gradeloop``.

It gives tests a judge that replays recorded replies (``gradeloop_judge``), the
``gradeloop`` marker, the ``--gradeloop-record`` option, and a summary at the end
of the session. It imports nothing heavy until a test asks for the judge, so it
costs nothing in a session that does not use it. See docs/pytest.md.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import pytest

from ._assert import observe
from ._cassette import MODES, Cassette, CassetteMiss, RecordMode

__all__ = ["CassetteJudge", "record_mode"]

_MARKER = (
    "gradeloop(rubric=None, samples=1): the rubric for the gradeloop_rubric fixture "
    "(a path relative to the test file, a dict or a Rubric) and the judge's samples per draft"
)
_TRUE = {"1", "true", "yes", "on"}


@dataclass
class _Stats:
    """What the session graded and what the judge cost."""

    drafts: int = 0
    accepted: int = 0
    failed_keys: Counter[str] = field(default_factory=Counter)
    calls_made: int = 0
    calls_replayed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = 0
    recorded: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out = dict(vars(self))
        out["failed_keys"] = dict(self.failed_keys)
        return out

    def merge(self, data: dict[str, Any]) -> None:
        for name, value in data.items():
            if name == "failed_keys":
                self.failed_keys.update(value)
            elif name == "recorded":
                for path, n in value.items():
                    self.recorded[path] = self.recorded.get(path, 0) + n
            else:
                setattr(self, name, getattr(self, name) + value)


class _State:
    """The session's cassettes, judges and figures."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.mode = record_mode(config)
        self.stats = _Stats()
        self.cassettes: dict[Path, Cassette] = {}
        self.stop_observing = observe(self.count)

    def count(self, evaluation: Any) -> None:
        self.stats.drafts += 1
        self.stats.accepted += int(bool(evaluation.accepted))
        self.stats.failed_keys.update(evaluation.failed_keys)

    def cassette_for(self, test_file: Path) -> Cassette:
        folder = str(self.config.getini("gradeloop_cassette_dir") or "cassettes")
        path = test_file.parent / folder / f"{test_file.stem}.json"
        if path not in self.cassettes:
            self.cassettes[path] = Cassette.load(path, self.mode)
        return self.cassettes[path]

    def tally(self, judge: CassetteJudge) -> None:
        for record in judge.calls[judge.first_call :]:
            if getattr(record, "cached", False):
                self.stats.calls_replayed += 1
                continue
            self.stats.calls_made += 1
            self.stats.input_tokens += record.usage.total_input
            self.stats.output_tokens += record.usage.output_tokens
            if record.usage.cost_usd is None:
                self.stats.cost_unknown += 1
            else:
                self.stats.cost_usd += record.usage.cost_usd

    def save(self) -> None:
        for path, cassette in self.cassettes.items():
            written = cassette.save()
            if written:
                self.stats.recorded[str(path)] = self.stats.recorded.get(str(path), 0) + written


def record_mode(config: pytest.Config) -> RecordMode:
    """``--gradeloop-record``, else the ``gradeloop_record`` ini option, else ``none``
    under ``CI=true`` and ``new`` elsewhere."""
    chosen = config.getoption("gradeloop_record", None) or config.getini("gradeloop_record")
    if not chosen:
        return "none" if os.environ.get("CI", "").strip().lower() in _TRUE else "new"
    if chosen not in MODES:
        raise pytest.UsageError(
            f"gradeloop_record = {chosen!r} in the ini file; use one of: {', '.join(MODES)}"
        )
    mode: RecordMode = chosen
    return mode


class CassetteJudge:
    """A judge whose replies come from (and go to) a cassette.

    It delegates to the real judge, telling the cassette what each request is about,
    and turns a request missing from a replay-only cassette into a test failure that
    names it (not a judge error a test might catch).
    """

    def __init__(self, judge: Any, cassette: Cassette) -> None:
        self.inner, self.cassette = judge, cassette
        self.first_call = len(judge.calls)

    def __repr__(self) -> str:
        where, mode = str(self.cassette.path), self.cassette.mode
        return f"CassetteJudge({self.inner!r}, cassette={where!r}, mode={mode!r})"

    @property
    def model(self) -> str:
        return str(self.inner.model)

    @property
    def calls(self) -> list[Any]:
        return list(self.inner.calls)

    @property
    def samples(self) -> int:
        return int(getattr(self.inner, "samples", 1))

    def _keys(self, criteria: Sequence[Any]) -> list[str]:
        return [c.key for c in criteria if getattr(c, "source", "judge") == "judge"]

    def evaluate(self, task: str, draft: str, criteria: Sequence[Any]) -> Any:
        """Judge through the cassette."""
        with self.cassette.describing(self.model, self._keys(criteria), task, draft):
            try:
                return self.inner.evaluate(task, draft, criteria)
            except CassetteMiss as exc:
                missed = str(exc)
        _fail_once(missed)

    async def aevaluate(self, task: str, draft: str, criteria: Sequence[Any]) -> Any:
        """Judge through the cassette (async)."""
        with self.cassette.describing(self.model, self._keys(criteria), task, draft):
            try:
                return await self.inner.aevaluate(task, draft, criteria)
            except CassetteMiss as exc:
                missed = str(exc)
        _fail_once(missed)


def _fail_once(message: str) -> NoReturn:
    """Fail the test with ``message``, raised outside the ``except`` that caught the miss:
    inside it, pytest would print the miss a second time as the failure's context."""
    pytest.fail(message, pytrace=False)


class _NoModel:
    """The client of a judge that must not reach a model: every request fails the
    test with what to do (replay-only mode, or no key to record with)."""

    def __init__(self, why: str) -> None:
        self.why = why
        self.messages = self
        self.chat = self
        self.completions = self

    def parse(self, **_: Any) -> Any:
        pytest.fail(self.why, pytrace=False)

    create = parse


def _build_judge(state: _State, cassette: Cassette, samples: int) -> Any:
    from ..models._client import judge_model

    provider = os.environ.get("GRADELOOP_PROVIDER", "").strip() or "anthropic"
    model = judge_model(str(state.config.getini("gradeloop_judge_model") or "") or None)
    client: Any = None
    if cassette.mode == "none":
        client = _NoModel("replay-only (--gradeloop-record=none): no model is ever called")
    elif provider == "anthropic" and not _anthropic_configured():
        client = _NoModel(
            "a judge request is not in the cassette and no model is configured to record it: "
            "set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL) and run with --gradeloop-record=new"
        )
    if provider == "openai-compatible":
        from ..models._openai import OpenAICompatibleJudge

        return OpenAICompatibleJudge(model=model, client=client, cache=cassette, samples=samples)
    from ..models._client import make_client
    from ..models._judge import AnthropicJudge

    return AnthropicJudge(client or make_client(), model=model, cache=cassette, samples=samples)


def _anthropic_configured() -> bool:
    return any(
        os.environ.get(name)
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
    )


# -- hooks ----------------------------------------------------------------------------


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gradeloop", "gradeloop: recorded judge replies")
    group.addoption(
        "--gradeloop-record",
        dest="gradeloop_record",
        choices=MODES,
        default=None,
        help="none: replay recorded judge replies only (default when CI=true); "
        "new: record what is missing (default elsewhere); all: record everything again",
    )
    parser.addini("gradeloop_record", "none, new or all (see --gradeloop-record)", default="")
    parser.addini("gradeloop_judge_model", "the model gradeloop_judge uses", default="")
    parser.addini(
        "gradeloop_cassette_dir",
        "folder beside each test module for its cassette (default: cassettes)",
        default="cassettes",
    )


_STATE = pytest.StashKey[_State]()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", _MARKER)
    config.stash[_STATE] = _State(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is not None:
        state.stop_observing()


def _marker_kwargs(request: pytest.FixtureRequest) -> dict[str, Any]:
    marker = request.node.get_closest_marker("gradeloop")
    if marker is None:
        return {}
    unknown = set(marker.kwargs) - {"rubric", "samples"}
    if marker.args or unknown:
        raise pytest.UsageError(
            "@pytest.mark.gradeloop takes rubric= and samples= only "
            f"(got {sorted(unknown) or marker.args})"
        )
    return dict(marker.kwargs)


@pytest.fixture
def gradeloop_judge(request: pytest.FixtureRequest) -> Iterator[CassetteJudge]:
    """The configured judge, replaying this module's cassette (``cassettes/<module>.json``)
    and recording into it as ``--gradeloop-record`` says."""
    state = request.config.stash[_STATE]
    samples = _marker_kwargs(request).get("samples", 1)
    cassette = state.cassette_for(Path(str(request.path)))
    judge = CassetteJudge(_build_judge(state, cassette, samples), cassette)
    yield judge
    state.tally(judge)


@pytest.fixture
def gradeloop_rubric(request: pytest.FixtureRequest) -> Any:
    """The rubric named by the test's ``@pytest.mark.gradeloop(rubric=...)``."""
    from ..grading._rubric import Rubric

    rubric = _marker_kwargs(request).get("rubric")
    if rubric is None:
        raise pytest.UsageError(
            "gradeloop_rubric needs @pytest.mark.gradeloop(rubric=...) on the test"
        )
    if isinstance(rubric, str | os.PathLike):
        return Rubric.load(Path(str(request.path)).parent / rubric)
    return rubric if isinstance(rubric, Rubric) else Rubric.from_dict(rubric)


def pytest_sessionfinish(session: pytest.Session) -> None:
    state = session.config.stash.get(_STATE, None)
    if state is None:
        return
    state.save()
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller prints the summary
        workeroutput["gradeloop"] = state.stats.to_json()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    output = getattr(node, "workeroutput", {}).get("gradeloop")
    if output:
        node.config.stash[_STATE].stats.merge(output)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    state = terminalreporter.config.stash.get(_STATE, None)
    if state is None:
        return
    s = state.stats
    if not (s.drafts or s.calls_made or s.calls_replayed or s.recorded):
        return
    write = terminalreporter.write_line
    terminalreporter.section("gradeloop")
    failed = ", ".join(f"{k} {n}" for k, n in s.failed_keys.most_common()) or "none"
    write(f"drafts graded: {s.drafts}, accepted: {s.accepted}; failed keys: {failed}")
    if s.calls_made or s.calls_replayed:
        unknown = f" (+{s.cost_unknown} calls of unknown price)" if s.cost_unknown else ""
        write(
            f"judge calls: {s.calls_made} made, {s.calls_replayed} replayed from cassettes "
            f"(record mode: {state.mode}); tokens {s.input_tokens:,} in / "
            f"{s.output_tokens:,} out; cost ${s.cost_usd:.4f}{unknown}"
        )
    for path, n in sorted(s.recorded.items()):
        write(f"recorded {n} repl{'y' if n == 1 else 'ies'} into {path}")
