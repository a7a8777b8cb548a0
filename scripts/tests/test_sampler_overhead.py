"""Tests of sampler_overhead.py: the run order, the paired statistics and their
bootstrap interval, and the driver against a stand-in harness that writes
reports with known wall times.
Run: /usr/bin/python3 -m pytest scripts/tests -q
"""
import json
import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(SCRIPTS))

import sampler_overhead as so  # noqa: E402

ARM_NAMES = [name for name, _ in so.ARMS]


def fake_run(wall_ms, burst_ms=None, cpu_ms=100.0, samples=50, cost_us=10.0):
    workload = {} if burst_ms is None else {"burst_ms": {"value": burst_ms}}
    return {"wall_ms": wall_ms, "status": "ok",
            "metrics": {"utime_ms": cpu_ms / 2, "stime_ms": cpu_ms / 2, "workload": workload},
            "sampler": {"cost_us_median": cost_us, "samples": samples}}


def test_schedule_shuffles_each_round_and_repeats_with_the_seed():
    order = so.schedule(30, seed=5)
    assert len(order) == 30
    for names in order:
        assert sorted(names) == sorted(ARM_NAMES)
    assert len({tuple(names) for names in order}) > 1
    assert order == so.schedule(30, seed=5)
    assert order != so.schedule(30, seed=6)


def test_paired_changes_skip_rounds_without_both_values():
    changes = so.paired_changes([110, None, 99, 50], [100, 100, None, 50])
    assert changes == pytest.approx([0.10, 0.0])


def test_bootstrap_interval_of_constant_values_is_that_value():
    assert so.bootstrap_median_ci([0.02] * 10, seed=1) == (0.02, 0.02)


def test_bootstrap_interval_brackets_the_median_and_narrows_with_more_rounds():
    import random
    rng = random.Random(3)
    few = [rng.gauss(0.01, 0.02) for _ in range(10)]
    many = [rng.gauss(0.01, 0.02) for _ in range(400)]
    lo_few, hi_few = so.bootstrap_median_ci(few, seed=1)
    lo_many, hi_many = so.bootstrap_median_ci(many, seed=1)
    assert lo_few <= so.statistics.median(few) <= hi_few
    assert lo_many <= so.statistics.median(many) <= hi_many
    assert hi_many - lo_many < hi_few - lo_few
    assert lo_many < 0.01 < hi_many


def test_bootstrap_needs_two_values():
    with pytest.raises(ValueError, match="at least 2"):
        so.bootstrap_median_ci([1.0], seed=1)


def test_analyse_measures_a_known_cost_and_a_null_control():
    rounds = []
    for i in range(12):
        base = 500.0 + 10 * i
        rounds.append({so.TESTED: fake_run(base * 1.02, burst_ms=base * 0.9 * 1.02),
                       so.BASE: fake_run(base, burst_ms=base * 0.9),
                       so.CONTROL: fake_run(base, burst_ms=base * 0.9)})
    rounds.append({so.TESTED: fake_run(9999.0), so.BASE: None, so.CONTROL: fake_run(1.0)})
    out = so.analyse(rounds, seed=1)
    assert out["rounds"] == 13 and out["complete_rounds"] == 12
    wall = out["figures"]["wall_ms"]
    assert wall["cost"]["paired_median_pct"] == pytest.approx(2.0)
    assert wall["cost"]["ci95_pct"] == pytest.approx([2.0, 2.0])
    assert wall["control"]["paired_median_pct"] == pytest.approx(0.0)
    assert out["figures"]["burst_ms"]["cost"]["paired_median_pct"] == pytest.approx(2.0)
    assert out["figures"]["cpu_ms"]["cost"]["paired_median_pct"] == pytest.approx(0.0)
    text = so.render(out, limit=1.0)
    assert "+2.00% paired median" in text
    assert "wall-time cost under 1%: not shown" in text
    assert "wall-time cost under 3%: yes" in so.render(out, limit=3.0)


def test_analyse_leaves_out_a_figure_the_workload_does_not_report():
    rounds = [{name: fake_run(500.0 + i) for name in ARM_NAMES} for i in range(5)]
    out = so.analyse(rounds, seed=1)
    assert "burst_ms" not in out["figures"]
    assert out["figures"]["wall_ms"]["cost"]["paired_median_pct"] == pytest.approx(0.0)
    # 50 samples of 10 us in a 500-504 ms run.
    assert out["harness_read_pct"]["median"] == pytest.approx(0.1, rel=0.01)


