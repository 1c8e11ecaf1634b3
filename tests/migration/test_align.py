"""gradeloop align: rewrites asked of the judge's model, scored on held-out labels.

The judge is the emulator's :class:`DescriptionJudge`: its answers follow the words
of each description, so a rewrite helps exactly when it names the labellers' rule.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradeloop import Criterion, Rubric
from gradeloop.errors import InputError, JudgeError
from gradeloop.migration import LabelledItem, read_labels, write_rubric
from gradeloop.migration._align import split_items
from gradeloop.migration._rewrite import read_rewrites
from tests.support.cli_helpers import cli
from tests.support.description_judge import DescriptionJudge
from tests.support.emulator import Emulator

# the labellers' rule: naming any source counts (a URL, or a "source:" line)
DRAFTS = [
    ("See http://a.example", True),
    ("source: the handbook", True),
    ("nothing here", False),
    ("source: RFC 9110", True),
    ("read http://b.example", True),
    ("just words", False),
    ("source: the wiki", True),
    ("plain prose", False),
    ("http://c.example is it", True),
    ("source: the manual page", True),
    ("no refs at all", False),
    ("more words still", False),
]
RUBRIC = """\
# the support rubric: keep this comment
name = "support"  # and this one

[[criteria]]
key = "cites"  # the key under test
description = "Cites a URL."

