"""Tests of sampler_overhead.py: the run order, the runs report each comparison
reads (every arm in its role), the summary read from the harness's comparisons,
and the driver against a stand-in harness that writes reports with known wall
times and hands `compare` to the real build/bin/harness, whose statistics these are.
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
HARNESS = SCRIPTS.parent / "build" / "bin" / "harness"
sys.path.insert(0, str(SCRIPTS))

import sampler_overhead as so  # noqa: E402

ARM_NAMES = [name for name, _ in so.ARMS]


def fake_report(wall_ms, burst_ms=None, cpu_ms=100.0, samples=50, cost_us=10.0, status="ok"):
    """A one-run report as `harness --runs 1 --out` writes it, with the fields
    `harness compare` and this script read."""
    workload = {} if burst_ms is None else {"burst_ms": {"value": burst_ms}}
    run = {"workload": "burst-writefile", "params": {"smoke": True}, "allocator": {"name": "glibc"},
           "repetition": 1, "status": status, "exit": {"error": "" if status == "ok" else "killed"},
           "wall_ms": wall_ms,
           "metrics": {"utime_ms": cpu_ms / 2, "stime_ms": cpu_ms / 2, "workload": workload},
           "sampler": {"cost_us_median": cost_us, "samples": samples}}
    return {"schema": "memharness.report/1", "context": {"host": "test"},
            "metrics": {"workload.burst_ms": {"unit": "ms", "display_unit": "ms", "display_scale": 1.0,
                                              "better": "lower", "scope": "run"}},
            "runs": [run]}


def write_rounds(folder, rounds):
    """Kept arm reports, as --keep leaves them: [{arm name: report}]."""
    folder.mkdir(parents=True, exist_ok=True)
    for i, got in enumerate(rounds):
        for name, report in got.items():
            (folder / so.arm_file(i, name)).write_text(json.dumps(report))
    return folder


def test_schedule_shuffles_each_round_and_repeats_with_the_seed():
    order = so.schedule(30, seed=5)
    assert len(order) == 30
    for names in order:
        assert sorted(names) == sorted(ARM_NAMES)
    assert len({tuple(names) for names in order}) > 1
    assert order == so.schedule(30, seed=5)
    assert order != so.schedule(30, seed=6)


def test_runs_report_puts_each_arm_in_its_role_and_leaves_out_incomplete_rounds():
    rounds = [{so.TESTED: fake_report(510.0 + i), so.BASE: fake_report(500.0 + i),
               so.CONTROL: fake_report(501.0 + i)} for i in range(3)]
    rounds.insert(1, {so.TESTED: fake_report(9999.0), so.BASE: None, so.CONTROL: fake_report(1.0)})
    report = so.runs_report(rounds, dict(so.COMPARISONS)["cost"])
    assert report["schema"] == "memharness.report/1" and "workload.burst_ms" in report["metrics"]
    runs = [(r["role"], r["repetition"], r["wall_ms"]) for r in report["runs"]]
    assert sorted(runs) == sorted([("baseline", k + 1, 500.0 + k) for k in range(3)] +
                                  [("candidate", k + 1, 510.0 + k) for k in range(3)])
    control = so.runs_report(rounds, dict(so.COMPARISONS)["control"])
    assert {(r["role"], r["wall_ms"]) for r in control["runs"]} >= {("candidate", 501.0), ("baseline", 500.0)}
    assert all(r["repetition"] == 1 for r in rounds[0][so.BASE]["runs"])   # the arms' reports are not changed


def comparison(entries, alpha=0.05):
    return {"schema": "memharness.comparison/1", "alpha": alpha,
            "workloads": [{"workload": "burst-writefile", "metrics": entries}]}


def entry(metric, base, cand, change, ci, unit="ms", scale=1.0):
    side = lambda v: {"median": v, "min": v - 1, "max": v + 1, "n": 3}  # noqa: E731
    return {"metric": metric, "display_unit": unit, "display_scale": scale, "baseline": side(base),
            "candidate": side(cand), "change": change, "ci": ci, "p": 0.1}


def test_summary_is_what_the_comparisons_say():
    rounds = [{name: fake_report(500.0, samples=50, cost_us=10.0) for name in ARM_NAMES} for _ in range(4)]
    cost = comparison([entry("wall_ms", 500, 510, 0.02, [0.01, 0.03]), entry("cpu_ms", 100, 100, 0.0, [-0.01, 0.01]),
                       entry("peak_rss_kb", 4000, 4100, 0.025, [0.0, 0.05], "MB", 0.001024)])
    control = comparison([entry("wall_ms", 500, 499, -0.002, [-0.008, None]), entry("cpu_ms", 100, 101, 0.01, [0, 0.02])])
    out = so.summarise(rounds, {"cost": cost, "control": control}, seed=7)
    assert out["rounds"] == 4 and out["complete_rounds"] == 4 and out["confidence"] == pytest.approx(0.95)
    assert list(out["figures"]) == ["wall_ms", "cpu_ms"]     # burst_ms: not compared; peak RSS: not a figure
    wall = out["figures"]["wall_ms"]
    assert wall["arms"] == {so.TESTED: {"median": 510, "min": 509, "max": 511},
                            so.BASE: {"median": 500, "min": 499, "max": 501},
                            so.CONTROL: {"median": 499, "min": 498, "max": 500}}
    assert wall["cost"]["change_pct"] == pytest.approx(2.0) and wall["cost"]["ci_pct"] == pytest.approx([1.0, 3.0])
    assert wall["control"]["ci_pct"][1] is None
    # 50 samples of 10 us in a 500 ms run.
    assert out["harness_read_pct"]["median"] == pytest.approx(0.1)
    text = so.render(out, limit=1.0)
    assert "wall_ms (ms): 10 ms 510.0 (509.0-511.0)   1000 ms 500.0 (499.0-501.0)" in text
    assert "sampling at 10 ms +2.00% between medians, 95% CI [+1.00%, +3.00%]" in text
    assert "A/A control       -0.20% between medians, 95% CI [-0.80%, n/a]" in text
    assert "wall-time cost under 1%: not shown (upper end of the 95% CI +3.00%)" in text
    assert "wall-time cost under 5%: yes" in so.render(out, limit=5.0)
    assert "90% CI" in so.render(so.summarise(rounds, {"cost": comparison(cost["workloads"][0]["metrics"], 0.1),
                                                       "control": control}, seed=7))


def test_a_known_cost_measured_through_harness_compare(tmp_path, capsys):
    # 12 rounds whose 10 ms runs take 2% longer than the 1000 ms ones, on a
    # baseline that drifts from round to round; one round lost a run.
    rounds = []
    for i in range(12):
        base = 500.0 + 10 * i
        rounds.append({so.TESTED: fake_report(base * 1.02, burst_ms=base * 0.9 * 1.02),
                       so.BASE: fake_report(base, burst_ms=base * 0.9),
                       so.CONTROL: fake_report(base, burst_ms=base * 0.9)})
    rounds.append({so.TESTED: fake_report(9999.0), so.BASE: fake_report(1.0, status="crashed"),
                   so.CONTROL: fake_report(1.0)})
    kept = write_rounds(tmp_path / "kept", rounds)
    summary_file = tmp_path / "summary.json"
    assert so.main(["--analyse", str(kept), "--harness", str(HARNESS), "--json", str(summary_file)]) == 0
    captured = capsys.readouterr()
    assert "ended crashed" in captured.err
    assert "13 rounds (12 complete) pooled from" in captured.out
    out = json.loads(summary_file.read_text())
    wall, burst = out["figures"]["wall_ms"], out["figures"]["workload.burst_ms"]
    assert wall["cost"]["change_pct"] == pytest.approx(2.0)
    assert burst["cost"]["change_pct"] == pytest.approx(2.0)
    assert wall["control"]["change_pct"] == pytest.approx(0.0)
    assert out["figures"]["cpu_ms"]["cost"]["change_pct"] == pytest.approx(0.0)
    # Unpaired, as every comparison of the harness: the drift widens the interval around the 2%.
    lo, hi = wall["cost"]["ci_pct"]
    assert lo < 2.0 < hi
    assert wall["arms"][so.BASE]["median"] == pytest.approx(555.0)


FAKE_HARNESS = textwrap.dedent("""\
    #!{python}
    # Stand-in for build/bin/harness: a run writes a one-run report whose wall time
    # is 1000 ms, plus 3% when sampled every 10 ms, and the 5th run crashes;
    # `compare` is the real harness's.
    import json, os, sys
    args = sys.argv[1:]
    if args[:1] == ["compare"]:
        os.execv({harness!r}, [{harness!r}] + args)
    if "--workload" in args and args[args.index("--workload") + 1] == "nope":
        sys.stderr.write("unknown workload 'nope'; valid: burst-writefile\\n")
        sys.exit(2)
    count_file = os.environ["FAKE_COUNT"]
    n = int(open(count_file).read()) if os.path.exists(count_file) else 0
    open(count_file, "w").write(str(n + 1))
    ms = int(args[args.index("--sample-ms") + 1])
    wall = 1000.0 * (1.03 if ms == 10 else 1.0)
    run = {{"workload": "burst-writefile", "params": {{}}, "allocator": {{"name": "glibc"}}, "repetition": 1,
           "wall_ms": wall, "status": "crashed" if n == 4 else "ok",
           "exit": {{"error": "killed by signal Segmentation fault"}},
           "metrics": {{"utime_ms": 10, "stime_ms": 10, "workload": {{}}}},
           "sampler": {{"cost_us_median": 5, "samples": 100}}}}
    json.dump({{"schema": "memharness.report/1", "runs": [run]}}, open(args[args.index("--out") + 1], "w"))
    """)


@pytest.fixture
def fake_harness(tmp_path, monkeypatch):
    path = tmp_path / "harness"
    path.write_text(FAKE_HARNESS.format(python=sys.executable, harness=str(HARNESS)))
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
    assert "sampling at 10 ms +3.00% between medians, 95% CI [+3.00%, +3.00%]" in captured.out
    assert "A/A control       +0.00% between medians" in captured.out
    assert "wall-time cost under 1%: not shown" in captured.out
    kept = sorted(os.listdir(keep))
    assert len([f for f in kept if f[0].isdigit()]) == 12
    # The comparisons the numbers come from are kept beside the runs.
    assert {"cost.json", "cost-runs.json", "control.json", "control-runs.json"} <= set(kept)
    cost = json.loads((keep / "cost.json").read_text())
    assert cost["schema"] == "memharness.comparison/1" and cost["sample_size"] == "3 runs a side"
    summary = json.loads(summary_file.read_text())
    assert summary["seed"] == 9
    assert summary["comparisons"]["cost"] == str(keep / "cost.json")
    assert summary["figures"]["wall_ms"]["control"]["change_pct"] == pytest.approx(0.0)


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
    assert so.main(["--analyse", str(first), str(second), "--harness", str(fake_harness),
                    "--json", str(summary_file)]) == 0
    out = capsys.readouterr().out
    assert int(open(os.environ["FAKE_COUNT"]).read()) == calls_before  # no workload ran
    # The 5th run of the first folder crashed: 6 rounds, 5 complete.
    assert "6 rounds (5 complete) pooled from" in out
    assert "sampling at 10 ms +3.00% between medians" in out
    summary = json.loads(summary_file.read_text())
    assert summary["pooled_from"] == [str(first), str(second)]
    assert "command" not in summary and "comparisons" not in summary


def test_too_few_complete_rounds_compare_nothing(tmp_path, capsys):
    kept = write_rounds(tmp_path / "kept", [{name: fake_report(500.0) for name in ARM_NAMES},
                                            {so.TESTED: fake_report(500.0)}])
    assert so.main(["--analyse", str(kept), "--harness", "/nonexistent/harness"]) == 1
    assert "fewer than 2 rounds had every arm ok" in capsys.readouterr().err


def test_analyse_names_a_missing_folder(capsys):
    with pytest.raises(SystemExit) as e:
        so.main(["--analyse", "/nonexistent/runs"])
    assert e.value.code == 2
    assert "'/nonexistent/runs' is not a folder" in capsys.readouterr().err
