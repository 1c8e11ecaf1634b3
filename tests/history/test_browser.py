"""The report and the viewer in a real browser: headless Chromium driven by Selenium.

Needs Debian's ``chromium`` and ``chromium-driver`` packages (``.ci/run`` installs
them) and ``selenium`` (a dev dependency). Without them every test here fails with
a one-line hint saying what to install: a browser test that silently skips is one
that never runs.

Screenshots land in ``$GRADELOOP_TEST_ARTIFACTS`` (default ``test-artifacts/`` at
the repository root, ignored by git).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from gradeloop.history.report import Viewer, write_report
from gradeloop.history.report._html import Safe, page
from tests.support.cli_helpers import ROOT
from tests.support.report_helpers import FixtureIds, build_history

INSTALL_HINT = (
    "browser tests need Chromium and its driver: apt-get install -y chromium chromium-driver "
    "(and pip install selenium, part of the dev extra)"
)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--no-pings",
    "--window-size=1280,1600",
)


def _binaries() -> tuple[str, str] | None:
    browser = next((p for n in ("chromium", "chromium-browser") if (p := shutil.which(n))), None)
    driver = shutil.which("chromedriver") or next(
        (
            p
            for p in ("/usr/bin/chromedriver", "/usr/lib/chromium/chromedriver")
            if Path(p).is_file()
        ),
        None,
    )
    return (browser, driver) if browser and driver else None


def artifacts() -> Path:
    folder = Path(os.environ.get("GRADELOOP_TEST_ARTIFACTS") or ROOT / "test-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    found = _binaries()
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        found = None
    if found is None:
        pytest.fail(INSTALL_HINT, pytrace=False)
    browser, chromedriver = found
    options = webdriver.ChromeOptions()
    options.binary_location = browser  # an explicit browser and driver: Selenium Manager
    for flag in FLAGS:  # never runs, so nothing is downloaded
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    session = webdriver.Chrome(options=options, service=Service(executable_path=chromedriver))
    session.set_page_load_timeout(60)
    session.get("about:blank")  # leave the new-tab page headless Chromium opens with
    try:
        yield session
    finally:
        session.quit()


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, FixtureIds]:
    db = tmp_path_factory.mktemp("browser-history") / "history.db"
    return db, build_history(db)


def requested_urls(driver: Any) -> list[str]:
    """Every URL our pages asked for since the last call (from Chromium's CDP log).

    Requests made by the browser's own pages (``chrome://``, such as the new-tab
    page headless Chromium opens first and which loads only built-in resources) are
    not our pages' and are left out; everything else counts.
    """
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") != "Network.requestWillBeSent":
            continue
        params = message["params"]
        document = urlsplit(params.get("documentURL") or "").scheme
        if document not in ("chrome", "chrome-untrusted"):
            urls.append(params["request"]["url"])
    return urls


def outside(urls: list[str]) -> list[str]:
    """The URLs that are neither local files, inline data, nor 127.0.0.1."""
    return [
        u
        for u in urls
        if urlsplit(u).scheme not in ("file", "data", "about")
        and urlsplit(u).hostname != "127.0.0.1"
    ]


def by_css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def click_and_wait(driver: Any, element: Any, clickable: Any) -> None:
    """Click ``clickable`` and wait until the page holding ``element`` is gone
    (a form submit or a link returns before the next page has loaded)."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    def gone(_: Any) -> bool:
        try:
            element.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as exc:
            # mid-navigation, Chromium may report the same thing as an inspector error
            # (selenium's staleness_of let it through: a failure under load)
            if "does not belong to the document" in str(exc):
                return True
            raise
        return False

    clickable.click()
    WebDriverWait(driver, 30).until(gone)
    WebDriverWait(driver, 30).until(
        lambda d: d.execute_script("return document.readyState") == "complete"
    )


def pwned(driver: Any) -> Any:
    return driver.execute_script("return window.__pwned === undefined ? null : window.__pwned")


def assert_plots_have_a_point_per_round(driver: Any) -> int:
    sections = by_css(driver, "section.loop:not(.run)")
    assert sections
    for section in sections:
        from selenium.webdriver.common.by import By

        rounds = section.find_elements(By.CSS_SELECTOR, "table.matrix tr[data-round]")
        points = section.find_elements(By.CSS_SELECTOR, "svg.plot g.series.overall .point")
        assert len(points) == len(rounds) > 0
        assert [p.get_attribute("data-round") for p in points] == [
            str(i + 1) for i in range(len(rounds))
        ]
    return len(sections)


