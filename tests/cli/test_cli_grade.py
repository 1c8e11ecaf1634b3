"""`gradeloop grade` and `gradeloop checkers`: in this process (``cli``), and a few through
the console script in a subprocess (``gradeloop``) to prove it works end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.support.cli_helpers import EXAMPLE, cli, gradeloop
from tests.support.emulator import Emulator
from tests.support.plugin_dists import GOOD, IMPORT_FAILS, make_dist

RUBRIC = str(EXAMPLE / "rubric.toml")
DRAFT = str(EXAMPLE / "draft.md")
CODE_ONLY = """
[[criteria]]
key = "short"
description = "At most 30 words."
checker = "length"
options = { max_words = 30 }
"""


def test_the_example_offline_lists_every_criterion_and_is_not_accepted() -> None:
    ran = gradeloop("grade", DRAFT, "--rubric", RUBRIC, "--code-only")
    assert ran.code == 1, ran.err
    for key in ("api_cited", "code_runs", "errors_named", "sentence_len", "no_invention"):
        assert key in ran.out
    assert "not checked" in ran.out and "NOT ACCEPTED" in ran.out
    assert "imports 'requests'" in ran.out


def test_json_output_is_the_seed_evaluation_shape_and_says_what_was_not_checked() -> None:
    ran = cli("grade", DRAFT, "--rubric", RUBRIC, "--code-only", "--json")
    data = json.loads(ran.out)
    assert set(data) == {"output_id", "criteria", "overall_score", "passed", "not_checked"}
    assert re.fullmatch(r"out_[0-9a-f]{12}", data["output_id"])  # a real id, not ""
    assert [c["name"] for c in data["criteria"]][:2] == ["api_cited", "code_runs"]
    assert data["passed"] is False
    assert data["overall_score"] is None  # not computed: three keys were not checked
    assert data["not_checked"] == ["api_cited", "errors_named", "no_invention"]
    by_key = {c["name"]: c for c in data["criteria"]}
    skipped, failed = by_key["api_cited"], by_key["code_runs"]
    assert {"name", "weight", "score", "passed"} <= set(skipped)  # the seed's fields stay
    assert (skipped["status"], skipped["filled_by"]) == ("not_checked", "judge")
    assert (failed["status"], failed["filled_by"]) == ("failed", "code_runs")
    assert isinstance(failed["issues"], list) and len(failed["issues"]) == 2
    assert "imports 'requests'" in failed["issues"][0]


def test_the_output_id_is_the_one_the_history_records(gradeloop_home: Path) -> None:
    from gradeloop import HistoryStore

    data = json.loads(cli("grade", DRAFT, "--rubric", RUBRIC, "--code-only", "--json").out)
    with HistoryStore(gradeloop_home / "history.db") as store:
        [run] = store.list_grading_runs()
        stored = store.grading_run(run.run_id)["drafts"][0]["evaluation"]
    assert stored["output_id"] == data["output_id"]


def test_code_only_never_blames_a_score_made_of_unchecked_keys(tmp_path: Path) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text(
        "pass_score = 8\n" + CODE_ONLY + '\n[[criteria]]\nkey = "tone"\ndescription = "Kind."\n',
        encoding="utf-8",
    )
    ran = cli("grade", "-", "--rubric", str(rubric), "--code-only", stdin="A short note.")
    assert ran.code == 1
    assert "pass_score" not in ran.out and "overall 0.00" not in ran.out
    last = ran.out.strip().splitlines()[-1]
    assert (
        last == "overall not computed (1 key not checked)  NOT ACCEPTED: 1 key not checked (tone)"
    )
    # every key checked: the figure and the pass score are real again
    rubric.write_text("pass_score = 8\n" + CODE_ONLY, encoding="utf-8")
    ok = cli("grade", "-", "--rubric", str(rubric), stdin="A short note.")
    assert ok.code == 0 and ok.out.strip().endswith("overall 10.00/10  ACCEPTED")


def test_a_checker_that_raises_has_status_error(tmp_path: Path) -> None:
    (tmp_path / "boom.py").write_text(
        "from gradeloop import checker\n\n@checker('boom')\ndef boom(text):\n"
        "    raise RuntimeError('bad day')\n",
        encoding="utf-8",
    )
    rubric = tmp_path / "r.toml"
    rubric.write_text(
        'plugins = ["boom.py"]\n[[criteria]]\nkey = "k"\ndescription = "d"\nchecker = "boom"\n'
        + CODE_ONLY,
        encoding="utf-8",
    )
    data = json.loads(cli("grade", "-", "--rubric", str(rubric), "--json", stdin="Hi.").out)
    statuses = {c["name"]: c["status"] for c in data["criteria"]}
    assert statuses == {"k": "error", "short": "met"}
    assert data["overall_score"] == 5.0 and data["passed"] is False


def test_a_code_only_rubric_needs_no_key_and_exits_0_when_accepted(tmp_path: Path) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text(CODE_ONLY, encoding="utf-8")
    assert gradeloop("grade", "-", "--rubric", str(rubric), stdin="A short note.").code == 0
    long = cli("grade", "-", "--rubric", str(rubric), stdin="word " * 40)
    assert long.code == 1 and "FAIL" in long.out


def test_judge_keys_without_a_model_exit_2_naming_keys_and_fixes() -> None:
    ran = cli("grade", DRAFT, "--rubric", RUBRIC)
    assert ran.code == 2
    assert ran.err.count("\n") == 1  # one line
    for fragment in ("api_cited, errors_named, no_invention", "ANTHROPIC_API_KEY", "--code-only"):
        assert fragment in ran.err


def test_grade_uses_the_judge_when_a_model_is_configured(emulator: Emulator) -> None:
    from gradeloop.testing import verdict_reply

    emulator.enqueue(
        verdict_reply(
            {
                "reasoning": "cites 4.1-4.6",
                "passed": True,
                "issues": [],
                "criteria_met": {"api_cited": True, "errors_named": True, "no_invention": True},
            }
        )
    )
    ran = cli("grade", DRAFT, "--rubric", RUBRIC, "--base-url", emulator.base_url)
    assert ran.code == 1  # the code keys still fail: the judge cannot overrule them
    schema = emulator.bodies[0]["output_config"]["format"]["schema"]
    assert "code_runs" not in json.dumps(schema)
    assert "| api_cited" not in ran.out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["grade", "missing.md", "--rubric", RUBRIC, "--code-only"], "draft file not found"),
        (
            ["grade", DRAFT, "--rubric", "missing.toml"],
            "rubric file not found: missing.toml; check",
        ),
        (["grade", DRAFT], "required: --rubric"),
        (["grade", DRAFT, "--rubric", RUBRIC, "--task", "a", "--task-file", "b"], "not both"),
        (
            ["grade", DRAFT, "--rubric", RUBRIC, "--code-only", "--task-file", "nope.txt"],
            "task file not found",
        ),
        (["nonsense"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], fragment: str) -> None:
    ran = cli(*args)
    assert ran.code == 2, (ran.out, ran.err)
    assert fragment in ran.err
    assert len(ran.err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    ("rubric_text", "fragment"),
    [
        ('[[criteria]]\nkey = "a"\ndescription = "d"\nwieght = 1\n', "did you mean 'weight'"),
        (
            '[[criteria]]\nkey = "a"\ndescription = "d"\n[[criteria]]\nkey = "a"\n'
            'description = "e"\n',
            "duplicate key 'a'",
        ),
        (
            '[[criteria]]\nkey = "a"\ndescription = "d"\nchecker = "nope"\n',
            "registered checkers: code_runs",
        ),
        ('[[criteria]]\nkey = "a"\ndescription = "d"\nweight = -2\n', "weight must be"),
        (
            '[[criteria]]\nkey = "a"\ndescription = "d"\nscale = "score"\nthreshold = 12\n',
            "threshold must be between 1 and 10",
        ),
        ('[[criteria]]\nkey = "a\n', ":2: invalid TOML"),
        (
            '[[criteria]]\nkey = "a"\ndescription = "d"\nchecker = "sentence_len"\n'
            "options = { max_word = 3 }\n",
            "unknown option 'max_word'",
        ),
    ],
)
def test_bad_rubrics_are_one_line_and_exit_2(
    tmp_path: Path, rubric_text: str, fragment: str
) -> None:
    rubric = tmp_path / "bad.toml"
    rubric.write_text(rubric_text, encoding="utf-8")
    ran = cli("grade", DRAFT, "--rubric", str(rubric), "--code-only")
    assert ran.code == 2 and fragment in ran.err, ran.err
    assert str(rubric) in ran.err and len(ran.err.strip().splitlines()) == 1


def test_non_utf8_draft_is_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.md"
    bad.write_bytes("café".encode("latin-1"))
    ran = cli("grade", str(bad), "--rubric", RUBRIC, "--code-only")
    assert ran.code == 2 and "not UTF-8" in ran.err
    piped = cli("grade", "-", "--rubric", RUBRIC, "--code-only", stdin=b"\xff\xfe")
    assert piped.code == 2 and "stdin is not UTF-8" in piped.err


def test_checkers_lists_builtins_with_plugin_and_distribution() -> None:
    data = json.loads(cli("checkers", "--json").out)
    by_name = {c["name"]: c for c in data["checkers"]}
    assert {"code_runs", "sentence_len", "regex", "json_schema"} <= set(by_name)
    assert by_name["code_runs"]["plugin"] == "builtin"
    assert by_name["code_runs"]["distribution"] == "gradeloop"
    assert "python" in by_name["code_runs"]["options"]
    assert data["failed_plugins"] == []


def test_a_broken_plugin_does_not_take_checkers_down(tmp_path: Path) -> None:
    site = make_dist(tmp_path / "site", "gradeloop-broken", {"broken": IMPORT_FAILS})
    make_dist(site, "gradeloop-shouty", {"shouty": GOOD})
    env = {"PYTHONPATH": str(site)}
    ran = cli("checkers", env=env)
    assert ran.code == 0
    assert "shouty" in ran.out and "code_runs" in ran.out
    assert "plugin 'broken' (gradeloop-broken) failed to load" in ran.out
    data = json.loads(cli("checkers", "--json", env=env).out)
    assert [f["plugin"] for f in data["failed_plugins"]] == ["broken"]
    blocked = json.loads(cli("--block-plugin", "broken", "checkers", "--json", env=env).out)
    assert blocked["failed_plugins"] == []


def test_disable_plugin_autoload_from_the_command_line(tmp_path: Path) -> None:
    site = make_dist(tmp_path / "site", "gradeloop-shouty", {"shouty": GOOD})
    data = json.loads(
        cli(
            "--disable-plugin-autoload",
            "checkers",
            "--json",
            env={"PYTHONPATH": str(site), "GRADELOOP_PLUGINS": "shouty"},
        ).out
    )
    assert [c["name"] for c in data["checkers"]] == ["shouty"]


def test_python_dash_m_and_version() -> None:
    ran = gradeloop("--version")
    assert ran.code == 0 and ran.out.startswith("gradeloop ")


SHADOW_ONLY = """
[[criteria]]
key = "short"
description = "At most 30 words."
checker = "length"
options = { max_words = 30 }
shadow = "judge"
"""


def test_a_judge_shadow_alone_needs_no_model_but_uses_one_when_configured(
    tmp_path: Path, emulator: Emulator
) -> None:
    from gradeloop.testing import verdict_reply

    rubric = tmp_path / "shadow.toml"
    rubric.write_text(SHADOW_ONLY, encoding="utf-8")
    offline = cli("grade", "-", "--rubric", str(rubric), stdin="A short note.")
    assert offline.code == 0, offline.err  # the checker decides; no model needed
    assert emulator.bodies == []
    emulator.enqueue(
        verdict_reply(
            {
                "reasoning": "short",
                "criteria_met": {"short": False},
                "passed": False,
                "issues": ["too long"],
            }
        )
    )
    ran = cli(
        "grade",
        "-",
        "--rubric",
        str(rubric),
        "--base-url",
        emulator.base_url,
        "--json",
        stdin="A short note.",
    )
    assert ran.code == 0, ran.err  # the shadow disagrees but never decides
    assert len(emulator.bodies) == 1  # ...and it was asked
    assert json.loads(ran.out)["passed"] is True


def test_grade_shows_a_disagreeing_shadow(tmp_path: Path, emulator: Emulator) -> None:
    from gradeloop.testing import verdict_reply

    rubric = tmp_path / "shadow.toml"
    rubric.write_text(SHADOW_ONLY, encoding="utf-8")
    emulator.enqueue(
        verdict_reply(
            {"reasoning": "r", "criteria_met": {"short": False}, "passed": False, "issues": []}
        )
    )
    ran = cli(
        "grade", "-", "--rubric", str(rubric), "--base-url", emulator.base_url, stdin="Short."
    )
    assert ran.code == 0, ran.err
    assert "short: length pass, shadow judge FAIL: DISAGREE" in ran.out
    offline = cli("grade", "-", "--rubric", str(rubric), stdin="Short.")
    assert "short: length pass, shadow judge -: skipped" in offline.out
