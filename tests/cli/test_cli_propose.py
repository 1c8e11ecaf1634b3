"""``gradeloop propose``: exit 0 / 1 / 2, the table, --json, R2, the model line, history."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gradeloop import HistoryStore, Rubric, Verdict, grade
from gradeloop.history._grading import GradedDraft
from gradeloop.testing import text_reply
from tests.support.cli_helpers import EXAMPLE, ROOT, cli
from tests.support.emulator import Emulator
from tests.support.propose_helpers import (
    RUBRIC,
    length_rule,
    required_phrase,
    unexplained,
    write_labels,
)


@pytest.fixture
def rubric_file(tmp_path: Path) -> Path:
    path = tmp_path / "rubric.toml"
    lines = []
    for c in RUBRIC["criteria"]:
        lines += [
            "[[criteria]]",
            f'key = "{c["key"]}"',
            f"description = {json.dumps(c['description'])}",
            "",
        ]
    path.write_text("# the support replies rubric\n\n" + "\n".join(lines))
    return path


def propose(rubric_file: Path, key: str, labels: Path, *args: str) -> Any:
    return cli("propose", key, "--rubric", str(rubric_file), "--labels", str(labels), *args)


def from_history(rubric_file: Path, db: Path, *ids: str) -> Any:
    common = ("--rubric", str(rubric_file), "--db", str(db), "--no-model")
    return cli("propose", "short", *common, "--from-history", *ids)


def test_a_winner_exits_0_and_writes_r2_with_its_shadow(rubric_file: Path, tmp_path: Path) -> None:
    labels = write_labels(tmp_path / "l.jsonl", "short", length_rule())
    out = tmp_path / "r2.toml"
    ran = propose(rubric_file, "short", labels, "--no-model", "--out", str(out))
    assert ran.code == 0, ran.err
    assert "propose short: 60 labelled drafts (" in ran.out
    assert "winner: length {max_words = 80}: held-out kappa 1.00" in ran.out
    assert f"wrote {out}" in ran.out
    text = out.read_text()
    assert text.startswith("# the support replies rubric")
    assert Rubric.load(out)["short"].shadow == "length"
    assert Rubric.load(out)["short"].shadow_options == {"max_words": 80}
    assert "shadow" not in rubric_file.read_text()


def test_no_winner_exits_1_keeps_the_key_and_writes_nothing(
    rubric_file: Path, tmp_path: Path
) -> None:
    labels = write_labels(tmp_path / "l.jsonl", "tone", unexplained())
    out = tmp_path / "r2.toml"
    ran = propose(rubric_file, "tone", labels, "--no-model", "--out", str(out))
    assert ran.code == 1, ran.err
    assert "keep tone with the judge" in ran.out and "nothing written" in ran.out
    assert not out.exists()


def test_json_has_the_contract_shape_and_says_where_r2_went(
    rubric_file: Path, tmp_path: Path
) -> None:
    labels = write_labels(tmp_path / "l.jsonl", "refund", required_phrase())
    ran = propose(rubric_file, "refund", labels, "--no-model", "--json", "--seed", "7")
    assert ran.code == 0, ran.err
    data = json.loads(ran.out)
    assert data["key"] == "refund" and data["seed"] == 7 and data["cost_usd"] == 0.0
    assert data["winner"]["checker"] == "contains"
    assert data["winner"]["options"]["values"] == ["refund policy"]
    assert data["winner"]["heldout"]["kappa"] == 1.0 and data["rubric_out"] is None
    assert data["candidates"][0]["checker"] == "contains"


def test_without_out_a_winner_says_how_to_write_it(rubric_file: Path, tmp_path: Path) -> None:
    labels = write_labels(tmp_path / "l.jsonl", "short", length_rule())
    ran = propose(rubric_file, "short", labels, "--no-model")
    assert ran.code == 0 and "give --out FILE" in ran.out


def test_the_seed_changes_the_split_and_the_same_seed_repeats_it(
    rubric_file: Path, tmp_path: Path
) -> None:
    labels = write_labels(tmp_path / "l.jsonl", "tone", unexplained())
    runs = [
        json.loads(propose(rubric_file, "tone", labels, "--no-model", "--json", "--seed", s).out)
        for s in ("1", "1", "2")
    ]
    assert runs[0] == runs[1] and runs[0] != runs[2]


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--min-kappa", "0"), "--min-kappa must be above 0"),
        (("--min-kappa", "1.5"), "--min-kappa must be above 0"),
        (("--out", "SELF"), "propose never overwrites it"),
        (("--out", "r2.json"), "must end in .toml"),
        (("--out", "missing/r2.toml"), "--out folder not found"),
        ((), "no model is configured to propose candidates"),
    ],
)
def test_bad_arguments_exit_2(
    rubric_file: Path, tmp_path: Path, args: tuple[str, ...], fragment: str
) -> None:
    labels = write_labels(tmp_path / "l.jsonl", "short", length_rule())
    args = tuple(
        str(rubric_file)
        if a == "SELF"
        else str(tmp_path / a)
        if a.startswith(("r2", "missing"))
        else a
        for a in args
    )
    ran = propose(rubric_file, "short", labels, *args)
    assert ran.code == 2 and fragment in ran.err, ran.err
    assert ran.out == "" and "Traceback" not in ran.err


def test_too_few_labels_exit_2_saying_how_many_more(rubric_file: Path, tmp_path: Path) -> None:
    labels = write_labels(tmp_path / "l.jsonl", "short", length_rule(n=12))
    ran = propose(rubric_file, "short", labels, "--no-model")
    assert ran.code == 2
    assert "labels: 12 drafts with a verdict for 'short'" in ran.err
    assert "add 8 more" in ran.err


@pytest.mark.parametrize(
    ("key", "fragment"),
    [("shrt", "did you mean 'short'"), ("nope", "the rubric has no criterion 'nope'")],
)
def test_an_unknown_key_exits_2(rubric_file: Path, tmp_path: Path, key: str, fragment: str) -> None:
    labels = write_labels(tmp_path / "l.jsonl", "short", length_rule())
    ran = propose(rubric_file, key, labels, "--no-model")
    assert ran.code == 2 and fragment in ran.err


def test_a_bad_label_line_exits_2_with_its_line(rubric_file: Path, tmp_path: Path) -> None:
    labels = write_labels(tmp_path / "l.jsonl", "short", length_rule())
    with labels.open("a") as f:
        f.write('{"draft": "x", "labels": {"short": "yes"}}\n')
    ran = propose(rubric_file, "short", labels, "--no-model")
    assert ran.code == 2 and f"{labels}:61:" in ran.err


def test_labels_from_two_files_add_up_and_a_repeated_id_is_refused(
    rubric_file: Path, tmp_path: Path
) -> None:
    ex = length_rule()
    a = write_labels(tmp_path / "a.jsonl", "short", ex[:30])
    b = write_labels(tmp_path / "b.jsonl", "short", ex[30:])

    def twice(first: Path, second: Path) -> Any:
        files = ("--labels", str(first), "--labels", str(second))
        return cli("propose", "short", "--rubric", str(rubric_file), *files, "--no-model")

    ran = twice(a, b)
    assert ran.code == 0 and "60 labelled drafts" in ran.out
    ran = twice(a, a)
    assert ran.code == 2 and "is already used at" in ran.err


def test_labels_and_history_together_are_refused(rubric_file: Path, tmp_path: Path) -> None:
    labels = write_labels(tmp_path / "l.jsonl", "short", length_rule())
    ran = propose(rubric_file, "short", labels, "--from-history")
    assert ran.code == 2 and "not allowed with argument" in ran.err


def test_the_model_line_shows_tokens_and_cost(
    rubric_file: Path, tmp_path: Path, emulator: Emulator
) -> None:
    labels = write_labels(tmp_path / "l.jsonl", "short", length_rule())
    answer = {
        "candidates": [
            {"checker": "length", "options": {"max_words": 80}, "why": "the rule"},
            {"checker": "regex", "options": {"pattern": "(a+)+"}, "why": "hostile"},
        ],
        "notes": ["count words the way your readers do"],
    }
    emulator.enqueue(text_reply(json.dumps(answer)))
    ran = propose(rubric_file, "short", labels, "--base-url", emulator.base_url)
    assert ran.code == 0, ran.err
    assert "model: 1 call, " in ran.out and " tokens in, " in ran.out and "$0." in ran.out
    assert "2 candidates proposed" in ran.out and "1 dropped" in ran.out
    assert "dropped (model): regex: option 'pattern': the pattern has an unbounded" in ran.out
    assert "note for a person: count words the way your readers do" in ran.out
    assert len(emulator.bodies) == 1


def test_a_failed_model_request_leaves_the_mined_candidates(
    rubric_file: Path, tmp_path: Path, emulator: Emulator
) -> None:
    labels = write_labels(tmp_path / "l.jsonl", "short", length_rule())
    emulator.enqueue(text_reply("I would use a length check."))
    ran = propose(rubric_file, "short", labels, "--base-url", emulator.base_url)
    assert ran.code == 0, ran.err
    assert "failed: the model's proposal is invalid" in ran.out
    assert "mined candidates only" in ran.out


# -- the judge's stored verdicts ------------------------------------------------------


class RuleJudge:
    """Answers `short` by the length rule, as a judge that is right would."""

    def evaluate(self, task: str, draft: str, criteria: Any) -> Verdict:
        keys = [c.key for c in criteria if c.source == "judge"]
        met = {k: len(draft.split()) <= 80 if k == "short" else True for k in keys}
        return Verdict(reasoning="r", criteria_met=met, passed=all(met.values()), issues=[])


def stored_run(db: Path, rubric_file: Path, examples: list[Any]) -> str:
    rubric = Rubric.load(rubric_file)
    judge = RuleJudge()
    drafts = [
        GradedDraft(e.output_id, e.draft, grade(e.draft, rubric, judge=judge), "answer")
        for e in examples
    ]
    with HistoryStore(db) as store:
        return store.add_grading_run(drafts, rubric=rubric.to_dict(), rubric_name="replies")


def test_from_history_reads_the_judges_stored_verdicts(rubric_file: Path, tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    ex = length_rule()
    first = stored_run(db, rubric_file, ex[:15])
    stored_run(db, rubric_file, ex[15:])
    common = ("propose", "short", "--rubric", str(rubric_file), "--db", str(db), "--no-model")
    ran = cli(*common, "--from-history")
    assert ran.code == 0, ran.err
    assert "propose short: 60 drafts the judge answered" in ran.out
    assert "winner: length {max_words = 80}" in ran.out
    ran = cli(*common, "--from-history", first)
    assert ran.code == 2 and "history: 15 drafts with a verdict" in ran.err
    ran = cli(*common, "--from-history", "grade_nope")
    assert ran.code == 2 and "no grading run or loop id starts with 'grade_nope'" in ran.err


def test_from_history_needs_an_existing_database(rubric_file: Path, tmp_path: Path) -> None:
    ran = from_history(rubric_file, tmp_path / "none.db")
    assert ran.code == 2 and "history database not found" in ran.err


def test_the_example_labels_extend_the_ten_of_the_worked_example() -> None:
    ten = (EXAMPLE / "labels.jsonl").read_text().splitlines()
    more = [json.loads(line) for line in (EXAMPLE / "more-labels.jsonl").read_text().splitlines()]
    assert len(ten) == 10 and len(more) == 20
    ids = {json.loads(line)["id"] for line in ten} | {m["id"] for m in more}
    assert len(ids) == 30
    assert all(set(m["labels"]) == {"sentence_len"} for m in more)
    assert (ROOT / "examples" / "payments-guide" / "rubric-judge.toml").is_file()


def test_from_history_reads_loops_rounds_by_id_prefix(rubric_file: Path, tmp_path: Path) -> None:
    from gradeloop import run_loop
    from tests.support.fakes import FakeGenerator

    db = tmp_path / "h.db"
    ex = length_rule(n=90, seed=3)
    longs = [e.draft for e in ex if not e.met]
    shorts = [e.draft for e in ex if e.met]
    rubric = Rubric.load(rubric_file)
    ids = []
    with HistoryStore(db) as store:
        for i in range(10):  # each loop: two long rounds, then a short one that passes
            texts = [longs[2 * i], longs[2 * i + 1], shorts[i]]
            result = run_loop(
                "answer",
                rubric,
                generator=FakeGenerator(texts),
                judge=RuleJudge(),
                max_rounds=3,
                stagnation_rounds=None,
                store=store,
            )
            ids.append(result.loop_id)
    prefixes = [i[:12] for i in ids]
    ran = from_history(rubric_file, db, *prefixes)
    assert ran.code == 0, ran.err
    assert "propose short: 30 drafts the judge answered (10 met, 20 unmet)" in ran.out


# -- the worked example of docs/migrating-a-criterion.md ------------------------------

DOC = ROOT / "docs" / "migrating-a-criterion.md"


def doc_block(name: str) -> tuple[list[str], list[str]]:
    """The command (split as a shell would) and output lines after ``<!-- output: NAME -->``."""
    import shlex

    block = DOC.read_text(encoding="utf-8").split(f"<!-- output: {name} -->\n```console\n", 1)[1]
    lines = block.split("```", 1)[0].splitlines()
    command = shlex.split(lines[0].removeprefix("$ "))
    assert command[0] == "gradeloop"
    return command[1:], lines[1:]


def run_doc(name: str, tmp_path: Path, emulator: Emulator | None = None) -> tuple[Any, list[str]]:
    import shutil

    from tests.migration.test_compare import stand_in

    shutil.copytree(EXAMPLE, tmp_path / "examples" / "payments-guide")
    args, expected = doc_block(name)
    env = {}
    if emulator is not None:
        emulator.responder = stand_in().respond
        env["ANTHROPIC_BASE_URL"] = emulator.base_url
    return cli(*args, cwd=tmp_path, env=env), expected


def test_the_docs_propose_output_is_real(tmp_path: Path) -> None:
    ran, expected = run_doc("propose", tmp_path)
    assert ran.code == 0, ran.err
    assert [line.rstrip() for line in ran.out.splitlines()] == expected
    written = (tmp_path / "rubric-proposed.toml").read_text().splitlines()
    shadow = (EXAMPLE / "rubric-shadow.toml").read_text().splitlines()
    # the same rubric as step 2's, but for the comment at its top
    assert written[4:] == shadow[5:]


def test_the_docs_propose_output_with_the_model_is_real(tmp_path: Path, emulator: Emulator) -> None:
    ran, expected = run_doc("propose-model", tmp_path, emulator)
    assert ran.code == 0, ran.err
    assert [line.rstrip() for line in ran.out.splitlines()] == expected
    assert len(emulator.bodies) == 1


def test_the_docs_too_few_labels_output_is_real(tmp_path: Path) -> None:
    ran, expected = run_doc("propose-too-few", tmp_path)
    assert ran.code == 2 and ran.out == ""
    assert ran.err.splitlines() == expected
