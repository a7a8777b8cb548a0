"""A figure the harness did not measure is null with its reason, never 0: the
huge pages and the shmem split of a program that sends no marks (the files they
come from are read at marks only), and wait4's figures of a program whose exec
failed (they would be the harness's own forked child's).

The harness under test is build/bin/harness, or $MEMHARNESS_HARNESS.
"""
import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(os.environ.get("MEMHARNESS_HARNESS", ROOT / "build" / "bin" / "harness"))
RUSAGE = ["maxrss_kb", "minflt", "majflt", "utime_ms", "stime_ms", "cpu_ms", "vol_ctxsw", "invol_ctxsw"]


def run(tmp_path, *program, options=()):
    out = tmp_path / "r.json"
    r = subprocess.run([str(HARNESS), "-a", "glibc", "-n", "1", "-q", "--out", str(out), *options, "--", *program],
                       capture_output=True, text=True, timeout=60)
    return r, json.loads(out.read_text())["runs"][0]


MARK_ONLY = [("anon_huge_kb", "smaps_rollup"), ("shmem_kb", "status"), ("file_kb", "status")]


def test_columns_read_at_marks_only_are_null_without_marks(tmp_path):
    r, run0 = run(tmp_path, "/bin/sleep", "0.3", options=["--no-exit-stop"])
    assert r.returncode == 0, r.stderr
    assert run0["marks"] == []
    samples, unreadable = run0["samples"], run0["sampler"]["unreadable"]
    assert len(samples["rss_kb"]) > 3
    for column, source in MARK_ONLY:
        assert samples[column] is None, f"{column}: {samples[column][:5]}"
        assert source in unreadable[column]
    assert all(v > 0 for v in samples["rss_kb"])


def test_the_exit_reading_is_the_one_cell_of_a_column_read_at_marks_only(tmp_path):
    # Held at its exit stop, the program is read whole once: that last sample
    # has the columns; every periodic one before it is null, with the reason.
    r, run0 = run(tmp_path, "/bin/sleep", "0.3")
    assert r.returncode == 0, r.stderr
    assert run0["peak_from"] == "exit_stop"
    samples, null_cells = run0["samples"], run0["sampler"]["null_cells"]
    for column, source in MARK_ONLY:
        assert all(v is None for v in samples[column][:-1]), f"{column}: {samples[column][:5]}"
        assert samples[column][-1] is not None, column
        assert source in null_cells[column]


def test_a_failed_exec_has_no_rusage(tmp_path):
    script = tmp_path / "no-interpreter.sh"
    script.write_text("#!/nonexistent/interpreter\n")
    script.chmod(0o755)
    r, run0 = run(tmp_path, str(script))
    assert r.returncode == 1, r.stderr
    assert run0["status"] == "failed"
    metrics = run0["metrics"]
    for m in RUSAGE:
        assert metrics[m] is None, f"{m} = {metrics[m]}"
        assert "never ran" in metrics[m + "_reason"], metrics[m + "_reason"]
