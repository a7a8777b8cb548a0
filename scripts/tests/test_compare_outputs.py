"""The outputs of one comparison agree: the terminal table, the markdown, the JSON
and the plot show the same p-value under the same label, and say how many runs
the comparison had in the same words. Runs `harness compare` on two reports cut
from the committed smoke fixture (nothing is measured), then draws the result.
"""
import copy
import fnmatch
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
ROOT = SCRIPTS.parent
HARNESS = ROOT / "build" / "bin" / "harness"
SMOKE = SCRIPTS / "tests" / "fixtures" / "burst-smoke.json"
COMPARISON = SCRIPTS / "tests" / "fixtures" / "comparison.json"

sys.path.insert(0, str(SCRIPTS))

import matplotlib  # noqa: E402

matplotlib.use("Agg")

from memharness_plot.compare import compare_figure  # noqa: E402
from memharness_plot.report import load_comparison  # noqa: E402


def one_allocator_report(smoke, allocator, runs):
    """A report of `runs` runs of one allocator: the fixture's runs of it, repeated
    and numbered 1..runs, as `harness --runs N -a ALLOCATOR` would write it."""
    report = copy.deepcopy(smoke)
    own = [r for r in smoke["runs"] if r["allocator"]["name"] == allocator]
    report["runs"] = []
    for k in range(runs):
        run = copy.deepcopy(own[k % len(own)])
        run["repetition"] = k + 1
        report["runs"].append(run)
    report["summary"] = [s for s in smoke["summary"] if s["allocator"] == allocator]
    return report


def detail_p(fig, metric):
    panel = next(ax for ax in fig.axes if ax.get_gid() == f"panel:0:{metric}")
    detail = next(t.get_text() for t in panel.texts if t.get_gid() == "detail")
    return re.search(r"p \(Holm\) ([0-9.]+)", detail).group(1) if "p (Holm)" in detail else detail


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare")
    smoke = json.loads(SMOKE.read_text())
    paths = []
    for allocator in ("glibc", "jemalloc"):
        path = folder / f"{allocator}.json"
        path.write_text(json.dumps(one_allocator_report(smoke, allocator, 6)))
        paths.append(path)
    out, md = folder / "cmp.json", folder / "cmp.md"
    result = subprocess.run([str(HARNESS), "compare", *map(str, paths), "-o", str(out), "--markdown", str(md)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode in (0, 1), result.stderr
    return result.stdout, md.read_text(), load_comparison(str(out))


def test_plot_shows_the_holm_adjusted_p_of_the_terminal_and_markdown(compared):
    terminal, markdown, data = compared
    fig = compare_figure(data, metrics=["peak_rss_kb", "final_rss_kb", "minflt"])
    header = next(line for line in terminal.splitlines() if line.startswith("metric"))
    assert "p (Holm)" in header
    p_column = header.index("p (Holm)")
    checked = 0
    for metric in ("peak_rss_kb", "final_rss_kb", "minflt"):
        entry = next(e for e in data["workloads"][0]["metrics"] if e["metric"] == metric)
        shown = f"{entry['p_adjusted']:.3f}"
        assert detail_p(fig, metric) == shown, metric
        row = next(line for line in terminal.splitlines() if line.startswith(metric + " "))
        assert row[p_column:].split()[0] == shown, row
        md_head = next(line for line in markdown.splitlines() if line.startswith("| metric |"))
        md_row = next(line for line in markdown.splitlines() if line.startswith(f"| {metric} "))
        p_cell = [c.strip() for c in md_head.split("|")].index("p (Holm)")
        assert md_row.split("|")[p_cell].strip() == shown, md_row
        checked += 1
    assert checked == 3
    assert any(e["p"] != e["p_adjusted"] for e in data["workloads"][0]["metrics"])  # the two really differ here


def test_every_output_counts_the_runs_alike(compared):
    terminal, markdown, data = compared
    # Two reports of six runs each: six a side, not "3 rounds" (the baseline's halves).
    assert data["sample_size"] == "6 runs a side"
    assert ", 6 runs a side, alpha" in terminal.splitlines()[0]   # the headline, first
    assert ", 6 runs a side, alpha" in markdown.splitlines()[0]
    fig = compare_figure(data)
    assert any("(6 runs a side)" in t.get_text() for t in fig.texts)
    everything = terminal + markdown + json.dumps(data["warnings"])
    assert "3 rounds" not in everything and "rounds per side" not in everything
    assert "no metric can be called a regression" not in everything


def test_plot_labels_a_plain_p_as_such():
    data = load_comparison(str(COMPARISON))
    entry = data["workloads"][0]["metrics"][0]
    entry["p"], entry["p_adjusted"] = 0.0026, 0.017
    fig = compare_figure(data, metrics=[entry["metric"]])
    assert detail_p(fig, entry["metric"]) == "0.017"
    without = copy.deepcopy(data)
    del without["workloads"][0]["metrics"][0]["p_adjusted"]
    text = detail_p(compare_figure(without, metrics=[entry["metric"]]), entry["metric"])
    assert "p 0.003" in text and "Holm" not in text


def test_each_metric_is_shown_as_the_reports_manifest_shows_it(compared, tmp_path):
    # One declaration: the comparison's display unit and scale of a metric are the
    # ones a report's manifest gives it, both written from the registry (the
    # registry's entries as this harness writes them, since the fixture predates
    # some; the workload's own metrics as the fixture declares them).
    _, _, data = compared
    report = tmp_path / "report.json"
    result = subprocess.run([str(HARNESS), "merge", str(SMOKE), "-o", str(report)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    manifest = {**json.loads(SMOKE.read_text())["metrics"], **json.loads(report.read_text())["metrics"]}
    entries = [e for group in data["workloads"] for e in group["metrics"]]
    assert entries
    for entry in entries:
        declared = manifest.get(entry["metric"]) or next(
            v for k, v in manifest.items() if "*" in k and fnmatch.fnmatchcase(entry["metric"], k))
        assert (entry["unit"], entry["display_unit"], entry["display_scale"]) == \
            (declared["unit"], declared["display_unit"], declared["display_scale"]), entry["metric"]
    assert {e["display_unit"] for e in entries} >= {"MB", "ms"}
