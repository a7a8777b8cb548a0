"""The files the harness writes replace nothing they should not: a symbolic link
planted where the temporary report goes or at the report's own name is never
followed, a device or a link to one is refused before anything runs (exit 2),
`-` writes to standard output, and bad input leaves no folder behind.

The harness under test is build/bin/harness, or $MEMHARNESS_HARNESS (to show
a test failing on an older build).
"""
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(os.environ.get("MEMHARNESS_HARNESS", ROOT / "build" / "bin" / "harness"))
SMOKE = ROOT / "scripts" / "tests" / "fixtures" / "burst-smoke.json"
VICTIM_TEXT = "not to be replaced\n"


def harness(*args, cwd=None):
    return subprocess.run([str(HARNESS), *map(str, args)], capture_output=True, text=True, timeout=60, cwd=cwd)


def victim(tmp_path):
    v = tmp_path / "victim.txt"
    v.write_text(VICTIM_TEXT)
    return v


def program_run(out, *extra):
    """A short program run (no marks) under glibc, once."""
    return harness("-a", "glibc", "-n", "1", "-q", "--out", out, *extra, "--", "/bin/sleep", "0.2")


def test_a_link_planted_at_a_temporary_name_is_not_followed(tmp_path):
    # Temporary names that hold a process id are predictable: plant a link at
    # each name the next few hundred processes would use.
    v = victim(tmp_path)
    out = tmp_path / "merged.json"
    last = int(Path("/proc/sys/kernel/ns_last_pid").read_text())
    for pid in range(last + 1, last + 400):
        (tmp_path / f"merged.json.tmp.{pid}").symlink_to(v)
    r = harness("merge", SMOKE, "-o", out)
    assert r.returncode == 0, r.stderr
    assert v.read_text() == VICTIM_TEXT
    assert json.loads(out.read_text())["schema"] == "memharness.report/1"


def test_a_link_at_the_target_is_refused_and_its_file_kept(tmp_path):
    v = victim(tmp_path)
    out = tmp_path / "merged.json"
    out.symlink_to(v)
    r = harness("merge", SMOKE, "-o", out)
    assert r.returncode == 2, r.stderr
    assert "symbolic link" in r.stderr and str(out) in r.stderr
    assert out.is_symlink() and v.read_text() == VICTIM_TEXT


def character_device(tmp_path):
    """/dev/null, or as root a node of the same device of the test's own: a
    harness that replaces the device it is given (a build before the fix, run
    as root) must not take the machine's /dev/null with it."""
    if os.geteuid() != 0:
        return Path("/dev/null")
    node = tmp_path / "null"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return node


@pytest.mark.parametrize("kind", ["character device", "link to standard output"])
def test_a_device_is_refused_before_any_run(tmp_path, kind):
    if kind == "character device":
        out = character_device(tmp_path)
    else:
        out = tmp_path / "stdout.json"
        out.symlink_to("/proc/self/fd/1")
    r = program_run(out)
    assert r.returncode == 2, r.stdout + r.stderr
    assert str(out) in r.stderr and "not a regular file" in r.stderr
    assert "report:" not in r.stdout + r.stderr, "a run was made"
    assert out.is_symlink() or out.is_char_device()


def test_out_dash_writes_the_report_to_standard_output(tmp_path):
    r = program_run("-")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)  # the report alone: the table went to stderr
    assert report["schema"] == "memharness.report/1" and report["complete"] is True
    assert len(report["runs"]) == 1
    assert "report: standard output" in r.stderr
    checked = subprocess.run(["python3", "-m", "json.tool"], input=r.stdout, capture_output=True, text=True)
    assert checked.returncode == 0


def test_export_csv_dash_goes_to_standard_output_alone(tmp_path):
    r = harness("compare", SMOKE, SMOKE, "--baseline-allocator", "glibc", "--candidate-allocator", "jemalloc",
                "-o", tmp_path / "c.json", "--export-csv", "-")
    assert r.returncode in (0, 1), r.stderr
    assert r.stdout.startswith("workload,metric,unit,"), r.stdout[:200]
    assert "comparison:" in r.stderr


def test_bad_input_leaves_no_folder(tmp_path):
    r = harness("compare", tmp_path / "missing-a.json", tmp_path / "missing-b.json", "--out", "new/dirs/c.json",
                cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "missing-a.json" in r.stderr
    assert not (tmp_path / "new").exists()
