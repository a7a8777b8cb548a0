"""The heap ledger's sampled call sites (--ledger --heap-sample) held to a program
whose sites are known (known_sites: load_index 64 MiB in 256 KiB blocks,
parse_rows 40 MiB in 4 KiB blocks, 64 small sites of 16 KiB), under each
allocator, at its mark and at the ledger's peak snapshot: the two big sites
come first, named by the program's own symbol table, each estimate within 3 of
its stated standard errors of the usable bytes the program reports, the stated
error what the sampling theory gives; at "freed" they are gone. And sampling
every allocation while a library is loaded and unloaded in a loop, with another
thread allocating, finishes. Every report validates against the schema.

The harness under test is build/bin/harness, or $MEMHARNESS_HARNESS.
"""
import bisect
import functools
import json
import math
import os
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(os.environ.get("MEMHARNESS_HARNESS", ROOT / "build" / "bin" / "harness"))
PROGRAMS = ROOT / "build" / "harness" / "tests" / "test-programs"
KNOWN = PROGRAMS / "known_sites"
DLOPEN = PROGRAMS / "dlopen_loop"
SCHEMA = json.loads((ROOT / "results" / "report.schema.json").read_text())
ALLOCATORS = ["glibc", "jemalloc", "mimalloc", "tcmalloc", "scav"]
SEED = "7"
# The two big sites: the function, the program's metric of its usable bytes, its blocks.
BIG = [("load_index", "load_index_bytes", 256), ("parse_rows", "parse_rows_bytes", 4096)]


@functools.lru_cache(maxsize=None)
def run_known(allocator, interval):
    """One run of known_sites per allocator and interval, shared by the tests."""
    return harness("--ledger", "--heap-sample", interval, "--seed", SEED, "-a", allocator, "--", str(KNOWN))


def harness(*args, timeout=120):
    r = subprocess.run([str(HARNESS), "-n", "1", "-q", "--out", "-", *args],
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    jsonschema.validate(report, SCHEMA)
    run = report["runs"][0]
    assert run["status"] == "ok", run.get("error")
    return run


@functools.lru_cache(maxsize=None)
def symbol_table(binary):
    """The binary's functions as (start, end, name) by address, and its loaded
    segments as (file offset, address, size): a frame's offset is from the file."""
    nm = subprocess.run(["nm", "-C", "-S", "--defined-only", binary], capture_output=True, text=True, check=True)
    functions = []
    for line in nm.stdout.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4 and parts[2] in "tTwW":
            start, size = int(parts[0], 16), int(parts[1], 16)
            functions.append((start, start + size, parts[3]))
    functions.sort()
    readelf = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True, check=True)
    segments = [(int(p[1], 16), int(p[2], 16), int(p[4], 16))
                for p in (line.split() for line in readelf.stdout.splitlines()) if p and p[0] == "LOAD"]
    return functions, segments


def function_at(binary, offset):
    functions, segments = symbol_table(binary)
    address = next((offset - file_at + at for file_at, at, size in segments if file_at <= offset < file_at + size), None)
    if address is None:
        return None
    i = bisect.bisect_right(functions, (address, float("inf"), "")) - 1
    return functions[i][2] if i >= 0 and functions[i][0] <= address < functions[i][1] else None


def innermost_own(site, binary=KNOWN):
    """The function of the innermost frame in the program itself (past the
    allocator's and the ledger's); the return address less one is the call."""
    own = os.path.realpath(binary)
    for frame in site.get("frames", []):
        if frame["object"] == own:
            return function_at(own, int(frame["offset"], 16) - 1)
    return None


def short_name(function):
    """load_index from "(anonymous namespace)::load_index(std::vector<...>&)",
    small_site<3> from "unsigned long (anonymous namespace)::small_site<3>(...)"."""
    m = re.search(r"([A-Za-z_]\w*(?:<[^()]*>)?)\(", function or "")
    return m.group(1) if m else function


def sites_at(run, mark):
    return next(m for m in run["marks"] if m["name"] == mark)["heap_sites"]


def expected_stderr(true_bytes, block, interval):
    """Sampling by bytes: a block of s bytes is kept with p = 1 - exp(-s/I) and
    weighs s/p; the variance over B bytes of such blocks is B s / (exp(s/I) - 1)."""
    return math.sqrt(true_bytes * block / math.expm1(block / interval))