# -- the report file ----------------------------------------------------------------


def test_report_file(driver: Any, history: tuple[Path, FixtureIds], tmp_path: Path) -> None:
    db, ids = history
    out = write_report(tmp_path / "report.html", db=db)
    requested_urls(driver)  # drop what earlier pages asked for
    driver.get(out.as_uri())
    assert driver.title == "gradeloop report"  # the draft's script would have renamed it
    rows = by_css(driver, "table.loops tr.loop-row")
    assert sorted(r.get_attribute("data-loop") for r in rows) == sorted(
        [ids.passed, ids.judge_failed, ids.stagnated]
    )
    assert assert_plots_have_a_point_per_round(driver) == 3
    # the hostile draft is shown as text in the diff, and never ran
    diffs = " ".join(d.text for d in by_css(driver, f"#loop-{ids.passed} pre.diff"))
    assert "<script>window.__pwned = 1;" in diffs and 'onerror="window.__pwned = 2"' in diffs
    assert pwned(driver) is None
    assert outside(requested_urls(driver)) == []
    shot = artifacts() / "report.png"
    assert driver.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- the viewer -----------------------------------------------------------------------


def test_viewer_list_filters_loop_page_and_compare(
    driver: Any, history: tuple[Path, FixtureIds]
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    db, ids = history
    with Viewer(db).start() as viewer:
        requested_urls(driver)
        driver.get(viewer.url)
        rows = by_css(driver, "table.loops tr.loop-row")
        assert len(rows) == 3
        # filter through the form, as a user would
        Select(driver.find_element(By.NAME, "passed")).select_by_value("yes")
        button = driver.find_element(By.CSS_SELECTOR, "form.filters button")
        click_and_wait(driver, rows[0], button)
        rows = by_css(driver, "table.loops tr.loop-row")
        assert [r.get_attribute("data-loop") for r in rows] == [ids.passed]
        # into the loop's page
        click_and_wait(driver, rows[0], rows[0].find_element(By.TAG_NAME, "a"))
        assert driver.current_url.endswith(f"/loop/{ids.passed}")
        assert assert_plots_have_a_point_per_round(driver) == 1
        assert pwned(driver) is None
        driver.save_screenshot(str(artifacts() / "viewer-loop.png"))
        # compare two grading runs through the form on the list
        driver.get(viewer.url)
        forms = by_css(driver, "form.filters")
        Select(forms[1].find_element(By.NAME, "a")).select_by_value(ids.run_a)
        Select(forms[1].find_element(By.NAME, "b")).select_by_value(ids.run_b)
        click_and_wait(driver, forms[1], forms[1].find_element(By.TAG_NAME, "button"))
        changed = by_css(driver, "table.compare tr.changed")
        assert [r.get_attribute("data-key") for r in changed] == ["accurate"]
        driver.save_screenshot(str(artifacts() / "viewer-compare.png"))
        urls = requested_urls(driver)
    assert sum(u.startswith(viewer.url) for u in urls) >= 5  # list, filter, loop, list, compare
    assert outside(urls) == []


# -- the guards themselves ---------------------------------------------------------------

_HOSTILE = "<script>window.__pwned = 1</script><img src=x onerror='window.__pwned = 2'>"


def test_the_pages_policy_stops_a_script_that_escaped_escaping(driver: Any, tmp_path: Path) -> None:
    guarded = tmp_path / "guarded.html"
    guarded.write_text(page("guarded", Safe(_HOSTILE)), encoding="utf-8")
    driver.get(guarded.as_uri())
    assert pwned(driver) is None


def test_without_the_policy_the_same_script_runs(driver: Any, tmp_path: Path) -> None:
    # the twin of the test above: proves the browser runs scripts, so "did not run"
    # above is the policy's doing
    bare = tmp_path / "bare.html"
    bare.write_text(f"<!DOCTYPE html><html><body>{_HOSTILE}</body></html>", encoding="utf-8")
    driver.get(bare.as_uri())
    assert pwned(driver) in (1, 2)


def test_the_request_check_sees_a_request_elsewhere(driver: Any, tmp_path: Path) -> None:
    # 127.0.0.2 is loopback too (nothing leaves the machine) but not 127.0.0.1
    bare = tmp_path / "fetching.html"
    bare.write_text(
        '<!DOCTYPE html><html><body><img src="http://127.0.0.2:9/x.png"></body></html>',
        encoding="utf-8",
    )
    requested_urls(driver)
    driver.get(bare.as_uri())
    assert outside(requested_urls(driver)) == ["http://127.0.0.2:9/x.png"]
