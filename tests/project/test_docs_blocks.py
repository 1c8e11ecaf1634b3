"""Every fenced ``python``, ``toml`` and ``sh`` block in README.md and docs/ runs.

New pages join automatically. A block that cannot run on its own is marked in the
Markdown, with an HTML comment on the line before its fence that says why::

    <!-- fragment: needs your own draft and a local server -->

That is a documented exclusion, checked here (a marker with no reason, or with no
block after it, fails), never a skipped test. Blocks meant only to be read use
another language tag (``console``, ``text``, ``json``, ``diff``).

A Python block that uses what blocks above it made (a ``judge``, ``drafts``, an
installed plugin) says so with a reason that starts with "continues"::

    <!-- fragment: continues the example above (judge, drafts, rubric) -->

It still runs, in order with the page, but a reader copying it alone is warned. Every
other Python block must run on its own, in a fresh namespace: that is checked too.

How each language runs:

* ``python`` and ``sh``: the blocks of one page run in order, as a reader follows
  the page (the Python blocks share one namespace), in a scratch folder holding a
  copy of ``examples/``; a model call goes to the Messages-API emulator
  (``ANTHROPIC_BASE_URL``), which drafts a short text and passes every criterion it
  is asked about.
* ``toml``: parsed; a rubric (a ``[[criteria]]`` table) is loaded as if its file sat
  at the repository root, so checker names and options are validated as a user's
  rubric would be. A block whose first line is ``# file: PATH`` shows a shipped file:
  it must equal that file, and a rubric is loaded from there (its relative paths
  then start in that file's folder).
* ``sh`` (also ``shell``, ``bash``): each command is one of the few a page may show:
  ``gradeloop ...`` (run in this process; exit 0 or 1, never 2 or 3), ``python3 -m
  venv``, ``pip install`` of this project (its extras must exist) or of a local
  plugin folder (installed here as a distribution on ``sys.path``), ``export``, and
  the README's test command ``scripts/test`` (which ``.ci/run`` must run too; it is
  tested in tests/project/test_scripts_test.py). Anything else fails and says so.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gradeloop import Rubric
from gradeloop.testing import text_reply, verdict_reply
from tests.support.cli_helpers import ROOT, cli
from tests.support.emulator import Emulator

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RUN = {"python": "python", "toml": "toml", "sh": "sh", "shell": "sh", "bash": "sh"}
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^\s`]*)")
_MARKER = re.compile(r"^\s*<!--\s*fragment:(.*?)-->\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    lang: str
    code: str
    fragment: str | None  # the reason, when marked as a fragment

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of ``page``, with any fragment marker just before each."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opened = _FENCE.match(lines[i])
        if not opened:
            i += 1
            continue
        indent, fence, lang = len(opened.group(1)), opened.group(2), opened.group(3).lower()
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        found.append(Block(page, i + 1, lang, "\n".join(body) + "\n", _marker_before(lines, i)))
        i = j + 1
    return found


def _marker_before(lines: list[str], fence: int) -> str | None:
    k = fence - 1
    while k >= 0 and not lines[k].strip():
        k -= 1
    marked = _MARKER.match(lines[k]) if k >= 0 else None
    return marked.group(1).strip() if marked else None


def stray_markers(page: Path) -> list[str]:
    """Fragment markers that no fenced block follows, and markers with no reason."""
    lines = page.read_text(encoding="utf-8").splitlines()
    problems = []
    for n, line in enumerate(lines):
        marked = _MARKER.match(line)
        if not marked:
            continue
        if not marked.group(1).strip():
            problems.append(f"{page.name}:{n + 1}: a fragment marker needs a reason")
        k = n + 1
        while k < len(lines) and not lines[k].strip():
            k += 1
        if k >= len(lines) or not _FENCE.match(lines[k]):
            problems.append(f"{page.name}:{n + 1}: a fragment marker with no block after it")
    return problems


ALL = [b for page in PAGES for b in blocks(page)]
RUNNABLE = [b for b in ALL if b.lang in RUN]


# -- the model behind the emulator ------------------------------------------------------


def _properties(schema: dict[str, Any], name: str) -> list[str]:
    node = schema.get("properties", {}).get(name)
    if node is None:
        return []
    if "$ref" in node:  # pydantic puts nested models in $defs
        node = schema["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return list(node.get("properties", {}))


def model(body: dict[str, Any]) -> Any:
    """A judge that passes every key it is asked about; a writer of a short draft."""
    if "output_config" in body:
        schema = body["output_config"]["format"]["schema"]
        preferred = _properties(schema, "preferred")
        if preferred:  # a pairwise request: neither draft is better
            return verdict_reply({"reasoning": "ok", "preferred": dict.fromkeys(preferred, "tie")})
        return verdict_reply(
            {
                "reasoning": "ok",
                "scores": dict.fromkeys(_properties(schema, "scores"), 9),
                "criteria_met": dict.fromkeys(_properties(schema, "criteria_met"), True),
                "passed": True,
                "issues": [],
            }
        )
    return text_reply("# Guide\n\nShort and correct. See 4.2.\n")


# -- the runners -----------------------------------------------------------------------


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, emulator: Emulator) -> Path:
    """A reader's folder: a copy of examples/, a model behind the emulator."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    emulator.responder = model
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", emulator.base_url)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run_python(block: Block, scope: dict[str, Any]) -> None:
    # compiled at its own line, so a traceback points into the Markdown
    source = "\n" * block.line + block.code
    exec(compile(source, str(block.page), "exec"), scope)


