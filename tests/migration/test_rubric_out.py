"""propose's and align's --out in another folder: the new rubric loads the input's
plugins, and nothing in --out's folder runs; a failed write names --out.

A ``mychecks.py`` planted in the output folder (it writes a marker file when it runs)
must run neither while the new rubric is checked nor when the new rubric is loaded
from where it was written: its ``plugins`` point at the input's own files.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gradeloop import Rubric
from gradeloop.errors import InputError
from gradeloop.grading import Registry
from gradeloop.migration import write_rubric
from gradeloop.migration._propose_write import write_shadow

PLUGIN = """
import gradeloop

@gradeloop.checker("mine_{tag}")
def mine(text: str) -> gradeloop.CheckResult:
    return gradeloop.CheckResult(True)
"""
PLANTED = """
from pathlib import Path
Path({marker!r}).write_text("ran")
import gradeloop

@gradeloop.checker("mine_{tag}")
def mine(text: str) -> gradeloop.CheckResult:
    return gradeloop.CheckResult(True)
"""


def setup(tmp_path: Path, spec: str, tag: str) -> tuple[Path, Path, Path]:
    """The input rubric in ``src/`` with its plugin ``spec`` (``mychecks`` stands for a
    module name of this test's own: modules are imported once per process); ``out/``
    holding a planted file of the same name."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    out.mkdir()
    spec = spec.replace("mychecks", f"checks_{tag}")
    name = spec.removeprefix("./").removesuffix(".py") + ".py"
    (src / name).write_text(PLUGIN.format(tag=tag))
    marker = tmp_path / "planted-ran"
    (out / name).write_text(PLANTED.format(marker=str(marker), tag=tag))
    rubric = src / "rubric.toml"
    rubric.write_text(
        f'# the team rubric\nplugins = ["{spec}"]\n\n'
        f'[[criteria]]\nkey = "k"\ndescription = "Short."\nchecker = "mine_{tag}"\n\n'
        '[[criteria]]\nkey = "j"\ndescription = "Judged."\n',
        encoding="utf-8",
    )
    return rubric, out, marker


WRITERS = {
    "align": lambda src, dst, reg: write_rubric(
        src, dst, {"j": ("Judged well.", ())}, registry=reg
    ),
    "propose": lambda src, dst, reg: write_shadow(
        src, dst, "j", "length", {"max_words": 80}, registry=reg
    ),
}


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("spec", ["./mychecks.py", "mychecks.py", "mychecks"])
def test_out_in_another_folder_loads_the_inputs_plugins_and_runs_none_there(
    tmp_path: Path, writer: str, spec: str
) -> None:
    tag = f"{writer}_{spec.replace('.', '_').replace('/', '_')}"
    rubric, out, marker = setup(tmp_path, spec, tag)
    Rubric.load(rubric, registry=Registry())
    written = out / "new.toml"
    WRITERS[writer](rubric, written, Registry())
    assert not marker.exists()  # the check ran nothing from --out's folder
    text = written.read_text()
    assert "# the team rubric" in text and f'"../src/checks_{tag}.py"' in text
    again = Rubric.load(written, registry=Registry())
    assert not marker.exists()  # loading the new file runs the input's plugin too
    assert again["k"].checker == f"mine_{tag}"


@pytest.mark.parametrize("writer", WRITERS)
def test_out_beside_the_input_keeps_its_plugins_as_written(tmp_path: Path, writer: str) -> None:
    rubric, _, _ = setup(tmp_path, "./mychecks.py", f"{writer}_beside")
    Rubric.load(rubric, registry=Registry())
    written = rubric.parent / "new.toml"
    WRITERS[writer](rubric, written, Registry())
    assert f'plugins = ["./checks_{writer}_beside.py"]' in written.read_text()


def test_a_write_that_fails_names_out_not_its_temporary_file(tmp_path: Path) -> None:
    src = tmp_path / "r.toml"
    src.write_text('[[criteria]]\nkey = "k"\ndescription = "d"\n', encoding="utf-8")
    target = tmp_path / "r2.toml"
    with pytest.raises(InputError) as info:  # the shadow's options do not load
        write_shadow(src, target, "k", "length", {"max_words": "many"})
    assert f"--out {target}" in str(info.value) and ".r2.toml." not in str(info.value)
    target.mkdir()  # a folder where the file should go: the rename fails
    with pytest.raises(InputError) as info:
        write_shadow(src, target, "k", "length", {"max_words": 80})
    assert f"cannot write --out {target}" in str(info.value)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no leftovers
