"""The static plots read at a glance, checked on what the plot functions build
(their artists and the data they place), not on pixels: mark labels that never
overlap in the RSS and heap plots, titles of the workload's name and only the
parameters that differ from its defaults (a program's: its name alone), the
time range chosen (--xlim, --window, --align), the peak no sample saw marked,
flame graphs sized to what they hold with MB on the x axis, and censored
comparison values drawn as "never" with an overall verdict.
"""
import copy
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))

from memharness_plot import bootstrap  # noqa: E402

bootstrap.ensure_matplotlib()

from memharness_plot import cli, compare, defaults, flame, heap, rss, text  # noqa: E402
from memharness_plot.report import PlotError, load_comparison, load_report  # noqa: E402
from test_plots import label_boxes  # noqa: E402  (the boxes of labels, checked not to overlap)

FIXTURES = SCRIPTS / "tests" / "fixtures"
SMOKE = FIXTURES / "burst-smoke.json"
COMPARISON = FIXTURES / "comparison.json"
MB = 1024 / 1e6
BURST_DEFAULTS = {"smoke": False, "calls": 300, "size": 1572864, "input": "utf16", "threads": 4,
                  "release-on-pool": False, "dir": "", "idle-hook": "none", "seed": 42}


@pytest.fixture
def smoke():
    return load_report(str(SMOKE))


@pytest.fixture(autouse=True)
def known_defaults(monkeypatch):
    """burst-writefile's defaults as its binary gives them, whatever is built."""
    monkeypatch.setattr(defaults, "workload_defaults",
                        lambda workload, smoke=False, environ=None:
                        BURST_DEFAULTS if workload == "burst-writefile" else None)


def gids(artists, prefix):
    return [a for a in artists if (a.get_gid() or "").startswith(prefix)]


# ---------------------------------------------------------------- titles

def test_title_is_the_name_and_what_differs_from_the_defaults():
    params = dict(BURST_DEFAULTS, threads=8, size=262144)
    assert text.plot_title("burst-writefile", params, BURST_DEFAULTS) == "burst-writefile size=256 KiB threads=8"
    assert text.plot_title("burst-writefile", BURST_DEFAULTS, BURST_DEFAULTS) == "burst-writefile"
    # A flag turned on, and one turned off against a default of true, both said.
    assert text.plot_title("w", {"a": True, "b": False}, {"a": False, "b": True}) == "w a=true b=false"
    assert text.plot_title("burst-writefile", dict(BURST_DEFAULTS, smoke=True), BURST_DEFAULTS) == \
        "burst-writefile smoke"
    # Defaults unknown: every parameter (false flags left out, as before).
    assert text.plot_title("w", {"n": 3, "f": False}, None) == "w n=3"


def test_a_programs_title_is_its_name_alone():
    params = {"command": ["redis-server", "--port", "6391"], "path": "/usr/bin/redis-server", "cwd": "",
              "env": {"A": "1"}, "load": ["sh", "-c", "redis-benchmark -q"], "idle_s": 10.5}
    assert text.plot_title("redis", params, None) == "redis"


def test_rss_title_of_a_program_is_one_line(smoke):
    report = copy.deepcopy(smoke)
    for run in report["runs"]:
        run["workload"] = "myprog"
        run["params"] = {"command": ["/opt/x/bin/myprog", "--flag", "v" * 200], "path": "/opt/x/bin/myprog",
                         "env": {"LD_LIBRARY_PATH": "/opt/x/lib"}, "cwd": "/tmp"}
    fig = rss.rss_figure([report], names=["p.json"])
    assert fig._suptitle.get_text() == "myprog"


def test_heap_and_flame_titles(smoke):
    fig = heap.heap_figure([with_live_heap(smoke)], ["h.json"])
    assert fig._suptitle.get_text() == "burst-writefile calls=20 size=256 KiB threads=2 smoke"
    run = {"workload": "redis", "allocator": {"name": "jemalloc"}, "repetition": 2}
    assert flame.flame_title(run) == "redis under jemalloc, run 2: live heap by call site at the peak"
    assert flame.flame_title(run, "loaded").endswith("at mark loaded")


# ---------------------------------------------------------------- mark labels

