#!/usr/bin/env python3
"""The comparison of action.yml, run by ci/action.sh once the harness is built: one
`harness compare` (or one shard of it, or the merge of the shards' runs), its markdown
table in the job summary, verdict and paths in the step's outputs, and every report and
plot in one folder for upload-artifact. `action.py comment`, action.yml's next step and
the only one given the token, keeps one pull-request comment up to date with the table.

What the harness prints (names, marks and messages a program under test controls) goes
to the log between ::stop-commands::TOKEN and ::TOKEN:: (a fresh random TOKEN each
time), so that no line of it is a workflow command; the harness and what it runs get
the environment without the token and the INPUT_* variables.

Inputs are the environment variables INPUT_<NAME> that action.yml sets; GitHub's own
(GITHUB_WORKSPACE, GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, GITHUB_EVENT_PATH, ...) are read
as GitHub sets them, so the tests run this without GitHub.
Exit: 0 no regression, 1 a regression, 2 bad input, 3 a harness bug, 4 an incomplete
comparison (a run failed, or it was stopped: verdict=incomplete, its headline in an
::error:: line); 2 and 3 are errors (verdict=error, an ::error:: line), never reported
as a regression.
"""
import contextlib
import glob
import json
import os
import re
import secrets
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- memharness -->"     # finds this action's comment among a pull request's
COMMENT_LIMIT = 60000              # GitHub refuses a comment body over 65536 characters
# The harness's exit codes (harness compare --help); any other is an error. A
# comparison stopped by a signal (128 + N) is an error of the step, not a verdict.
VERDICTS = {0: "no-regression", 1: "regression", 4: "incomplete"}
TARGETS = ("workload", "suite", "command")
# Kept from the harness and everything it starts (the harness withholds them from its
# children as well: docs/options.md#environment).
CREDENTIALS = re.compile(r"^(GITHUB_TOKEN|ACTIONS_RUNTIME_TOKEN|CI_JOB_TOKEN|BUILDKITE_AGENT_ACCESS_TOKEN|"
                         r"ACTIONS_ID_TOKEN_REQUEST_.*|INPUT_.*)$")


class BadInput(Exception):
    pass


@dataclass
class Plan:
    """What one step does: the harness commands in order and the files they leave."""
    out: Path
    commands: list = field(default_factory=list)
    comparison: Path = None        # None: a shard, whose verdict comes from the merge
    markdown: Path = None
    runs: Path = None
    history: list = field(default_factory=list)   # after the comparison: steps, then the page


def inp(name):
    return os.environ.get("INPUT_" + name.upper().replace("-", "_"), "").strip()


def harness():
    return os.environ.get("MEMHARNESS_ACTION_HARNESS") or str(ROOT / "build" / "bin" / "harness")


def workspace():
    return Path(os.environ.get("GITHUB_WORKSPACE") or os.getcwd())


def harness_env():
    return {k: v for k, v in os.environ.items() if not CREDENTIALS.match(k)}


def workflow_command(kind, message):
    """`::error::` or `::warning::` with its message escaped as GitHub reads it back (a
    newline in a message ends neither it nor starts another command)."""
    data = str(message).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    print(f"::{kind}::{data}", flush=True)


@contextlib.contextmanager
def commands_stopped():
    """Between these, GitHub reads no line of the log as a workflow command: what the
    harness prints goes there. The token is random, so nothing printed can resume them."""
    token = secrets.token_hex(16)
    print(f"::stop-commands::{token}", flush=True)
    try:
        yield
    finally:
        sys.stdout.flush()
        print(f"::{token}::", flush=True)


def harness_run(command, keep_stdout=False):
    """A harness command, with its output in the log between stop-commands (standard
    error into standard output, so that the two keep their order between the markers);
    with keep_stdout, standard output is kept for the caller and only standard error
    goes to the log."""
    with commands_stopped():
        print("memharness: " + shlex.join(command), flush=True)
        if keep_stdout:
            result = subprocess.run(command, cwd=workspace(), env=harness_env(), capture_output=True, text=True)
            sys.stdout.write(result.stderr)
        else:
            result = subprocess.run(command, cwd=workspace(), env=harness_env(), stderr=subprocess.STDOUT)
    return result


def plan():
    """The commands for the inputs given, or BadInput naming the input at fault."""
    out = workspace() / (inp("out") or "memharness")
    common = ["--thresholds", inp("thresholds")] if inp("thresholds") else []
    common += shlex.split(inp("args"))
    if inp("merge"):
        return plan_merge(out, common)
    return plan_compare(out, common + history())


def history():
    """--history STORE: where the comparison's runs are added (docs/history.md)."""
    return ["--history", str(workspace() / inp("history"))] if inp("history") else []


