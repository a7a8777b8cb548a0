"""harness table end to end on recorded reports (results/reference/): the matrix of one
report, one report split in two and pooled again, other parameters refused, bad input
named with exit 2, the markdown's bold best, the CSV's units, the heat map drawn."""
import csv
import io
import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "build" / "bin" / "harness"
REFERENCE = ROOT / "results" / "reference"
# Recorded at smoke size under glibc and scav, 3 rounds, their samples thinned: idle-return
# (glibc's memory never comes back within the idle time) and server-echo (requests per second:
# higher is better).
IDLE = ROOT / "scripts" / "tests" / "fixtures" / "table-idle-return.json"
ECHO = ROOT / "scripts" / "tests" / "fixtures" / "table-server-echo.json"

pytestmark = pytest.mark.skipif(not HARNESS.exists(), reason="harness not built")


def table(*args):
    return subprocess.run([str(HARNESS), "table", *map(str, args)], capture_output=True, text=True, timeout=120)


def rows(*args):
    r = table(*args, "--format", "csv")
    assert r.returncode == 0, r.stderr
    return list(csv.DictReader(io.StringIO(r.stdout)))


def split(report, tmp_path):
    """The report as two sittings: rounds 1-2 in one file, the rest in the other."""
    data = json.loads(report.read_text())
    first, second = dict(data), dict(data)
    first["runs"] = [r for r in data["runs"] if r["repetition"] <= 2]
    second["runs"] = [r for r in data["runs"] if r["repetition"] > 2]
    a, b = tmp_path / "first.json", tmp_path / "second.json"
    a.write_text(json.dumps(first))
    b.write_text(json.dumps(second))
    return a, b


def test_each_row_has_one_best_at_one_and_the_others_above():
    lines = rows(REFERENCE / "idle-return.json")
    assert {line["allocator"] for line in lines} == {"glibc", "jemalloc", "mimalloc", "tcmalloc", "scav"}
    by_row = {}
    for line in lines:
        by_row.setdefault((line["table"], line["workload"], line["figure"]), []).append(line)
    assert by_row
    for cells in by_row.values():
        best = [c for c in cells if c["best"] == "1"]
        assert best and all(float(c["ratio"]) == 1.0 for c in best if c["ratio"])
        for c in cells:
            if c["ratio"]:
                assert float(c["ratio"]) >= 1.0, c


def test_the_ratio_is_the_median_over_the_best_and_the_inverse_where_higher_is_better():
    lines = rows(ECHO, "--metric", "workload.requests_per_s", "--metric", "workload.faults_per_request")
    for figure in {line["figure"] for line in lines}:
        cells = [line for line in lines if line["figure"] == figure and line["median"]]
        best = next(c for c in cells if c["best"] == "1")
        for c in cells:
            if not c["ratio"] or float(best["median"]) == 0 or float(c["median"]) == 0:
                continue
            expected = (float(best["median"]) / float(c["median"]) if c["better"] == "higher"
                        else float(c["median"]) / float(best["median"]))
            assert float(c["ratio"]) == pytest.approx(expected, rel=1e-6), c
    assert any(line["better"] == "higher" for line in lines)


def test_two_sittings_pool_into_the_table_of_the_whole(tmp_path):
    a, b = split(REFERENCE / "pool-idle.json", tmp_path)
    whole = rows(REFERENCE / "pool-idle.json")
    pooled = rows(a, b)
    key = lambda line: (line["table"], line["figure"], line["allocator"])
    assert sorted(map(key, whole)) == sorted(map(key, pooled))
    for w, p in zip(sorted(whole, key=key), sorted(pooled, key=key)):
        assert (w["median"], w["n"], w["ratio"]) == (p["median"], p["n"], p["ratio"])
    text = table(a, b).stdout
    assert "from 2 reports" in text
    # Either sitting alone has fewer runs per cell.
    assert all(int(line["n"]) < int(w["n"]) for line, w in zip(sorted(rows(a), key=key), sorted(whole, key=key)))


def test_other_parameters_are_refused_naming_both_reports(tmp_path):
    a, b = split(REFERENCE / "pool-idle.json", tmp_path)
    data = json.loads(b.read_text())
    for run in data["runs"]:
        run["params"]["threads"] = 8
    b.write_text(json.dumps(data))
    r = table(a, b)
    assert r.returncode == 2
    assert str(a) in r.stderr and str(b) in r.stderr and '"threads":8' in r.stderr.replace(" ", "")