[[criteria]]
key = "polite"
description = "The reply is polite."
weight = 0.5
"""
HELPS = {
    "description": "Names a source for its claim: a URL or a 'source:' line.",
    "examples": [{"text": "source: the handbook", "met": True, "why": "names a source"}],
}
USELESS = {"description": "Includes a hyperlink.", "examples": []}


def labelled(path: Path, labels: list[bool] | None = None) -> Path:
    rows = [
        {"id": f"d{n:02d}", "task": "answer", "draft": text, "labels": {"cites": lab}}
        for n, ((text, _), lab) in enumerate(
            zip(DRAFTS, labels or [lab for _, lab in DRAFTS], strict=True)
        )
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def a_good_seed(labels: Path, rubric: Rubric) -> int:
    """A seed whose split puts a 'source:'-only draft on both sides (so the current
    wording disagrees with the labels in training and on the held-out half)."""
    items = read_labels(labels, rubric)
    for seed in range(50):
        train, held = split_items(items, seed, 0.5)
        if all(any(i.draft.startswith("source:") for i in side) for side in (train, held)):
            return seed
    raise AssertionError("no seed splits the drafts usefully")


@pytest.fixture
def files(tmp_path: Path, emulator: Emulator) -> dict[str, Any]:
    rubric = tmp_path / "rubric.toml"
    rubric.write_text(RUBRIC, encoding="utf-8")
    labels = labelled(tmp_path / "labels.jsonl")
    judge = DescriptionJudge()
    emulator.responder = judge
    seed = a_good_seed(labels, Rubric.load(rubric))
    args = ["--labels", str(labels), "--rubric", str(rubric), "--seed", str(seed)]
    args += ["--base-url", emulator.base_url, "--key", "cites"]
    return {"rubric": rubric, "labels": labels, "judge": judge, "args": args, "tmp": tmp_path}


def test_a_rewrite_that_helps_is_kept_and_the_rubric_keeps_its_other_content(
    files: dict[str, Any],
) -> None:
    files["judge"].proposals = [USELESS, HELPS]
    out = files["tmp"] / "aligned.toml"
    ran = cli("align", *files["args"], "--out", str(out), "--json")
    assert ran.code == 0, ran.err
    report = json.loads(ran.out)
    cites = report["keys"]["cites"]
    assert cites["status"] == "improved" and report["changed"] == ["cites"]
    before, after = cites["before"]["heldout"]["agreement"], cites["after"]["heldout"]["agreement"]
    assert after == 1.0 and before < 1.0
    kept = [c for c in cites["candidates"] if c["kept"]]
    assert [c["description"] for c in kept] == [HELPS["description"]]
    useless = next(c for c in cites["candidates"] if not c["kept"])
    assert useless["heldout"]["agreement"] == before  # no gain: not kept
    assert report["cost_usd"] > 0 and report["out"] == str(out)
    text = out.read_text(encoding="utf-8")
    assert "# the support rubric: keep this comment" in text and "# and this one" in text
    assert "# the key under test" in text and "weight = 0.5" in text
    aligned = Rubric.load(out)
    assert aligned["cites"].description == HELPS["description"]
    assert aligned["cites"].examples[0].text == "source: the handbook"
    assert aligned["polite"].description == "The reply is polite."
    assert files["rubric"].read_text(encoding="utf-8") == RUBRIC  # the input is untouched


def test_the_rewriter_sees_only_training_drafts(files: dict[str, Any]) -> None:
    files["judge"].proposals = [HELPS]
    ran = cli("align", *files["args"], "--json")
    assert ran.code == 0, ran.err
    (request,) = files["judge"].rewrite_requests
    shown = request["messages"][0]["content"]
    items = read_labels(files["labels"], Rubric.load(files["rubric"]))
    seed = int(files["args"][files["args"].index("--seed") + 1])
    train, held = split_items(items, seed, 0.5)
    assert any(i.draft in shown for i in train if i.draft.startswith("source:"))
    assert not any(f"<draft>\n{i.draft}\n</draft>" in shown for i in held)
    schema = request["output_config"]["format"]["schema"]
    assert schema["additionalProperties"] is False and schema["required"] == ["proposals"]


def test_no_gain_keeps_the_wording_and_writes_nothing(files: dict[str, Any]) -> None:
    files["judge"].proposals = [USELESS]
    out = files["tmp"] / "aligned.toml"
    ran = cli("align", *files["args"], "--out", str(out))
    assert ran.code == 0, ran.err
    assert not out.exists()
    assert (
        "no gain" in ran.out
        and f"no rewrite raised held-out agreement: {out} not written" in ran.out
    )


def test_an_ambiguous_criterion_is_not_rewritten(files: dict[str, Any]) -> None:
    files["judge"].proposals = [HELPS]
    other = [lab if n % 3 else not lab for n, (_, lab) in enumerate(DRAFTS)]
    second = labelled(files["tmp"] / "bob.jsonl", other)
    ran = cli("align", *files["args"], "--labels", str(second), "--json")
    assert ran.code == 0, ran.err
    cites = json.loads(ran.out)["keys"]["cites"]
    assert cites["status"] == "ambiguous" and "ambiguous criterion" in cites["note"]
    assert cites["labellers"]["ambiguous"] is True
    assert files["judge"].rewrite_requests == []  # nothing was asked
    # the twin: a second labeller who agrees changes nothing
    same = labelled(files["tmp"] / "carol.jsonl")
    ran = cli("align", *files["args"], "--labels", str(same), "--json")
    assert json.loads(ran.out)["keys"]["cites"]["status"] == "improved"


def test_the_input_rubric_is_never_overwritten(files: dict[str, Any]) -> None:
    files["judge"].proposals = [HELPS]
    ran = cli("align", *files["args"], "--out", str(files["rubric"]))
    assert ran.code == 2 and "never overwrites it" in ran.err
    assert files["rubric"].read_text(encoding="utf-8") == RUBRIC
    with pytest.raises(InputError, match="never overwrites"):
        write_rubric(files["rubric"], files["rubric"], {"cites": ("x", ())})


def test_bad_input(files: dict[str, Any]) -> None:
    args = [a for a in files["args"] if a not in ("--key", "cites")]
    ran = cli("align", *args, "--key", "nope")
    assert ran.code == 2 and "--key 'nope' is not in the rubric" in ran.err
    ran = cli("align", *files["args"], "--holdout", "1.5")
    assert ran.code == 2 and "--holdout must be a share between 0 and 1" in ran.err
    ran = cli("align", *files["args"], "--out", str(files["tmp"] / "x.json"))
    assert ran.code == 2 and "must end in .toml" in ran.err


def test_the_text_report(files: dict[str, Any]) -> None:
    files["judge"].proposals = [HELPS]
    ran = cli("align", *files["args"])
    assert ran.code == 0, ran.err
    row = next(line for line in ran.out.splitlines() if line.startswith("cites"))
    assert "improved" in row and "100%" in row
    assert f"cites: new description: {HELPS['description']}" in ran.out
    assert "give --out FILE to write the aligned rubric" in ran.out


def test_a_json_rubric_is_written_with_its_other_keys(tmp_path: Path) -> None:
    src = tmp_path / "r.json"
    data = {
        "name": "n",
        "pass_score": 6,
        "criteria": [
            {"key": "a", "description": "old", "weight": 2},
            {"key": "b", "description": "keep"},
        ],
    }
    src.write_text(json.dumps(data), encoding="utf-8")
    out = write_rubric(src, tmp_path / "out.json", {"a": ("new", ({"text": "t", "met": True},))})
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["pass_score"] == 6 and written["criteria"][1] == {
        "key": "b",
        "description": "keep",
    }
    assert written["criteria"][0] == {
        "key": "a",
        "description": "new",
        "weight": 2,
        "examples": [{"text": "t", "met": True}],
    }


CRITERION = Criterion(key="cites", description="Cites a URL.")
SCORED = Criterion(key="tone", description="Warm.", scale="score")


def test_rewrite_replies_are_read_strictly() -> None:
    ok = json.dumps({"proposals": [HELPS]})
    rewrites, dropped = read_rewrites(ok, CRITERION)
    assert [r.description for r in rewrites] == [HELPS["description"]] and dropped == []
    with pytest.raises(JudgeError, match="appears twice"):
        read_rewrites('{"proposals": [], "proposals": []}', CRITERION)
    with pytest.raises(JudgeError, match="expected a description"):
        read_rewrites('{"proposals": [{"description": 3, "examples": []}]}', CRITERION)
    with pytest.raises(JudgeError, match="invalid"):
        read_rewrites('{"proposal": []}', CRITERION)
    blank = {"description": "  ", "examples": []}
    same = {"description": "Cites a URL.", "examples": []}
    bad_score = {"description": "Warm and kind.", "examples": [{"text": "x", "score": 11}]}
    _, dropped = read_rewrites(json.dumps({"proposals": [blank, same]}), CRITERION)
    assert len(dropped) == 2 and "same as the current" in dropped[1]
    rewrites, dropped = read_rewrites(json.dumps({"proposals": [bad_score]}), SCORED)
    assert rewrites == [] and len(dropped) == 1


@given(
    st.lists(st.text(min_size=1, max_size=8), min_size=2, max_size=30, unique=True),
    st.integers(0, 10_000),
    st.sampled_from([0.2, 0.5, 0.8]),
)
def test_the_split_is_seeded_order_free_and_leaves_both_sides(
    ids: list[str], seed: int, share: float
) -> None:
    items = [LabelledItem(i, "t", i, {"cites": True}) for i in ids]
    train, held = split_items(items, seed, share)
    again = split_items(list(reversed(items)), seed, share)
    assert [i.output_id for i in train] == [i.output_id for i in again[0]]
    assert train and held and {i.output_id for i in train} | {i.output_id for i in held} == set(ids)
    assert not {i.output_id for i in train} & {i.output_id for i in held}


def test_align_says_each_phase_as_it_starts(files: dict[str, Any]) -> None:
    files["judge"].proposals = [HELPS, USELESS]
    ran = cli("align", *files["args"], "--proposals", "2")
    assert ran.code == 0, ran.err
    phases = [ln for ln in ran.err.splitlines() if ln.startswith("align: ")]
    assert phases[0] == "align: grading 12 labelled drafts with the judge"
    assert phases[1] == "align: cites: asking the judge's model for 2 rewrites"
    assert phases[2].startswith("align: cites: scoring rewrite 1/2 on ")
    assert phases[3].startswith("align: cites: scoring rewrite 2/2 on ")
    assert phases[2].endswith("held-out drafts") and len(phases) == 4
    assert "grading 12" not in ran.out and "scoring" not in ran.out  # stdout: the report


def test_labels_without_a_task_take_task_or_task_file(files: dict[str, Any]) -> None:
    labels: Path = files["labels"]
    rows = [json.loads(line) for line in labels.read_text().splitlines()]
    bare = files["tmp"] / "bare.jsonl"
    bare.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "task"}) + "\n"
                            for r in rows), encoding="utf-8")  # fmt: skip
    args = [a if a != str(labels) else str(bare) for a in files["args"]]
    missing = cli("align", *args)
    assert missing.code == 2 and "missing field 'task'" in missing.err
    assert "--task-file" in missing.err
    task = files["tmp"] / "task.md"
    task.write_text("answer\n", encoding="utf-8")
    files["judge"].proposals = [HELPS]
    for extra in (["--task-file", str(task)], ["--task", "answer"]):
        ran = cli("align", *args, *extra, "--json")
        assert ran.code == 0, ran.err
        assert json.loads(ran.out)["keys"]["cites"]["status"] == "improved"