FAKE_HARNESS = textwrap.dedent("""\
    #!{python}
    # Stand-in for build/bin/harness: writes a one-run report whose wall time is
    # 1000 ms, plus 3% when sampled every 10 ms; the 5th call crashes.
    import json, os, sys
    args = sys.argv[1:]
    if "--workload" in args and args[args.index("--workload") + 1] == "nope":
        sys.stderr.write("unknown workload 'nope'; valid: burst-writefile\\n")
        sys.exit(2)
    count_file = os.environ["FAKE_COUNT"]
    n = int(open(count_file).read()) if os.path.exists(count_file) else 0
    open(count_file, "w").write(str(n + 1))
    ms = int(args[args.index("--sample-ms") + 1])
    wall = 1000.0 * (1.03 if ms == 10 else 1.0)
    run = {{"wall_ms": wall, "status": "crashed" if n == 4 else "ok",
           "exit": {{"error": "killed by signal Segmentation fault"}},
           "metrics": {{"utime_ms": 10, "stime_ms": 10, "workload": {{}}}},
           "sampler": {{"cost_us_median": 5, "samples": 100}}}}
    json.dump({{"runs": [run]}}, open(args[args.index("--out") + 1], "w"))
    """)


@pytest.fixture
def fake_harness(tmp_path, monkeypatch):
    path = tmp_path / "harness"
    path.write_text(FAKE_HARNESS.format(python=sys.executable))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("FAKE_COUNT", str(tmp_path / "count"))
    return path


def test_driver_runs_every_arm_and_drops_a_round_with_a_crashed_run(fake_harness, tmp_path, capsys):
    summary_file = tmp_path / "summary.json"
    keep = tmp_path / "runs"
    rc = so.main(["--rounds", "4", "--seed", "9", "--harness", str(fake_harness),
                  "--keep", str(keep), "--json", str(summary_file)])
    assert rc == 0
    captured = capsys.readouterr()
    assert "ended crashed: killed by signal Segmentation fault" in captured.err
    assert "4 rounds (3 complete)" in captured.out
    assert "sampling at 10 ms +3.00% paired median" in captured.out
    assert "wall-time cost under 1%: not shown" in captured.out
    assert len(os.listdir(keep)) == 12
    summary = json.loads(summary_file.read_text())
    assert summary["seed"] == 9
    assert summary["figures"]["wall_ms"]["control"]["paired_median_pct"] == pytest.approx(0.0)


def test_driver_passes_on_the_harness_usage_error(fake_harness, capsys):
    with pytest.raises(SystemExit) as e:
        so.main(["--rounds", "2", "--harness", str(fake_harness), "--", "--workload", "nope"])
    assert e.value.code == 2
    assert "unknown workload 'nope'" in capsys.readouterr().err


def test_driver_rejects_too_few_rounds(capsys):
    with pytest.raises(SystemExit) as e:
        so.main(["--rounds", "1"])
    assert e.value.code == 2
    assert "--rounds must be at least 2, got 1" in capsys.readouterr().err


def test_analyse_pools_kept_folders_without_running_anything(fake_harness, tmp_path, capsys):
    first, second = tmp_path / "first", tmp_path / "second"
    assert so.main(["--rounds", "3", "--seed", "1", "--harness", str(fake_harness), "--keep", str(first)]) == 0
    assert so.main(["--rounds", "3", "--seed", "2", "--harness", str(fake_harness), "--keep", str(second)]) == 0
    (second / "notes.txt").write_text("not a run")
    capsys.readouterr()
    calls_before = int(open(os.environ["FAKE_COUNT"]).read())
    summary_file = tmp_path / "pooled.json"
    assert so.main(["--analyse", str(first), str(second), "--seed", "3", "--json", str(summary_file)]) == 0
    out = capsys.readouterr().out
    assert int(open(os.environ["FAKE_COUNT"]).read()) == calls_before  # nothing ran
    # The 5th run of the first folder crashed: 6 rounds, 5 complete.
    assert "6 rounds (5 complete) pooled from" in out
    assert "sampling at 10 ms +3.00% paired median" in out
    summary = json.loads(summary_file.read_text())
    assert summary["pooled_from"] == [str(first), str(second)]
    assert "command" not in summary


def test_analyse_names_a_missing_folder(capsys):
    with pytest.raises(SystemExit) as e:
        so.main(["--analyse", "/nonexistent/runs"])
    assert e.value.code == 2
    assert "'/nonexistent/runs' is not a folder" in capsys.readouterr().err
