"""The history store as a user meets it: `harness history add` of reports cut from
the committed smoke fixture (nothing is measured), a report added twice adding
nothing, a version-1 store made here migrated when opened, two stores merged, a
step among the last revisions failing `history steps` until acknowledged, and the
dashboard page's files and inlined data, names from reports escaped.
"""
import copy
import json
import os
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "build" / "bin" / "harness"
SMOKE = ROOT / "scripts" / "tests" / "fixtures" / "burst-smoke.json"
HOSTILE = '</script><img src=x onerror="document.title=1">'


def harness(*args):
    return subprocess.run([str(HARNESS), *map(str, args)], capture_output=True, text=True, timeout=60)


def report_at(folder, revision, peak_kb, workload="burst-writefile", mark=None):
    """The fixture's glibc runs as a report made at `revision`, every run's
    peak_rss_kb near `peak_kb` and its sampled RSS scaled to peak there (a
    report begun at its own time: new runs), the first mark named `mark` if given."""
    smoke = json.loads(SMOKE.read_text())
    report = copy.deepcopy(smoke)
    report["context"]["date"] = f"2026-01-01T00:00:{len(list(folder.glob('*.json'))):02d}Z"
    report["runs"] = [r for r in report["runs"] if r["allocator"]["name"] == "glibc"]
    for k, run in enumerate(report["runs"]):
        run["workload"] = workload
        run["metrics"]["peak_rss_kb"] = peak_kb + 8 * k
        rss = run["samples"]["rss_kb"]
        run["samples"]["rss_kb"] = [round(v * (peak_kb + 8 * k) / max(rss)) for v in rss]
        if mark is not None:
            run["marks"][0]["name"] = mark
    report.pop("summary", None)
    path = folder / f"{revision}.json"
    path.write_text(json.dumps(report))
    return path


def add(store, report, revision):
    return harness("history", "add", "--history", store, "--revision", revision, report)


def series_of(folder, store, levels, workload="burst-writefile"):
    for i, level in enumerate(levels):
        r = add(store, report_at(folder, f"r{i:02d}", level, workload), f"r{i:02d}")
        assert r.returncode == 0, r.stderr


def test_a_report_added_twice_adds_nothing(tmp_path):
    store, report = tmp_path / "h.sqlite", report_at(tmp_path, "r1", 9000)
    first, second = add(store, report, "r1"), add(store, report, "r1")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.startswith("3 runs added")
    assert second.stdout.startswith("0 runs added") and "(3 already there)" in second.stdout
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 3
        values = dict(db.execute("SELECT metric, value FROM run_values JOIN runs ON runs.id = run_id "
                                 "WHERE repetition = 1").fetchall())
    assert values["peak_rss_kb"] == 9000
    # Not measured stays null, with its reason.
    assert values["perf.cycles"] is None
    # Each run's sampled RSS and its marks, stored once too.
    runs = json.loads(report.read_text())["runs"]
    with sqlite3.connect(store) as db:
        samples = db.execute("SELECT count(*) FROM run_samples").fetchone()[0]
        assert samples == sum(len(r["samples"]["t_ms"]) for r in runs)
        assert db.execute("SELECT count(*) FROM run_marks").fetchone()[0] == sum(len(r["marks"]) for r in runs)
        peaks = db.execute("SELECT max(rss_kb) FROM run_samples JOIN runs ON runs.id = run_id "
                           "GROUP BY run_id ORDER BY run_id").fetchall()
        marks = db.execute("SELECT name, t_ms FROM run_marks WHERE run_id = 1 ORDER BY seq").fetchall()
    assert [p for (p,) in peaks] == [9000, 9008, 9016]
    assert marks == [(m["name"], pytest.approx(m["t_ms"], abs=0.051)) for m in runs[0]["marks"]]  # to 0.1 ms


