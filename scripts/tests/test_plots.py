"""Tests of plot_rss.py, plot_compare.py and the memharness_plot library: image files
of the right size that are not blank, the artists drawn (counted on the Figure),
exit code 2 with a message naming the file on bad input, and the interpreter bootstrap.
Run: /usr/bin/python3 -m pytest scripts/tests -q
"""
import copy
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
FIXTURES = SCRIPTS / "tests" / "fixtures"
SMOKE = FIXTURES / "burst-smoke.json"
COMPARISON = FIXTURES / "comparison.json"
PLOT_RSS = SCRIPTS / "plot_rss.py"
PLOT_COMPARE = SCRIPTS / "plot_compare.py"

sys.path.insert(0, str(SCRIPTS))

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import numpy  # noqa: E402
from matplotlib.image import imread  # noqa: E402

from memharness_plot import bootstrap, harness, rss, style, text, units  # noqa: E402
from memharness_plot.compare import compare_figure  # noqa: E402
from memharness_plot.report import PlotError, ReportError, check_comparison, load_comparison, load_report  # noqa: E402
from memharness_plot.rss import rss_figure  # noqa: E402
from memharness_plot.style import save_figure  # noqa: E402


# ---------------------------------------------------------------- helpers

def clean_env(**extra):
    env = {k: v for k, v in os.environ.items()
           if k not in (bootstrap.CANDIDATES_ENV, bootstrap.REEXEC_ENV)}
    env.update(extra)
    return env


def run(script, *args, executable=None, env=None):
    command = (executable or [sys.executable]) + [str(script)] + [str(a) for a in args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120,
                          env=env if env is not None else clean_env())


def png_size(path):
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def assert_not_blank(path):
    image = imread(str(path))
    pixels = image[..., :3].reshape(-1, 3)
    colours = numpy.unique((pixels * 255).round().astype(numpy.uint8), axis=0)
    assert len(colours) > 50, f"{path}: only {len(colours)} distinct colours"
    assert pixels.std() > 0.05
    return colours


def write_json(path, data):
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="module")
def smoke():
    return load_report(str(SMOKE))


@pytest.fixture(scope="module")
def smoke_figure(smoke):
    return rss_figure([smoke], names=[str(SMOKE)])


def gids(artists, prefix):
    return [a for a in artists if (a.get_gid() or "").startswith(prefix)]


MB = 1024 / 1e6   # KiB to MB, the display scale every manifest entry in KiB declares


