"""harness merge refuses what it cannot join fairly: a shard missing or given twice
(named), and a comparison whose runs of one workload come from two machines (named,
with --allow-mixed-machines to join them knowingly). The shards are cut from the
reference comparison's runs report, each with the plan's shard and a machine."""
import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "build" / "bin" / "harness"
RUNS = ROOT / "results" / "reference" / "compare-pins" / "runs.json"


def shard(tmp_path, name, runs, index, count, machine="m1"):
    report = json.loads(RUNS.read_text())
    report["runs"] = runs
    report["context"]["plan"]["shard"] = f"{index}/{count}"
    report["context"]["machine_id"] = machine
    report["context"]["boot_id"] = "boot-" + machine
    path = tmp_path / name
    path.write_text(json.dumps(report))
    return str(path)


def merge(tmp_path, *paths, extra=()):
    return subprocess.run([str(HARNESS), "merge", *paths, "-o", str(tmp_path / "all.json"), *extra],
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def rounds():
    runs = json.loads(RUNS.read_text())["runs"]
    # Two shards of the comparison by round: rounds 1-2 and 3-5 (every workload in both).
    return [r for r in runs if r["repetition"] <= 2], [r for r in runs if r["repetition"] > 2]


def test_a_comparison_from_two_machines_is_refused(tmp_path, rounds):
    first, second = rounds
    a = shard(tmp_path, "a.json", first, 1, 2, machine="m1")
    b = shard(tmp_path, "b.json", second, 2, 2, machine="m2")
    result = merge(tmp_path, a, b)
    assert result.returncode == 2, result.stderr
    assert "two machines" in result.stderr and "machine-id m1" in result.stderr and "machine-id m2" in result.stderr
    assert "a.json" in result.stderr and "b.json" in result.stderr
    assert not (tmp_path / "all.json").exists()
    # Knowingly: joined.
    result = merge(tmp_path, a, b, extra=["--allow-mixed-machines"])
    assert result.returncode == 0, result.stderr
    # The same machine: joined without asking, every run kept.
    result = merge(tmp_path, a, shard(tmp_path, "c.json", second, 2, 2, machine="m1"))
    assert result.returncode == 0, result.stderr
    assert len(json.loads((tmp_path / "all.json").read_text())["runs"]) == len(first) + len(second)


def test_a_missing_or_repeated_shard_is_refused(tmp_path, rounds):
    first, second = rounds
    a = shard(tmp_path, "a.json", first, 1, 3)
    b = shard(tmp_path, "b.json", second, 2, 3)
    result = merge(tmp_path, a, b)
    assert result.returncode == 2
    assert "shard 3/3 is missing" in result.stderr, result.stderr
    c = shard(tmp_path, "c.json", [], 2, 3)
    result = merge(tmp_path, a, b, c)
    assert result.returncode == 2
    assert "shard 2/3 is given twice" in result.stderr and "b.json" in result.stderr and "c.json" in result.stderr
    # Every shard there: joined.
    assert merge(tmp_path, a, b, shard(tmp_path, "d.json", [], 3, 3)).returncode == 0
