"""The report page (`harness page`, `compare --page`) in a real browser: headless
Chromium (Debian's chromium, chromium-driver and python3-selenium, driven as
test_history_page.py drives it) opens it from file://. idle-return under three
allocators: no request leaves the folder (Chromium's DevTools network
events), the wheel zooms the memory chart's x range, the table's peak RSS of
each allocator is the report's. Two builds of one C program that differ in one
site: the flame graph zooms on a click, and the diff flame graph of the two
reports colours that site alone as grown. A comparison's page opens with its
verdict line. Smoke sizes; about 40 s here with Chromium starting.
"""
import json
import os
import shutil
import statistics
import subprocess
from pathlib import Path

import pytest

from test_history_page import browser  # noqa: F401 - the fixture: headless Chromium

try:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.wait import WebDriverWait
except ImportError:  # pragma: no cover - setup.sh installs python3-selenium
    pass  # the browser fixture skips

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(os.environ.get("MEMHARNESS_HARNESS", ROOT / "build" / "bin" / "harness"))
ALLOCATORS = ["glibc", "jemalloc", "mimalloc"]
# One source, two builds: GROWN is the site that differs (SITE_MB 4 against 12).
PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define BLOCK (64 * 1024)
static void *keep[1024];
static int kept;
#define FILL(mb) for (size_t i = 0; i < (mb) * 1000000 / BLOCK; ++i) { keep[kept] = malloc(BLOCK); memset(keep[kept++], 1, BLOCK); }
__attribute__((noinline)) void steady_site(void) { FILL(8) }
__attribute__((noinline)) void grown_site(void) { FILL(SITE_MB) }
int main(void) {
  steady_site();
#ifdef MARK_BETWEEN
  puts("steady-done");  /* a mark for --mark-on-output: the live heap's sites recorded between the two */
  fflush(stdout);
  usleep(200000);
#endif
  grown_site();
  usleep(300000);
  for (int i = 0; i < kept; ++i) free(keep[i]);
  return 0;
}
"""


def harness(*args, timeout=180):
    return subprocess.run([str(HARNESS), *map(str, args)], capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def idle_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("idle") / "idle-return.json"
    args = ["--workload", "idle-return", "--smoke", "-n", "1", "-q", "--out", out]
    for a in ALLOCATORS:
        args += ["-a", a]
    r = harness(*args)
    assert r.returncode == 0, r.stderr
    return out


def open_page(browser, site):
    browser.get((site / "index.html").as_uri())
    errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert errors == []
    assert browser.execute_script("return document.body.dataset.rendered") is not None


def test_the_report_page_opens_from_file_with_no_request_elsewhere(tmp_path, browser, idle_report):
    site = tmp_path / "site"
    r = harness("page", idle_report, "--out", site)
    assert r.returncode == 0, r.stderr
    browser.get_log("performance")  # what earlier pages requested
    open_page(browser, site)
    events = [json.loads(e["message"])["message"] for e in browser.get_log("performance")]
    urls = [e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"]
    assert len(urls) >= 7, urls  # the page, its five scripts and its style sheet
    assert all(u.startswith(site.as_uri() + "/") for u in urls), urls
    # A line per run and kind: RSS and anonymous RSS of each allocator's run.
    kinds = browser.execute_script("return Chart.getChart('memory-0').data.datasets.map(d => d.kind)")
    assert kinds.count("rss") == len(ALLOCATORS) and kinds.count("anon") == len(ALLOCATORS)


def test_the_wheel_zooms_the_memory_chart(tmp_path, browser, idle_report):
    site = tmp_path / "site"
    assert harness("page", idle_report, "--out", site).returncode == 0
    open_page(browser, site)
    canvas = browser.find_element("id", "memory-0")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", canvas)
    before = browser.execute_script("const x = Chart.getChart('memory-0').scales.x; return [x.min, x.max]")
    for _ in range(3):  # each wheel step zooms in by a tenth
        ActionChains(browser).scroll_from_origin(ScrollOrigin.from_element(canvas), 0, -200).perform()
    after = browser.execute_script("const x = Chart.getChart('memory-0').scales.x; return [x.min, x.max]")
    assert after[1] - after[0] < 0.85 * (before[1] - before[0]), (before, after)
    browser.find_element("xpath", "//section[.//canvas[@id='memory-0']]//button").click()
    reset = browser.execute_script("const x = Chart.getChart('memory-0').scales.x; return [x.min, x.max]")
    assert reset == pytest.approx(before)


def test_the_tables_peak_is_the_reports(tmp_path, browser, idle_report):
    site = tmp_path / "site"
    assert harness("page", idle_report, "--out", site).returncode == 0
    open_page(browser, site)
    header, rows = browser.execute_script("""
        const t = document.getElementById('table-0-0');
        const cells = r => [...r.cells].map(c => c.textContent);
        return [cells(t.rows[0]), [...t.rows].slice(1).map(cells)];""")
    column = next(i for i, h in enumerate(header) if h.startswith("peak RSS"))
    report = json.loads(idle_report.read_text())
    for a in ALLOCATORS:
        peak_mb = statistics.median(r["metrics"]["peak_rss_kb"] for r in report["runs"] if r["allocator"]["name"] == a) * 1.024e-3
        row = next(r for r in rows if r[1] == a)
        assert float(row[column].split()[0]) == pytest.approx(peak_mb, rel=0.006), (a, row[column], peak_mb)


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory):
    """Reports of two builds of PROGRAM under the ledger, the second's grown_site
    holding 12 MB where the first's holds 4."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    base = tmp_path_factory.mktemp("builds")
    (base / "prog.c").write_text(PROGRAM)
    reports = []
    for name, mb in (("old", 4), ("new", 12)):
        (base / name).mkdir()
        binary = base / name / "prog"
        subprocess.run(["cc", "-O1", "-g", "-fno-omit-frame-pointer", f"-DSITE_MB={mb}", "-o", binary,
                        base / "prog.c"], check=True)
        report = base / f"{name}.json"
        r = harness("-n", "1", "-q", "-a", "glibc", "--ledger", "--heap-sample", "16K", "--out", report, "--", binary)
        assert r.returncode == 0, r.stderr
        reports.append(report)
    return reports


