"""gradeloop regrade: stored drafts graded again, flips per key, reuse of unchanged keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradeloop import HistoryStore, Rubric
from gradeloop.errors import InputError, LoopNotFoundError
from gradeloop.history._grading import GradedDraft
from gradeloop.migration import regrade, stored_drafts
from gradeloop.migration._evidence import resolve_source
from gradeloop.migration._regrade import prompt_changed_keys
from tests.support.cli_helpers import cli
from tests.support.description_judge import DescriptionJudge
from tests.support.emulator import Emulator

DRAFTS = [
    {"id": "a", "task": "t", "draft": "See http://x.example for details. Please read."},
    {"id": "b", "task": "t", "draft": "source: the 2024 handbook. Thank you."},
    {"id": "c", "task": "t", "draft": "No citation at all."},
    {"id": "d", "task": "t", "draft": "source: RFC 9110, and http://y.example"},
]


def write_rubric(path: Path, cites: str, polite: str = "The reply is polite.") -> Path:
    path.write_text(
        'name = "support"\n\n'
        f'[[criteria]]\nkey = "cites"\ndescription = "{cites}"\n\n'
        f'[[criteria]]\nkey = "polite"\ndescription = "{polite}"\n\n'
        '[[criteria]]\nkey = "short"\ndescription = "At most 20 words."\n'
        'checker = "length"\noptions = { max_words = 20 }\n',
        encoding="utf-8",
    )
    return path


@pytest.fixture
def setup(tmp_path: Path, emulator: Emulator) -> dict[str, Any]:
    judge = DescriptionJudge()
    emulator.responder = judge
    drafts = tmp_path / "drafts.jsonl"
    drafts.write_text("\n".join(json.dumps(d) for d in DRAFTS) + "\n", encoding="utf-8")
    db = tmp_path / "history.db"
    r1 = write_rubric(tmp_path / "r1.toml", "Cites a URL.")
    common = ["--db", str(db), "--base-url", emulator.base_url]
    ran = cli("grade", "--drafts", str(drafts), "--rubric", str(r1), "--quiet", *common)
    assert ran.code in (0, 1), ran.err
    with HistoryStore(db) as store:
        run_id = store.list_grading_runs()[0].run_id
    return {
        "db": db,
        "run": run_id,
        "judge": judge,
        "common": common,
        "tmp": tmp_path,
        "emulator": emulator,
    }


def test_regrade_counts_flips_and_reuses_unchanged_keys(setup: dict[str, Any]) -> None:
    emulator: Emulator = setup["emulator"]
    before = len(emulator.bodies)
    r2 = write_rubric(setup["tmp"] / "r2.toml", "Names a source for its claims.")
    ran = cli("regrade", setup["run"], "--rubric", str(r2), "--json", *setup["common"])
    assert ran.code == 0, ran.err
    out = json.loads(ran.out)
    assert out["from"] == setup["run"] and out["run"].startswith("grade_")
    cites = out["keys"]["cites"]
    # "a URL" met a and d; "a source" meets b too: one draft flipped to met
    assert (cites["to_met"], cites["to_unmet"]) == (1, 0)
    assert cites["agreement"] == 0.75 and cites["changed"] is True
    polite = out["keys"]["polite"]
    assert (polite["to_met"], polite["to_unmet"], polite["agreement"]) == (0, 0, 1.0)
    assert polite["reused"] == 4 and polite["changed"] is False
    # only the changed key was sent, once per draft
    asked = setup["judge"].asked[-4:]
    assert len(emulator.bodies) - before == 4 and all(keys == ["cites"] for keys in asked)
    assert out["cost_usd"] > 0
    with HistoryStore(setup["db"]) as store:
        new = store.grading_run(out["run"])
        assert new["regrade_of"] == setup["run"] and new["origin"] == "regrade"
        assert store.regrades_of(setup["run"]) == [out["run"]]
        assert [d["item_id"] for d in new["drafts"]] == ["a", "b", "c", "d"]


def test_the_same_rubric_again_costs_nothing(setup: dict[str, Any]) -> None:
    emulator: Emulator = setup["emulator"]
    before = len(emulator.bodies)
    r1 = setup["tmp"] / "r1.toml"
    ran = cli("regrade", setup["run"], "--rubric", str(r1), "--json", *setup["common"])
    out = json.loads(ran.out)
    assert len(emulator.bodies) == before  # every judge key's prompt is unchanged
    assert out["cost_usd"] == 0 and out["judge"]["calls"] == 0
    assert all(k["to_met"] == k["to_unmet"] == 0 for k in out["keys"].values())
    assert all(k["agreement"] == 1.0 for k in out["keys"].values())


def test_no_reuse_asks_every_key_and_the_verdict_cache_answers(setup: dict[str, Any]) -> None:
    emulator: Emulator = setup["emulator"]
    before = len(emulator.bodies)
    r1 = setup["tmp"] / "r1.toml"
    ran = cli(
        "regrade", setup["run"], "--rubric", str(r1), "--no-reuse", "--json", *setup["common"]
    )
    out = json.loads(ran.out)
    # the same whole requests as the original grade: the verdict cache holds them all
    assert len(emulator.bodies) == before
    assert out["judge"]["cached"] == 4 and out["judge"]["calls"] == 0 and out["cost_usd"] == 0
    ran = cli(
        "regrade",
        setup["run"],
        "--rubric",
        str(r1),
        "--no-reuse",
        "--no-cache",
        "--json",
        *setup["common"],
    )
    out = json.loads(ran.out)
    assert len(emulator.bodies) == before + 4 and out["judge"]["calls"] == 4
    assert all(set(keys) == {"cites", "polite"} for keys in setup["judge"].asked[-4:])


def test_another_judge_model_reuses_nothing_and_warns(setup: dict[str, Any]) -> None:
    r1 = setup["tmp"] / "r1.toml"
    ran = cli(
        "regrade",
        setup["run"],
        "--rubric",
        str(r1),
        "--judge-model",
        "claude-sonnet-4-5",
        "--no-cache",
        "--json",
        *setup["common"],
    )
    assert ran.code == 0, ran.err
    out = json.loads(ran.out)
    assert out["keys"]["polite"]["reused"] == 0
    assert "differ in judge model: claude-opus-5-5 vs claude-sonnet-4-5" in ran.err
    assert "'claude-sonnet-4-5' is an alias without a date" in ran.err
    assert ran.err.count("alias without a date") == 1


def test_the_text_report(setup: dict[str, Any]) -> None:
    r2 = write_rubric(setup["tmp"] / "r2.toml", "Names a source for its claims.")
    ran = cli("regrade", setup["run"][:10], "--rubric", str(r2), *setup["common"])
    assert ran.code == 0, ran.err
    lines = ran.out.splitlines()
    row = next(line.split() for line in lines if line.startswith("cites"))
    assert row[:5] == ["cites", "judge", "changed", "1", "0"]
    assert "judge: 4 calls, 0 from the verdict cache" in ran.out
    # what it is doing, said on stderr as it starts
    assert ran.err.startswith(f"regrade: grading the stored drafts of {setup['run'][:10]} again")


def test_bad_input(setup: dict[str, Any], tmp_path: Path) -> None:
    r1 = setup["tmp"] / "r1.toml"
    ran = cli("regrade", "nope_123", "--rubric", str(r1), *setup["common"])
    assert ran.code == 2 and "no grading run or loop id starts with 'nope_123'" in ran.err
    r2 = write_rubric(tmp_path / "r2.toml", "Names a source.")
    ran = cli("regrade", setup["run"], "--rubric", str(r2), "--db", str(setup["db"]))
    assert ran.code == 2 and "regrading needs a judge: the judge keys cites changed" in ran.err
    # twin: the unchanged rubric needs no judge at all
    ran = cli("regrade", setup["run"], "--rubric", str(r1), "--db", str(setup["db"]))
    assert ran.code == 0, ran.err


def at_least(words: int) -> Rubric:
    criterion = {"key": "long", "description": "d", "checker": "length"}
    return Rubric.from_dict({"criteria": [{**criterion, "options": {"min_words": words}}]})


def test_a_loops_rounds_are_regraded(tmp_path: Path) -> None:
    from gradeloop import run_loop
    from tests.support.fakes import FakeGenerator

    with HistoryStore(tmp_path / "h.db") as store:
        gen = FakeGenerator(["one", "one two three four"])
        result = run_loop("t", at_least(3), generator=gen, judge=None, store=store, max_rounds=2)
        stricter = at_least(5)
        report = regrade(result.loop_id, stricter, store=store)
        assert report.source.kind == "loop" and report.drafts == 2
        (flips,) = report.keys
        assert (flips.to_met, flips.to_unmet, flips.compared) == (0, 1, 2)
        assert store.grading_run(str(report.run_id))["regrade_of"] == result.loop_id
        drafts = stored_drafts(store, [result.loop_id, str(report.run_id)])
        assert [d.met("long") for d in drafts] == [False, True, False, False]
        assert resolve_source(store, result.loop_id[:8]) == ("loop", result.loop_id)


def test_prompt_changed_keys() -> None:
    old = {
        "criteria": [
            {"key": "a", "description": "x"},
            {"key": "b", "description": "y", "scale": "score"},
            {"key": "c", "description": "z", "weight": 2.0},
        ]
    }
    same = Rubric.from_dict(
        {
            "criteria": [
                {"key": "a", "description": "x "},
                {"key": "b", "description": "y", "scale": "score", "threshold": 7},
                {"key": "c", "description": "z"},
            ]
        }
    )
    assert prompt_changed_keys(old, same) == set()  # weight is not in the prompt
    moved = Rubric.from_dict(
        {
            "criteria": [
                {"key": "a", "description": "x2"},
                {"key": "b", "description": "y", "scale": "score", "threshold": 8},
                {"key": "d", "description": "n"},
            ]
        }
    )
    assert prompt_changed_keys(old, moved) == {"a", "b", "d"}


def test_an_unknown_or_empty_source(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "h.db") as store:
        with pytest.raises(LoopNotFoundError, match="no grading run or loop id"):
            regrade(
                "x", Rubric.from_dict({"criteria": [{"key": "a", "description": "d"}]}), store=store
            )
        run = store.add_grading_run([], rubric={"criteria": []})
        with pytest.raises(InputError, match="no stored drafts"):
            regrade(
                run, Rubric.from_dict({"criteria": [{"key": "a", "description": "d"}]}), store=store
            )


def test_the_viewer_shows_a_regrade_beside_its_source(setup: dict[str, Any]) -> None:
    from gradeloop.history.report._server import render

    r2 = write_rubric(setup["tmp"] / "r2.toml", "Names a source for its claims.")
    ran = cli("regrade", setup["run"], "--rubric", str(r2), "--json", *setup["common"])
    new = json.loads(ran.out)["run"]
    status, page = render(setup["db"], f"/run/{new}")
    assert status == 200
    assert f'regrade of <a href="/run/{setup["run"]}">' in page
    section = page.split('class="regrade-keys"', 1)[1]
    head, row = section.split('data-key="cites"', 1)
    row = row.split("</tr>", 1)[0]
    assert 'class="changed key"' in head.rsplit("<tr", 1)[1]
    assert [c.split(">")[1] for c in row.split("<td")[1:]] == [
        "2</td",
        "3</td",
        "1</td",
        "0</td",
        "75%</td",
        "0.50</td",
    ]
    assert 'data-item="b"' in page and "cites: unmet → met" in page
    assert "differ in rubric" in page  # the fingerprints differ: said first
    assert "provider: anthropic; model: claude-opus-5-5; base_url_host: 127.0.0.1:" in page
    status, source = render(setup["db"], f"/run/{setup['run']}")
    assert status == 200 and f'regraded by: <a href="/run/{new}">' in source
    # the compare page warns too; two runs with one fingerprint draw no warning
    _, compared = render(setup["db"], f"/compare?a={setup['run']}&b={new}")
    assert "differ in rubric" in compared
    _, same = render(setup["db"], f"/compare?a={setup['run']}&b={setup['run']}")
    assert "fingerprint-warnings" not in same


def test_a_regrade_gives_checkers_the_stored_reference(tmp_path: Path) -> None:
    drafts = tmp_path / "d.jsonl"
    rows = [
        {"id": "same", "task": "t", "draft": "Paris", "reference": "Paris"},
        {"id": "other", "task": "t", "draft": "Lyon", "reference": "Paris"},
    ]
    drafts.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    rubric = tmp_path / "r.toml"
    rubric.write_text(
        '[[criteria]]\nkey = "right"\ndescription = "d"\nchecker = "matches_reference"\n',
        encoding="utf-8",
    )
    db = tmp_path / "h.db"
    ran = cli("grade", "--drafts", str(drafts), "--rubric", str(rubric), "--db", str(db), "--quiet")
    assert ran.code == 1, ran.err  # one of the two matches
    with HistoryStore(db) as store:
        run = store.list_grading_runs()[0].run_id
        assert [d.reference for d in stored_drafts(store, [run])] == ["Paris", "Paris"]
        report = regrade(run, Rubric.load(rubric), store=store)
    (flips,) = report.keys
    # without the reference the matching draft would flip to unmet
    assert (flips.to_met, flips.to_unmet, flips.stats.agreement) == (0, 0, 1.0)


def test_a_history_from_before_regrades_reads_and_migrates(tmp_path: Path) -> None:
    import sqlite3

    from gradeloop.history import _sql
    from gradeloop.history.report._db import ReadOnlyHistory

    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    for statements in _sql.MIGRATIONS[:7]:
        for statement in statements:
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 7")
    conn.execute(
        "INSERT INTO grading_runs VALUES ('grade_old', 1.0, 'grade', 'r', '{\"criteria\": []}',"
        " '{}', 0, 0)"
    )
    conn.commit()
    conn.close()
    with ReadOnlyHistory(db) as old:  # read-only: never migrated
        assert old.run("grade_old")["regrade_of"] is None
        assert old.regrades_of("grade_old") == []
    with HistoryStore(db) as store:  # opened for writing: migrated
        assert store.grading_run("grade_old")["regrade_of"] is None
        assert store.regrades_of("grade_old") == []
    with ReadOnlyHistory(db) as new:
        assert new.regrades_of("grade_old") == []


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=12))
@settings(max_examples=40)
def test_flips_add_up(pairs: list[tuple[bool, bool]]) -> None:
    from gradeloop import CheckResult, grade
    from gradeloop.grading import Registry

    before = {f"draft {n}": old for n, (old, _) in enumerate(pairs)}
    after = {f"draft {n}": new for n, (_, new) in enumerate(pairs)}
    reg = Registry(autoload=False)
    reg.add("old", lambda text: CheckResult(before[text]))
    reg.add("new", lambda text: CheckResult(after[text]))

    def rubric(checker: str) -> Rubric:
        criterion = {"key": "k", "description": "d", "checker": checker}
        return Rubric.from_dict({"criteria": [criterion]}, registry=reg)

    with HistoryStore(":memory:") as store:
        drafts = [
            GradedDraft(text, text, grade(text, rubric("old"), registry=reg), "t")
            for text in before
        ]
        run = store.add_grading_run(drafts, rubric=rubric("old").to_dict())
        (flips,) = regrade(run, rubric("new"), store=store, registry=reg, record=False).keys
    assert flips.compared == len(pairs)
    assert flips.to_met - flips.to_unmet == sum(after.values()) - sum(before.values())
    assert flips.to_met == sum(1 for old, new in pairs if new and not old)
    assert flips.stats.agreement == pytest.approx(1 - (flips.to_met + flips.to_unmet) / len(pairs))


def test_a_scored_key_is_reused_with_its_score(tmp_path: Path, emulator: Emulator) -> None:
    emulator.responder = DescriptionJudge()
    drafts = tmp_path / "d.jsonl"
    drafts.write_text("\n".join(json.dumps(d) for d in DRAFTS) + "\n", encoding="utf-8")

    def rubric(name: str, cites: str) -> Path:
        path = tmp_path / name
        path.write_text(
            f'[[criteria]]\nkey = "cites"\ndescription = "{cites}"\n\n'
            '[[criteria]]\nkey = "warm"\ndescription = "Polite and warm."\n'
            'scale = "score"\nthreshold = 6\n',
            encoding="utf-8",
        )
        return path

    common = ["--db", str(tmp_path / "h.db"), "--base-url", emulator.base_url]
    cli("grade", "--drafts", str(drafts), "--rubric", str(rubric("a.toml", "A URL.")), *common)
    with HistoryStore(tmp_path / "h.db") as store:
        run = store.list_grading_runs()[0].run_id
    ran = cli("regrade", run, "--rubric", str(rubric("b.toml", "A source.")), "--json", *common)
    out = json.loads(ran.out)
    assert out["keys"]["warm"]["reused"] == 4 and out["keys"]["warm"]["agreement"] == 1.0
    with HistoryStore(tmp_path / "h.db") as store:
        old, new = stored_drafts(store, [run]), stored_drafts(store, [out["run"]])
    assert [d.verdicts["warm"].score for d in new] == [d.verdicts["warm"].score for d in old]
    assert {d.verdicts["warm"].score for d in new} == {3.0, 9.0}


def test_regrade_and_align_exit_2_in_one_line_when_no_server_listens(
    setup: dict[str, Any],
) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gone = ["--db", str(setup["db"]), "--base-url", f"http://127.0.0.1:{port}", "--no-cache"]
    r2 = write_rubric(setup["tmp"] / "r2.toml", "Names a source for its claims.")
    labels = setup["tmp"] / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"id": d["id"], "task": "t", "draft": d["draft"], "labels": {"cites": True}})
            + "\n"
            for d in DRAFTS
        ),
        encoding="utf-8",
    )
    for args in (
        ["regrade", setup["run"], "--rubric", str(r2), *gone],
        ["align", "--labels", str(labels), "--rubric", str(r2), *gone[2:]],
    ):
        ran = cli(*args)
        errors = [line for line in ran.err.splitlines() if line.startswith("gradeloop: error:")]
        assert ran.code == 2 and len(errors) == 1 and "internal error" not in ran.err, ran.err


def test_transcript_drafts_and_references_come_back_as_transcripts(tmp_path: Path) -> None:
    # a regrade must grade the agent's messages, not the rendering stored as content:
    # trajectory checkers read tool calls, which a rendering has none of
    from gradeloop import Transcript

    def run(call: str) -> list[dict[str, Any]]:
        return [
            {"role": "user", "content": "Where is order A1?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": call, "arguments": '{"id": "A1"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "shipped"},
            {"role": "assistant", "content": "It has shipped."},
        ]

    drafts = tmp_path / "d.jsonl"
    rows = [
        {"id": "good", "task": "t", "messages": run("lookup_order"), "reference": "x"},
        {"id": "bad", "task": "t", "messages": run("cancel_order")},
    ]
    drafts.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    rubric = tmp_path / "r.toml"
    rubric.write_text(
        '[[criteria]]\nkey = "looked_up"\ndescription = "d"\nchecker = "tool_called"\n'
        'options = { name = "lookup_order" }\n',
        encoding="utf-8",
    )
    db = tmp_path / "h.db"
    ran = cli("grade", "--drafts", str(drafts), "--rubric", str(rubric), "--db", str(db), "--quiet")
    assert ran.code == 1, ran.err  # the good one passes, the bad one does not
    with HistoryStore(db) as store:
        run_id = store.list_grading_runs()[0].run_id
        stored = stored_drafts(store, [run_id])
        assert all(isinstance(d.draft, Transcript) for d in stored)
        assert [d.draft.tool_calls[0].name for d in stored] == ["lookup_order", "cancel_order"]
        report = regrade(run_id, Rubric.load(rubric), store=store)
        again = stored_drafts(store, [report.run_id])
    (flips,) = report.keys
    assert (flips.to_met, flips.to_unmet, flips.stats.agreement) == (0, 0, 1.0)
    assert [d.met("looked_up") for d in again] == [True, False]
