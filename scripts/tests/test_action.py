"""Tests of the GitHub Action (action.yml, ci/action.sh, ci/action.py) without GitHub: the
steps of action.yml run as GitHub runs them, each with the variables GitHub would set (a
temporary GITHUB_WORKSPACE, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT; the token only to the
comment step), the install skipped and the harness of this build
(MEMHARNESS_ACTION_HARNESS overrides it), on smoke-sized comparisons.
A fake GitHub API stands in for the pull request whose comment is kept up to date.
"""
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "ci" / "action.sh"
COMMENT = ROOT / "ci" / "action.py"
HARNESS = os.environ.get("MEMHARNESS_ACTION_HARNESS") or str(ROOT / "build" / "bin" / "harness")
WORKLOAD = "idle-return --smoke"
# Only peak RSS can regress, at 1%: jemalloc holds more at idle-return's peak than
# glibc in every run (75.3 MB against 71.1 MB at smoke size), so glibc -> jemalloc
# is a regression at 3 rounds (6 baseline runs against 3: exact p 0.024).
THRESHOLDS = {"default": {"better": "none", "threshold": 0.05, "min_delta": 0},
              "metrics": {"peak_rss_kb": {"better": "lower", "threshold": 0.01, "min_delta": 0},
                          "*": {"better": "none", "threshold": 0.05, "min_delta": 0}}}


def outputs(path):
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


@pytest.fixture
def github(tmp_path):
    """The environment of a step on GitHub, and where its files go."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(GITHUB_WORKSPACE=str(workspace), GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"),
               GITHUB_OUTPUT=str(tmp_path / "output"), GITHUB_REPOSITORY="owner/project",
               MEMHARNESS_ACTION_SKIP_INSTALL="1", MEMHARNESS_ACTION_HARNESS=HARNESS)
    return env


def act(env, **inputs):
    """action.yml's steps: the comparison (ci/action.sh) with the inputs and without the
    token, then, when it left a table, the comment (ci/action.py comment) with the token.
    One result: the comparison's exit code (else the comment's) and both steps' output."""
    token = env.get("GITHUB_TOKEN")
    env = {k: v for k, v in env.items() if k != "GITHUB_TOKEN"}
    env.update({"INPUT_" + k.upper(): v for k, v in inputs.items() if k != "comment"})
    result = subprocess.run([str(ACTION)], env=env, cwd=env["GITHUB_WORKSPACE"], capture_output=True, text=True,
                            timeout=120)
    out = outputs(Path(env["GITHUB_OUTPUT"])) if Path(env["GITHUB_OUTPUT"]).exists() else {}
    if out.get("markdown"):
        step = {k: v for k, v in env.items() if not k.startswith("INPUT_")}
        step.update(INPUT_COMMENT=inputs.get("comment", "true"), MEMHARNESS_ACTION_MARKDOWN=out["markdown"],
                    **({"GITHUB_TOKEN": token} if token else {}))
        commented = subprocess.run([sys.executable, str(COMMENT), "comment"], env=step, cwd=env["GITHUB_WORKSPACE"],
                                   capture_output=True, text=True, timeout=60)
        result = subprocess.CompletedProcess(result.args, result.returncode or commented.returncode,
                                             result.stdout + commented.stdout, result.stderr + commented.stderr)
    summary = Path(env["GITHUB_STEP_SUMMARY"])
    return result, summary.read_text() if summary.exists() else "", out


def workflow_commands_outside_stops(log):
    """The lines of a step's log that GitHub would read as workflow commands, other than
    the action's own (::error::memharness:, ::warning::memharness:, the stop markers)."""
    found, stopped = [], None
    for line in log.splitlines():
        if stopped is not None:
            if line == f"::{stopped}::":
                stopped = None
            continue
        if m := re.fullmatch(r"::stop-commands::(\S+)", line):
            stopped = m.group(1)
        elif line.startswith("::") and not line.startswith(("::error::memharness:", "::warning::memharness:")):
            found.append(line)
    assert stopped is None, "commands were stopped and never resumed"
    return found