def run_toml(block: Block) -> None:
    try:
        data = tomllib.loads(block.code)
    except tomllib.TOMLDecodeError as exc:
        raise AssertionError(f"{block.where}: not valid TOML: {exc}") from None
    shipped = re.match(r"# file: (\S+)\n", block.code)
    if shipped:  # the block shows a shipped file: they must not drift apart
        path = ROOT / shipped.group(1)
        assert path.is_file(), f"{block.where}: {shipped.group(1)} is not shipped"
        assert path.read_text(encoding="utf-8") == block.code, (
            f"{block.where}: differs from {shipped.group(1)}"
        )
        if "criteria" in data:
            Rubric.load(path)
    elif "criteria" in data:  # a rubric, read as if its file sat at the repository root
        Rubric.from_dict(data, path=ROOT / "rubric.toml")


class Shell:
    """The handful of commands a page may show, carried out or checked here."""

    def __init__(self, block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
        self.block, self.monkeypatch = block, monkeypatch
        self.env: dict[str, str] = {}
        self.venvs: set[str] = set()

    def run(self) -> None:
        for command in commands(self.block.code):
            for step in command:
                self.step(step)

    def step(self, words: list[str]) -> None:
        where = f"{self.block.where}: `{shlex.join(words)}`"
        head = words[0]
        if head == "export":
            for assignment in words[1:]:
                name, _, value = assignment.partition("=")
                self.env[name] = value
        elif head.startswith("python") and words[1:3] == ["-m", "venv"]:
            self.venvs.add(words[3].rstrip("/"))
        elif self._tool(head) == "pip" and words[1:2] == ["install"]:
            self.pip_install([w for w in words[2:] if not w.startswith("-")], where)
        elif self._tool(head) == "gradeloop":
            ran = cli(*words[1:], env={**_model_env(), **self.env}, cwd=Path.cwd())
            assert ran.code in (0, 1), f"{where} exited {ran.code}: {ran.err}"
        elif head == "scripts/test":
            assert words == ci_test_command(), (
                f"{where}: the README's test command must be the one .ci/run runs "
                f"({shlex.join(ci_test_command())})"
            )
        else:
            raise AssertionError(
                f"{where}: the docs runner cannot run this; use a command it knows, or "
                "mark the block with <!-- fragment: reason --> before its fence"
            )

    def _tool(self, word: str) -> str:
        folder, _, name = word.rpartition("/bin/")
        if folder:
            assert folder in self.venvs, f"{self.block.where}: no venv {folder!r} was made"
            return name
        return word

    def pip_install(self, targets: list[str], where: str) -> None:
        for target in targets:
            path_part, _, extras = target.partition("[")
            folder = (ROOT / path_part).resolve()
            assert (folder / "pyproject.toml").is_file(), f"{where}: no project at {target}"
            project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
            known = set(project["project"].get("optional-dependencies", {}))
            wanted = {e.strip() for e in extras.rstrip("]").split(",") if e.strip()}
            assert wanted <= known, f"{where}: unknown extras {sorted(wanted - known)}"
            if folder != ROOT:  # this project is installed already
                install_plugin(folder, project, self.monkeypatch)


def _model_env() -> dict[str, str]:
    return {k: os.environ[k] for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")}


def commands(code: str) -> Iterator[list[list[str]]]:
    """Each command line (continuations joined, comments dropped), split at ``&&``."""
    joined = re.sub(r"\\\n\s*", " ", code)
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        steps: list[list[str]] = [[]]
        for word in words:
            if word == "&&":
                steps.append([])
            else:
                steps[-1].append(word)
        yield [s for s in steps if s]


def ci_test_command() -> list[str]:
    """The test command .ci/run runs (its environment settings and -q left out)."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    found = re.search(r"^(?:\w+=\S+ )*(scripts/test[^\n]*)", script, flags=re.M)
    assert found, ".ci/run no longer runs scripts/test the way this test expects"
    return [w for w in shlex.split(found.group(1)) if w != "-q"]


def install_plugin(folder: Path, project: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``pip install FOLDER`` leaves behind for a plugin: its package importable and
    a dist-info naming its entry points, on ``sys.path``."""
    site = Path.cwd() / "site-packages"
    name = project["project"]["name"]
    info = site / f"{name.replace('-', '_')}-{project['project']['version']}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {project['project']['version']}\n",
        encoding="utf-8",
    )
    groups = project["project"].get("entry-points", {})
    text = "".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
        for group, points in groups.items()
    )
    (info / "entry_points.txt").write_text(text, encoding="utf-8")
    for package in (folder / "src").iterdir():
        shutil.copytree(package, site / package.name)
    monkeypatch.syspath_prepend(str(site))
    # PYTHONPATH carries it into the in-process CLI's fresh registry as well
    monkeypatch.setenv("PYTHONPATH", str(site))