def history_after(p):
    """With a history store, once the comparison is in it: its steps (gating on the last
    N revisions with history-last) and its page, OUT/history-site."""
    if not inp("history"):
        return
    last = inp("history-last")
    if last and not last.isdigit():
        raise BadInput(f"input history-last: '{last}' is not a number of revisions (e.g. 1; empty: steps "
                       "are listed, not gated on)")
    p.history.append([harness(), "history", "steps"] + history() + (["--last", last] if last else []))
    p.history.append([harness(), "history", "page"] + history() + ["--out", str(p.out / "history-site")])


def plan_compare(out, common):
    missing = [name for name in ("baseline", "candidate") if not inp(name)]
    if missing:
        raise BadInput(f"input {' and '.join(missing)} is empty: a pin (an allocator such as glibc or "
                       "jemalloc:background_thread=true, a pins-file name, or scav@REV) is expected")
    given = [name for name in TARGETS if inp(name)]
    if len(given) != 1:
        raise BadInput(f"inputs {', '.join(given) or 'workload, suite and command'}: exactly one of "
                       "workload, suite or command is expected")
    target = {"workload": lambda v: ["--workload"] + shlex.split(v), "suite": lambda v: ["--suite", v],
              "command": lambda v: ["--"] + shlex.split(v)}[given[0]](inp(given[0]))
    head = [harness(), "compare", "--baseline", inp("baseline"), "--candidate", inp("candidate"),
            "--runs", inp("runs") or "5", "--quiet"] + common
    if inp("shard"):
        tag = inp("shard").replace("/", "-of-")
        p = Plan(out=out, runs=out / f"runs-{tag}.json")
        p.commands.append(head + ["--shard", inp("shard"), "--report", str(p.runs),
                                  "--out", str(out / f"comparison-{tag}.json")] + target)
        return p
    p = Plan(out=out, comparison=out / "comparison.json", markdown=out / "comparison.md", runs=out / "runs.json")
    p.commands.append(head + ["--report", str(p.runs), "--out", str(p.comparison),
                              "--export-markdown", str(p.markdown)] + target)
    history_after(p)
    return p


def plan_merge(out, common):
    given = [name for name in TARGETS + ("baseline", "candidate", "shard") if inp(name)]
    if given:
        raise BadInput(f"input merge with {', '.join(given)}: the merge takes its pins and workloads from "
                       "the shards' runs reports, so only merge (and thresholds, args, out) is expected")
    pattern = inp("merge")
    base = workspace() / pattern
    found = sorted(glob.glob(str(base / "runs-*.json") if base.is_dir() else str(base)))
    if not found:
        raise BadInput(f"input merge: '{pattern}' matches no runs report (a folder holding the shards' "
                       "runs-*.json, or a glob of them, is expected)")
    p = Plan(out=out, comparison=out / "comparison.json", markdown=out / "comparison.md", runs=out / "runs.json")
    p.commands.append([harness(), "merge"] + found + ["-o", str(p.runs)])
    if inp("history"):
        p.commands.append([harness(), "history", "add"] + history() + [str(p.runs)])
    p.commands.append([harness(), "compare", str(p.runs), "--out", str(p.comparison),
                       "--export-markdown", str(p.markdown)] + common)
    history_after(p)
    return p


def run(p):
    """The exit code of the plan's last command, or of the first that failed with an error."""
    rc = 0
    for command in p.commands:
        rc = harness_run(command).returncode
        if rc not in VERDICTS:
            return rc
    return rc


def set_outputs(**values):
    lines = "".join(f"{name}={value}\n" for name, value in values.items())
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a") as f:
            f.write(lines)
    else:
        sys.stdout.write(lines)


def summarise(text):
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a") as f:
            f.write(text.rstrip("\n") + "\n\n")


def error(message, rc):
    """An error, not a regression: exit 2 for bad input, 3 for anything else the harness did."""
    code = 2 if rc == 2 else 3
    workflow_command("error", f"memharness: {message}")
    summarise(f"### memharness: error\n\n{message}")
    set_outputs(verdict="error")
    return code


def judged(p, rc):
    """The verdict of a comparison that ran, and its headline, from its JSON."""
    with open(p.comparison) as f:
        comparison = json.load(f)
    return VERDICTS[rc], comparison.get("summary", "")


def plot(p):
    """A plot of the comparison beside it; one that cannot be drawn is a warning only."""
    image = p.out / "comparison.png"
    result = harness_run([harness(), "plot", "--compare", str(p.comparison), "-o", str(image)])
    if result.returncode != 0:
        workflow_command("warning", "memharness: no plot (its message is above)")


def pull_request():
    """The pull request's number from the event GitHub saved, or None."""
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path or not os.path.exists(path):
        return None
    with open(path) as f:
        event = json.load(f)
    if "pull_request" in event:
        return event["pull_request"]["number"]
    issue = event.get("issue") or {}
    return issue.get("number") if "pull_request" in issue else None


