"""What the harness writes from committed inputs stays what it was: compare, merge,
plot and a report read and written back, run on the reference reports under
results/reference, give byte-identical files and terminal output to the ones kept
in fixtures/golden (their SHA-256 and size in golden.json, the small text outputs
whole beside it, for a readable diff). Nothing is measured.

A change that means to alter an output regenerates them, and its commit says
which output changed and why:

    /usr/bin/python3 scripts/tests/test_golden_outputs.py --regen
"""
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1]
ROOT = SCRIPTS.parent
# The harness under test; the golden files are made with the one that came
# before a change: `MEMHARNESS_GOLDEN_HARNESS=/path/to/old/harness ... --regen`.
HARNESS = Path(os.environ.get("MEMHARNESS_GOLDEN_HARNESS", ROOT / "build" / "bin" / "harness"))
# Inputs are named relative to the checkout (the commands run there), so that
# what a report echoes of its inputs does not depend on where it is.
REF = Path("results") / "reference"
GOLDEN = SCRIPTS / "tests" / "fixtures" / "golden"
# Outputs small enough to keep whole (a failing test shows their diff).
KEEP_WHOLE = {".md", ".csv", ".txt"}

# Each case: a name, the harness arguments ({out} is the case's output folder),
# and the files it writes there. Its standard output is kept as NAME.stdout.txt.
CASES = [
    ("compare-runs",
     ["compare", str(REF / "compare-pins" / "runs.json"), "-o", "{out}/c.json",
      "--export-markdown", "{out}/c.md", "--export-csv", "{out}/c.csv"],
     ["c.json", "c.md", "c.csv"]),
    ("compare-reports",
     ["compare", str(REF / "idle-return.json"), str(REF / "idle-return.json"),
      "--baseline-allocator", "jemalloc", "--candidate-allocator", "scav",
      "-o", "{out}/c.json", "--export-markdown", "{out}/c.md"],
     ["c.json", "c.md"]),
    ("merge",
     ["merge", str(REF / "burst-writefile.json"), str(REF / "timer-turns.json"),
      "-o", "{out}/m.json"],
     ["m.json"]),
    ("read-write-back",
     ["merge", str(REF / "micro.json"), "-o", "{out}/m.json"],
     ["m.json"]),
    ("read-write-back-sweep",
     ["merge", str(REF / "sweeps" / "idle-return.json"), "-o", "{out}/m.json"],
     ["m.json"]),
    ("plot-rss",
     ["plot", str(REF / "burst-writefile.json"), "-o", "{out}/p.svg"],
     ["p.svg"]),
    ("plot-compare",
     ["plot", "--compare", str(REF / "compare-pins" / "comparison.json"), "-o", "{out}/p.svg"],
     ["p.svg"]),
]


# A comparison's own context block describes the machine and moment it ran on
# (its first lines, one key a line): those values are blanked, nothing else.
LIVE_CONTEXT = re.compile(
    rb'^(    "(?:date|host|kernel|machine|cpus|cpu_model|memory_kb|machine_id|boot_id|thp|thp_defrag|free_page_reporting|git_revision|build_type|containment)": )'
    rb'.*?(,?)$', re.M)


def run_case(args, out):
    argv = [str(HARNESS)] + [a.replace("{out}", str(out)) for a in args]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, timeout=300)
    # The output folder is a fresh temporary one each time: name it the same.
    stdout = proc.stdout.replace(str(out), "OUT")
    return proc.returncode, stdout, proc.stderr


def normalised(path, out):
    """The file's bytes with the output folder named OUT and, in a comparison's own
    context block, the machine's values blanked and this checkout's folder named
    ROOT (the harness's path, the thresholds file). What the inputs hold (paths of
    the machine the reference reports were made on) is kept as it is."""
    data = path.read_bytes().replace(str(out).encode(), b"OUT")
    if data.startswith(b'{\n  "schema": "memharness.comparison/'):
        head, sep, rest = data.partition(b'\n  },\n')
        head = LIVE_CONTEXT.sub(rb'\1"-"\2', head).replace(str(ROOT).encode(), b"ROOT")
        data = head + sep + rest
    return data


def digest(path, out):
    data = normalised(path, out)
    return {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def regenerate():
    import tempfile
    GOLDEN.mkdir(parents=True, exist_ok=True)
    index = {}
    for name, args, files in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            rc, stdout, stderr = run_case(args, Path(tmp))
            if rc != 0:
                sys.exit(f"{name}: exit {rc}\n{stderr}")
            entry = {"exit": rc, "stdout": hashlib.sha256(stdout.encode()).hexdigest(), "files": {}}
            (GOLDEN / f"{name}.stdout.txt").write_text(stdout)
            for f in files:
                path = Path(tmp) / f
                entry["files"][f] = digest(path, tmp)
                if path.suffix in KEEP_WHOLE:
                    (GOLDEN / f"{name}.{f}").write_bytes(normalised(path, tmp))
            index[name] = entry
    (GOLDEN / "golden.json").write_text(json.dumps(index, indent=2, sort_keys=True) + "\n")


@pytest.mark.parametrize("name,args,files", CASES, ids=[c[0] for c in CASES])
def test_output_is_unchanged(name, args, files, tmp_path):
    index = json.loads((GOLDEN / "golden.json").read_text())
    want = index[name]
    rc, stdout, stderr = run_case(args, tmp_path)
    assert rc == want["exit"], stderr
    assert stdout == (GOLDEN / f"{name}.stdout.txt").read_text()
    for f in files:
        path = tmp_path / f
        if path.suffix in KEEP_WHOLE:
            assert normalised(path, tmp_path).decode() == (GOLDEN / f"{name}.{f}").read_text(), f
        assert digest(path, tmp_path) == want["files"][f], f"{name}: {f} differs from the golden output"


if __name__ == "__main__":
    if sys.argv[1:] != ["--regen"]:
        sys.exit(__doc__)
    regenerate()