def check_big_sites(sites, run, interval_bytes):
    w = run["metrics"]["workload"]
    names = [innermost_own(s) for s in sites["top"][:2]]
    assert [short_name(n) for n in names] == ["load_index", "parse_rows"], (names, sites["top"][:3])
    for site, (_, metric, blocks) in zip(sites["top"], BIG):
        truth = w[metric]["value"]
        assert abs(site["bytes"] - truth) <= 3 * site["stderr_bytes"], (site["bytes"], site["stderr_bytes"], truth)
        expected = expected_stderr(truth, truth / blocks, interval_bytes)
        assert 0.75 * expected <= site["stderr_bytes"] <= 1.25 * expected, (site["stderr_bytes"], expected, truth)


@pytest.mark.parametrize("interval", ["64K", "512K"])
@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_the_big_sites_lead_at_the_mark_and_at_the_peak(allocator, interval):
    run = run_known(allocator, interval)
    interval_bytes = {"64K": 65536, "512K": 524288}[interval]
    loaded = sites_at(run, "loaded")
    assert loaded["interval_bytes"] == interval_bytes and loaded["dropped"] == 0, loaded
    check_big_sites(loaded, run, interval_bytes)
    peak = run["heap_sites_peak"]
    check_big_sites(peak, run, interval_bytes)
    # The last snapshot came within 1% (and a sample's gap) of the live heap at its peak, "loaded".
    live = next(m for m in run["marks"] if m["name"] == "loaded")["sample"]["heap_live_kb"] * 1024
    assert live / 1.01 - 2 * interval_bytes <= peak["heap_live_bytes"] <= live + 1024, (peak["heap_live_bytes"], live)
    assert peak["snapshots"] >= 2, peak


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_at_64k_the_big_sites_are_known_to_within_five_percent(allocator):
    run = run_known(allocator, "64K")
    w = run["metrics"]["workload"]
    index, rows = sites_at(run, "loaded")["top"][:2]
    assert index["stderr_bytes"] <= 0.05 * w["load_index_bytes"]["value"], index
    # 40 MiB of 4 KiB blocks, one sample per 64 KiB on average: about 640
    # samples, a relative standard error of about sqrt(64K / 40M) = 4.0%. (A site
    # of small blocks is known to about sqrt(SIZE / bytes) at best: 16 MiB would
    # be 6.25% at 64K.)
    assert rows["stderr_bytes"] <= 0.05 * w["parse_rows_bytes"]["value"], rows


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_freed_sites_leave_and_the_peak_stays(allocator):
    run = run_known(allocator, "64K")
    freed = sites_at(run, "freed")
    names = {short_name(innermost_own(s)) for s in freed["top"]}
    assert not names & {"load_index", "parse_rows"}, names
    held = sum(s["bytes"] for s in freed["top"]) + freed["rest"]["bytes"]
    assert held < 1 << 20, freed
    # The peak snapshot is the run's, not the last mark's.
    assert run["heap_sites_peak"]["top"][0]["bytes"] > 32 << 20


def test_small_sites_are_told_apart():
    run = run_known("glibc", "64K")
    names = {short_name(innermost_own(s)) for s in sites_at(run, "loaded")["top"]}
    small = {n for n in names if n and n.startswith("small_site<")}
    # 64 sites of 16 KiB, a quarter of a sample each: many are sampled, each its own stack.
    assert len(small) >= 8, names


@pytest.mark.parametrize("allocator", ["glibc", "scav"])
def test_every_allocation_sampled_through_dlopen_and_dlclose_with_another_thread(allocator):
    run = harness("--ledger", "--heap-sample", "1", "--timeout", "60", "-a", allocator, "--", str(DLOPEN), "300",
                  timeout=90)
    looped = sites_at(run, "looped")
    assert looped["interval_bytes"] == 1 and looped["top"], looped
    # The 300 blocks plugin_work handed out outlive the library (4 KiB each):
    # every one sampled, whatever its stack (the library's frames are unmapped now).
    held = sum(s["bytes"] for s in looped["top"]) + looped["rest"]["bytes"]
    assert held >= 300 * 4096, looped["top"][:3]
    assert run["heap_sites_peak"]["top"], run["heap_sites_peak"]


def test_each_round_samples_with_its_own_seed_and_a_rerun_samples_the_same():
    # Round seeds come from --seed and the round: two rounds sample other allocations
    # (their estimates differ, so more rounds tell more), the same --seed again the same.
    def estimates():
        r = subprocess.run([str(HARNESS), "-n", "2", "-q", "--out", "-", "--ledger", "--heap-sample", "64K",
                            "--seed", SEED, "-a", "glibc", "--", str(KNOWN)],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        runs = json.loads(r.stdout)["runs"]
        return [sorted(s["bytes"] for s in run["heap_sites_peak"]["top"]) for run in runs]
    first, again = estimates(), estimates()
    assert first[0] != first[1]
    assert first == again
