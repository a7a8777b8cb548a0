"""A fresh run's report keeps its shape: the same key paths with the same types, the
same metric names and the same metric manifest as recorded in fixtures/golden/.

Values differ from run to run; the shape does not. Array elements are folded into one
`[]` step, and a value that is null in one run and a number in another is the same
shape (any figure may be unmeasured: null with its reason, a `maybe` here). To record the shape again
after a deliberate change:
    /usr/bin/python3 scripts/tests/test_report_shape.py --regen
"""
import json
import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "scripts" / "tests" / "fixtures" / "golden" / "report-shape.json"

# Each case: a name and the harness's arguments (the report path is appended). A
# workload with marks and phases, and a program run without either.
CASES = {
    "workload": ["--workload", "burst-writefile", "--smoke", "-a", "glibc", "--runs", "1", "--quiet"],
    "program": ["-a", "glibc", "--runs", "1", "--quiet", "--", "/bin/sleep", "0.2"],
}


def harness():
    return os.environ.get("MEMHARNESS_SHAPE_HARNESS", str(ROOT / "build" / "bin" / "harness"))


def json_type(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def is_maybe(value):
    """A figure that may be unmeasured: {"value": x} or {"value": null, "reason": why},
    with "above": T when the figure is more than T (censored)."""
    return (isinstance(value, dict) and "value" in value and set(value) <= {"value", "reason", "above"}
            and (value["value"] is None or json_type(value["value"]) == "number"))


def shape(value, path="", into=None):
    """{key path: sorted list of the types found there}."""
    into = {} if into is None else into
    if is_maybe(value):
        into.setdefault(path, set()).add("maybe")
        return into
    into.setdefault(path or ".", set()).add(json_type(value))
    if isinstance(value, dict):
        for key, child in value.items():
            if key.endswith("_reason"):
                continue  # beside a null figure only, like a maybe's reason
            # The summary has a row per metric the runs measured: its names
            # are the runs' metric names, checked on their own.
            step = "*" if path.startswith(".summary[].metrics") and path.count(".") == 2 else key
            shape(child, f"{path}.{step}", into)
    elif isinstance(value, list):
        for child in value:
            shape(child, f"{path}[]", into)
    return into


def report_shape(report):
    paths = shape(report)
    metric_names = sorted({name for run in report["runs"] for name in flatten_metrics(run["metrics"])})
    return {
        "paths": {p: sorted(t) for p, t in sorted(paths.items())},
        "metric_names": metric_names,
        "manifest": report["metrics"],
    }


def flatten_metrics(metrics, prefix=""):
    """The metric names of a run as the registry spells them (curve.x, workload.y)."""
    for key, value in metrics.items():
        if isinstance(value, dict) and "value" not in value and not key.endswith("_reason"):
            yield from flatten_metrics(value, f"{prefix}{key}.")
        elif not key.endswith("_reason"):
            yield prefix + key


def run_case(name, tmp_dir):
    out = pathlib.Path(tmp_dir) / f"{name}.json"
    args = CASES[name]
    split = args.index("--") if "--" in args else len(args)
    proc = subprocess.run([harness(), *args[:split], "--out", str(out), *args[split:]],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    return report_shape(json.loads(out.read_text()))


def same_types(found, recorded):
    """Types agree, null standing for any type (an unmeasured figure)."""
    return set(found) - {"null"} <= set(recorded) or set(recorded) == {"null"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_fresh_report_keeps_its_shape(name, tmp_path):
    recorded = json.loads(GOLDEN.read_text())[name]
    found = run_case(name, tmp_path)
    assert found["metric_names"] == recorded["metric_names"]
    assert found["manifest"] == recorded["manifest"]
    assert sorted(found["paths"]) == sorted(recorded["paths"])
    changed = {p: (t, recorded["paths"][p]) for p, t in found["paths"].items()
               if not same_types(t, recorded["paths"][p])}
    assert not changed, changed


def test_the_shape_sees_a_renamed_key_and_a_changed_type():
    def report(metrics, wall_ms=1.5):
        return {"runs": [{"metrics": metrics, "wall_ms": wall_ms, "status": "ok"}], "metrics": {}}
    base = report_shape(report({"peak_rss_kb": {"value": 1}}))
    renamed = report_shape(report({"peak_rss": {"value": 1}}))
    assert renamed["metric_names"] != base["metric_names"]
    assert sorted(renamed["paths"]) != sorted(base["paths"])
    retyped = report_shape(report({"peak_rss_kb": {"value": "1"}}))
    path = ".runs[].metrics.peak_rss_kb"
    assert not same_types(retyped["paths"][path], base["paths"][path])
    unmeasured = report_shape(report({"peak_rss_kb": {"value": None, "reason": "no sample"}}, wall_ms=None))
    assert sorted(unmeasured["paths"]) == sorted(base["paths"])
    assert all(same_types(unmeasured["paths"][p], base["paths"][p]) for p in base["paths"])
    assert not same_types(report_shape(report({}, wall_ms="1.5"))["paths"][".runs[].wall_ms"],
                          base["paths"][".runs[].wall_ms"])


if __name__ == "__main__" and sys.argv[1:] == ["--regen"]:
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        GOLDEN.write_text(json.dumps({name: run_case(name, tmp) for name in sorted(CASES)}, indent=1) + "\n")
    print(f"wrote {GOLDEN}")
