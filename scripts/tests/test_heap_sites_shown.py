"""The live heap's call sites (--ledger --heap-sample) as a user meets them: named in
the report from the program's own symbols, printed under the summary table, written
as folded stacks and drawn as a flame graph, and compared between two programs that
differ in one site's size (that site shown, the unchanged one not).

The harness under test is build/bin/harness, or $MEMHARNESS_HARNESS.
"""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(os.environ.get("MEMHARNESS_HARNESS", ROOT / "build" / "bin" / "harness"))
HOLDER = Path(os.environ.get("MEMHARNESS_HEAP_HOLDER",
                             ROOT / "build" / "harness" / "tests" / "test-programs" / "heap_holder"))


def run_holder(out, *program_args, runs=2, program=HOLDER):
    """harness --ledger --heap-sample 64K on heap_holder: (the report, the terminal's output)."""
    r = subprocess.run([str(HARNESS), "-n", str(runs), "--ledger", "--heap-sample", "64K", "-a", "glibc",
                        "--out", str(out), "--", str(program), *program_args],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text()), r.stdout


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """heap_holder's sites: load_index holds 48 MiB, parse_rows 16 MiB."""
    folder = tmp_path_factory.mktemp("sites")
    base, base_out = run_holder(folder / "base.json", "sites")
    return {"base": folder / "base.json", "base_report": base, "base_out": base_out}


def allocated_sites(report):
    run = report["runs"][0]
    return next(m for m in run["marks"] if m["name"] == "allocated")["heap_sites"]


def test_frames_are_named_from_the_program_and_its_objects_kept(reports):
    report = reports["base_report"]
    top = allocated_sites(report)["top"]
    inner = [site["frames"][0] for site in top[:2]]
    names = [f["function"] or "" for f in inner]
    assert any("load_index" in n for n in names) and any("parse_rows" in n for n in names), inner
    assert all(f["source"] in ("dwarf", "symtab") for f in inner), inner
    objects = report["runs"][0]["heap_objects"]
    assert objects[inner[0]["object"]]["build_id"], objects
    # No frame is a bare address passed for a name.
    for site in top:
        for f in site["frames"]:
            assert f["source"] in ("dwarf", "symtab", "dynsym", "none"), f
            assert f["function"] is None or not f["function"].startswith("0x"), f
            assert f["source"] != "none" or f["reason"], f


def test_the_terminal_shows_the_sites_at_the_peak(reports):
    out = reports["base_out"]
    assert "live heap by call site at the peak" in out, out
    lines = out[out.index("live heap by call site"):].splitlines()
    first = next(line for line in lines[1:] if "±" in line)
    assert "load_index" in first, lines


def test_a_run_without_heap_sample_prints_no_sites(tmp_path):
    r = subprocess.run([str(HARNESS), "-n", "1", "--ledger", "-a", "glibc", "--out", str(tmp_path / "r.json"),
                        "--", str(HOLDER), "sites"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "call site" not in r.stdout, r.stdout


def export(*args):
    return subprocess.run([str(HARNESS), "export", *args], capture_output=True, text=True, timeout=60)


def test_folded_stacks_parse_and_name_the_sites(reports):
    for where in (["--mark", "allocated"], ["--peak"], []):
        r = export("--folded", str(reports["base"]), *where)
        assert r.returncode == 0, r.stderr
        lines = r.stdout.splitlines()
        assert lines, where
        for line in lines:
            stack, _, count = line.rpartition(" ")
            assert stack and int(count) > 0, line
        heaviest = max(lines, key=lambda line: int(line.rpartition(" ")[2]))
        assert "load_index" in heaviest.rpartition(" ")[0].split(";")[-1], heaviest


def test_folded_to_a_file_and_a_bad_mark_named(reports, tmp_path):
    r = export("--folded", str(reports["base"]), "--mark", "allocated", "-o", str(tmp_path / "s.folded"))
    assert r.returncode == 0 and (tmp_path / "s.folded").read_text().strip(), r.stderr
    r = export("--folded", str(reports["base"]), "--mark", "nonesuch")
    assert r.returncode == 2, r.stderr
    assert "nonesuch" in r.stderr and "start, allocated, freed" in r.stderr, r.stderr


def test_plot_flame_writes_a_png(reports, tmp_path):
    png = tmp_path / "flame.png"
    r = subprocess.run([str(HARNESS), "plot", "--flame", str(reports["base"]), "--mark", "allocated", "-o", str(png)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    r = subprocess.run([str(HARNESS), "plot", "--flame", str(reports["base"]), "--mark", "nonesuch", "-o", str(png)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "start, allocated, freed" in r.stderr, r.stderr


def test_compare_shows_the_site_that_grew_and_not_the_one_that_did_not(tmp_path):
    # Two programs that differ in one site: load_index holds 48 MiB more, parse_rows the same.
    out = tmp_path / "cmp.json"
    r = subprocess.run([str(HARNESS), "compare", "--baseline-command", f"{HOLDER} sites",
                        "--candidate-command", f"{HOLDER} sites 96", "-a", "glibc", "--ledger", "--heap-sample", "64K",
                        "--runs", "3", "-q", "--report", str(tmp_path / "runs.json"), "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 1), r.stderr
    table = r.stdout[r.stdout.index("call sites of the live heap"):]
    assert "load_index" in table and "parse_rows" not in table, table
    sites = json.loads(out.read_text())["heap_sites"]
    grown = [s for s in sites if "load_index" in s["site"]]
    assert len(grown) == 1 and not any("parse_rows" in s["site"] for s in sites), sites
    assert abs(grown[0]["change_bytes"] - (48 << 20)) < 0.1 * (48 << 20), grown


def test_two_reports_of_two_builds_of_a_program_compare_with_their_sites(tmp_path):
    """Two builds of one program in two folders (old/heap_holder, new/heap_holder:
    the new one's load_index holds 48 MiB more), each measured on its own: `harness
    compare OLD.json NEW.json` pairs them by the program's name and shows the site."""
    reports = []
    for build, args in (("old", ["sites"]), ("new", ["sites", "96"])):
        (tmp_path / build).mkdir()
        program = tmp_path / build / "heap_holder"
        shutil.copy2(HOLDER, program)
        report = tmp_path / f"{build}.json"
        run_holder(report, *args, runs=3, program=program)
        reports.append(str(report))
    out = tmp_path / "cmp.json"
    r = subprocess.run([str(HARNESS), "compare", *reports, "-o", str(out)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode in (0, 1), r.stderr
    table = r.stdout[r.stdout.index("call sites of the live heap"):]
    assert "load_index" in table and "parse_rows" not in table, table
    # A workload's two reports with other parameters are still refused.
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    for path, calls in ((a, "50"), (b, "60")):
        done = subprocess.run([str(HARNESS), "-w", "burst-writefile", "--smoke", "--calls", calls, "-a", "glibc",
                               "-n", "1", "-q", "-o", str(path)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    r = subprocess.run([str(HARNESS), "compare", str(a), str(b)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "different workloads or parameters" in r.stderr, r.stderr