def test_a_bad_report_is_refused_and_adds_nothing(tmp_path):
    store, bad = tmp_path / "h.sqlite", tmp_path / "bad.json"
    bad.write_text('{"schema": "memharness.report/1", "runs": [{"status": 3}]}')
    good = report_at(tmp_path, "r1", 9000)
    r = harness("history", "add", "--history", store, good, bad)
    assert r.returncode == 2
    assert "bad.json" in r.stderr
    assert not store.exists() or sqlite3.connect(store).execute("SELECT count(*) FROM runs").fetchone()[0] == 0


def test_not_a_store_is_refused(tmp_path):
    store = tmp_path / "h.sqlite"
    store.write_text("not a database, a text file\n" * 100)
    r = harness("history", "show", "--history", store, "--metric", "peak_rss_kb", "--workload", "w")
    assert r.returncode == 2
    assert str(store) in r.stderr and "not a history store" in r.stderr


# Version 1 of the schema as it was released; the harness must keep reading such files.
V1 = """
CREATE TABLE schema_version(version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
CREATE TABLE runs(id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, workload TEXT NOT NULL,
  params TEXT NOT NULL, allocator TEXT NOT NULL, allocator_revision TEXT NOT NULL, revision TEXT NOT NULL,
  position INTEGER, machine TEXT NOT NULL, kernel TEXT NOT NULL, thp TEXT NOT NULL,
  harness_version TEXT NOT NULL, date TEXT NOT NULL, status TEXT NOT NULL, role TEXT NOT NULL,
  repetition INTEGER NOT NULL);
CREATE TABLE run_values(run_id INTEGER NOT NULL REFERENCES runs(id), metric TEXT NOT NULL, value REAL,
  reason TEXT NOT NULL, PRIMARY KEY(run_id, metric));
"""


# Version 2 as it was released: version 1 and its migration.
V2 = V1 + """
ALTER TABLE runs ADD COLUMN cpu_model TEXT NOT NULL DEFAULT '';
ALTER TABLE run_values ADD COLUMN above REAL;
CREATE TABLE acknowledgements(workload TEXT NOT NULL, allocator TEXT NOT NULL, metric TEXT NOT NULL,
  revision TEXT NOT NULL, reason TEXT NOT NULL, PRIMARY KEY(workload, allocator, metric, revision));
CREATE INDEX run_values_metric ON run_values(metric);
UPDATE schema_version SET version = 2;
"""


def old_store(path, ddl, revision="abc1234"):
    """A store of an older schema made here with its DDL: three ok runs of
    idle-return under scav at `revision`, peak_rss_kb 4000, 4100 and 4200."""
    with sqlite3.connect(path) as db:
        db.executescript(ddl)
        for i in range(3):
            db.execute("INSERT INTO runs(id, hash, workload, params, allocator, allocator_revision, revision, "
                       "position, machine, kernel, thp, harness_version, date, status, role, repetition) "
                       "VALUES (?, ?, 'idle-return', '{}', 'scav', '', ?, 7, 'vm', 'Linux', 'madvise', '0.1.0', "
                       "'2026-01-01T00:00:00Z', 'ok', '', ?)", (i + 1, f"h{i}", revision, i))
            db.execute("INSERT INTO run_values(run_id, metric, value, reason) VALUES (?, 'peak_rss_kb', ?, '')",
                       (i + 1, 4000 + 100 * i))
    db.close()


def test_a_version_1_store_is_migrated(tmp_path):
    store = tmp_path / "old.sqlite"
    old_store(store, V1)
    r = harness("history", "show", "--history", store, "--metric", "peak_rss_kb", "--workload", "idle-return")
    assert r.returncode == 0, r.stderr
    row = next(line for line in r.stdout.splitlines() if line.startswith("abc1234"))
    assert row.split()[1:6] == ["7", "3", "4.20", "4.10", "4.30"]   # KiB stored, MB shown to 3 digits
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT version FROM schema_version").fetchone()[0] == 3
        assert "above" in [c[1] for c in db.execute("PRAGMA table_info(run_values)")]
    # And the migrated file takes new runs.
    assert add(store, report_at(tmp_path, "r1", 9000), "r1").returncode == 0