def frames(browser, target):
    return browser.execute_script("""
        return [...document.querySelectorAll('#' + arguments[0] + ' g.frame')].map(g => ({
          name: g.getAttribute('name'), width: +g.querySelector('rect').getAttribute('width'),
          fill: g.querySelector('rect').getAttribute('fill')}));""", target)


def settled_frames(browser, target):
    """The frames once d3 has drawn them at their widths (it draws on its timer ticks, after the page says it has
    rendered: on a loaded machine a first read can come before the root frame has its width)."""
    full = float(browser.execute_script(f"return document.querySelector('#{target} svg').getAttribute('width')"))
    try:
        WebDriverWait(browser, 15).until(lambda b: max((f["width"] for f in frames(b, target)), default=0) >= 0.999 * full)
    except TimeoutException:
        pytest.fail(f"no frame of {target} reached the graph's width {full}: {frames(browser, target)}")
    return full, frames(browser, target)


def test_the_flame_graph_zooms_on_a_click(tmp_path, browser, two_builds):
    site = tmp_path / "site"
    assert harness("page", two_builds[0], "--out", site).returncode == 0
    open_page(browser, site)
    widths = lambda: {f["name"]: f["width"] for f in frames(browser, "flame")}
    full, shown = settled_frames(browser, "flame")
    before = {f["name"]: f["width"] for f in shown}
    steady = next(n for n in before if n.startswith("steady_site"))
    grown = next(n for n in before if n.startswith("grown_site"))
    assert before[steady] > before[grown] > 0  # 8 MB against 4
    assert before[steady] < 0.9 * full
    # A click event on the frame (a pointer click at its pixel lands elsewhere at times: the charts above it
    # are still laying out when the page has just opened).
    rect = browser.find_element("css selector", f"#flame g.frame[name='{steady}'] rect")
    browser.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", rect)
    # The end state is awaited, the clicked frame as wide as the whole graph.
    try:
        WebDriverWait(browser, 15).until(lambda b: widths().get(steady, 0) >= 0.999 * full)
    except TimeoutException:
        pytest.fail(f"the clicked frame never reached the graph's width {full}: before {before}, now {widths()}")
    after = widths()
    assert after[steady] == pytest.approx(full)
    assert after.get(grown, 0) == 0 or after[grown] < before[grown]


def test_the_diff_flame_graph_shows_the_grown_site_alone(tmp_path, browser, two_builds):
    site = tmp_path / "site"
    assert harness("page", *two_builds, "--out", site).returncode == 0
    open_page(browser, site)
    shown = settled_frames(browser, "diff-flame")[1]
    grown = {f["name"] for f in shown if f["fill"] == "rgb(214, 39, 40)"}
    shrunk = {f["name"] for f in shown if f["fill"] == "rgb(31, 119, 180)"}
    assert len(grown) == 1 and next(iter(grown)).startswith("grown_site"), shown
    assert shrunk == set()
    assert any(f["name"].startswith("steady_site") for f in shown)
    assert "k = 3 standard errors" in browser.find_element("id", "flames").text