def with_live_heap(report, marks_close=False):
    report = copy.deepcopy(report)
    for run in report["runs"]:
        run["samples"]["heap_live_kb"] = [v * 0.8 for v in run["samples"]["anon_kb"]]
        if marks_close:
            t = run["marks"][1]["t_ms"]
            run["marks"] = [dict(run["marks"][1], name=f"phase-{k}", t_ms=t + k * 0.5) for k in range(8)]
    return report


def test_heap_mark_labels_never_overlap_and_sit_above_the_data(smoke):
    fig = heap.heap_figure([with_live_heap(smoke, marks_close=True)], ["h.json"])
    for ax in fig.axes:
        labels = gids(ax.texts, "mark-label")
        assert sorted(t.get_text() for t in labels) == sorted(f"phase-{k}" for k in range(8))
        boxes = label_boxes(fig, labels)
        top_data = max(line.get_transform().transform(line.get_xydata())[:, 1].max() for line in ax.lines
                       if line.get_gid() in ("rss", "anon", "live"))
        assert top_data < min(b.y0 for b in boxes)


def test_heap_legend_is_outside_every_panel(smoke):
    fig = heap.heap_figure([with_live_heap(smoke)], ["h.json"])
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert all(ax.get_legend() is None for ax in fig.axes)
    legend = fig.legends[0].get_window_extent(renderer)
    for ax in fig.axes:
        assert not legend.overlaps(ax.get_window_extent(renderer))


def test_rss_mark_labels_stagger_into_rows(smoke):
    fig = rss.rss_figure([smoke], names=["s.json"])
    ax = fig.axes[0]
    marks = [(0.1 + k * 0.001, f"m{k}", "black") for k in range(6)]
    labels, row_px = rss.place_mark_labels(fig, ax, marks, 0.0, 1.0)
    assert len(labels) == 6 and row_px > 0
    # Close together: they cannot share a row unless moved apart along it.
    rows = {}
    for label in labels:
        rows.setdefault(label.row, []).append(label)
    box = ax.get_position()
    width_px = box.width * fig.get_figwidth() * fig.dpi
    for row in rows.values():
        spans = sorted(((l.x - 0.0) / 1.0 * width_px + l.shift, l.width) for l in row)
        for (a, wa), (b, _) in zip(spans, spans[1:]):
            assert a + wa <= b
    # Two marks of one name within a label's width: one label.
    merged, _ = rss.place_mark_labels(fig, ax, [(0.5, "end", "red"), (0.5005, "end", "blue")], 0.0, 1.0)
    assert len(merged) == 1 and merged[0].colours == ["red", "blue"]


# ---------------------------------------------------------------- time range

def test_align_leaves_the_mark_most_of_the_axis():
    x0, x1 = rss.x_range(-3.0, 0.5, aligned=True)
    assert -x0 / (x1 - x0) <= rss.BEFORE_SHARE + 0.03
    assert rss.x_range(-3.0, 0.5, aligned=False)[0] < -3.0
    assert rss.x_range(0.0, 2.0, xlim=(0.5, None)) == (0.5, pytest.approx(2.04))
    with pytest.raises(PlotError):
        rss.x_range(0.0, 2.0, xlim=(3.0, None))


def test_window_and_xlim_arguments():
    assert cli.time_range("0.5:2") == (0.5, 2.0)
    assert cli.time_range(":2") == (None, 2.0)
    assert cli.window("1.5") == (0.0, 1.5)
    import argparse
    for bad in ("2", "a:b", "3:1"):
        with pytest.raises(argparse.ArgumentTypeError):
            cli.time_range(bad)
    with pytest.raises(argparse.ArgumentTypeError):
        cli.window("-1")


def test_rss_xlim_hides_marks_outside(smoke):
    fig = rss.rss_figure([smoke], names=["s.json"], align="all-done", xlim=(0.0, None))
    ax = fig.axes[0]
    assert ax.get_xlim()[0] == 0.0
    names = {t.get_text() for t in gids(ax.texts, "mark-label")}
    assert "start" not in names and "all-done" in names


# ---------------------------------------------------------------- missed peak