def test_a_version_2_store_is_migrated_its_old_runs_without_series(tmp_path):
    store = tmp_path / "old.sqlite"
    old_store(store, V2)
    add_new = add(store, report_at(tmp_path, "r1", 9000), "r1")
    assert add_new.returncode == 0, add_new.stderr
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT version FROM schema_version").fetchone()[0] == 3
        with_series = db.execute("SELECT revision, count(DISTINCT run_id) FROM run_samples "
                                 "JOIN runs ON runs.id = run_id GROUP BY revision").fetchall()
    assert with_series == [("r1", 3)]
    out = tmp_path / "site"
    r = harness("history", "page", "--history", store, "--metric", "peak_rss_kb", "--out", out)
    assert r.returncode == 0, r.stderr
    _, data = page_data(out / "index.html")
    [old] = [s for s in data["series"] if s["workload"] == "idle-return"]
    assert [data["runs"][str(i)]["t"] for i in old["points"][0]["run_ids"]] == [[], [], []]
    assert r.stdout.startswith("2 charts")


def test_two_stores_merge(tmp_path):
    a, b = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    shared = report_at(tmp_path, "r1", 9000)
    assert add(a, shared, "r1").returncode == 0
    assert add(b, shared, "r1").returncode == 0
    assert add(b, report_at(tmp_path, "r2", 9000), "r2").returncode == 0
    r = harness("history", "merge", a, b)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("3 runs added")
    with sqlite3.connect(a) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone()[0] == 6
        assert db.execute("SELECT count(DISTINCT run_id) FROM run_values").fetchone()[0] == 6
        merged = db.execute("SELECT count(*), count(DISTINCT run_id) FROM run_samples").fetchone()
        marks = db.execute("SELECT count(*) FROM run_marks").fetchone()[0]
    with sqlite3.connect(b) as db:
        assert merged == (db.execute("SELECT count(*) FROM run_samples").fetchone()[0], 6)
        assert marks == db.execute("SELECT count(*) FROM run_marks").fetchone()[0]


def test_a_recent_regression_fails_steps_until_acknowledged(tmp_path):
    store = tmp_path / "h.sqlite"
    series_of(tmp_path, store, [9000] * 6 + [12000] * 3)
    steps = ["history", "steps", "--history", store, "--metric", "peak_rss_kb", "--last", "3"]
    r = harness(*steps)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "at r06 (among the last revisions): regression +33" in r.stdout
    show = harness("history", "show", "--history", store, "--metric", "peak_rss_kb", "--workload", "burst-writefile")
    marked = [line.split()[0] for line in show.stdout.splitlines() if "regression" in line]
    assert marked == ["r06"]
    assert harness(*steps[:-2], "--last", "2").returncode == 0  # the step is older than the last 2
    ack = harness("history", "ack", "--history", store, "--workload", "burst-writefile", "--allocator", "glibc",
                  "--metric", "peak_rss_kb", "--revision", "r06", "--reason", "a larger buffer on purpose")
    assert ack.returncode == 0, ack.stderr
    r = harness(*steps)
    assert r.returncode == 0
    assert "acknowledged: a larger buffer on purpose" in r.stdout


def test_a_flat_series_has_no_step(tmp_path):
    store = tmp_path / "h.sqlite"
    series_of(tmp_path, store, [9000, 9010, 8990, 9005, 9000, 8995, 9010, 9000])
    r = harness("history", "steps", "--history", store, "--last", "8")
    assert r.returncode == 0
    assert r.stdout.startswith("0 steps in ")