def test_a_against_a_passes_with_the_table_in_the_summary(github):
    result, summary, out = act(github, baseline="glibc", candidate="glibc", workload=WORKLOAD, runs="2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert out["verdict"] == "no-regression"
    assert "| metric | baseline | candidate |" in summary and "peak_rss_kb" in summary
    assert Path(out["markdown"]).read_text() in summary
    assert json.loads(Path(out["report"]).read_text())["regression"] is False
    folder = Path(github["GITHUB_WORKSPACE"]) / "memharness"
    assert Path(out["folder"]) == folder and (folder / "runs.json").exists() and (folder / "comparison.png").exists()
    assert "no pull-request comment (no GITHUB_TOKEN)" in result.stdout


def test_regression_fails_the_step_as_a_regression(github):
    (Path(github["GITHUB_WORKSPACE"]) / "thresholds.json").write_text(json.dumps(THRESHOLDS))
    result, summary, out = act(github, baseline="glibc", candidate="jemalloc", workload=WORKLOAD, runs="3",
                               thresholds="thresholds.json")
    assert result.returncode == 1, result.stdout + result.stderr
    assert out["verdict"] == "regression"
    assert "::error::memharness: regression" in result.stdout
    assert "| peak_rss_kb (MB) |" in summary and "**regression** |" in summary


def test_bad_input_is_an_error_not_a_regression(github):
    result, summary, out = act(github, baseline="glibc", candidate="glibc", workload="no-such-workload",
                               runs="2")
    assert result.returncode == 2, result.stdout + result.stderr
    assert out["verdict"] == "error"
    assert "::error::memharness: bad input" in result.stdout
    assert "no-such-workload" in result.stdout          # the harness's own message
    assert "regression" not in result.stdout + summary


@pytest.mark.parametrize("inputs,named", [
    ({"baseline": "glibc", "workload": WORKLOAD}, "input candidate is empty"),
    ({"baseline": "glibc", "candidate": "glibc", "workload": WORKLOAD, "suite": "quick"},
     "inputs workload, suite: exactly one of"),
    ({"merge": "shards/*.json"}, "input merge: 'shards/*.json' matches no runs report"),
    ({"merge": "shards", "workload": WORKLOAD}, "input merge with workload"),
])
def test_inputs_that_cannot_be_run_are_named(github, inputs, named):
    result, summary, out = act(github, **inputs)
    assert result.returncode == 2 and out["verdict"] == "error"
    assert f"::error::memharness: {named}" in result.stdout
    assert named in summary


class FakeGitHub(BaseHTTPRequestHandler):
    """The issue-comments API of one pull request (number 7), kept in `comments`."""
    comments = []

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))["body"]

    def do_GET(self):
        assert self.path.startswith("/repos/owner/project/issues/7/comments")
        self.reply(200, self.comments)

    def do_POST(self):
        assert self.path == "/repos/owner/project/issues/7/comments"
        self.comments.append({"id": 100 + len(self.comments), "body": self.body()})
        self.reply(201, self.comments[-1])

    def do_PATCH(self):
        found = [c for c in self.comments if self.path == f"/repos/owner/project/issues/comments/{c['id']}"]
        assert len(found) == 1, self.path
        found[0]["body"] = self.body()
        self.reply(200, found[0])

    def log_message(self, *args):
        pass


@pytest.fixture
def pull_request(github, tmp_path):
    FakeGitHub.comments = [{"id": 1, "body": "a reviewer's comment"}]
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeGitHub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    yield dict(github, GITHUB_API_URL=f"http://127.0.0.1:{server.server_port}", GITHUB_EVENT_PATH=str(event),
               GITHUB_TOKEN="a-token")
    server.shutdown()


def test_shards_merge_into_one_verdict_and_one_comment_kept_up_to_date(pull_request):
    workspace = Path(pull_request["GITHUB_WORKSPACE"])
    result, summary, out = act(pull_request, baseline="glibc", candidate="glibc", suite="quick", shard="1/12",
                               runs="2", out="shard")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verdict" not in out and Path(out["runs"]) == workspace / "shard" / "runs-1-of-12.json"
    assert FakeGitHub.comments == [{"id": 1, "body": "a reviewer's comment"}]    # shards do not comment
    for push in ("first", "second"):
        result, summary, out = act(pull_request, merge="shard")
        assert result.returncode == 0, push + result.stdout + result.stderr
        assert out["verdict"] == "no-regression"
        assert [c["id"] for c in FakeGitHub.comments] == [1, 101], push
        assert FakeGitHub.comments[1]["body"] == "<!-- memharness -->\n" + Path(out["markdown"]).read_text()


