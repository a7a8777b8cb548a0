"""A CI runner's credentials stay with the harness: GITHUB_TOKEN and INPUT_* in the
harness's environment reach neither the program under test nor its load generator,
and the report names them (names only, never their values).

The harness under test is build/bin/harness, or $MEMHARNESS_HARNESS.
"""
import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HARNESS = Path(os.environ.get("MEMHARNESS_HARNESS", ROOT / "build" / "bin" / "harness"))
SECRET = "ghs_not-a-real-token-0123456789"


def test_the_runners_credentials_do_not_reach_the_program(tmp_path):
    env = dict(os.environ, GITHUB_TOKEN=SECRET, INPUT_X="an input", ACTIONS_ID_TOKEN_REQUEST_TOKEN=SECRET,
               MEMHARNESS_TEST_KEPT="kept")
    program, load = tmp_path / "program.env", tmp_path / "load.env"
    r = subprocess.run([str(HARNESS), "-a", "glibc", "-n", "1", "--quiet", "-o", str(tmp_path / "r.json"),
                        "--ready", "ready", "--load", f"sh -c 'env > {load}'", "--idle", "0",
                        "--", "sh", "-c", f"env > {program}; echo ready; sleep 30"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for dump in (program, load):
        names = {line.split("=", 1)[0] for line in dump.read_text().splitlines() if "=" in line}
        assert "MEMHARNESS_TEST_KEPT" in names, dump           # the rest of the environment is there
        assert not names & {"GITHUB_TOKEN", "INPUT_X", "ACTIONS_ID_TOKEN_REQUEST_TOKEN"}, dump
        assert SECRET not in dump.read_text()
    text = (tmp_path / "r.json").read_text()
    assert json.loads(text)["context"]["environment_withheld"] == [
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "GITHUB_TOKEN", "INPUT_X"]
    assert SECRET not in text and "an input" not in text


def test_a_report_made_outside_ci_names_nothing_withheld(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "CI_JOB_TOKEN")
           and not k.startswith(("INPUT_", "ACTIONS_"))}
    r = subprocess.run([str(HARNESS), "-a", "glibc", "-n", "1", "--quiet", "-o", str(tmp_path / "r.json"),
                        "--", "true"], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "environment_withheld" not in json.loads((tmp_path / "r.json").read_text())["context"]
