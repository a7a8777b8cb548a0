"""What `harness export` writes for other viewers, checked against their
formats: --trace as Chrome trace event JSON (a top-level traceEvents; counters
as ph "C" with numeric args; ts in microseconds; marks as process-wide instant
events; one process per run, named), --pprof as a gzipped profile.proto that
`go tool pprof -top` reads, its top sites' bytes the report's. A run of the
test program known_sites (two big call sites, 64 small ones) under --ledger
--heap-sample gives the sites.

The harness under test is build/bin/harness, or $MEMHARNESS_HARNESS.
"""
import functools
import gzip
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(os.environ.get("MEMHARNESS_HARNESS", ROOT / "build" / "bin" / "harness"))
KNOWN = ROOT / "build" / "harness" / "tests" / "test-programs" / "known_sites"
SMOKE = ROOT / "scripts" / "tests" / "fixtures" / "burst-smoke.json"
KIB_TO_MB = 1024 / 1e6


def harness(*args, ok=(0,)):
    r = subprocess.run([str(HARNESS), *map(str, args)], capture_output=True, timeout=300)
    assert r.returncode in ok, r.stderr.decode()
    return r


@functools.lru_cache(maxsize=None)
def sites_report(folder):
    """A report of known_sites with call sites (64 KiB sampling), in `folder`."""
    out = Path(folder) / "known.json"
    harness("--ledger", "--heap-sample", "64K", "--seed", "7", "-a", "glibc", "-n", "1", "-q", "-o", out, "--", KNOWN)
    return out


@pytest.fixture(scope="module")
def known(tmp_path_factory):
    if not KNOWN.exists():
        pytest.skip(f"{KNOWN} is not built (the harness_tests target builds it)")
    return sites_report(str(tmp_path_factory.mktemp("exports")))


# ---------------------------------------------------------------- --trace

def trace_of(report, tmp_path):
    out = tmp_path / "trace.json"
    harness("export", "--trace", report, "-o", out)
    return json.loads(out.read_text())


def test_trace_is_chrome_trace_event_json(tmp_path):
    report = json.loads(SMOKE.read_text())
    trace = trace_of(SMOKE, tmp_path)
    events = trace["traceEvents"]
    assert isinstance(events, list) and events
    runs = report["runs"]
    # One process per run, named by workload, allocator and run.
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert sorted(names) == list(range(1, len(runs) + 1))
    for pid, run in enumerate(runs, 1):
        assert names[pid].startswith(f"{run['workload']} {run['allocator']['name']} run {run['repetition']}")
    for e in events:
        assert e["ph"] in ("M", "C", "i"), e
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        if e["ph"] != "M":
            assert isinstance(e["ts"], (int, float))
    counters = [e for e in events if e["ph"] == "C"]
    for e in counters:
        assert e["args"] and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in e["args"].values())
    # ts in microseconds: the first run's RSS track is its samples, t_ms * 1000, in MB.
    run = runs[0]
    rss = [e for e in counters if e["pid"] == 1 and e["name"] == "RSS"]
    assert [e["ts"] for e in rss] == pytest.approx([t * 1000 for t in run["samples"]["t_ms"]])
    assert [e["args"]["MB"] for e in rss] == pytest.approx([kb * KIB_TO_MB for kb in run["samples"]["rss_kb"]])
    tracks = {e["name"] for e in counters if e["pid"] == 1}
    assert {"RSS", "anonymous RSS", "minor faults", "major faults"} <= tracks
    assert "live heap" not in tracks          # no ledger in this report
    # Marks: process-wide instant events at their time.
    marks = [e for e in events if e["ph"] == "i" and e["pid"] == 1]
    assert [(e["name"], e["s"]) for e in marks] == [(m["name"], "p") for m in run["marks"]]
    assert [e["ts"] for e in marks] == pytest.approx([m["t_ms"] * 1000 for m in run["marks"]])


