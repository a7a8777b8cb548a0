"""Every descendant of a run ends with it, on both ways of containing it (a cgroup
of its own; the harness as child subreaper, the way of CI containers whose
/sys/fs/cgroup is read-only): a program's setsid daemon and a set-up's background
child are killed and named in the run's leftover_processes, --leftovers says
whether they fail the run or stay, and a set-up's deadline holds whatever it does
with its pipes. Each test's processes carry a marker of their own (sleep 77.NNN)
that no other test uses, so that what is left can be found.
"""
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "build" / "bin" / "harness"
WAYS = ["cgroup", "subreaper"]


def alive_with(marker):
    """The pids of running processes whose command line is exactly `sleep MARKER`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cmdline[:2] == [b"sleep", marker.encode()] and state != "Z":
            found.append(int(entry.name))
    return found


def run(way, tmp_path, *args, timeout=60):
    out = tmp_path / "report.json"
    env = dict(os.environ, MEMHARNESS_CONTAINMENT=way)
    proc = subprocess.run([str(HARNESS), "-a", "glibc", "--runs", "1", "--quiet", "--out", str(out), *args],
                          capture_output=True, text=True, timeout=timeout, env=env)
    if way == "cgroup" and proc.returncode == 2 and "no cgroup can be made here" in proc.stderr:
        pytest.skip(proc.stderr.strip())
    report = json.loads(out.read_text()) if out.exists() else None
    return proc, report


@pytest.fixture
def marker(request):
    """A marker of the test's own; whatever is left with it is killed after the test, and the test fails."""
    names = {"test_setsid_daemon_is_killed_and_named": "77.101", "test_leftovers_fail_fails_the_run": "77.102",
             "test_leftovers_allow_leaves_it_running": "77.103", "test_setup_background_child_is_killed": "77.104",
             "test_setup_deadline_holds_with_its_pipes_closed": "77.105"}
    m = names[request.function.__name__] + str(WAYS.index(request.node.callspec.params["way"]))
    yield m
    left = alive_with(m)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes left behind: {left}"


@pytest.mark.parametrize("way", WAYS)
def test_setsid_daemon_is_killed_and_named(way, tmp_path, marker):
    proc, report = run(way, tmp_path, "--", "sh", "-c", f"setsid sleep {marker} & sleep 0.2")
    assert proc.returncode == 0, proc.stderr
    run_ = report["runs"][0]
    assert run_["status"] == "ok"
    assert [(p["comm"], p["cmdline"], p["from"]) for p in run_["leftover_processes"]] == \
        [("sleep", f"sleep {marker}", "program")]
    assert alive_with(marker) == []


@pytest.mark.parametrize("way", WAYS)
def test_leftovers_fail_fails_the_run(way, tmp_path, marker):
    proc, report = run(way, tmp_path, "--leftovers", "fail", "--", "sh", "-c", f"setsid sleep {marker} & sleep 0.2")
    assert proc.returncode == 1
    run_ = report["runs"][0]
    assert run_["status"] == "failed"
    assert "--leftovers fail" in run_["exit"]["error"] and "sleep" in run_["exit"]["error"]
    assert [p["cmdline"] for p in run_["leftover_processes"]] == [f"sleep {marker}"]
    assert alive_with(marker) == []


@pytest.mark.parametrize("way", WAYS)
def test_leftovers_allow_leaves_it_running(way, tmp_path, marker):
    proc, report = run(way, tmp_path, "--leftovers", "allow", "--", "sh", "-c", f"setsid sleep {marker} & sleep 0.2")
    assert proc.returncode == 0, proc.stderr
    named = report["runs"][0]["leftover_processes"]
    assert [p["cmdline"] for p in named] == [f"sleep {marker}"]
    assert alive_with(marker) == [named[0]["pid"]]
    os.kill(named[0]["pid"], signal.SIGKILL)


@pytest.mark.parametrize("way", WAYS)
def test_setup_background_child_is_killed(way, tmp_path, marker):
    proc, report = run(way, tmp_path, "--setup", f"sh -c 'sleep {marker} & sleep 0.2'", "--", "true")
    assert proc.returncode == 0, proc.stderr
    run_ = report["runs"][0]
    assert [(p["cmdline"], p["from"]) for p in run_["leftover_processes"]] == [(f"sleep {marker}", "set-up")]
    assert alive_with(marker) == []


@pytest.mark.parametrize("way", WAYS)
def test_setup_deadline_holds_with_its_pipes_closed(way, tmp_path, marker):
    # The set-up closes its output at once and sleeps past --timeout 2: the run
    # fails within --timeout and the 5 s the kill may take (docs/options.md),
    # with a second more for the harness's own start.
    t0 = time.monotonic()
    proc, report = run(way, tmp_path, "--timeout", "2", "--setup",
                       f"sh -c 'exec >/dev/null 2>&1; sleep {marker}'", "--", "true")
    took = time.monotonic() - t0
    assert took < 2 + 5 + 1, took
    assert proc.returncode == 1
    run_ = report["runs"][0]
    assert run_["status"] == "failed"
    assert "still running after 2 s (--timeout)" in run_["exit"]["error"]
    assert alive_with(marker) == []


def test_a_bad_leftovers_value_names_the_choices(tmp_path):
    proc = subprocess.run([str(HARNESS), "--leftovers", "keep", "--", "true"], capture_output=True, text=True,
                          timeout=30)
    assert proc.returncode == 2
    assert "'keep' is not one of kill, fail, allow" in proc.stderr


def test_a_bad_containment_value_names_the_choices():
    env = dict(os.environ, MEMHARNESS_CONTAINMENT="jail")
    proc = subprocess.run([str(HARNESS), "--list"], capture_output=True, text=True, timeout=30, env=env)
    assert proc.returncode == 2
    assert "MEMHARNESS_CONTAINMENT=jail is not one of auto, cgroup, subreaper" in proc.stderr
