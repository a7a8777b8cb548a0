"""The dashboard page in a real browser: headless Chromium (Debian's chromium,
chromium-driver and python3-selenium; nothing downloaded) opens the page
`harness history page` wrote from file://, with no console error; each chart has
as many points as the store has revisions and shows the store's median; the steps
list names the step; a name from a report shows as text. A click on a point opens
the RSS over time of that revision's runs, one line each, peaking where the store
says; a migrated store's old runs say they have no series. Takes screenshots.
A long history's old revision loads its traces from a chunk file. About 11 s here: Chromium starting 3.5 s, the click on a point 2.5 s (adding its
six reports included), the migrated store's 1.2 s.
"""
import shutil
import sqlite3
import statistics
from pathlib import Path

import pytest

from test_history import HOSTILE, V2, add, harness, long_history, old_store, report_at, series_of

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.support.wait import WebDriverWait
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
    # Stored in KiB, drawn in MB (10^6 bytes) as every table shows them.
    expected = [statistics.median(v) * 1.024e-3 for v in medians.values()]
    shown = browser.execute_script(
        "const c = Chart.getChart('chart-0'); return c.data.datasets.find(d => d.label === 'median').data")
    assert shown == pytest.approx(expected)
    # One hovered value: the tooltip of the fifth point.
    tooltip = browser.execute_script("""
        const c = Chart.getChart('chart-0');
        c.tooltip.setActiveElements([{datasetIndex: 2, index: 4}], {x: 0, y: 0});
        c.update();
        return c.tooltip.body.map(b => b.lines.concat(b.after)).flat();""")
    assert tooltip == ["median: 12.296", "3 runs; click: their RSS"]
    steps = browser.find_element("id", "steps").text
    assert steps.startswith("regression +33.3% " + HOSTILE)
    assert "at r04" in steps
    assert browser.find_element("css selector", "h3").text.startswith(HOSTILE)
    browser.save_screenshot(str(tmp_path / "page.png"))
    assert (tmp_path / "page.png").stat().st_size > 10_000


def click_point(browser, chart, index):
    """A real mouse click on the median point `index` of chart `chart`, at its
    pixel as Chart.js placed it."""
    canvas = browser.find_element("id", chart)
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", canvas)
    x, y, width, height = browser.execute_script("""
        const c = Chart.getChart(arguments[0]), p = c.getDatasetMeta(2).data[arguments[1]];
        const r = c.canvas.getBoundingClientRect();
        return [p.x, p.y, r.width, r.height];""", chart, index)
    # Selenium's offsets are from the element's centre.
    at = ActionChains(browser).move_to_element_with_offset(canvas, round(x - width / 2), round(y - height / 2))
    at.click().perform()


def page_of(tmp_path, browser, store):
    out = tmp_path / "site"
    r = harness("history", "page", "--history", store, "--metric", "peak_rss_kb", "--out", out)
    assert r.returncode == 0, r.stderr
    browser.get((out / "index.html").as_uri())
    assert browser.execute_script("return document.body.dataset.rendered") is not None


def test_a_click_on_a_point_plots_its_runs_rss_over_time(tmp_path, browser):
    store = tmp_path / "h.sqlite"
    for i, level in enumerate([9000] * 3 + [12000] * 3):
        r = add(store, report_at(tmp_path, f"r{i:02d}", level, workload=HOSTILE, mark=HOSTILE), f"r{i:02d}")
        assert r.returncode == 0, r.stderr
    page_of(tmp_path, browser, store)
    assert browser.find_element("id", "run-panel").is_displayed() is False
    click_point(browser, "chart-0", 4)
    panel = browser.find_element("id", "run-panel")
    assert panel.is_displayed()
    assert panel.get_attribute("data-revision") == "r04"
    lines = browser.execute_script("""
        return Chart.getChart('run-chart').data.datasets.map(d => ({kind: d.kind, ys: d.data.map(p => p.y)}));""")
    with sqlite3.connect(store) as db:
        runs, peak_kb = db.execute("SELECT count(DISTINCT runs.id), max(rss_kb) FROM runs "
                                   "JOIN run_samples ON runs.id = run_id WHERE revision = 'r04'").fetchone()
    assert runs == 3
    assert [d["kind"] for d in lines].count("rss") == runs
    assert [d["kind"] for d in lines].count("anon") == runs
    # In MB (10^6 bytes) as every table: kB * 1.024e-3, never MiB.
    assert max(max(d["ys"]) for d in lines if d["kind"] == "rss") == pytest.approx(peak_kb * 1.024e-3)
    assert peak_kb == 12016
    medians = browser.execute_script("return Chart.getChart('chart-0').data.datasets[2].data")
    assert medians[4] == pytest.approx(12008 * 1.024e-3)
    heading = browser.find_element("css selector", "#charts h3").text
    assert "peak_rss_kb (MB)" in heading and "{" not in heading
    # The mark's name shows as text, under the chart and on it, never as HTML.
    assert HOSTILE + " 0.00" in panel.text
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    assert browser.title == "memharness history"
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    browser.save_screenshot(str(tmp_path / "runs.png"))
    assert (tmp_path / "runs.png").stat().st_size > 10_000


def test_runs_of_a_migrated_store_say_they_have_no_series(tmp_path, browser):
    store = tmp_path / "old.sqlite"
    old_store(store, V2)
    page_of(tmp_path, browser, store)
    click_point(browser, "chart-0", 0)
    panel = browser.find_element("id", "run-panel")
    assert panel.is_displayed()
    assert panel.text.count("no series stored for this run") == 3
    assert browser.execute_script("return Chart.getChart('run-chart') === undefined")
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []


def test_a_click_on_an_old_revision_loads_its_traces_from_a_chunk_file(tmp_path, browser):
    store, out = long_history(tmp_path)
    browser.get((out / "index.html").as_uri())
    assert "traces of 60 runs" in browser.find_element("id", "traces-note").text
    assert "other 240 runs" in browser.find_element("id", "traces-note").text
    click_point(browser, "chart-0", 0)
    panel = browser.find_element("id", "run-panel")
    WebDriverWait(browser, 10).until(lambda b: panel.is_displayed())  # once the chunk's script has run
    assert panel.get_attribute("data-revision") == "r000000"
    lines = browser.execute_script("""
        return Chart.getChart('run-chart').data.datasets.map(d => ({kind: d.kind, ys: d.data.map(p => p.y)}));""")
    with sqlite3.connect(store) as db:
        [(peak_kb,)] = db.execute("SELECT max(rss_kb) FROM runs JOIN run_samples ON runs.id = run_id "
                                  "WHERE revision = 'r000000'").fetchall()
    assert [d["kind"] for d in lines].count("rss") == 3
    assert max(max(d["ys"]) for d in lines if d["kind"] == "rss") == pytest.approx(peak_kb * 1.024e-3)  # MB, as every table
    loaded = browser.execute_script(
        "return [...document.querySelectorAll('script[src]')].map(s => s.getAttribute('src'))")
    assert loaded == ["chart.min.js", "traces/traces-0.js"]
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