def test_trace_has_the_live_heap_when_the_ledger_ran(known, tmp_path):
    report = json.loads(known.read_text())
    heap = [e for e in trace_of(known, tmp_path)["traceEvents"] if e["ph"] == "C" and e["name"] == "live heap"]
    assert heap
    assert max(e["args"]["MB"] for e in heap) == pytest.approx(
        max(report["runs"][0]["samples"]["heap_live_kb"]) * KIB_TO_MB)


def test_export_needs_one_kind_and_pprof_a_file(tmp_path):
    r = harness("export", ok=(2,))
    assert b"--folded" in r.stderr and b"--trace" in r.stderr and b"--pprof" in r.stderr
    r = harness("export", "--trace", SMOKE, "--folded", SMOKE, ok=(2,))
    r = harness("export", "--pprof", SMOKE, ok=(2,))
    assert b"-o FILE" in r.stderr
    # A report without call sites: said, exit 2, nothing written.
    out = tmp_path / "x.pb.gz"
    r = harness("export", "--pprof", SMOKE, "-o", out, ok=(2,))
    assert b"no call sites" in r.stderr and not out.exists()


# ---------------------------------------------------------------- --pprof

def pprof_top(profile, *flags):
    go = shutil.which("go")
    if go is None:
        pytest.skip("go is not installed (Debian golang-go): go tool pprof cannot read the profile here")
    env = dict(os.environ, HOME=os.environ.get("HOME", "/tmp"), PPROF_TMPDIR=str(profile.parent),
               GOFLAGS="-mod=mod", GOCACHE=str(profile.parent / "gocache"))
    r = subprocess.run([go, "tool", "pprof", "-top", "-nodecount=200", *flags, str(profile)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


def top_rows(text):
    """{function: flat value} of `pprof -top`'s rows (bytes with pprof's units,
    powers of 1024: B, kB, MB, GB; counts without)."""
    scale = {"": 1, "B": 1, "kB": 2 ** 10, "MB": 2 ** 20, "GB": 2 ** 30}
    unit = r"(B|kB|MB|GB)?"
    rows = {}
    for line in text.splitlines():
        m = re.match(rf"\s*([\d.]+){unit}\s+[\d.]+%\s+[\d.]+%\s+[\d.]+{unit}\s+[\d.]+%\s+(.+)$", line)
        if m:
            rows[m.group(4).strip()] = float(m.group(1)) * scale[m.group(2) or ""]
    return rows


def test_pprof_profile_format(known, tmp_path):
    out = tmp_path / "heap.pb.gz"
    harness("export", "--pprof", known, "--mark", "loaded", "-o", out)
    raw = gzip.decompress(out.read_bytes())   # gzipped
    assert raw
    text = pprof_top(out)
    # The default sample type is the live bytes; the period the sampling interval.
    assert "inuse_space" in text or "Type: inuse_space" in text, text


def test_pprof_top_sites_bytes_are_the_reports(known, tmp_path):
    report = json.loads(known.read_text())
    run = report["runs"][0]
    sites = next(m["heap_sites"] for m in run["marks"] if m["name"] == "loaded")
    out = tmp_path / "heap.pb.gz"
    harness("export", "--pprof", known, "--mark", "loaded", "-o", out)
    rows = top_rows(pprof_top(out, "-sample_index=inuse_space"))
    for name in ("load_index", "parse_rows"):
        expected = sum(s["bytes"] for s in sites["top"]
                       if any(name in (f.get("function") or "") for f in s["frames"]))
        # pprof shortens C++ names ("::load_index"); it shows four significant digits.
        shown = next(v for k, v in rows.items() if k.endswith(name))
        assert shown == pytest.approx(expected, rel=0.002), (name, rows)
    # The object counts, estimated from the sampling: the blocks each site holds
    # (known_sites: load_index 64 MiB in 256 KiB blocks, parse_rows 40 MiB in 4 KiB).
    objects = top_rows(pprof_top(out, "-sample_index=inuse_objects"))
    for name, blocks in (("load_index", 256), ("parse_rows", 10240)):
        shown = next(v for k, v in objects.items() if k.endswith(name))
        assert shown == pytest.approx(blocks, rel=0.25), (name, objects)