def test_the_diff_flame_graph_between_two_marks_of_one_run(tmp_path, browser, two_builds):
    binary = tmp_path / "prog"
    subprocess.run(["cc", "-O1", "-g", "-fno-omit-frame-pointer", "-DSITE_MB=4", "-DMARK_BETWEEN", "-o", binary,
                    two_builds[0].parent / "prog.c"], check=True)
    report = tmp_path / "marked.json"
    r = harness("-n", "1", "-q", "-a", "glibc", "--ledger", "--heap-sample", "16K", "--mark-on-output",
                "^steady-done$=steady-done", "--out", report, "--", binary)
    assert r.returncode == 0, r.stderr
    site = tmp_path / "site"
    assert harness("page", report, "--out", site).returncode == 0
    open_page(browser, site)
    # From the mark (steady_site's 8 MB alone) to the peak (grown_site's 4 MB added), chosen in the selectors as a
    # person would.
    options = browser.execute_script("return [...document.querySelectorAll('#diff-a option')].map(o => o.textContent)")
    mark = next(i for i, o in enumerate(options) if o.endswith("at mark steady-done"))
    peak = next(i for i, o in enumerate(options) if o.endswith("at the peak"))
    browser.execute_script("""
        const [a, b] = [document.getElementById('diff-a'), document.getElementById('diff-b')];
        a.value = arguments[0]; b.value = arguments[1]; a.dispatchEvent(new Event('change'));""", mark, peak)
    shown = settled_frames(browser, "diff-flame")[1]
    grown = {f["name"] for f in shown if f["fill"] == "rgb(214, 39, 40)"}
    shrunk = {f["name"] for f in shown if f["fill"] == "rgb(31, 119, 180)"}
    assert len(grown) == 1 and next(iter(grown)).startswith("grown_site"), shown
    assert shrunk == set(), shown
    steady = [f for f in shown if f["name"].startswith("steady_site")]
    assert steady and steady[0]["fill"] == "rgb(204, 204, 204)", shown


def test_a_comparisons_page_opens_with_its_verdict_and_draws_never_as_censored(tmp_path, browser):
    site = tmp_path / "site"
    # scav holding freed memory 5 s: within the smoke run's 500 ms idle time it never gives it back.
    r = harness("compare", "--baseline", "scav", "--candidate", "scav:purge_delay_ms=5000", "--workload", "idle-return",
                "--smoke", "--runs", "2", "-q", "--out", tmp_path / "c.json", "--page", site)
    assert r.returncode in (0, 1), r.stderr
    open_page(browser, site)
    verdict = browser.find_element("id", "verdict").text
    comparison = json.loads((tmp_path / "c.json").read_text())
    assert verdict == comparison["summary"]
    assert browser.execute_script("return document.querySelector('#comparison').firstElementChild.id") == "verdict"
    drawn = browser.execute_script("""
        const out = {};
        document.querySelectorAll('table.metrics tr[data-metric]').forEach(tr => {
          out[tr.dataset.metric] = tr.querySelectorAll('path.censored').length; });
        return out;""")
    metrics = comparison["workloads"][0]["metrics"]
    expected = {m["metric"]: len(m["baseline"].get("above", [])) + len(m["candidate"].get("above", []))
                for m in metrics if m["baseline"]["values"] or m["candidate"]["values"]}
    assert drawn == expected
    back = next(m for m in metrics if m["metric"] == "workload.ms_back_to_start")
    assert len(back["candidate"]["above"]) == 2  # both of the candidate's runs: never


def test_a_missing_library_is_named_with_how_to_get_it(tmp_path, idle_report):
    r = subprocess.run([str(HARNESS), "page", str(idle_report), "--out", str(tmp_path / "site")],
                       capture_output=True, text=True, env={**os.environ, "MEMHARNESS_PAGE_LIBS": str(tmp_path / "none")})
    assert r.returncode == 2
    assert "hammer.min.js is missing (npm hammerjs)" in r.stderr and "npm" in r.stderr
    assert not (tmp_path / "site" / "index.html").exists()


def test_names_from_a_hostile_report_are_text(tmp_path, browser, idle_report):
    from test_history import HOSTILE
    report = json.loads(idle_report.read_text())
    for run in report["runs"]:
        run["workload"] = HOSTILE
        run["marks"][0]["name"] = HOSTILE
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(report))
    site = tmp_path / "site"
    r = harness("page", hostile, "--out", site)
    assert r.returncode == 0, r.stderr
    html = (site / "index.html").read_text()
    assert "</script><" not in html.split('id="page-data">')[1].split("</script>")[0]
    open_page(browser, site)
    assert browser.title == "memharness report"  # nothing the report holds ran
    assert browser.find_element("css selector", "#memory h2").text == HOSTILE + ": memory over time"
    assert browser.find_element("id", "table-0-0").find_elements("css selector", "td")[0].text == HOSTILE
