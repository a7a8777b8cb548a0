"""Reading a large report costs the harness one run's data, not the report's:
`compare` of a 20 MB report (made by scripts/make-large-report: runs with
20 000-row sampled series) takes the harness's peak resident size, as
/usr/bin/time -v measures it, hardly above what a 5 MB one of the same runs
takes (an eighth of the difference in size), and well under the file's size.

The harness under test is build/bin/harness, or $MEMHARNESS_HARNESS (to show
the test failing on an older build).
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(os.environ.get("MEMHARNESS_HARNESS", ROOT / "build" / "bin" / "harness"))


def peak_rss_kb_of_compare(report, out):
    proc = subprocess.run(
        ["/usr/bin/time", "-v", str(HARNESS), "compare", str(report), str(report), "--baseline-allocator", "jemalloc",
         "--candidate-allocator", "scav", "-o", str(out)],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr  # a verdict either way
    assert json.loads(out.read_text())["complete"] is True
    return int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))


def large_report(path, mb):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make-large-report"), "--mb", str(mb), str(path)],
                   check=True, capture_output=True, timeout=120)
    return path.stat().st_size / 1024


def test_compare_of_a_large_report_stays_well_under_its_size(tmp_path):
    small_size = large_report(tmp_path / "small.json", 5)
    big_size = large_report(tmp_path / "big.json", 20)
    small_kb = peak_rss_kb_of_compare(tmp_path / "small.json", tmp_path / "small-c.json")
    big_kb = peak_rss_kb_of_compare(tmp_path / "big.json", tmp_path / "big-c.json")
    assert big_kb - small_kb < (big_size - small_size) / 8, \
        f"peak RSS {big_kb} kB for a {big_size:.0f} kB report, {small_kb} kB for a {small_size:.0f} kB one"
    assert big_kb < big_size