def test_history_input_adds_the_comparisons_runs_to_the_store(github):
    workspace = Path(github["GITHUB_WORKSPACE"])
    result, summary, out = act(github, baseline="glibc", candidate="glibc", workload=WORKLOAD, runs="2",
                               history="history/memory.sqlite")
    assert result.returncode == 0, result.stdout + result.stderr
    store = workspace / "history" / "memory.sqlite"
    assert "6 runs added to the history " + str(store) in result.stdout
    shown = subprocess.run([HARNESS, "history", "show", "--history", str(store), "--metric", "peak_rss_kb",
                            "--workload", "idle-return"], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "idle-return" in shown.stdout and "glibc" in shown.stdout


def test_action_yml_passes_every_input_to_the_script_and_the_token_only_to_the_comment():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    compare, comment = action["runs"]["steps"]
    assert compare["run"] == '"$GITHUB_ACTION_PATH/ci/action.sh"'
    assert comment["run"] == 'python3 "$GITHUB_ACTION_PATH/ci/action.py" comment'
    passed = {k[len("INPUT_"):].lower() for k in {**compare["env"], **comment["env"]} if k.startswith("INPUT_")}
    assert passed == {name.replace("-", "_") for name in action["inputs"]} - {"token"}
    # The token is only where nothing given by the inputs runs.
    assert not any("token" in k.lower() or "token" in str(v) for k, v in compare["env"].items())
    assert comment["env"]["GITHUB_TOKEN"] == "${{ inputs.token }}"
    assert comment["env"]["MEMHARNESS_ACTION_MARKDOWN"] == "${{ steps.compare.outputs.markdown }}"
    assert "!cancelled()" in comment["if"]  # a regression is commented too
    assert set(action["outputs"]) >= {"verdict", "report", "markdown"}


def test_what_the_harness_prints_is_no_workflow_command(github):
    """A command whose program name and arguments hold ::error:: lines: the harness's
    messages about it and the echo of its command line are between stop-commands, so
    that no line of them is a workflow command; the harness gets neither the token nor
    the inputs."""
    hostile = "'no-such-program\n::error file=x::injected\n::add-mask::x' '\n::set-output name=verdict::no-regression'"
    env = dict(github, GITHUB_TOKEN="a-token")
    result, summary, out = act(env, baseline="glibc", candidate="glibc", command=hostile, runs="2")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "::error file=x::injected" in result.stdout      # the harness's message, shown
    assert workflow_commands_outside_stops(result.stdout + result.stderr) == []
    assert out["verdict"] == "error"


def test_the_harness_runs_without_the_token_and_the_inputs(github):
    workspace = Path(github["GITHUB_WORKSPACE"])
    env = dict(github, GITHUB_TOKEN="a-token")
    result, summary, out = act(env, baseline="glibc", candidate="glibc", runs="2",
                               command=f"sh -c 'env > {workspace}/program.env'")
    assert result.returncode == 0, result.stdout + result.stderr
    names = {line.split("=", 1)[0] for line in (workspace / "program.env").read_text().splitlines() if "=" in line}
    assert "GITHUB_WORKSPACE" in names and not [n for n in names if n == "GITHUB_TOKEN" or n.startswith("INPUT_")]
    assert "a-token" not in (workspace / "program.env").read_text()


def action_module():
    spec = importlib.util.spec_from_file_location("action", COMMENT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_code_fence_in_the_steps_cannot_close_the_summarys(capsys):
    """The history steps go to the job summary in a code block: a reason holding ``` or
    longer runs of backticks stays inside it."""
    action = action_module()
    text = "r06: regression; acknowledged: x\n```\n@octocat ````` y"
    block = action.fenced(text)
    fence = block.splitlines()[0]
    assert set(fence) == {"`"} and len(fence) == 6 and block.endswith("\n" + fence)
    assert not [line for line in block.splitlines()[1:-1] if line.startswith(fence)]
    action.workflow_command("error", "memharness: a\nb%c\r::error::d")
    assert capsys.readouterr().out == "::error::memharness: a%0Ab%25c%0D::error::d\n"


def test_example_workflow_uses_the_action():
    workflow = yaml.safe_load((ROOT / "ci" / "github-workflow.yml").read_text())
    uses = [step.get("uses", "") for job in workflow["jobs"].values() for step in job["steps"]]
    assert "./" in uses or any(u.endswith("/memharness@v1") for u in uses)
    assert any("shard" in job.get("strategy", {}).get("matrix", {}) for job in workflow["jobs"].values())


def test_history_steps_gate_the_step_and_the_page_is_written(github, tmp_path):
    """A store whose program held 100 MB at two revisions and 120 MB at a third; the
    action's comparison adds a fourth at 120 MB: the step at the third revision is a
    regression among the last 2, so the step fails as a regression, with the steps in
    the summary and the page beside the reports. With history-last 0 it passes."""
    workspace = Path(github["GITHUB_WORKSPACE"])
    programs = ROOT / "build" / "harness" / "tests" / "test-programs"
    prog, store = workspace / "prog", workspace / "history" / "memory.sqlite"
    for revision, held in (("r1", "hold-100"), ("r2", "hold-100"), ("r3", "hold-120")):
        prog.write_bytes((programs / held).read_bytes())
        prog.chmod(0o755)
        done = subprocess.run([HARNESS, "-a", "glibc", "--runs", "2", "--quiet", "--history", str(store),
                               "--revision", revision, "--machine", "ci", "-o", str(tmp_path / f"{revision}.json"),
                               "--name", "prog", "--", str(prog)], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
    result, summary, out = act(github, baseline="glibc", candidate="glibc", command=str(prog), runs="2",
                               history="history/memory.sqlite", args="--revision r4 --machine ci",
                               **{"history_last": "2"})
    assert result.returncode == 1, result.stdout + result.stderr
    assert out["verdict"] == "no-regression" and out["steps"] == "regression"
    [peak] = [line for line in summary.splitlines() if "peak_rss_kb (MB) at r3" in line]
    assert "steps in the history" in summary and ": regression +" in peak
    assert "::error::memharness: a regression step" in result.stdout
    assert (Path(out["site"]) / "index.html").exists()
    result, summary, out = act(github, baseline="glibc", candidate="glibc", command=str(prog), runs="2",
                               history="history/memory.sqlite", args="--revision r5 --machine ci",
                               **{"history_last": "0"})
    assert result.returncode == 0, result.stdout + result.stderr
    assert out["steps"] == "none"


def test_history_workflow_keeps_the_store_on_a_branch_under_one_concurrency_group():
    workflow = yaml.safe_load((ROOT / "ci" / "history-workflow.yml").read_text())
    assert workflow["concurrency"]["group"] and workflow["concurrency"]["cancel-in-progress"] is False
    jobs = workflow["jobs"]
    [measure] = [job for job in jobs.values() if any(step.get("uses") == "./" for step in job["steps"])]
    [action] = [step for step in measure["steps"] if step.get("uses") == "./"]
    assert action["with"]["history"].startswith("history/") and action["with"]["history-last"] == 1
    inputs = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    assert set(action["with"]) <= set(inputs)
    # The job that runs the pins reads only; the store is pushed by another job.
    assert measure["permissions"] == {"contents": "read"} and workflow["permissions"] == {"contents": "read"}
    [store] = [job for job in jobs.values()
               if re.search(r"\bgit\b.* push origin", "\n".join(s.get("run", "") for s in job["steps"]))]
    assert store is not measure and store["permissions"] == {"contents": "write"}
    assert "memharness-history" in "\n".join(s.get("run", "") for s in store["steps"])
    assert not any(step.get("uses") == "./" for step in store["steps"])
    [pages] = [job for job in jobs.values()
               if any(step.get("uses", "").startswith("actions/deploy-pages") for step in job["steps"])]
    assert pages is not measure and "id-token" not in measure["permissions"]


@pytest.mark.parametrize("name", ["github-workflow.yml", "history-workflow.yml"])
def test_example_workflows_leave_no_token_in_the_checkout(name):
    """Every checkout says persist-credentials: false (else the token sits in .git/config
    for the program under test to read); a step given the token runs no harness."""
    workflow = yaml.safe_load((ROOT / "ci" / name).read_text())
    checkouts = [step for job in workflow["jobs"].values() for step in job["steps"]
                 if step.get("uses", "").startswith("actions/checkout")]
    assert checkouts and all(step["with"]["persist-credentials"] is False for step in checkouts)
    for job in workflow["jobs"].values():
        for step in job["steps"]:
            if "github.token" in json.dumps(step):
                assert step.get("uses") != "./" and not re.search(r"(?<![\w-])harness\b", step.get("run", ""))