def test_a_peak_no_sample_saw_is_marked(smoke):
    report = copy.deepcopy(smoke)
    for run in report["runs"]:
        run["metrics"]["peak_rss_kb"] = 2 * max(run["samples"]["rss_kb"])
        run["peak_from"] = "exit_stop"
    fig = rss.rss_figure([report], names=["s.json"])
    ax = fig.axes[0]
    peaks = gids(ax.lines, "missed-peak")
    assert len(peaks) == 2
    ys = sorted(p.get_ydata()[0] for p in peaks)
    median_peaks = sorted(s.median().missed_peak[1] for s in rss.collect([report], ["s.json"], "burst-writefile",
                                                                        "rss_kb")[0])
    assert ys == pytest.approx(median_peaks)
    assert ax.get_ylim()[1] > max(ys)
    # A peak the samples saw: nothing added.
    assert not gids(rss.rss_figure([smoke], names=["s.json"]).axes[0].lines, "missed-peak")


# ---------------------------------------------------------------- flame

def test_flame_is_as_tall_as_what_it_draws_in_mb():
    deep = [f"f{k}" for k in range(40)]
    stacks = [(["main", "big"], 90_000_000), (["main"] + deep, 1_000)]
    fig = flame.flame_figure(stacks, "t")
    ax = fig.axes[0]
    assert ax.get_ylim() == (0, 2)              # the one-sample 41-deep stack is not drawn
    assert fig.get_figheight() < 3
    assert ax.get_xlim()[1] == pytest.approx(90.001)
    assert "MB" in ax.get_xlabel() and "not drawn" in ax.get_xlabel()
    widths = sorted(p.get_width() for p in ax.patches)
    assert widths[-1] == pytest.approx(90.001)


# ---------------------------------------------------------------- censored comparisons

def censored_entry():
    return {"metric": "after.ms_to_half", "unit": "ms", "direction": "lower", "verdict": "regression",
            "baseline": {"median": 120.0, "min": 100.0, "max": 140.0, "n": 3, "values": [100.0, 120.0, 140.0]},
            "candidate": {"median": 3000.0, "min": 2990.0, "max": 3010.0, "n": 3,
                          "values": [2990.0, 3000.0, 3010.0], "above": [3000.0, 3010.0], "median_above": True},
            "change": None}


def test_censored_values_are_drawn_as_never():
    points = compare.side_points(censored_entry()["candidate"])
    assert points["median"] == (3000.0, True)
    assert points["values"] == [(2990.0, False), (3000.0, True), (3010.0, True)]
    assert compare.side_points(censored_entry()["baseline"])["median"] == (120.0, False)
    assert compare.headline_text(censored_entry(), "ms") == "120 ms \u2192 never  regression"


def test_compare_figure_draws_never_and_the_overall_verdict():
    data = copy.deepcopy(load_comparison(str(COMPARISON)))
    entry = next(e for e in data["workloads"][0]["metrics"] if e["metric"] == "wall_ms")
    entry.update({k: v for k, v in censored_entry().items() if k in ("baseline", "candidate", "verdict")})
    data["regression"] = True
    data.pop("summary", None)
    fig = compare.compare_figure(data, metrics=[entry["metric"]])
    ax = next(a for a in fig.axes if a.get_gid() == f"panel:0:{entry['metric']}")
    # The censored median and runs as triangles, "never" with their bound.
    assert gids(ax.lines, "median-never:candidate") and gids(ax.lines, "value-never:candidate")
    assert not gids(ax.lines, "median-never:baseline")
    assert [t.get_text() for t in gids(ax.texts, "never:candidate")] == ["never\n(> 3000 ms)"]
    assert [t.get_text() for t in gids(ax.texts, "verdict")] == ["120 ms \u2192 never  regression"]
    verdict = [t.get_text() for t in fig.texts if t.get_gid() == "overall-verdict"]
    assert len(verdict) == 1 and verdict[0].startswith("REGRESSION in 2: ") and "wall_ms" in verdict[0]


def test_overall_verdict_prefers_the_harness_summary():
    data = {"summary": "no regression in 3 gated metrics; 3 no change -- candidate b against baseline a",
            "workloads": []}
    assert compare.overall_verdict(data) == "no regression in 3 gated metrics; 3 no change"
    data = {"workloads": [{"workload": "w", "metrics": [{"metric": "m", "verdict": "no change"},
                                                        {"metric": "n", "verdict": "noisy"}]}]}
    assert compare.overall_verdict(data) == "no regression: 1 no change, 1 noisy"