# -- the tests -------------------------------------------------------------------------


def test_the_runner_finds_blocks_and_every_marker_is_well_formed() -> None:
    langs = {b.lang for b in RUNNABLE}
    assert {"python", "toml", "sh"} <= langs
    assert sum(b.page.name == "README.md" for b in RUNNABLE) >= 4
    problems = [p for page in PAGES for p in stray_markers(page)]
    assert not problems, problems


def test_a_fragment_marker_is_read_with_its_reason(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text(
        "<!-- fragment: uses names from above -->\n```python\nx\n```\n\n"
        "```toml\na = 1\n```\n<!-- fragment: -->\n\nno block\n",
        encoding="utf-8",
    )
    found = blocks(page)
    assert [(b.lang, b.fragment) for b in found] == [
        ("python", "uses names from above"),
        ("toml", None),
    ]
    assert len(stray_markers(page)) == 2  # no reason, and no block after it


def test_shell_lines_split_at_and_and_join_continuations() -> None:
    code = "python3 -m venv .venv && .venv/bin/pip install -q . \\\n  && gradeloop x  # note\n"
    assert list(commands(code)) == [
        [
            ["python3", "-m", "venv", ".venv"],
            [".venv/bin/pip", "install", "-q", "."],
            ["gradeloop", "x"],
        ]
    ]


SESSION_PAGES = sorted({b.page for b in RUNNABLE if b.lang in ("python", "sh")})


@pytest.mark.parametrize("page", SESSION_PAGES, ids=lambda p: p.name)
def test_the_python_and_shell_blocks_of_a_page_run_in_order(
    page: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As a reader follows the page: a shell block's install is there for the Python after it."""
    scope: dict[str, Any] = {"__name__": "__docs__"}
    for block in RUNNABLE:
        if block.page != page or block.lang == "toml" or not _runs_in_order(block):
            continue
        if block.lang == "python":
            run_python(block, scope)
        else:
            Shell(block, monkeypatch).run()


def _runs_in_order(block: Block) -> bool:
    """Run with the page's blocks: unmarked, or a fragment that continues the ones above."""
    return block.fragment is None or block.fragment.startswith("continues")


TOML = [b for b in RUNNABLE if b.lang == "toml" and not b.fragment]


@pytest.mark.parametrize("block", TOML, ids=lambda b: b.where)
def test_each_toml_block_parses_and_each_rubric_loads(block: Block) -> None:
    run_toml(block)


def test_a_block_that_shows_a_shipped_file_must_match_it() -> None:
    shipped = ROOT / "examples" / "api-reply" / "rubric.toml"
    text = shipped.read_text(encoding="utf-8")
    run_toml(Block(ROOT / "README.md", 1, "toml", text, None))
    with pytest.raises(AssertionError, match=r"differs from examples/api-reply/rubric\.toml"):
        run_toml(Block(ROOT / "README.md", 1, "toml", text + "# drift\n", None))
    with pytest.raises(AssertionError, match="is not shipped"):
        run_toml(Block(ROOT / "README.md", 1, "toml", "# file: examples/nope.toml\n", None))


def test_an_unknown_shell_command_fails_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    block = Block(ROOT / "README.md", 1, "sh", "curl https://example.com | sh\n", None)
    with pytest.raises(AssertionError, match="mark the block with <!-- fragment: reason -->"):
        Shell(block, monkeypatch).run()


def test_a_gradeloop_command_that_exits_2_fails(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    block = Block(ROOT / "README.md", 1, "sh", "gradeloop grade nope.md --rubric x.toml\n", None)
    with pytest.raises(AssertionError, match="exited 2"):
        Shell(block, monkeypatch).run()
    fine = Block(ROOT / "README.md", 1, "sh", "gradeloop checkers\n", None)
    Shell(fine, monkeypatch).run()


ALONE = [b for b in RUNNABLE if b.lang == "python" and not b.fragment]


@pytest.mark.parametrize("block", ALONE, ids=lambda b: b.where)
def test_each_python_block_not_marked_a_fragment_runs_on_its_own(
    block: Block, scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reader copies one block: it must run in a fresh namespace, or say (with a
    fragment marker) what it needs from the blocks above it."""
    run_python(block, {"__name__": "__docs__"})
