"""The heap ledger (--ledger): the live heap the harness reads from outside is what
the program holds, under each allocator the machine has, whichever entry point
the blocks came from (new, new[], aligned new, malloc: counted once each), for a
program that forks (each process counts its own) and one that execs (the new
image counts for itself); a run without the ledger has no such column and says why.

The harness under test is build/bin/harness, or $MEMHARNESS_HARNESS.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(os.environ.get("MEMHARNESS_HARNESS", ROOT / "build" / "bin" / "harness"))
HOLDER = Path(os.environ.get("MEMHARNESS_HEAP_HOLDER",
                             ROOT / "build" / "harness" / "tests" / "test-programs" / "heap_holder"))
ALLOCATORS = ["glibc", "jemalloc", "mimalloc", "tcmalloc", "scav"]


def harness(tmp_path, *args):
    out = tmp_path / "r.json"
    r = subprocess.run([str(HARNESS), "-n", "1", "-q", "--out", str(out), *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    run = json.loads(out.read_text())["runs"][0]
    assert run["status"] == "ok", run.get("error")
    return run


def live_at(run):
    return {m["name"]: m["sample"]["heap_live_kb"] for m in run["marks"]}


def within(value, expected, fraction):
    return abs(value - expected) <= fraction * expected


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_a_cxx_program_is_counted_once_under_each_allocator(tmp_path, allocator):
    run = harness(tmp_path, "--ledger", "-a", allocator, "--", str(HOLDER), "plain")
    assert run["allocator"]["verified"], run["allocator"]
    live, usable = live_at(run), run["metrics"]["workload"]["usable_kb"]["value"]
    held = live["allocated"] - live["start"]
    assert within(held, usable, 0.01), f"live heap grew {held} KiB, the program holds {usable} KiB"
    assert abs(live["freed"] - live["start"]) <= 1024, live
    assert run["metrics"]["curve"]["peak_heap_live_kb"]["value"] >= live["allocated"]


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_idle_return_holds_what_it_reports(tmp_path, allocator):
    run = harness(tmp_path, "--ledger", "-a", allocator, "-w", "idle-return", "--smoke")
    assert run["allocator"]["verified"], run["allocator"]
    live, usable = live_at(run), run["metrics"]["workload"]["usable_kb"]["value"]
    assert within(live["allocated"] - live["start"], usable, 0.01), (live, usable)
    assert abs(live["freed"] - live["start"]) <= 1024, live
    # What the allocator keeps after the free is anonymous RSS outside the live heap.
    freed = next(m for m in run["marks"] if m["name"] == "freed")["sample"]
    assert run["metrics"]["curve"]["phase.allocated.outside_end_kb"]["value"] == freed["anon_kb"] - freed["heap_live_kb"]


def test_each_process_of_a_fork_counts_its_own(tmp_path):
    run = harness(tmp_path, "--ledger", "-a", "glibc", "--", str(HOLDER), "fork")
    live, w = live_at(run), run["metrics"]["workload"]
    usable, child = w["usable_kb"]["value"], w["child_usable_kb"]["value"]
    # The tree's sum: the parent holds its blocks; the child freed its copies of
    # them and holds its own (both start from the parent's heap at the start mark).
    expected = 2 * live["start"] + usable + child
    assert within(live["both"], expected, 0.01), (live, usable, child)


def test_an_exec_image_counts_for_itself(tmp_path):
    run = harness(tmp_path, "--ledger", "-a", "glibc", "--", str(HOLDER), "exec")
    live, usable = live_at(run), run["metrics"]["workload"]["usable_kb"]["value"]
    # 8 MiB were held before the exec: the new image's count starts afresh.
    assert live["start"] < 1024, live
    assert within(live["allocated"] - live["start"], usable, 0.01), (live, usable)


def test_without_the_ledger_the_column_is_null_with_the_reason(tmp_path):
    run = harness(tmp_path, "-a", "glibc", "--", str(HOLDER), "plain")
    assert run["samples"]["heap_live_kb"] is None
    assert "--ledger" in run["sampler"]["unreadable"]["heap_live_kb"]
    assert "peak_heap_live_kb" not in run["metrics"]["curve"]


def test_a_program_the_ledger_cannot_reach_says_why(tmp_path):
    # env -u LD_PRELOAD: the program runs without the ledger (and without the allocator).
    out = tmp_path / "r.json"
    r = subprocess.run([str(HARNESS), "-n", "1", "-q", "--ledger", "-a", "glibc", "--out", str(out), "--",
                        "/usr/bin/env", "-u", "LD_PRELOAD", str(HOLDER), "plain"],
                       capture_output=True, text=True, timeout=120)
    run = json.loads(out.read_text())["runs"][0]
    assert [m["name"] for m in run["marks"]] == ["start", "allocated", "freed"], r.stderr
    assert all(m["sample"]["heap_live_kb"] is None for m in run["marks"]), run["marks"]
    reasons = {**run["sampler"]["unreadable"], **run["sampler"].get("null_cells", {})}
    assert "not mapped" in reasons["heap_live_kb"], reasons


def test_a_ledger_of_another_layout_version_is_refused_naming_both(tmp_path):
    run = harness(tmp_path, "--ledger", "-a", "glibc", "--", str(HOLDER), "version")
    live = live_at(run)
    assert live["start"] is not None and live["other"] is None, live
    reason = run["sampler"]["null_cells"]["heap_live_kb"]
    from_header = (ROOT / "harness" / "include" / "memharness" / "ledger.h").read_text()
    version = int(from_header.split("#define MEMHARNESS_LEDGER_VERSION ")[1].split("u")[0])
    assert f"layout version {version - 1}, this harness reads version {version} only" in reason, reason


def sites_at(run, mark):
    return next(m for m in run["marks"] if m["name"] == mark).get("heap_sites")


@pytest.mark.parametrize("allocator", ALLOCATORS)
def test_sampled_call_sites_estimate_what_each_site_holds(tmp_path, allocator):
    # heap_holder sites: load_index holds 48 MiB in 256 KiB blocks, parse_rows 16 MiB in 4 KiB ones.
    run = harness(tmp_path, "--ledger", "--heap-sample", "64K", "-a", allocator, "--", str(HOLDER), "sites")
    w = run["metrics"]["workload"]
    truth = [w["load_index_kb"]["value"] * 1024, w["parse_rows_kb"]["value"] * 1024]
    sites = sites_at(run, "allocated")
    assert sites["interval_bytes"] == 65536
    top = sites["top"][:2]
    for site, true_bytes in zip(top, truth):
        assert abs(site["bytes"] - true_bytes) <= max(3 * site["stderr_bytes"], 0.15 * true_bytes), (site, true_bytes)
        assert site["frames"][0]["object"].endswith("/heap_holder"), site["frames"][:3]
        assert site["frames"][0]["offset"].startswith("0x")
    assert 2.4 <= top[0]["bytes"] / top[1]["bytes"] <= 3.6, top
    # Freed blocks leave the sampled set.
    assert sum(s["bytes"] for s in sites_at(run, "freed")["top"]) < 0.05 * sum(truth)


def test_only_a_run_with_heap_sample_has_call_sites(tmp_path):
    run = harness(tmp_path, "--ledger", "-a", "glibc", "--", str(HOLDER), "sites")
    assert all("heap_sites" not in m for m in run["marks"]), run["marks"]
    run = harness(tmp_path, "--ledger", "--heap-sample", "512K", "-a", "glibc", "--", str(HOLDER), "sites")
    assert all(m["heap_sites"]["interval_bytes"] == 524288 for m in run["marks"]), run["marks"]


@pytest.mark.parametrize("args, message", [
    (["--ledger", "--heap-sample", "64Q"], "--heap-sample 64Q is not a size"),
    (["--heap-sample", "64K"], "it needs --ledger"),
])
def test_a_bad_heap_sample_is_refused(tmp_path, args, message):
    r = subprocess.run([str(HARNESS), "-n", "1", "-q", "--out", str(tmp_path / "r.json"), *args, "--",
                        str(HOLDER), "sites"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and message in r.stderr, (r.returncode, r.stderr)


DLOPEN_LOOP = """
import ctypes, _ctypes, signal, time
# Allocations in a signal handler, 200 times a second, while libraries load and unload
# (with every allocation unwinding, a handler may take more than a millisecond on a loaded
# machine: at 1000 a second they then nest until Python's recursion limit).
signal.signal(signal.SIGALRM, lambda *a: [bytearray(1000) for _ in range(50)])
signal.setitimer(signal.ITIMER_REAL, 0.005, 0.005)
end = time.monotonic() + 0.6
while time.monotonic() < end:
    for lib in ("libbz2.so.1.0", "libsqlite3.so.0"):
        _ctypes.dlclose(ctypes.CDLL(lib)._handle)