def api(method, url, token, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
        "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response), response.headers.get("Link", "")


def previous_comment(base, token):
    """The id of this action's earlier comment (the marker at its start), or None."""
    url = f"{base}/comments?per_page=100"
    while url:
        comments, link = api("GET", url, token)
        for c in comments:
            if c.get("body", "").startswith(MARKER):
                return c["id"]
        url = next((part.split(";")[0].strip(" <>") for part in link.split(",") if 'rel="next"' in part), None)
    return None


def comment(markdown):
    """Keeps one comment on the pull request up to date: the previous one edited, else one posted."""
    token, number = os.environ.get("GITHUB_TOKEN"), pull_request()
    if not token or number is None:
        print(f"memharness: no pull-request comment ({'no pull request' if token else 'no GITHUB_TOKEN'})")
        return
    if len(markdown) > COMMENT_LIMIT:
        markdown = markdown[:COMMENT_LIMIT] + "\n\n(cut here: the whole table is in the job summary)\n"
    body = {"body": f"{MARKER}\n{markdown}"}
    api_url = os.environ.get("GITHUB_API_URL", "https://api.github.com")
    base = f"{api_url}/repos/{os.environ.get('GITHUB_REPOSITORY')}/issues"
    try:
        found = previous_comment(f"{base}/{number}", token)
        if found is None:
            api("POST", f"{base}/{number}/comments", token, body)
        else:
            api("PATCH", f"{base}/comments/{found}", token, body)
    except (urllib.error.URLError, OSError, ValueError) as e:
        # A fork's pull request gets a read-only token: the verdict stands without the comment.
        workflow_command("warning", f"memharness: the pull-request comment was not written: {e}")


def steps_and_page(p):
    """The history's steps into the summary and the page beside the reports; the steps'
    exit code (1: a regression step among the last history-last revisions)."""
    if not p.history:
        return 0
    steps = harness_run(p.history[0], keep_stdout=True)
    summarise(f"### memharness: steps in the history\n\n{fenced(steps.stdout.strip() or '(none)')}")
    page = harness_run(p.history[1])
    if page.returncode == 0:
        set_outputs(site=p.out / "history-site")
    else:
        workflow_command("warning", "memharness: no history page (its message is above)")
    set_outputs(steps={0: "none", 1: "regression"}.get(steps.returncode, "error"))
    if steps.returncode not in VERDICTS:
        workflow_command("warning", f"memharness: history steps exited {steps.returncode} (its message is above)")
        return 0
    if steps.returncode == 1:
        workflow_command("error", f"memharness: a regression step among the last {inp('history-last')} revisions "
                                  "of the history (the summary lists it)")
    return steps.returncode


def fenced(text):
    """`text` in a code block whose fence no line of it can close: longer than any run of
    backticks in it (a reason of an acknowledgement may hold ```)."""
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def report(p, rc):
    """Outputs, summary, plot and comment of a comparison that ran; the step's exit code."""
    verdict, headline = judged(p, rc)
    markdown = p.markdown.read_text()
    plot(p)
    summarise(markdown)
    set_outputs(verdict=verdict, report=p.comparison, markdown=p.markdown)
    if rc == 1:
        workflow_command("error", f"memharness: regression: {headline} ({p.markdown})")
    if rc == 4:
        workflow_command("error", f"memharness: incomplete: {headline} ({p.markdown})")
    return max(rc, steps_and_page(p))


def main():
    try:
        p = plan()
    except BadInput as e:
        return error(str(e), 2)
    p.out.mkdir(parents=True, exist_ok=True)
    set_outputs(folder=p.out, runs=p.runs)
    rc = run(p)
    if rc not in VERDICTS:
        kind = "bad input" if rc == 2 else "a harness error"
        return error(f"{kind}: the harness exited {rc} (its message is above); what it measured is in {p.out}",
                     rc)
    if p.comparison is None:
        if not p.runs.exists():
            return error(f"the harness exited {rc} without writing {p.runs}", 3)
        summarise(f"memharness shard {inp('shard')}: runs in `{p.runs}`; the verdict comes from the merge")
        return 0
    if not (p.comparison.exists() and p.markdown.exists()):
        return error(f"the harness exited {rc} without writing {p.comparison} and {p.markdown}", 3)
    return report(p, rc)


def main_comment():
    """action.yml's comment step: the table the compare step wrote
    (MEMHARNESS_ACTION_MARKDOWN, its output `markdown`) into the pull-request comment."""
    if inp("comment").lower() in ("false", "no", "0"):
        return 0
    markdown = os.environ.get("MEMHARNESS_ACTION_MARKDOWN", "")
    if not markdown or not os.path.exists(markdown):
        print("memharness: no pull-request comment (the comparison wrote no table)")
        return 0
    comment(Path(markdown).read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main_comment() if sys.argv[1:] == ["comment"] else main())
