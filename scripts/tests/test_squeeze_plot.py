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
    assert len(labels) == len(data["results"])
    for entry in data["results"]:
        assert any(label.startswith(entry["allocator"] + ":") for label in labels)
        if "limit_bytes" in entry:
            # The limit found is a dotted vertical line at it, in MB, on both panels.
            x = entry["limit_bytes"] / 1e6
            for ax in (fom, stall):
                assert any(line.get_linestyle() == ":" and abs(line.get_xdata()[0] - x) < 1e-9 for line in ax.lines)
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
