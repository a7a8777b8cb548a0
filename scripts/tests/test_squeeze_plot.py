"""plot_squeeze.py (harness plot squeeze): a squeeze's limits drawn, the bad input named."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "plot_squeeze.py"
SQUEEZE = ROOT / "results" / "reference" / "squeeze" / "burst-writefile.json"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=120)


def test_the_reference_squeeze_is_drawn(tmp_path):
    out = tmp_path / "squeeze.png"
    r = run(SQUEEZE, "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 10000


def test_one_line_per_allocator_and_the_limit_found_marked():
    sys.path.insert(0, str(ROOT / "scripts"))
    import matplotlib
    matplotlib.use("Agg")
    from memharness_plot.report import check_squeeze
    from memharness_plot.squeeze import squeeze_figure
    data = json.loads(SQUEEZE.read_text())
    fig = squeeze_figure(check_squeeze(data, "s.json"))
    fom, stall = fig.axes[0], fig.axes[1]
    labels = [t.get_text() for t in fom.get_legend().get_texts()]
    threshold = [label for label in labels if label.startswith("threshold: ")]
    never = [label for label in labels if label.startswith("never reached")]
    band = [label for label in labels if label.startswith("on the threshold")]
    assert len(labels) == len(data["results"]) + 1 + len(never) + len(band) and len(threshold) == 1
    assert len(never) == any(p.get("never_reached") for e in data["results"] for p in e["probes"])
    assert len(band) == any(p.get("on_threshold") for e in data["results"] for p in e["probes"])
    # The threshold (the least change a probe was allowed) is a dashed line across the left panel, in percent.
    edge = 100 * min(p["figures"]["fom_allowed"] for e in data["results"] for p in e["probes"]
                     if p["figures"].get("fom_allowed") is not None)
    assert threshold[0] == f"threshold: {edge:+.0f}%"
    assert any(line.get_linestyle() == "--" and list(line.get_ydata()) == [edge, edge] for line in fom.lines)
    for entry in data["results"]:
        assert any(label.startswith(entry["allocator"] + ":") for label in labels)
        if "limit_bytes" in entry:
            # The limit found is a dotted vertical line at it, in MB, on both panels.
            x = entry["limit_bytes"] / 1e6
            for ax in (fom, stall):
                assert any(line.get_linestyle() == ":" and abs(line.get_xdata()[0] - x) < 1e-9 for line in ax.lines)
            # Its star sits at the change the search measured there, in percent.
            found = next(p for p in entry["probes"] if p["limit_bytes"] == entry["limit_bytes"])
            key = "fom_change_within_rounds" if "within rounds" in fom.get_ylabel() else "fom_change"
            stars = [line for line in fom.lines if line.get_marker() == "*" and list(line.get_xdata()) == [x]]
            assert any(abs(line.get_ydata()[0] - 100 * found["figures"][key]) < 1e-9 for line in stars)
    assert fom.get_xlabel() == "memory limit (MB)" and "ms" in stall.get_ylabel()


def test_bad_input_exits_2_naming_the_file(tmp_path):
    other = ROOT / "results" / "reference" / "sweeps" / "server-echo-sweep.json"
    r = run(other, "-o", tmp_path / "x.png")
    assert r.returncode == 2 and "is not a squeeze" in r.stderr and str(other) in r.stderr
    data = json.loads(SQUEEZE.read_text())
    del data["results"][0]["probes"][0]["limit_bytes"]
    bad = tmp_path / "bad-squeeze.json"
    bad.write_text(json.dumps(data))
    r = run(bad, "-o", tmp_path / "x.png")
    assert r.returncode == 2 and "bad-squeeze.json" in r.stderr and "limit_bytes" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_change_within_rounds_is_drawn_with_its_interval():
    sys.path.insert(0, str(ROOT / "scripts"))
    import matplotlib
    matplotlib.use("Agg")
    from memharness_plot.report import check_squeeze
    from memharness_plot.squeeze import squeeze_figure
    data = json.loads(SQUEEZE.read_text())
    probe = next(p for e in data["results"] for p in e["probes"] if p["figures"].get("fom_change") is not None)
    change = probe["figures"]["fom_change"]
    probe["figures"].update(fom_change_within_rounds=change, fom_change_interval=[change - 0.05, change + 0.05])
    fom = squeeze_figure(check_squeeze(data, "s.json")).axes[0]
    assert "within rounds" in fom.get_ylabel()
    # Its interval is drawn about its change: an error bar from change-5% to change+5%.
    assert any(abs(seg[0][1] - 100 * (change - 0.05)) < 1e-9 and abs(seg[1][1] - 100 * (change + 0.05)) < 1e-9
               for c in fom.collections for seg in c.get_segments())
    # A limit no run reached is a square: kept, whatever its figure says.
    probe["never_reached"] = True
    fom = squeeze_figure(check_squeeze(data, "s.json")).axes[0]
    assert "never reached (no limit event): kept" in [t.get_text() for t in fom.get_legend().get_texts()]
    x = probe["limit_bytes"] / 1e6
    assert any(line.get_marker() == "s" and list(line.get_xdata()) == [x] for line in fom.lines)
    # One whose interval stayed on both sides of the threshold is a hollow diamond, named in the legend.
    probe["never_reached"] = False
    probe.update(keeps=False, on_threshold=True)
    fom = squeeze_figure(check_squeeze(data, "s.json")).axes[0]
    assert any(t.get_text().startswith("on the threshold") for t in fom.get_legend().get_texts())
    diamonds = [line for line in fom.lines if line.get_marker() == "D" and list(line.get_xdata()) == [x]]
    assert diamonds and diamonds[0].get_markerfacecolor() == "white"
