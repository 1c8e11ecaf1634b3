"""gradeloop label in a real browser: headless Chromium, driven from the keyboard only.

Uses the Chromium session and helpers of tests/history/test_browser.py (the same install
hint when Chromium or its driver is missing).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gradeloop import HistoryStore, Rubric
from gradeloop.history.report._label import LabelSession
from gradeloop.history.report._label_server import Labeller
from gradeloop.migration import read_labels
from gradeloop.migration._evidence import stored_run
from tests.history.test_browser import (  # noqa: F401  (driver is a fixture)
    artifacts,
    by_css,
    driver,
    outside,
    pwned,
    requested_urls,
)
from tests.history.test_label import HOSTILE, RUBRIC, make_run


def _wait(what: Callable[[], Any], timeout: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = what()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _file(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _press(session: Any, keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(session).send_keys(keys).perform()


def _current(session: Any) -> str:
    (row,) = by_css(session, ".label-key.current")
    return str(row.get_attribute("data-key"))


def test_label_a_run_from_the_keyboard(driver: Any, tmp_path: Path) -> None:  # noqa: F811
    db = tmp_path / "h.db"
    run = make_run(db)
    out = tmp_path / "labels.jsonl"
    with HistoryStore(db) as store:
        session = LabelSession(stored_run(store, run), out)
    with Labeller(session).start() as labeller:
        requested_urls(driver)
        driver.get(labeller.url)
        start = by_css(driver, 'a[rel="next"]')[0]
        start.click()
        _wait(lambda: driver.current_url.endswith("/item/1"))
        _wait(lambda: by_css(driver, ".label-key.current"))
        assert _current(driver) == "cites"
        _press(driver, "m")  # cites met: saved at once, and the focus moves on
        _wait(lambda: _file(out) and _file(out)[0]["labels"] == {"cites": True})
        _wait(lambda: _current(driver) == "tone")
        _press(driver, "8")
        _wait(lambda: _file(out)[0]["labels"] == {"cites": True, "tone": 8})
        assert "1 of 3 drafts labelled" in driver.find_element("id", "progress").text
        _press(driver, "\ue007")  # Enter: the next draft
        _wait(lambda: driver.current_url.endswith("/item/2"))
        _wait(lambda: by_css(driver, ".label-key.current"))
        assert HOSTILE in by_css(driver, "pre.draft")[0].text and pwned(driver) is None
        _press(driver, "u")
        _wait(lambda: _current(driver) == "tone")
        _press(driver, "0")  # 0 is 10
        _wait(lambda: len(_file(out)) == 2)
        _wait(lambda: _file(out)[1]["labels"] == {"cites": False, "tone": 10})
        driver.save_screenshot(str(artifacts() / "label-item.png"))
        _press(driver, "]")
        _wait(lambda: driver.current_url.endswith("/item/3"))
        _wait(lambda: by_css(driver, ".label-key.current"))
        _press(driver, "j")  # move down, score, move back up, mark
        _wait(lambda: _current(driver) == "tone")
        _press(driver, "3")
        _wait(lambda: len(_file(out)) == 3)
        _press(driver, "k")
        _wait(lambda: _current(driver) == "cites")
        _press(driver, "y")
        _wait(lambda: _file(out)[2]["labels"] == {"cites": True, "tone": 3})
        _wait(lambda: _current(driver) == "tone")  # a mark moves the focus on
        _press(driver, "k")
        _wait(lambda: _current(driver) == "cites")
        _press(driver, "x")  # and clear it again
        _wait(lambda: _file(out)[2]["labels"] == {"tone": 3})
        _press(driver, "[")
        _wait(lambda: driver.current_url.endswith("/item/2"))
        urls = requested_urls(driver)
    assert outside(urls) == []
    items = read_labels(out, Rubric.from_dict(RUBRIC))  # exactly what calibrate reads
    assert [(i.output_id, dict(i.labels)) for i in items] == [
        ("a", {"cites": True, "tone": 8.0}),
        ("b", {"cites": False, "tone": 10.0}),
        ("c", {"tone": 3.0}),
    ]
