"""`harness show REPORT` prints a report's table again: the same table the run
printed, the same markdown and CSV the run's --export-markdown and --export-csv
wrote, and bad input refused with exit 2 naming it.

The harness under test is build/bin/harness, or $MEMHARNESS_HARNESS.
"""
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(os.environ.get("MEMHARNESS_HARNESS", ROOT / "build" / "bin" / "harness"))


def run(*args, check=True):
    r = subprocess.run([str(HARNESS), *args], capture_output=True, text=True, timeout=300)
    if check:
        assert r.returncode == 0, r.stderr
    return r


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    d = tmp_path_factory.mktemp("show")
    r = run("-w", "idle-return", "-a", "glibc", "-a", "scav", "-n", "2", "--smoke", "--out", str(d / "r.json"),
            "--export-markdown", str(d / "r.md"), "--export-csv", str(d / "r.csv"))
    return d, r.stdout


def table_lines(text):
    # The run's table, without the lines that name files.
    return [line for line in text.splitlines() if not line.startswith(("report:", "markdown:", "csv:"))]


def test_the_table_printed_again_is_the_one_the_run_printed(measured):
    d, printed = measured
    again = run("show", str(d / "r.json")).stdout
    assert "idle-return" in again and "scav" in again
    assert table_lines(again) == table_lines(printed)


def test_markdown_and_csv_again_are_what_the_run_wrote(measured):
    d, _ = measured
    assert run("show", str(d / "r.json"), "--format", "markdown").stdout.strip() == (d / "r.md").read_text().strip()
    assert run("show", str(d / "r.json"), "--format", "csv").stdout.strip() == (d / "r.csv").read_text().strip()


def test_another_reference_changes_only_the_ratio_column(measured):
    d, _ = measured
    by_scav = run("show", str(d / "r.json"), "--reference", "scav").stdout
    assert "ratio to scav" in by_scav and "ratio to glibc" not in by_scav


@pytest.mark.parametrize("args, words", [
    (["--reference", "tcmalloc"], ["tcmalloc", "glibc", "scav"]),
    (["--format", "html"], ["html", "table", "markdown", "csv"]),
])
def test_bad_input_is_refused_naming_it(measured, args, words):
    d, _ = measured
    r = run("show", str(d / "r.json"), *args, check=False)
    assert r.returncode == 2
    for w in words:
        assert w in r.stderr


def test_a_report_that_is_not_there_is_refused(tmp_path):
    r = run("show", str(tmp_path / "missing.json"), check=False)
    assert r.returncode == 2 and "missing.json" in r.stderr