signal.setitimer(signal.ITIMER_REAL, 0, 0)
"""


@pytest.mark.parametrize("allocator", ["glibc", "jemalloc", "tcmalloc"])
def test_every_allocation_sampled_through_dlopen_and_signal_handlers(tmp_path, allocator):
    # --heap-sample 1: every allocation takes a stack, inside dlopen's lock and in the handler.
    run = harness(tmp_path, "--ledger", "--heap-sample", "1", "-a", allocator, "--mark-at", "200=busy", "--",
                  "/usr/bin/python3", "-c", DLOPEN_LOOP)
    sites = sites_at(run, "busy")
    assert sites["interval_bytes"] == 1 and sites["top"], sites


def notes_of(tmp_path, *args):
    out = tmp_path / "n.json"
    r = subprocess.run([str(HARNESS), "-n", "1", "--out", str(out), "--ledger", *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    report = json.loads(out.read_text())
    return report, [n["code"] for n in report["summary"][0].get("notes", [])], r.stdout


def test_a_buffer_allocated_and_never_touched_is_said_so(tmp_path):
    # dd asks for its whole block (bs) at once and writes a few pages of it.
    lines = tmp_path / "lines.txt"
    lines.write_text("".join(f"{(i * 7919) % 1000}\n" for i in range(1000)))
    report, codes, stdout = notes_of(tmp_path, "-a", "glibc", "--", "dd", f"if={lines}", "of=/dev/null", "bs=300M")
    metrics = report["summary"][0]["metrics"]
    assert metrics["peak_heap_live_kb"]["median"] > 250 * 1024
    assert metrics["peak_anon_kb"]["median"] < 100 * 1024
    assert codes == ["live_not_resident"]
    assert "allocated and never touched" in stdout


def test_a_python_program_started_by_its_own_name_is_known_by_its_maps(tmp_path):
    # The command is the script, not the interpreter: only the maps say Python runs.
    app = tmp_path / "app"
    app.write_text("#!/usr/bin/python3\n"
                   "objects = [(i, str(i)) for i in range(400_000)]\n"
                   "print(len(objects))\n")
    app.chmod(0o755)
    report, codes, stdout = notes_of(tmp_path, "-a", "glibc", "--", str(app))
    assert report["runs"][0]["allocator"]["other_heaps"] == ["pymalloc"]
    assert "pymalloc" in codes
    assert "PYTHONMALLOC=malloc" in stdout
    _, codes, _ = notes_of(tmp_path, "-a", "glibc", "--env", "PYTHONMALLOC=malloc", "--", str(app))
    assert "pymalloc" not in codes


def test_a_program_without_another_heap_names_none(tmp_path):
    report, codes, _ = notes_of(tmp_path, "-a", "glibc", "--", "sort", "/dev/null")
    assert report["runs"][0]["allocator"]["other_heaps"] == []
    assert codes == []


def test_growth_in_thread_stacks_and_named_mappings_is_outside_malloc(tmp_path):
    # heap_holder outside: 30 threads holding 1 MiB of stack each and a 2 MiB named
    # mapping, started between growth-start and growth-end; its live heap is flat.
    run = harness(tmp_path, "--ledger", "-a", "glibc", "--", str(HOLDER), "outside")
    marks = {m["name"]: m for m in run["marks"]}
    start, end = marks["growth-start"]["not_malloc_kb"], marks["growth-end"]["not_malloc_kb"]
    assert end["stacks"] - start["stacks"] >= 0.9 * 30 * 1024, (start, end)
    # The kernel names anonymous mappings only with CONFIG_ANON_VMA_NAME: then all 2 MiB.
    named = end["named"] - start["named"]
    assert named == 0 or abs(named - 2048) <= 8, (start, end)
    growth = run["growth"]
    assert growth["outside_malloc"]["from"] == "growth-start" and growth["outside_malloc"]["to"] == "growth-end"
    assert "growing outside malloc at" in growth["verdict"], growth["verdict"]  # (the threads' own few KiB of heap may grow too)
    assert "thread stacks +" in growth["verdict"] and "allocator" not in growth["verdict"], growth["verdict"]
