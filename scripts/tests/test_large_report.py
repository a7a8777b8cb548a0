"""Reading a large report costs the harness one run's data, not the report's:
`compare` of a 20 MB report (made by scripts/make-large-report: runs with
20 000-row sampled series) keeps the harness's peak resident size well under
the file's size, as /usr/bin/time -v measures it.

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


def test_compare_of_a_large_report_stays_well_under_its_size(tmp_path):
    big = tmp_path / "big.json"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make-large-report"), "--mb", "20", str(big)],
                   check=True, capture_output=True, timeout=120)
    size_kb = big.stat().st_size / 1024
    proc = subprocess.run(
        ["/usr/bin/time", "-v", str(HARNESS), "compare", str(big), str(big), "--baseline-allocator", "jemalloc",
         "--candidate-allocator", "scav", "-o", str(tmp_path / "c.json")],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr  # a verdict either way
    comparison = json.loads((tmp_path / "c.json").read_text())
    assert comparison["complete"] is True
    peak_kb = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr).group(1))
    assert peak_kb < size_kb / 2, f"peak RSS {peak_kb} kB for a {size_kb:.0f} kB report"