def test_labels_that_are_not_utf8_keep_the_store_usable(tmp_path):
    """A --revision and a --machine that are not UTF-8 (bytes on the command
    line) go into the store escaped, reversibly (\\xff): adding, showing, the
    steps and the page all work, and the labels name one series."""
    store, machine = tmp_path / "h.sqlite", os.fsdecode(b"box-\xfe")
    for i in range(4):
        r = harness("history", "add", "--history", store, "--revision", os.fsdecode(b"r%d-\xff" % i),
                    "--machine", machine, report_at(tmp_path, f"r{i}", 9000))
        assert r.returncode == 0, r.stderr
    with sqlite3.connect(store) as db:
        db.text_factory = bytes
        revisions = sorted(r for (r,) in db.execute("SELECT DISTINCT revision FROM runs"))
        machines = {m for (m,) in db.execute("SELECT DISTINCT machine FROM runs")}
    assert revisions == [b"r%d-\\xff" % i for i in range(4)] and machines == {b"box-\\xfe"}
    show = harness("history", "show", "--history", store, "--metric", "peak_rss_kb", "--workload", "burst-writefile",
                   "--machine", machine)
    assert show.returncode == 0 and "box-" in show.stdout, show.stdout + show.stderr
    steps = harness("history", "steps", "--history", store, "--metric", "peak_rss_kb", "--machine", machine)
    assert steps.returncode == 0 and steps.stdout.startswith("0 steps in 1 series"), steps.stdout + steps.stderr
    page = harness("history", "page", "--history", store, "--metric", "peak_rss_kb", "--out", tmp_path / "site")
    assert page.returncode == 0, page.stderr
    _, data = page_data(tmp_path / "site" / "index.html")
    [series] = data["series"]
    assert series["machine"] == "box-\\xfe"
    assert sorted(p["revision"] for p in series["points"]) == [f"r{i}-\\xff" for i in range(4)]


def test_a_run_with_history_adds_its_runs_at_the_harness_revision(tmp_path):
    store, report = tmp_path / "h.sqlite", tmp_path / "r.json"
    r = harness("--workload", "idle-return", "--smoke", "-a", "glibc", "--runs", "1", "-q", "-o", report,
                "--history", store, "--machine", "runner-x")
    assert r.returncode == 0, r.stderr
    assert f"1 runs added to the history {store}" in r.stderr
    built = json.loads(report.read_text())["context"]["git_revision"].removesuffix("-dirty")
    position = subprocess.run(["git", "-C", str(ROOT), "rev-list", "--first-parent", "--count", built, "--"],
                              capture_output=True, text=True)
    if position.returncode != 0:
        pytest.skip("the harness was built outside a git checkout")
    show = harness("history", "show", "--history", store, "--metric", "peak_rss_kb", "--workload", "idle-return")
    assert " · glibc · runner-x: peak_rss_kb" in show.stdout
    row = show.stdout.splitlines()[2].split()
    assert row[:3] == [built[:12], position.stdout.strip(), "1"]


def page_data(index):
    text = index.read_text()
    start = text.index('<script type="application/json" id="history-data">') + len(
        '<script type="application/json" id="history-data">')
    return text, json.loads(text[start:text.index("</script>", start)])


def test_the_page_inlines_its_data_with_names_escaped(tmp_path):
    store = tmp_path / "h.sqlite"
    series_of(tmp_path, store, [9000] * 3 + [12000] * 3, workload=HOSTILE)
    out = tmp_path / "site"
    r = harness("history", "page", "--history", store, "--metric", "peak_rss_kb", "--out", out)
    assert r.returncode == 0, r.stderr
    assert (out / "chart.min.js").read_bytes().startswith(b"/*!\n * Chart.js")
    text, data = page_data(out / "index.html")
    assert "<img" not in text and "http" not in text.replace("https://www.chartjs.org", "")
    [series] = data["series"]
    assert series["workload"] == HOSTILE
    assert [p["median"] for p in series["points"]] == [9008] * 3 + [12008] * 3
    assert [(s["revision"], s["verdict"]) for s in series["steps"]] == [("r03", "regression")]
    # The traces of the runs the chart shows, and of no other.
    shown = sorted(i for p in series["points"] for i in p["run_ids"])
    assert sorted(map(int, data["runs"])) == shown == list(range(1, 19))
    assert max(data["runs"]["18"]["rss"]) == 12016


