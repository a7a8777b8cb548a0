"""A comparison's verdict on recorded runs (nothing is measured): the headline is
one line, the same first on the terminal, in the markdown and in the JSON's
`summary`; it names the gated regressions; only gated metrics decide the exit
code; rows come regressions first; an incomplete comparison says INCOMPLETE and
exits 4, never "no regression".

Recorded runs: results/reference/compare-pins/runs.json (scav against scav on
the quick suite) and results/reference/compare-jemalloc-scav/runs.json
(`harness compare --baseline jemalloc --candidate scav -w idle-return --runs 5`,
where scav gives memory back and jemalloc never does within the run, and the
RSS 100 ms after the free is higher under scav, whose purge delay is 100 ms).
"""
import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "build" / "bin" / "harness"
PINS = ROOT / "results" / "reference" / "compare-pins" / "runs.json"
IDLE = ROOT / "results" / "reference" / "compare-jemalloc-scav" / "runs.json"


def compare(tmp_path, runs, *args):
    out, md = tmp_path / "c.json", tmp_path / "c.md"
    result = subprocess.run([str(HARNESS), "compare", str(runs), "-o", str(out), "--markdown", str(md), *args],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    data = json.loads(out.read_text()) if out.exists() else None
    return result, data, md.read_text() if md.exists() else ""


def metric(data, name, workload="idle-return"):
    w = next(w for w in data["workloads"] if w["workload"] == workload)
    return next(m for m in w["metrics"] if m["metric"] == name)


def table_rows(stdout, workload):
    """The metric names of a workload's table, in the order shown."""
    lines = stdout.splitlines()
    start = lines.index(workload) + 3   # the name, the head, the rule
    rows = []
    for line in lines[start:]:
        if not line or line.startswith(("warning:", "baseline and candidate")) or line in ("idle-return",):
            break
        rows.append(line.split()[0])
    return rows


def gated_counts(data):
    gated = [m for w in data["workloads"] for m in w["metrics"] if m["gated"]]
    return len(gated), sum(m["verdict"] == "regression" for m in gated)


def test_headline_is_first_and_the_same_everywhere(tmp_path):
    result, data, md = compare(tmp_path, PINS)
    assert result.returncode == 0, result.stderr
    headline = result.stdout.splitlines()[0]
    assert headline == data["summary"]
    # The same words: markdown escapes ">" and joins "@" to what follows (no mention).
    assert md.splitlines()[0] == "### memharness: " + headline.replace(">", "&gt;").replace("@", "@\u2060")
    n, regressed = gated_counts(data)
    assert regressed == 0 and headline.startswith(f"no regression in {n} gated metrics")
    assert data["complete"] is True and data["incomplete"] is None and data["exit_code"] == 0


def test_a_point_reading_alone_is_reported_not_gated(tmp_path):
    result, data, md = compare(tmp_path, IDLE)
    rss_100ms = metric(data, "after.rss_100ms_kb")
    assert rss_100ms["verdict"] == "regression" and rss_100ms["gated"] is False
    assert metric(data, "after.ms_to_90pct")["gated"] is True
    assert result.returncode == 0, result.stdout + result.stderr
    headline = data["summary"]
    assert headline.startswith("no regression in ") and "reported: 1 regression" in headline
    assert "after.rss_100ms_kb" not in headline
    assert data["gate"] == "declared"


def test_gate_all_names_the_point_reading_and_exits_1(tmp_path):
    result, data, md = compare(tmp_path, IDLE, "--gate", "all")
    assert result.returncode == 1, result.stdout + result.stderr
    headline = result.stdout.splitlines()[0]
    n, regressed = gated_counts(data)
    assert headline.startswith(f"REGRESSION in 1 of {n} gated metrics: after.rss_100ms_kb +"), headline
    assert "(p 0.0" in headline and regressed == 1
    assert headline == data["summary"] and data["gate"] == "all" and data["exit_code"] == 1
    assert md.startswith("### memharness: REGRESSION in 1 of")
    # The regression's row comes first, then the improvements.
    rows = table_rows(result.stdout, "idle-return")
    verdicts = [metric(data, name.split(" ")[0])["verdict"] for name in rows]
    assert rows[0] == "after.rss_100ms_kb"
    assert verdicts == sorted(verdicts, key=lambda v: {"regression": 0, "improvement": 1}.get(v, 2))


def test_the_thresholds_file_gates_a_metric(tmp_path):
    thresholds = json.loads((ROOT / "ci" / "thresholds.json").read_text())
    thresholds["metrics"] = {"after.rss_100ms_kb": {"gate": True}, **thresholds["metrics"]}
    path = tmp_path / "t.json"
    path.write_text(json.dumps(thresholds))
    result, data, _ = compare(tmp_path, IDLE, "--thresholds", str(path))
    assert result.returncode == 1, result.stdout + result.stderr
    assert metric(data, "after.rss_100ms_kb")["gated"] is True
    # "gate" alone leaves the metric's rule as the registry declares it.
    assert metric(data, "after.rss_100ms_kb")["direction"] == "lower"


def test_gate_names_metrics(tmp_path):
    result, data, _ = compare(tmp_path, IDLE, "--gate", "after.rss_100ms_kb,peak_rss_kb")
    assert result.returncode == 1
    assert sorted(m["metric"] for w in data["workloads"] for m in w["metrics"] if m["gated"]) == \
        ["after.rss_100ms_kb", "peak_rss_kb"]


def test_an_unknown_gate_is_bad_input(tmp_path):
    result, data, _ = compare(tmp_path, IDLE, "--gate", "after.rss_100ms")
    assert result.returncode == 2 and data is None
    assert "after.rss_100ms" in result.stderr and "after.rss_100ms_kb" in result.stderr


@pytest.mark.parametrize("how", ["failed-runs", "unfinished-report"])
def test_an_incomplete_comparison_says_so_and_exits_4(tmp_path, how):
    runs = json.loads(IDLE.read_text())
    if how == "failed-runs":
        for r in [r for r in runs["runs"] if r["role"] == "candidate"][:2]:
            r["status"] = "crashed"
        why = "INCOMPLETE (2 runs failed: 0 of the baseline, 2 of the candidate)"
    else:
        runs["complete"] = False
        runs["runs"] = runs["runs"][:-3]
        why = "INCOMPLETE (the runs report is of a comparison that did not finish"
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(runs))
    result, data, md = compare(tmp_path, path, "--gate", "all")
    assert result.returncode == 4, result.stdout + result.stderr
    headline = result.stdout.splitlines()[0]
    assert headline.startswith(why), headline
    assert "no regression" not in result.stdout + md
    assert md.startswith("### memharness: " + why)
    assert data["summary"] == headline and data["complete"] is False and data["exit_code"] == 4


def test_help_tells_a_regression_from_an_incomplete_comparison():
    result = subprocess.run([str(HARNESS), "compare", "--help"], capture_output=True, text=True, timeout=60)
    text = " ".join(result.stdout.split())
    assert "1: a gated metric regressed" in text and "4: incomplete" in text
    assert "a run failed" not in text.split("4: incomplete")[0]


def test_the_csv_is_in_the_tables_units_and_says_which_metrics_gated(tmp_path):
    csv_path = tmp_path / "c.csv"
    result, data, _ = compare(tmp_path, IDLE, "--export-csv", str(csv_path))
    assert result.returncode == 0, result.stderr
    import csv
    rows = {r["metric"]: r for r in csv.DictReader(csv_path.open())}
    peak, peak_kb = rows["peak_rss_kb"], metric(data, "peak_rss_kb")
    assert peak["unit"] == "MB"
    assert float(peak["baseline_median"]) == pytest.approx(peak_kb["baseline"]["median"] * 1.024e-3)
    assert peak["gate"] == "gated" and rows["after.rss_100ms_kb"]["gate"] == "reported"
    assert rows["after.ms_to_90pct"]["unit"] == "ms"
