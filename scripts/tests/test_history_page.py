"""The dashboard page in a real browser: headless Chromium (Debian's chromium,
chromium-driver and python3-selenium; nothing downloaded) opens the page
`harness history page` wrote from file://, with no console error; each chart has
as many points as the store has revisions and shows the store's median; the steps
list names the step; a name from a report shows as text. Takes a screenshot. About
3 s here, most of it Chromium starting.
"""
import shutil
import sqlite3
import statistics
from pathlib import Path

import pytest

from test_history import HOSTILE, harness, series_of

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
except ImportError:  # pragma: no cover - setup.sh installs python3-selenium
    webdriver = None

CHROMEDRIVER = shutil.which("chromedriver")


@pytest.fixture(scope="module")
def browser():
    if webdriver is None or CHROMEDRIVER is None or shutil.which("chromium") is None:
        pytest.skip("chromium, chromium-driver or python3-selenium is not installed (scripts/lib/setup.sh installs them)")
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,900"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def test_the_page_renders_the_store(tmp_path, browser):
    store = tmp_path / "h.sqlite"
    series_of(tmp_path, store, [9000] * 4 + [12000] * 4, workload=HOSTILE)
    out = tmp_path / "site"
    r = harness("history", "page", "--history", store, "--metric", "peak_rss_kb", "--out", out)
    assert r.returncode == 0, r.stderr
    browser.get((out / "index.html").as_uri())
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    assert browser.execute_script("return document.body.dataset.rendered") == "1"
    assert browser.title == "memharness history"  # the hostile name did not run
    with sqlite3.connect(store) as db:
        rows = db.execute("SELECT revision, value FROM run_values JOIN runs ON runs.id = run_id "
                          "WHERE metric = 'peak_rss_kb' ORDER BY runs.id").fetchall()
    medians = {}
    for revision, value in rows:
        medians.setdefault(revision, []).append(value)
    expected = [statistics.median(v) for v in medians.values()]
    shown = browser.execute_script(
        "const c = Chart.getChart('chart-0'); return c.data.datasets.find(d => d.label === 'median').data")
    assert shown == expected
    # One hovered value: the tooltip of the fifth point.
    tooltip = browser.execute_script("""
        const c = Chart.getChart('chart-0');
        c.tooltip.setActiveElements([{datasetIndex: 2, index: 4}], {x: 0, y: 0});
        c.update();
        return c.tooltip.body.map(b => b.lines.concat(b.after)).flat();""")
    assert tooltip == ["median: 12,008", "3 runs"]
    steps = browser.find_element("id", "steps").text
    assert steps.startswith("regression +33.3% " + HOSTILE)
    assert "at r04" in steps
    assert browser.find_element("css selector", "h3").text.startswith(HOSTILE)
    browser.save_screenshot(str(tmp_path / "page.png"))
    assert (tmp_path / "page.png").stat().st_size > 10_000