@pytest.mark.parametrize("args, named", [
    (["--metric", "peak_rs_kb"], "--metric peak_rs_kb"),
    (["--format", "html"], "html"),
    (["missing.json"], "missing.json"),
])
def test_bad_input_exits_2_naming_the_value(args, named):
    report = [] if args == ["missing.json"] else [REFERENCE / "pool-idle.json"]
    r = table(*report, *args)
    assert r.returncode == 2
    assert named in r.stderr + r.stdout


def test_a_report_given_twice_is_refused():
    r = table(REFERENCE / "pool-idle.json", REFERENCE / "pool-idle.json")
    assert r.returncode == 2 and "given twice" in r.stderr


def test_markdown_bolds_the_best_and_names_the_unit():
    r = table(REFERENCE / "idle-return.json", REFERENCE / "pool-idle.json", "--format", "markdown",
              "--metric", "peak_rss_kb")
    assert r.returncode == 0, r.stderr
    assert "| **1.00** |" in r.stdout
    body = [line for line in r.stdout.splitlines() if line.startswith("| pool-idle")]
    assert body and " MB" in body[0]      # the best's own figure, in MB
    assert "| workload | figure | best | glibc |" in r.stdout


def test_never_cells_are_bounds_and_said_under_the_table():
    r = table(IDLE)
    assert r.returncode == 0, r.stderr
    assert "never: the time did not come" in r.stdout
    lines = [line for line in rows(IDLE) if line["unit"] == "ms" and line["allocator"] == "glibc"]
    never = [line for line in lines if int(line["never"]) == int(line["n"])]
    assert never, lines
    for line in never:
        # A lower bound: the time the run had left over the best's median.
        assert line["cell"] == "> " + line["cell"][2:] and float(line["ratio"]) > 1


def test_the_heat_map_is_drawn(tmp_path):
    out = tmp_path / "table.png"
    r = subprocess.run([str(HARNESS), "plot", "table", REFERENCE / "idle-return.json", REFERENCE / "pool-idle.json",
                        "-o", out], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 10000
    r = subprocess.run([str(HARNESS), "plot", "table", REFERENCE / "pool-idle.json", "--metric", "nope",
                        "-o", tmp_path / "x.png"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and "--metric nope" in r.stderr


def test_the_suite_run_time_is_estimated_before_it_runs():
    script = ROOT / "scripts" / "allocator-table"
    r = subprocess.run([sys.executable, str(script), "--estimate", "--suite", "table-smoke", "-n", "5",
                        "--reference", str(IDLE)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    total = r.stdout.strip().splitlines()[-1]
    assert "7 allocators x 5 rounds" in total and " h on an idle machine" in total
    # idle-return's seconds per run are the recorded runs' median wall time.
    walls = [run["wall_ms"] for run in json.loads(IDLE.read_text())["runs"] if run["status"] == "ok"]
    line = next(x for x in r.stdout.splitlines() if x.startswith("idle-return "))
    assert float(line.split()[1]) == pytest.approx(statistics.median(walls) / 1000, abs=0.05)
    r = subprocess.run([sys.executable, str(script), "--estimate", "--suite", "nope"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0 and "--suite nope" in r.stderr


def test_the_page_says_what_ran_beside_it_only_when_told(tmp_path):
    script = ROOT / "scripts" / "allocator-table"
    page = tmp_path / "ALLOCATORS.md"
    r = subprocess.run([sys.executable, str(script), "--write", str(IDLE), "--page", str(page),
                        "--reference", str(IDLE)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    text = page.read_text()
    machine = next(x for x in text.splitlines() if x.startswith("- machine:"))
    assert machine.rstrip().endswith("host " + json.loads(IDLE.read_text())["context"]["host"]), machine
    assert "## Where each allocator leads and trails" in text and "**scav**" in text
    r = subprocess.run([sys.executable, str(script), "--write", str(IDLE), "--page", str(page),
                        "--reference", str(IDLE), "--conditions", "a compare of two pins beside it"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "; a compare of two pins beside it" in page.read_text()