def median_peak_kb(report, allocator, column="rss_kb"):
    """Peak of `column` (periodic and mark samples) of the median run by that peak."""
    peaks = []
    for run in report["runs"]:
        if run["allocator"]["name"] == allocator and run["status"] == "ok":
            values = run["samples"][column] + [m["sample"][column] for m in run["marks"]]
            peaks.append((max(values), run["repetition"], run))
    peaks.sort(key=lambda p: (p[0], p[1]))
    return peaks[(len(peaks) - 1) // 2]


def label_boxes(fig, labels):
    """The drawn boxes of `labels`, checked not to overlap."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in labels]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert not a.overlaps(b), (a, b)
    return boxes


# ---------------------------------------------------------------- plot_rss

def test_plot_rss_writes_png_of_figure_size(tmp_path):
    out = tmp_path / "rss.png"
    result = run(PLOT_RSS, SMOKE, "-o", out)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    width, height = png_size(out)
    assert (width, height) == (int(rss.FIGSIZE[0] * style.DPI), int(rss.FIGSIZE[1] * style.DPI))
    assert (width, height) == (1200, 800)
    colours = assert_not_blank(out)
    # The allocator colours are really drawn (glibc blue, jemalloc orange).
    for hex_colour in (style.FAMILY_COLOURS["glibc"][0], style.FAMILY_COLOURS["jemalloc"][0]):
        rgb = numpy.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=int)
        assert (numpy.abs(colours.astype(int) - rgb).sum(axis=1) <= 3).any(), hex_colour


def test_rss_lines_marks_and_phases(smoke, smoke_figure):
    top, lanes, lower = smoke_figure.axes
    runs = gids(top.lines, "run")
    assert len(runs) == 6                       # 2 allocators x 3 runs, all ok
    assert len(gids(lower.lines, "run")) == 6
    medians = gids(top.lines, "run:median")
    assert len(medians) == 2
    for allocator, line in zip(("glibc", "jemalloc"), medians):
        peak_kb, _, run_data = median_peak_kb(smoke, allocator)
        assert max(line.get_ydata()) == pytest.approx(peak_kb * MB)
        assert line.get_color() == style.allocator_colours([(allocator, allocator)])[allocator]
    # Every mark of each median run: a vertical line in both panels.
    marks = sum(len(median_peak_kb(smoke, a)[2]["marks"]) for a in ("glibc", "jemalloc"))
    assert marks == 8
    assert len(gids(top.lines, "mark")) == 8
    assert len(gids(lower.lines, "mark")) == 8
    glibc_marks = [m["t_ms"] / 1000 for m in median_peak_kb(smoke, "glibc")[2]["marks"]]
    drawn = sorted(line.get_xdata()[0] for line in gids(top.lines, "mark"))
    for t in glibc_marks:
        assert t in drawn
    # Phases: the 3 intervals between the 4 marks of each median run.
    assert len(gids(lanes.patches, "phase")) == 2 * 3
    # Time in seconds, memory in MB (10^6 bytes), as the manifest declares.
    assert "(s)" in lower.get_xlabel()
    assert top.get_ylabel() == "RSS (MB)"


def test_rss_mark_labels_do_not_overlap_or_cover_data(smoke_figure):
    top = smoke_figure.axes[0]
    labels = gids(top.texts, "mark-label")
    names = {t.get_text() for t in labels}
    assert names == {"start", "all-started", "all-done", "end"}
    assert len(labels) <= 8
    boxes = label_boxes(smoke_figure, labels)
    renderer = smoke_figure.canvas.get_renderer()
    lowest_label = min(b.y0 for b in boxes)
    highest_data = max(line.get_transform().transform(line.get_xydata())[:, 1].max()
                       for line in gids(top.lines, "run"))
    assert highest_data < lowest_label
    axes_box = top.get_window_extent(renderer)
    assert all(axes_box.y0 <= b.y0 and b.y1 <= axes_box.y1 + 1 for b in boxes)


# burst-writefile's defaults without --smoke, as its binary resolves them.
BURST_DEFAULTS = {"smoke": False, "calls": 300, "size": 1572864, "input": "utf16", "threads": 4,
                  "release-on-pool": False, "dir": "", "idle-hook": "none", "seed": 42}


def test_rss_title_and_machine(smoke, smoke_figure, monkeypatch):
    from memharness_plot import defaults
    monkeypatch.setattr(defaults, "workload_defaults", lambda workload, smoke=False, environ=None: BURST_DEFAULTS)
    title = rss_figure([smoke], names=[str(SMOKE)])._suptitle.get_text()
    # The name, then only what differs from the defaults, then "smoke".
    assert title == "burst-writefile calls=20 size=256 KiB threads=2 smoke"
    figure_texts = [t.get_text() for t in smoke_figure.texts]
    assert "vm \u00b7 2 cpus \u00b7 Linux 6.18.44 \u00b7 THP madvise" in figure_texts
    assert any("All 6 runs ok." in t for t in figure_texts)


def test_rss_phases_are_named(smoke, smoke_figure):
    lanes = smoke_figure.axes[1]
    smoke_figure.canvas.draw()
    renderer = smoke_figure.canvas.get_renderer()
    labels = gids(lanes.texts, "phase-label:")
    # Each phase is named by the mark that opens it, inside its own segment.
    for allocator in ("glibc", "jemalloc"):
        marks = median_peak_kb(smoke, allocator)[2]["marks"]
        for opening, closing in zip(marks, marks[1:]):
            start, stop = opening["t_ms"] / 1000, closing["t_ms"] / 1000
            inside = [t for t in labels if start < t.get_position()[0] < stop
                      and t.get_gid() == f"phase-label:{opening['name']}"]
            assert inside, (allocator, opening["name"])
            shown = inside[0].get_text()
            assert shown == opening["name"] or (shown.endswith("\u2026") and opening["name"].startswith(shown[:-1]))
            box = inside[0].get_window_extent(renderer)
            left, right = (lanes.transData.transform((x, 0))[0] for x in (start, stop))
            assert left <= box.x0 and box.x1 <= right
    assert {t.get_text() for t in labels} >= {"start", "all-started", "all-done"}
    assert "named by the mark that opens it" in "".join(t.get_text() for t in smoke_figure.texts)


def test_rss_long_title_fits(smoke):
    report = copy.deepcopy(smoke)
    for run in report["runs"]:
        run["params"].update({"files": 480, "min-size": 98304, "max-size": 524288, "keep-every": 12,
                              "settle-ms": 2500.0, "idle-hook": "handoff"})
    fig = rss_figure([report], names=["x.json"])
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    title = fig._suptitle
    assert "idle-hook=handoff" in title.get_text().replace("\n", " ")
    assert title.get_window_extent(renderer).x1 <= fig.get_figwidth() * fig.dpi
    machine = next(t for t in fig.texts if "cpus" in t.get_text())
    assert not title.get_window_extent(renderer).overlaps(machine.get_window_extent(renderer))
    assert machine.get_window_extent(renderer).y0 > fig.axes[0].get_window_extent(renderer).y1


def test_rss_leaves_out_runs_not_ok(smoke):
    report = copy.deepcopy(smoke)
    report["runs"][1]["status"] = "failed"     # jemalloc #1
    report["runs"][4]["status"] = "timeout"    # glibc #3
    fig = rss_figure([report], names=["x.json"])
    top = fig.axes[0]
    assert len(gids(top.lines, "run")) == 4
    footnote = next(t.get_text() for t in fig.texts if "Left out" in t.get_text())
    assert "Left out 2 of 6 runs that were not ok" in footnote
    assert "jemalloc 1 failed" in footnote and "glibc 1 timeout" in footnote


def test_rss_other_metric(smoke):
    fig = rss_figure([smoke], metric="anon_kb", names=["x.json"])
    top = fig.axes[0]
    assert top.get_ylabel() == "anonymous memory (MB)"
    peak_kb, _, _ = median_peak_kb(smoke, "jemalloc", "anon_kb")
    assert max(max(l.get_ydata()) for l in gids(top.lines, "run:median")) == pytest.approx(peak_kb * MB)


def test_rss_two_reports_label_what_differs(smoke):
    other = copy.deepcopy(smoke)
    for run in other["runs"]:
        run["params"]["release-on-pool"] = True
    fig = rss_figure([smoke, other], names=["a.json", "b.json"])
    top = fig.axes[0]
    assert len(gids(top.lines, "run")) == 12
    legend = [t.get_text().replace("\n", " ") for t in top.get_legend().get_texts()]
    assert any("glibc release-on-pool=false" in t for t in legend)
    assert any("glibc release-on-pool=true" in t for t in legend)
    assert "release-on-pool" not in fig._suptitle.get_text()
    medians = gids(top.lines, "run:median")
    # Same allocator: same colour, told apart by the line style.
    assert medians[0].get_color() == medians[2].get_color()
    assert medians[0].get_linestyle() != medians[2].get_linestyle()


def test_rss_axis_follows_the_manifest(smoke):
    # Rename the unit in the report's manifest: the axis and the values follow it.
    report = copy.deepcopy(smoke)
    report["metrics"]["samples.rss_kb"].update(display_unit="GB", display_scale=1024 / 1e9)
    report["metrics"]["after.rss_1s_kb"].update(display_unit="GB", display_scale=1024 / 1e9)
    fig = rss_figure([report], names=["x.json"])
    top = fig.axes[0]
    assert top.get_ylabel() == "RSS (GB)"
    peak_kb, _, _ = median_peak_kb(smoke, "glibc")
    assert max(gids(top.lines, "run:median")[0].get_ydata()) == pytest.approx(peak_kb * 1024 / 1e9)
    # Two reports that show the column differently cannot share the axis.
    with pytest.raises(PlotError) as error:
        rss_figure([smoke, report], names=["a.json", "b.json"])
    assert "MB (a.json)" in str(error.value) and "GB (b.json)" in str(error.value)


def test_rss_bad_manifest_entry_exits_2(tmp_path):
    report = json.loads(SMOKE.read_text())
    report["metrics"]["samples.rss_kb"]["display_scale"] = "big"
    path = write_json(tmp_path / "bad-manifest.json", report)
    result = run(PLOT_RSS, path, "-o", tmp_path / "out.png")
    assert result.returncode == 2
    assert "bad-manifest.json" in result.stderr and "samples.rss_kb" in result.stderr
    assert "display_scale" in result.stderr and "Traceback" not in result.stderr


def test_rss_report_without_manifest(smoke):
    # A report written before the manifest: units by the format's naming rule, said so.
    report = copy.deepcopy(smoke)
    del report["metrics"]
    fig = rss_figure([report], names=["old.json"])
    assert fig.axes[0].get_ylabel() == "RSS (MB)"
    assert any("without a metric manifest" in t.get_text() for t in fig.texts)


def test_rss_align_on_a_mark(smoke, tmp_path):
    fig = rss_figure([smoke], names=["x.json"], align="all-done")
    top, _, lower = fig.axes
    assert lower.get_xlabel() == "time since the mark all-done (s)"
    # Every median run's all-done mark is at t=0, and its curve starts before it.
    done = [line.get_xdata()[0] for line in gids(top.lines, "mark")
            if line.get_color() in {s for s in style.FAMILY_COLOURS["glibc"][:1] + style.FAMILY_COLOURS["jemalloc"][:1]}]
    assert sum(1 for x in done if x == 0) == 2
    assert all(min(line.get_xdata()) < 0 for line in gids(top.lines, "run:median"))
    assert top.get_xlim()[0] < 0
    result = run(PLOT_RSS, SMOKE, "--align", "nope", "-o", tmp_path / "x.png")
    assert result.returncode == 2
    assert "'nope'" in result.stderr and "all-started" in result.stderr and "burst-smoke.json" in result.stderr


def test_rss_shades_the_area_after_the_mark_and_draws_the_1s_reading(smoke):
    report = copy.deepcopy(smoke)
    # Two allocators' areas would overlap into one block: neither is shaded.
    assert not gids(rss_figure([report], names=["x.json"]).axes[0].collections, "after-area")
    one = dict(report, runs=[r for r in report["runs"] if r["allocator"]["name"] == "glibc"])
    top = rss_figure([one], names=["x.json"]).axes[0]
    # One allocator: its median run's area from its --after mark on, shaded.
    areas = gids(top.collections, "after-area")
    assert len(areas) == 1
    glibc_run = median_peak_kb(report, "glibc")[2]
    start = glibc_run["curve_info"]["after"]["t_ms"] / 1000
    xs = areas[0].get_paths()[0].vertices[:, 0]
    assert min(xs) == pytest.approx(start)
    # The smoke runs end before +1 s: no reading, no point.
    assert glibc_run["metrics"]["curve"]["after.rss_1s_kb"]["value"] is None
    assert not gids(top.lines, "after-1s")
    # With a reading, a point at the mark + 1 s at its value.
    for run in report["runs"]:
        run["metrics"]["curve"]["after.rss_1s_kb"] = {"value": 5000.0}
    fig = rss_figure([report], names=["x.json"])
    points = gids(fig.axes[0].lines, "after-1s")
    assert len(points) == 2
    assert (start + 1.0, 5000.0 * MB) in [(p.get_xdata()[0], p.get_ydata()[0]) for p in points]
    assert fig.axes[0].get_xlim()[1] > start + 1.0
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "1 s after it" in legend
    legend = [t.get_text() for t in rss_figure([one], names=["x.json"]).axes[0].get_legend().get_texts()]
    assert "area after all-done" in legend
    # Another column: no area (it is measured on RSS).
    assert not gids(rss_figure([report], metric="file_kb", names=["x.json"]).axes[0].collections, "after-area")


def rename_metric(report, old, new):
    """`report` with the curve metric `old` named `new` in its manifest and runs."""
    report["metrics"] = {new if k == old else k: v for k, v in report["metrics"].items()}
    for one in report["runs"]:
        curve = one["metrics"]["curve"]
        one["metrics"]["curve"] = {new if k == old else k: v for k, v in curve.items()}
    return report


def test_rss_after_metrics_are_those_the_manifest_declares(smoke):
    assert rss.after_metrics(smoke, "rss_kb") == rss.AfterMetrics("after.area_mb_s", "after.rss_1s_kb")
    assert rss.after_metrics(smoke, "anon_kb") == rss.AfterMetrics(None, "after.anon_1s_kb")
    assert rss.after_metrics(smoke, "file_kb") == rss.AfterMetrics()
    # Renamed in the registry: still drawn, and named so in the footnote.
    report = copy.deepcopy(smoke)
    for one in report["runs"]:
        one["metrics"]["curve"]["after.rss_1s_kb"] = {"value": 5000.0}
    rename_metric(report, "after.rss_1s_kb", "after.rss_1000ms_kb")
    rename_metric(report, "after.area_mb_s", "after.rss_area_mb_s")
    report["runs"] = [r for r in report["runs"] if r["allocator"]["name"] == "glibc"]
    fig = rss_figure([report], names=["x.json"])
    assert len(gids(fig.axes[0].lines, "after-1s")) == 1
    assert len(gids(fig.axes[0].collections, "after-area")) == 1
    footnote = "\n".join(t.get_text() for t in fig.texts)
    assert "(after.rss_area_mb_s)" in footnote and "(after.rss_1000ms_kb)" in footnote
    # One the plot cannot tell: an error naming what the manifest declares, not a plot without it.
    rename_metric(report, "after.rss_1000ms_kb", "after.resident_one_second")
    with pytest.raises(ReportError) as error:
        rss_figure([report], names=["x.json"])
    message = str(error.value)
    assert message.startswith("x.json: ") and "reading 1 s after it" in message
    assert "after.resident_one_second" in message and "area" not in message.split("(")[0]


def test_rss_marks_close_together_do_not_stack_up(smoke):
    report = copy.deepcopy(smoke)
    for one in report["runs"]:
        first = one["marks"][0]
        extra = [dict(copy.deepcopy(first), t_ms=first["t_ms"] + 0.1 * k, name=f"step-{k}") for k in range(1, 7)]
        one["marks"] = [first] + extra + one["marks"][1:]
    fig = rss_figure([report], names=["x.json"])
    top = fig.axes[0]
    labels = gids(top.texts, "mark-label")
    boxes = label_boxes(fig, labels)
    rows = {round(b.y1) for b in boxes}
    assert len(labels) >= 8 and len(rows) <= 3, rows      # one row per label before


def test_rss_output_is_deterministic(smoke, tmp_path):
    for suffix in ("png", "svg"):
        first, second = tmp_path / f"a.{suffix}", tmp_path / f"b.{suffix}"
        save_figure(rss_figure([smoke], names=["x.json"]), str(first))
        save_figure(rss_figure([smoke], names=["x.json"]), str(second))
        assert first.read_bytes() == second.read_bytes(), suffix
    svg = (tmp_path / "a.svg").read_text()
    assert "<dc:date>" not in svg and "Matplotlib v" not in svg


def test_allocator_colours_are_fixed_per_family():
    first = style.allocator_colours([("glibc", "glibc"), ("jemalloc", "jemalloc")])
    swapped = style.allocator_colours([("jemalloc", "jemalloc"), ("glibc", "glibc")])
    assert first == swapped
    two = style.allocator_colours([("scav", "scav"), ("scav:purge_delay_ms=5000", "scav")])
    assert two["scav"] != two["scav:purge_delay_ms=5000"]


def test_text_helpers():
    params = {"smoke": False, "calls": 300, "size": 1572864, "release-on-pool": True, "dir": ""}
    assert text.format_params(params) == "calls=300 size=1.5 MiB release-on-pool=true"
    assert text.kernel_short("Linux 6.18.44-fc-v657 #1 SMP PREEMPT_DYNAMIC @0") == "Linux 6.18.44"
    assert text.percent(-0.0125) == "\u22121.2%"
    # Sizes of parameters in binary units, as given (--total 256M).
    assert text.format_params({"total": 268435456, "tolerance": 10485760, "max-block": 65536, "seed": 4096}) == \
        "total=256 MiB tolerance=10 MiB max-block=64 KiB seed=4096"
    # Files of the older formats, which do not say how a unit is shown: as the
    # harness's tables showed it then.
    assert units.legacy_display_unit("KiB") == ("MB", 1024 / 1e6)
    assert units.legacy_display_unit("count") == ("", 1.0)
    assert units.legacy_display_unit("ms") == ("ms", 1.0)


# ---------------------------------------------------------------- plot_compare

def test_compare_fixture_panels_points_and_verdicts():
    data = load_comparison(str(COMPARISON))
    fig = compare_figure(data)
    panels = [ax for ax in fig.axes if (ax.get_gid() or "").startswith("panel:")]
    assert len(panels) == 2 * 5              # 2 workloads x the 5 default metrics
    by_gid = {ax.get_gid(): ax for ax in panels}
    expected = {"peak_rss_kb": ("+4.8%", "regression", 3), "final_rss_kb": ("\u221293.3%", "improvement", 3),
                "minflt": ("+0.5%", "no change", 3), "wall_ms": ("+4.2%", "noisy", 2),
                "cpu_ms": ("\u22121.4%", "no change", 3)}
    for metric, (change, verdict, sides) in expected.items():
        ax = by_gid[f"panel:0:{metric}"]
        assert len(gids(ax.lines, "median:")) == sides
        assert len(gids(ax.lines, "median:baseline")) == 1 and len(gids(ax.lines, "median:candidate")) == 1
        assert [len(l.get_xdata()) for l in gids(ax.lines, "value:")] == [5] * sides
        headline = gids(ax.texts, "verdict")[0]
        assert headline.get_text() == f"{change}  {verdict}"
        assert headline.get_color() == style.VERDICT_COLOURS[verdict]
        assert len(gids(ax.patches, "noise-floor")) == 1
        assert len(gids(ax.lines, "threshold")) == 2
    peak = by_gid["panel:0:peak_rss_kb"]
    baseline = gids(peak.lines, "median:baseline")[0]
    assert baseline.get_ydata()[0] == pytest.approx(262400 * MB)
    assert peak.get_title(loc="left") == "peak_rss_kb (MB)"
    band = gids(peak.patches, "noise-floor")[0].get_xy()[:, 1]   # y in data units
    assert min(band) == pytest.approx(262400 * MB * 0.996) and max(band) == pytest.approx(262400 * MB * 1.004)
    # Second workload: only peak_rss_kb and wall_ms measured.
    assert gids(by_gid["panel:1:peak_rss_kb"].texts, "verdict")[0].get_text() == "\u22122.1%  noisy"
    assert gids(by_gid["panel:1:final_rss_kb"].texts, "missing")
    assert not gids(by_gid["panel:1:final_rss_kb"].lines, "median:")
    footnote = "\n".join(t.get_text() for t in fig.texts)
    assert "warning: hand-written test fixture" in footnote
    assert "scav:purge_delay_ms=5000" in footnote + "".join(t.get_text() for t in fig.texts)


def test_compare_metric_choice():
    data = load_comparison(str(COMPARISON))
    fig = compare_figure(data, metrics=["wall_ms"])
    assert len([ax for ax in fig.axes if (ax.get_gid() or "").startswith("panel:")]) == 2
    with pytest.raises(PlotError) as error:
        compare_figure(data, metrics=["rss_kbb"])
    assert "rss_kbb" in str(error.value) and "peak_rss_kb" in str(error.value)


def test_compare_unbounded_interval_is_drawn():
    # The harness writes a bound that is not finite as null (a baseline median of 0).
    data = json.loads(COMPARISON.read_text())
    data["workloads"][0]["metrics"][0]["ci"] = [0.041, None]
    fig = compare_figure(check_comparison(data, "cmp.json"))
    detail = gids(next(ax for ax in fig.axes if ax.get_gid() == "panel:0:peak_rss_kb").texts, "detail")[0]
    assert "CI +4.1% \u2026 n/a" in detail.get_text()


def test_compare_panel_units_follow_each_entry():
    # Each entry of the comparison JSON says how its metric is shown (display_unit
    # and display_scale, from the registry): the panel shows it so, whatever the
    # metric's name or stored unit says.
    data = json.loads(COMPARISON.read_text())
    entry = data["workloads"][0]["metrics"][0]
    entry.update(display_unit="GB", display_scale=1024 / 1e9)
    fig = compare_figure(check_comparison(data, "cmp.json"), metrics=[entry["metric"]])
    panel = next(ax for ax in fig.axes if ax.get_gid() == f"panel:0:{entry['metric']}")
    assert panel.get_title(loc="left") == f"{entry['metric']} (GB)"
    assert gids(panel.lines, "median:baseline")[0].get_ydata()[0] == pytest.approx(
        entry["baseline"]["median"] * 1024 / 1e9)
    entry.update(display_unit="", display_scale=1)
    fig = compare_figure(check_comparison(data, "cmp.json"), metrics=[entry["metric"]])
    panel = next(ax for ax in fig.axes if ax.get_gid() == f"panel:0:{entry['metric']}")
    assert panel.get_title(loc="left") == entry["metric"]


def test_compare_of_the_older_format_shows_units_as_its_tables_did():
    # A comparison written before the entries carried display_unit and
    # display_scale: the stored unit shown by the rule of that time.
    data = json.loads(COMPARISON.read_text())
    for group in data["workloads"]:
        for e in group["metrics"]:
            del e["display_unit"], e["display_scale"]
    entry = data["workloads"][0]["metrics"][0]
    entry["unit"] = "bytes"
    fig = compare_figure(check_comparison(data, "cmp.json"), metrics=[entry["metric"]])
    panel = next(ax for ax in fig.axes if ax.get_gid() == f"panel:0:{entry['metric']}")
    assert panel.get_title(loc="left") == f"{entry['metric']} (MB)"
    assert gids(panel.lines, "median:baseline")[0].get_ydata()[0] == pytest.approx(entry["baseline"]["median"] * 1e-6)
    entry["unit"] = "ms"
    fig = compare_figure(check_comparison(data, "cmp.json"), metrics=[entry["metric"]])
    panel = next(ax for ax in fig.axes if ax.get_gid() == f"panel:0:{entry['metric']}")
    assert panel.get_title(loc="left") == f"{entry['metric']} (ms)"


def test_compare_bad_display_unit_is_named():
    data = json.loads(COMPARISON.read_text())
    data["workloads"][0]["metrics"][1]["display_scale"] = 0
    with pytest.raises(ReportError) as error:
        check_comparison(data, "cmp.json")
    assert "cmp.json" in str(error.value) and "final_rss_kb" in str(error.value)
    assert "display_scale" in str(error.value)


def test_compare_default_metrics_are_those_with_a_direction():
    data = json.loads(COMPARISON.read_text())
    data["workloads"][0]["metrics"][2]["direction"] = "none"     # minflt: informational
    fig = compare_figure(check_comparison(data, "cmp.json"))
    drawn = {ax.get_gid().split(":", 2)[2] for ax in fig.axes if (ax.get_gid() or "").startswith("panel:")}
    assert drawn == {"peak_rss_kb", "final_rss_kb", "wall_ms", "cpu_ms"}


def test_compare_shows_resolution():
    data = json.loads(COMPARISON.read_text())
    data["workloads"][0]["metrics"][0]["resolution"] = 0.042
    fig = compare_figure(check_comparison(data, "cmp.json"), metrics=["peak_rss_kb"])
    detail = gids(next(ax for ax in fig.axes if ax.get_gid() == "panel:0:peak_rss_kb").texts, "detail")[0]
    assert "resolution 4.2%" in detail.get_text()


def fake_harness(tmp_path, exit_code=1):
    """A harness that records its arguments and writes the fixture comparison to -o."""
    log = tmp_path / "args.txt"
    script = tmp_path / "harness"
    script.write_text(f"""#!/bin/sh
printf '%s\\n' "$@" > {log}
while [ $# -gt 0 ]; do [ "$1" = -o ] && cp {COMPARISON} "$2"; shift; done
exit {exit_code}
""")
    script.chmod(0o755)
    return script, log


def test_two_reports_draw_what_harness_compare_decided(tmp_path):
    script, log = fake_harness(tmp_path)
    data = harness.compare_reports(str(SMOKE), str(SMOKE), allocator="jemalloc",
                                   environ={harness.HARNESS_ENV: str(script), "PATH": ""})
    args = log.read_text().split("\n")
    assert args[:5] == ["compare", str(SMOKE), str(SMOKE), "--allocator", "jemalloc"]
    assert args[5] == "-o"
    # The verdicts are the harness's, not recomputed from the reports.
    assert data == json.loads(COMPARISON.read_text())
    verdicts = {e["metric"]: e["verdict"] for e in data["workloads"][0]["metrics"]}
    assert verdicts["peak_rss_kb"] == "regression"


def test_two_reports_harness_refuses(tmp_path):
    script = tmp_path / "harness"
    script.write_text("#!/bin/sh\necho 'harness compare: a.json holds runs of several allocators' >&2\nexit 2\n")
    script.chmod(0o755)
    with pytest.raises(PlotError) as error:
        harness.compare_reports("a.json", "b.json", environ={harness.HARNESS_ENV: str(script)})
    assert "several allocators" in str(error.value)


def test_finding_the_harness(tmp_path):
    installed = tmp_path / "prefix"
    scripts = installed / "share" / "memharness" / "scripts"
    scripts.mkdir(parents=True)
    (installed / "bin").mkdir()
    binary = installed / "bin" / "harness"
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    assert harness.find_harness({"PATH": ""}, str(scripts)) == str(binary)
    # $MEMHARNESS_HARNESS first; a bad one is an error naming it.
    other, _ = fake_harness(tmp_path)
    assert harness.find_harness({harness.HARNESS_ENV: str(other)}, str(scripts)) == str(other)
    with pytest.raises(PlotError) as error:
        harness.find_harness({harness.HARNESS_ENV: str(tmp_path / "nope")}, str(scripts))
    assert "nope" in str(error.value)
    # The source tree: scripts/../build/bin/harness.
    tree = tmp_path / "tree"
    (tree / "scripts").mkdir(parents=True)
    (tree / "build" / "bin").mkdir(parents=True)
    built = tree / "build" / "bin" / "harness"
    built.write_text("#!/bin/sh\n")
    built.chmod(0o755)
    assert harness.find_harness({"PATH": ""}, str(tree / "scripts")) == str(built)
    # PATH last.
    (tmp_path / "on-path").mkdir()
    on_path = tmp_path / "on-path" / "harness"
    on_path.write_text("#!/bin/sh\n")
    on_path.chmod(0o755)
    assert harness.find_harness({"PATH": str(tmp_path / "on-path")}, str(tmp_path / "nowhere")) == str(on_path)


def test_plot_compare_without_a_harness_says_so_and_exits_2(tmp_path):
    copy_of = tmp_path / "scripts"
    copy_of.mkdir()
    shutil.copy(PLOT_COMPARE, copy_of / "plot_compare.py")
    shutil.copytree(SCRIPTS / "memharness_plot", copy_of / "memharness_plot")
    env = {k: v for k, v in clean_env().items() if k != harness.HARNESS_ENV}
    env["PATH"] = "/nonexistent"
    result = run(copy_of / "plot_compare.py", SMOKE, SMOKE, "--allocator", "jemalloc", "-o", tmp_path / "x.png",
                 env=env)
    assert result.returncode == 2, result.stderr
    assert "no harness was found" in result.stderr and harness.HARNESS_ENV in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "x.png").exists()
    env[harness.HARNESS_ENV] = str(tmp_path / "missing-harness")
    result = run(copy_of / "plot_compare.py", SMOKE, SMOKE, "-o", tmp_path / "x.png", env=env)
    assert result.returncode == 2 and "missing-harness" in result.stderr


def test_plot_compare_writes_png(tmp_path):
    out = tmp_path / "cmp.png"
    result = run(PLOT_COMPARE, COMPARISON, "-o", out)
    assert result.returncode == 0, result.stderr
    expected = compare_figure(load_comparison(str(COMPARISON))).get_size_inches() * style.DPI
    assert png_size(out) == tuple(int(round(v)) for v in expected)
    assert png_size(out)[0] == 1200
    assert_not_blank(out)


def test_plot_compare_two_reports_png(tmp_path):
    out = tmp_path / "cmp.png"
    result = run(PLOT_COMPARE, SMOKE, SMOKE, "--allocator", "jemalloc", "-o", out)
    assert result.returncode == 0, result.stderr
    assert png_size(out)[0] == 1200
    assert_not_blank(out)


def test_plot_compare_passes_over_the_runs_report_beside_a_comparison(tmp_path):
    # `harness compare` writes compare-TIME.json and compare-TIME-runs.json, so
    # results/compare-*.json after one comparison names both (the runs in any order).
    runs = json.loads(SMOKE.read_text())
    for k, one in enumerate(runs["runs"]):
        one["role"] = ("baseline", "candidate", "baseline-again")[k % 3]
    runs_path = write_json(tmp_path / "compare-20261130T100014Z-runs.json", runs)
    out = tmp_path / "cmp.png"
    for order in ((runs_path, COMPARISON), (COMPARISON, runs_path)):
        result = run(PLOT_COMPARE, *order, "-o", out)
        assert result.returncode == 0, result.stderr
        assert result.stderr == (f"plot_compare.py: note: {runs_path} is the runs report of a comparison, "
                                 f"not drawn; drawing {COMPARISON}\n")
        assert png_size(out)[0] == 1200
    second = write_json(tmp_path / "other.json", json.loads(COMPARISON.read_text()))
    result = run(PLOT_COMPARE, COMPARISON, runs_path, second, "-o", tmp_path / "two.png")
    assert result.returncode == 2
    assert "2 comparisons given" in result.stderr and "other.json" in result.stderr and "give one" in result.stderr


# ---------------------------------------------------------------- bad input

def bad_inputs(tmp_path):
    smoke = json.loads(SMOKE.read_text())
    no_samples = copy.deepcopy(smoke)
    for r in no_samples["runs"]:
        del r["samples"]
    no_t = copy.deepcopy(smoke)
    del no_t["runs"][2]["samples"]["t_ms"]
    no_runs = dict(smoke, runs=[])
    two_workloads = copy.deepcopy(smoke)
    for r in two_workloads["runs"][3:]:
        r["workload"] = "idle-return"
    files = {
        "not-json.json": "{ this is not json",
        "list.json": json.dumps([1, 2]),
        "no-schema.json": json.dumps({"runs": []}),
        "other-schema.json": json.dumps({"schema": "something/2", "runs": []}),
        "no-samples.json": json.dumps(no_samples),
        "no-t.json": json.dumps(no_t),
        "no-runs.json": json.dumps(no_runs),
        "two-workloads.json": json.dumps(two_workloads),
    }
    for name, content in files.items():
        (tmp_path / name).write_text(content)
    return tmp_path


RSS_BAD = [
    (["not-json.json"], ["not-json.json", "not JSON"]),
    (["list.json"], ["list.json", "not a memharness file"]),
    (["no-schema.json"], ["no-schema.json", 'no "schema"']),
    (["other-schema.json"], ["other-schema.json", "something/2", "memharness.report/1"]),
    ([str(COMPARISON)], ["comparison.json", "is a comparison"]),
    (["no-samples.json"], ["no-samples.json", "runs[0] (glibc #1) has no samples"]),
    (["no-t.json"], ["no-t.json", "runs[2]", "samples.t_ms"]),
    (["no-runs.json"], ["no-runs.json", "no runs"]),
    (["missing.json"], ["missing.json", "cannot read"]),
    ([str(SMOKE), "--metric", "rss"], ["burst-smoke.json", "'rss'", "rss_kb", "anon_kb", "anon_huge_kb"]),
    ([str(SMOKE), "--workload", "nope"], ["burst-smoke.json", "nope", "burst-writefile"]),
    (["two-workloads.json"], ["two-workloads.json", "--workload", "burst-writefile", "idle-return"]),
]


RSS_BAD_IDS = ["not-json", "top-level-list", "no-schema", "other-schema", "comparison", "no-samples",
               "no-t_ms", "no-runs", "missing-file", "wrong-metric", "wrong-workload", "ambiguous-workload"]


@pytest.mark.parametrize("args,expected", RSS_BAD, ids=RSS_BAD_IDS)
def test_plot_rss_bad_input_exits_2(tmp_path, args, expected):
    bad_inputs(tmp_path)
    result = run(PLOT_RSS, *[tmp_path / a if a.endswith(".json") and "/" not in a else a for a in args],
                 "-o", tmp_path / "out.png")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("plot_rss.py: error: ")
    for fragment in expected:
        assert fragment in result.stderr
    assert not (tmp_path / "out.png").exists()


def test_plot_rss_picks_workload(tmp_path):
    bad_inputs(tmp_path)
    result = run(PLOT_RSS, tmp_path / "two-workloads.json", "--workload", "idle-return", "-o", tmp_path / "w.svg")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "w.svg").read_text().lstrip().startswith("<?xml")


COMPARE_BAD = [
    ([str(SMOKE)], ["burst-smoke.json", "is a report", "two reports"]),
    (["not-json.json"], ["not-json.json", "not JSON"]),
    ([str(SMOKE), "no-schema.json"], ["no-schema.json", 'no "schema"']),
    ([str(SMOKE), str(COMPARISON)], ["comparison.json", "both must be reports"]),
    ([str(COMPARISON), "--metric", "peak_rss"], ["peak_rss", "available", "peak_rss_kb"]),
    ([str(SMOKE), str(SMOKE), str(SMOKE)], ["one comparison or two reports"]),
]


@pytest.mark.parametrize("args,expected", COMPARE_BAD, ids=["one-report", "not-json", "no-schema",
                                                           "report-and-comparison", "wrong-metric",
                                                           "three-files"])
def test_plot_compare_bad_input_exits_2(tmp_path, args, expected):
    bad_inputs(tmp_path)
    result = run(PLOT_COMPARE, *[tmp_path / a if a.endswith(".json") and "/" not in a else a for a in args],
                 "-o", tmp_path / "out.png")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    for fragment in expected:
        assert fragment in result.stderr


def test_output_suffix_checked(tmp_path):
    result = run(PLOT_RSS, SMOKE, "-o", tmp_path / "out.jpg")
    assert result.returncode == 2
    assert ".png or .svg" in result.stderr


# ---------------------------------------------------------------- interpreter bootstrap

def lacks_matplotlib(command):
    probe = subprocess.run(command + ["-c", "import matplotlib"], capture_output=True, timeout=60)
    return probe.returncode != 0


def test_candidates_list():
    env = {bootstrap.CANDIDATES_ENV: os.pathsep.join(["/a/python3", "/b/python3", "/a/python3"])}
    assert bootstrap.candidates(env, "/b/python3") == ["/a/python3"]
    assert bootstrap.candidates({bootstrap.CANDIDATES_ENV: ""}, "/x") == []
    default = bootstrap.candidates({"PATH": os.pathsep.join(["/opt/py/bin", "/usr/bin"])}, "/opt/py/bin/python3")
    assert default == ["/usr/bin/python3", "/usr/local/bin/python3"]


def test_bootstrap_reexecs_from_path_python3():
    python3 = shutil.which("python3")
    if python3 is None or not lacks_matplotlib([python3]):
        pytest.skip("the python3 on PATH has matplotlib (or there is none): nothing to re-exec from")
    result = run(PLOT_RSS, "--help", executable=[python3])
    assert result.returncode == 0, result.stderr
    assert "usage: plot_rss.py" in result.stdout


def test_bootstrap_reexecs_into_listed_candidate(tmp_path):
    no_site = [sys.executable, "-S"]        # Debian's matplotlib lives in site dist-packages
    if not lacks_matplotlib(no_site):
        pytest.skip("matplotlib importable without site packages")
    candidate = tmp_path / "python3"
    candidate.symlink_to(sys.executable)
    env = clean_env(**{bootstrap.CANDIDATES_ENV: str(candidate)})
    result = run(PLOT_COMPARE, "--help", executable=no_site, env=env)
    assert result.returncode == 0, result.stderr
    assert "usage: plot_compare.py" in result.stdout


def test_bootstrap_without_matplotlib_anywhere_prints_install_hint(tmp_path):
    no_site = [sys.executable, "-S"]
    if not lacks_matplotlib(no_site):
        pytest.skip("matplotlib importable without site packages")
    fake = tmp_path / "python3"             # an interpreter that runs but has no matplotlib
    fake.write_text("#!/bin/sh\nexit 1\n")
    fake.chmod(0o755)
    env = clean_env(**{bootstrap.CANDIDATES_ENV: str(fake)})
    result = run(PLOT_RSS, SMOKE, "-o", tmp_path / "x.png", executable=no_site, env=env)
    assert result.returncode == 2
    assert "apt-get install python3-matplotlib" in result.stderr
    assert str(fake) in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "x.png").exists()
