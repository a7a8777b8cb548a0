"""Hostile files where the harness reads or writes what a user named: a history
store whose schema is not that of its version (a column or a table missing, a
trigger or a view added) refused with exit 2 by every command that opens it,
never a crash; a store path that is a device; a link planted where the
dashboard writes chart.min.js; and a report, journal or --resume file that is a
FIFO or a link to /dev/zero, refused at once instead of hanging or reading it.
"""
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from test_history import HARNESS, add, report_at

CHART_JS = Path("/usr/share/javascript/chart.js/chart.min.js")


def harness(*args, timeout=60):
    return subprocess.run([str(HARNESS), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def refused(r, *words):
    """Exit 2 with a message (not a signal, not a hang), holding every word."""
    assert r.returncode == 2, (r.returncode, r.stderr)
    for w in words:
        assert w in r.stderr, r.stderr


def good_store(tmp_path):
    store = tmp_path / "h.sqlite"
    r = add(store, report_at(tmp_path, "r1", 9000), "r1")
    assert r.returncode == 0, r.stderr
    return store


def damaged_store(tmp_path, sql):
    store = good_store(tmp_path)
    with sqlite3.connect(store) as db:
        db.executescript(sql)
    db.close()
    return store


def store_commands(tmp_path, store):
    """Each command that opens the store, by name."""
    report = report_at(tmp_path, "r2", 9100)
    return {
        "add": ["history", "add", "--history", store, "--revision", "r2", report],
        "steps": ["history", "steps", "--history", store],
        "show": ["history", "show", "--history", store, "--workload", "burst-writefile", "--metric", "peak_rss_kb"],
        "page": ["history", "page", "--history", store, "--out", tmp_path / "site"],
    }


@pytest.mark.parametrize("verb", ["add", "steps", "show", "page"])
def test_a_store_missing_a_column_is_refused(tmp_path, verb):
    store = damaged_store(tmp_path, "ALTER TABLE runs DROP COLUMN cpu_model;")
    r = harness(*store_commands(tmp_path, store)[verb])
    refused(r, str(store), "not a memharness history store of version 3", "table runs lacks column cpu_model")


@pytest.mark.parametrize("verb", ["add", "steps", "page"])
def test_a_store_missing_a_table_is_refused(tmp_path, verb):
    store = damaged_store(tmp_path, "DROP TABLE run_samples;")
    r = harness(*store_commands(tmp_path, store)[verb])
    refused(r, "not a memharness history store of version 3", "no table run_samples")


def test_a_run_with_a_broken_history_store_is_refused_before_it_runs(tmp_path):
    store = damaged_store(tmp_path, "ALTER TABLE runs DROP COLUMN cpu_model;")
    report = tmp_path / "run.json"
    r = harness("--workload", "idle-return", "--smoke", "-a", "glibc", "--runs", "1", "-q", "-o", report,
                "--history", store)
    refused(r, "table runs lacks column cpu_model")
    assert not report.exists()


TRIGGER = ("CREATE TRIGGER loader AFTER INSERT ON runs BEGIN "
           "SELECT load_extension('/tmp/memharness-no-such-extension'); END;")


@pytest.mark.parametrize("verb", ["add", "steps", "page"])
def test_a_store_holding_a_trigger_is_refused(tmp_path, verb):
    store = damaged_store(tmp_path, TRIGGER)
    r = harness(*store_commands(tmp_path, store)[verb])
    refused(r, "not a memharness history store of version 3", "trigger loader")
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 3
    db.close()


def test_a_store_holding_a_view_is_refused(tmp_path):
    store = damaged_store(tmp_path, "CREATE VIEW runs_seen AS SELECT * FROM runs;")
    refused(harness("history", "steps", "--history", store), "view runs_seen")


def test_an_old_store_with_a_column_missing_is_not_migrated(tmp_path):
    store = tmp_path / "old.sqlite"
    with sqlite3.connect(store) as db:
        db.executescript("CREATE TABLE schema_version(version INTEGER NOT NULL);"
                         "INSERT INTO schema_version VALUES (1);"
                         "CREATE TABLE runs(id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE);"
                         "CREATE TABLE run_values(run_id INTEGER NOT NULL, metric TEXT NOT NULL, value REAL,"
                         " reason TEXT NOT NULL, PRIMARY KEY(run_id, metric));")
    db.close()
    refused(harness("history", "steps", "--history", store), "not a memharness history store of version 1",
            "table runs lacks column allocator")
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT version FROM schema_version").fetchone()[0] == 1


@pytest.mark.parametrize("how", ["history-add", "run"])
def test_a_device_as_the_store_is_refused_and_nothing_made_beside_it(tmp_path, how):
    journal = Path("/dev/null-journal")
    existed = journal.exists()
    report = report_at(tmp_path, "r1", 9000)
    try:
        if how == "history-add":
            r = harness("history", "add", "--history", "/dev/null", "--revision", "r1", report)
        else:
            r = harness("--workload", "idle-return", "--smoke", "-a", "glibc", "--runs", "1", "-q",
                        "-o", tmp_path / "run.json", "--history", "/dev/null")
        made = not existed and journal.exists()
    finally:
        if not existed and journal.exists():
            journal.unlink()  # left by a harness that opened the device
    refused(r, "/dev/null", "character device")
    assert not made


@pytest.mark.skipif(not CHART_JS.exists(), reason="Chart.js is not installed")
def test_a_link_planted_as_chart_js_is_not_followed(tmp_path):
    store = good_store(tmp_path)
    site, victim = tmp_path / "site", tmp_path / "victim.txt"
    site.mkdir()
    victim.write_text("not the page's\n")
    (site / "chart.min.js").symlink_to(victim)
    r = harness("history", "page", "--history", store, "--metric", "peak_rss_kb", "--out", site)
    assert victim.read_text() == "not the page's\n"
    if r.returncode == 0:
        assert not (site / "chart.min.js").is_symlink()
        assert (site / "chart.min.js").read_bytes() == CHART_JS.read_bytes()
    else:
        refused(r, "chart.min.js", "symbolic link")
        assert (site / "chart.min.js").is_symlink()


@pytest.mark.skipif(not CHART_JS.exists(), reason="Chart.js is not installed")
def test_the_page_writes_chart_js_whole_over_an_old_one(tmp_path):
    store = good_store(tmp_path)
    site = tmp_path / "site"
    site.mkdir()
    (site / "chart.min.js").write_text("old")
    r = harness("history", "page", "--history", store, "--metric", "peak_rss_kb", "--out", site)
    assert r.returncode == 0, r.stderr
    assert (site / "chart.min.js").read_bytes() == CHART_JS.read_bytes()
    assert sorted(p.name for p in site.iterdir()) == ["chart.min.js", "index.html"]


def not_regular(tmp_path, kind):
    path = tmp_path / f"{kind}.json"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    return path


@pytest.mark.parametrize("kind,words", [("fifo", "named pipe"), ("zero", "character device")])
def test_compare_refuses_what_is_not_a_regular_file_at_once(tmp_path, kind, words):
    bad, good = not_regular(tmp_path, kind), report_at(tmp_path, "r1", 9000)
    t0 = time.monotonic()
    r = harness("compare", bad, good, timeout=20)
    refused(r, str(bad), words)
    assert time.monotonic() - t0 < 10


@pytest.mark.parametrize("kind,words", [("fifo", "named pipe"), ("zero", "character device")])
def test_resume_refuses_what_is_not_a_regular_file_at_once(tmp_path, kind, words):
    bad = not_regular(tmp_path, kind)
    r = harness("--workload", "idle-return", "--smoke", "-a", "glibc", "--runs", "1", "-q", "--resume", bad,
                timeout=20)
    refused(r, str(bad), words)


@pytest.mark.parametrize("kind,words", [("fifo", "named pipe"), ("zero", "character device")])
def test_history_add_refuses_a_report_that_is_not_a_regular_file(tmp_path, kind, words):
    bad = not_regular(tmp_path, kind)
    r = harness("history", "add", "--history", tmp_path / "h.sqlite", bad, timeout=20)
    refused(r, str(bad), words)