def test_series_are_named_as_the_user_names_them_in_display_units(tmp_path):
    # The title is the workload and the parameters that differ from its defaults (here
    # only smoke), never the stored JSON; values are in MB, rounded as tables round them.
    store = tmp_path / "h.sqlite"
    series_of(tmp_path, store, [9000] * 6 + [12000] * 3)
    r = harness("history", "steps", "--history", store, "--metric", "peak_rss_kb", "--last", "3")
    line = next(line for line in r.stdout.splitlines() if " at r06" in line)
    assert line.startswith("burst-writefile smoke · glibc · "), line
    assert "{" not in line and "peak_rss_kb (MB)" in line, line
    assert re.search(r"\(9\.\d+ -> 12\.\d+ MB; 95% CI", line), line
    show = harness("history", "show", "--history", store, "--metric", "peak_rss_kb", "--workload", "burst-writefile")
    rows = [line.split() for line in show.stdout.splitlines() if line.startswith("r0")]
    assert rows[0][3] == "9.22", rows[0]      # 9000 KiB median as MB to three digits


def test_a_named_program_keeps_its_series_when_its_arguments_change(tmp_path):
    store = tmp_path / "h.sqlite"
    for revision, args in (("r1", ["/bin/true"]), ("r2", ["/bin/true", "--changed"])):
        run = harness("--name", "app", "-a", "glibc", "-n", "1", "-q", "-o", tmp_path / f"{revision}.json",
                      "--", *args)
        assert run.returncode == 0, run.stderr
        assert add(store, tmp_path / f"{revision}.json", revision).returncode == 0
    show = harness("history", "show", "--history", store, "--metric", "peak_rss_kb", "--workload", "app")
    assert show.returncode == 0, show.stderr
    titles = [line for line in show.stdout.splitlines() if "peak_rss_kb" in line]
    assert len(titles) == 1 and titles[0].startswith("app · glibc · "), show.stdout
    assert [line.split()[0] for line in show.stdout.splitlines() if re.match(r"r\d ", line)] == ["r1", "r2"]


def long_history(tmp_path, revisions=100):
    """A store of `revisions` x 3 runs (scripts/make-large-history, no steps) and its page."""
    store, out = tmp_path / "long.sqlite", tmp_path / "site"
    made = subprocess.run([str(ROOT / "scripts" / "make-large-history"), store, "--revisions", str(revisions),
                           "--steps", "0", "--chunk", "50", "--harness", str(HARNESS)],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    r = harness("history", "page", "--history", store, "--metric", "peak_rss_kb", "--out", out)
    assert r.returncode == 0, r.stderr
    return store, out


def chunk_traces(path):
    text = path.read_text()
    head = re.match(r"historyTraces\((\d+), ", text)
    assert head and text.endswith(");\n"), text[:80]
    return int(head.group(1)), json.loads(text[head.end():-3])


def test_a_long_historys_page_inlines_the_last_revisions_and_puts_the_rest_in_chunks(tmp_path):
    """100 revisions x 3 runs of 300-point traces: index.html holds the traces of
    the last 20 revisions only (60 runs; under 0.6 MB where inlining all 300 runs
    made 2.1 MB), the other 240 runs are in traces/traces-K.js of 200 runs each,
    every run once, each chunk's ids within the range the page names for it."""
    store, out = long_history(tmp_path)
    text, data = page_data(out / "index.html")
    assert (out / "index.html").stat().st_size < 600_000
    [series] = data["series"]
    ids = [i for p in series["points"] for i in p["run_ids"]]
    last = {i for p in series["points"][-20:] for i in p["run_ids"]}
    assert set(map(int, data["runs"])) == last and len(last) == 60
    assert data["inline"] == {"revisions": 20, "runs": 60, "loaded": 240}
    chunks = sorted((out / "traces").iterdir())
    assert [c.name for c in chunks] == ["traces-0.js", "traces-1.js"]
    loaded = []
    for k, (first, last_id) in enumerate(data["chunks"]):
        index, traces = chunk_traces(out / "traces" / f"traces-{k}.js")
        assert index == k and all(first <= int(i) <= last_id for i in traces)
        assert all(len(t["t"]) == 300 for t in traces.values())
        loaded += map(int, traces)
    assert sorted(loaded + list(last)) == sorted(ids)
    assert 'script.src = \'traces/traces-\' + k + \'.js\'' in text
