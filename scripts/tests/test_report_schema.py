"""Reports written by the harness validate against results/report.schema.json."""
import gzip
import json
import pathlib
import subprocess

import jsonschema
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
HARNESS = ROOT / "build" / "bin" / "harness"
REFERENCE = ROOT / "results" / "reference"
SCHEMA = json.loads((ROOT / "results" / "report.schema.json").read_text())


@pytest.fixture(scope="module")
def smoke_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("reports") / "smoke.json"
    proc = subprocess.run(
        [str(HARNESS), "--workload", "burst-writefile", "--smoke", "-a", "glibc", "-a", "jemalloc",
         "--runs", "1", "--quiet", "--out", str(out)],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def test_real_report_is_valid(smoke_report):
    jsonschema.validate(smoke_report, SCHEMA)
    assert [r["allocator"]["name"] for r in smoke_report["runs"]] == ["glibc", "jemalloc"]


def test_schema_rejects_a_zero_for_an_unmeasured_counter(smoke_report):
    broken = json.loads(json.dumps(smoke_report))
    broken["runs"][0]["metrics"]["perf"]["cycles"] = {"value": None}  # null without its reason
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCHEMA)


def test_schema_rejects_an_unknown_status(smoke_report):
    broken = json.loads(json.dumps(smoke_report))
    broken["runs"][0]["status"] = "fine"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, SCHEMA)


@pytest.mark.parametrize("path", sorted([*REFERENCE.glob("*.json"), *REFERENCE.glob("*.json.gz")]),
                         ids=lambda p: p.name)
def test_committed_reports_are_valid(path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        data = json.load(f)
    assert data.get("schema") in ("memharness.report/1", "memharness.comparison/1"), path
    if data["schema"] == "memharness.report/1":
        jsonschema.validate(data, SCHEMA)
        assert all(r["status"] == "ok" for r in data["runs"]), path
