"""The README's test command is `scripts/test`, which .ci/run calls too: it makes sure
the browser tests can run (installing Debian's chromium and chromium-driver with
apt-get as root, else saying what to install), then runs pytest in the venv."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
from pathlib import Path

from tests.support.cli_helpers import ROOT

SCRIPT = ROOT / "scripts" / "test"
BASH = shutil.which("bash") or "/bin/bash"


def fake(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!{BASH}\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def sandbox(tmp_path: Path, *, uid: int, browser: bool) -> Path:
    """A PATH of only what the script needs, with `id` (and the browser) faked."""
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for tool in ("dirname", "grep", "chmod"):
        found = shutil.which(tool)
        assert found is not None
        os.symlink(found, bin_ / tool)
    fake(bin_, "id", f"echo {uid}")
    if browser:
        fake(bin_, "chromium", "exit 0")
        fake(bin_, "chromedriver", "exit 0")
    return bin_


def run(bin_: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BASH, str(SCRIPT), *args],
        env={"PATH": str(bin_), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_readme_and_ci_run_the_script() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", readme, flags=re.DOTALL)
    assert "scripts/test\n" in blocks  # the README's test command, by itself
    assert not any("pytest" in b for b in blocks)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^VENV=\S+ PYTHON=\S+ scripts/test\b", ci, flags=re.M)
    assert "-m pytest" not in ci  # no second way to run the tests
    assert os.access(SCRIPT, os.X_OK)


def test_with_the_browser_present_nothing_is_installed(tmp_path: Path) -> None:
    bin_ = sandbox(tmp_path, uid=1000, browser=True)
    ran = run(bin_, "--check-browser")
    assert ran.returncode == 0 and ran.stderr == "" and ran.stdout == ""


def test_without_root_it_says_what_to_install_and_stops(tmp_path: Path) -> None:
    bin_ = sandbox(tmp_path, uid=1000, browser=False)
    ran = run(bin_, "--check-browser")
    assert ran.returncode == 1
    assert "apt-get install -y chromium chromium-driver" in ran.stderr


def test_as_root_it_installs_them_with_apt(tmp_path: Path) -> None:
    bin_ = sandbox(tmp_path, uid=0, browser=False)
    log = tmp_path / "apt.log"
    made = " ".join(f"{bin_}/{name}" for name in ("chromium", "chromedriver"))
    fake(
        bin_,
        "apt-get",
        f'echo "$*" >> {log}\n'
        f"if [[ $1 == install ]]; then for f in {made}; do "
        f'printf "#!{BASH}\\nexit 0\\n" > $f; chmod +x $f; done; fi',
    )
    ran = run(bin_, "--check-browser")
    assert ran.returncode == 0, ran.stderr
    assert log.read_text().splitlines() == ["update -qq", "install -y -qq chromium chromium-driver"]


def test_it_installs_the_project_then_runs_pytest_with_the_arguments(tmp_path: Path) -> None:
    bin_ = sandbox(tmp_path, uid=1000, browser=True)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    calls = tmp_path / "calls.log"
    fake(venv / "bin", "python", f'echo "$*" >> {calls}')
    ran = run(bin_, "tests/grading/test_grade.py", "-q", VENV=str(venv))
    assert ran.returncode == 0, ran.stderr
    assert calls.read_text().splitlines() == [
        "-m pip install -q -e .[dev]",
        "-m pytest -n auto tests/grading/test_grade.py -q",
    ]
