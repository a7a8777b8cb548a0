"""Names from reports are shown, never obeyed: a workload named with an escape
sequence, a pipe and a newline, compared from two reports, leaves the terminal
table without a raw control character, keeps the markdown table one line per
row, and reads back from the CSV as it was written in the report.

The harness under test is build/bin/harness, or $MEMHARNESS_HARNESS.
"""
import csv
import io
import json
import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(os.environ.get("MEMHARNESS_HARNESS", ROOT / "build" / "bin" / "harness"))
SMOKE = ROOT / "scripts" / "tests" / "fixtures" / "burst-smoke.json"
EVIL = "burst\x1b[2J\x1b]0;owned\x07|<b>x</b>`y`\nnext line,\"quoted\"\x9b"


def renamed_report(path, allocator):
    report = json.loads(SMOKE.read_text())
    report["runs"] = [r for r in report["runs"] if r["allocator"]["name"] == allocator]
    for r in report["runs"]:
        r["workload"] = EVIL
        r["allocator"]["name"] = "same\x1b[31m"
    report["summary"] = []
    path.write_text(json.dumps(report))
    return path


def test_a_hostile_workload_name_is_escaped_everywhere(tmp_path):
    old = renamed_report(tmp_path / "old.json", "glibc")
    new = renamed_report(tmp_path / "new.json", "jemalloc")
    r = subprocess.run([str(HARNESS), "compare", str(old), str(new), "-o", str(tmp_path / "c.json"),
                        "--export-markdown", str(tmp_path / "c.md"), "--export-csv", str(tmp_path / "c.csv")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode in (0, 1), r.stderr
    terminal = r.stdout + r.stderr
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\x9b]", terminal), repr(terminal[:400])
    assert "burst\\e[2J" in terminal

    markdown = (tmp_path / "c.md").read_text()
    assert "\x1b" not in markdown and "<b>" not in markdown
    table = [line for line in markdown.splitlines() if line.startswith("|")]
    cells = {len(re.findall(r"(?<!\\)\|", line)) for line in table}
    assert len(cells) == 1, "a row was split or joined:\n" + "\n".join(table)
    metrics = json.loads((tmp_path / "c.json").read_text())["workloads"][0]["metrics"]
    shown = [m for m in metrics if m["direction"] != "none"]
    assert len(table) == 2 + len(shown)

    rows = list(csv.DictReader(io.StringIO((tmp_path / "c.csv").read_text(), newline="")))
    assert rows and {row["workload"] for row in rows} == {EVIL}
