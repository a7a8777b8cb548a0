"""plot_sweep.py: a sweep's points drawn, the bad input named."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "plot_sweep.py"
SWEEP = ROOT / "results" / "reference" / "sweeps" / "server-echo-sweep.json"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=120)


def test_the_reference_sweep_is_drawn(tmp_path):
    out = tmp_path / "sweep.png"
    r = run(SWEEP, "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.stat().st_size > 10000


def test_the_front_is_what_the_sweep_marks():
    data = json.loads(SWEEP.read_text())
    points = data["workloads"][0]["points"]
    front = [p for p in points if p["pareto"]]
    assert front and len(front) < len(points)
    # No point of the front is beaten on both metrics (lower is better for both here).
    for p in front:
        assert not any(q["x"]["median"] <= p["x"]["median"] and q["y"]["median"] <= p["y"]["median"] and
                       (q["x"]["median"] < p["x"]["median"] or q["y"]["median"] < p["y"]["median"])
                       for q in points)


def test_bad_input_exits_2_naming_the_file(tmp_path):
    report = ROOT / "results" / "reference" / "sweeps" / "server-echo.json"
    r = run(report, "-o", tmp_path / "x.png")
    assert r.returncode == 2 and "is not a sweep" in r.stderr and str(report) in r.stderr
    r = run(SWEEP, "-o", tmp_path / "x.pdf")
    assert r.returncode == 2 and "x.pdf" in r.stderr


def test_axes_are_in_the_units_the_sweep_declares():
    sys.path.insert(0, str(ROOT / "scripts"))
    import matplotlib
    matplotlib.use("Agg")
    from memharness_plot.report import check_sweep
    from memharness_plot.sweep import sweep_figure
    data = json.loads(SWEEP.read_text())
    data["x"].update(display_unit="GB*s", display_scale=1e-3)
    ax = sweep_figure(check_sweep(data, "s.json")).axes[0]
    assert ax.get_xlabel() == f"{data['x']['metric']} (GB*s)"
    assert ax.get_ylabel() == data["y"]["metric"]          # a plain count: no unit
    first = data["workloads"][0]["points"][0]
    assert any(abs(t.xy[0] - first["x"]["median"] * 1e-3) < 1e-12 for t in ax.texts)


def test_a_bad_axis_declaration_exits_2_naming_the_file(tmp_path):
    data = json.loads(SWEEP.read_text())
    del data["y"]["display_scale"]
    path = tmp_path / "bad-sweep.json"
    path.write_text(json.dumps(data))
    r = run(path, "-o", tmp_path / "x.png")
    assert r.returncode == 2 and "bad-sweep.json" in r.stderr and "display_scale" in r.stderr
    assert "Traceback" not in r.stderr
    data = json.loads(SWEEP.read_text())
    for w in data["workloads"]:
        w["points"] = []
    path.write_text(json.dumps(data))
    r = run(path, "-o", tmp_path / "x.png")
    assert r.returncode == 2 and "no point with both metrics" in r.stderr
