"""The examples of ci/ for other engines (a Slurm array, a Kubernetes Indexed Job,
a GitLab `parallel:` job): each file is parsed, and its shard command runs under the
variables its engine would set, once per shard, through a `harness` that adds
--dry-run (the plan is printed, nothing runs). The shards' runs together must be the
plan without --shard, each run once. And a real run under Bazel's variables: the
report records the engine, the shard and the job, and Bazel's status file is touched."""
import json
import os
import re
import shlex
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CI = ROOT / "ci"
HARNESS = ROOT / "build" / "bin" / "harness"

# Stands in for `harness` and `./scripts/harness`: the real one with --dry-run;
# without its --shard when MEMHARNESS_NO_SHARD is set (the whole plan).
WRAPPER = """#!/usr/bin/env python3
import os, sys
args = sys.argv[1:]
if os.environ.get("MEMHARNESS_NO_SHARD"):
    i = args.index("--shard")
    del args[i:i + 2]
os.execv({harness!r}, [{harness!r}] + args + ["--dry-run"])
"""


@pytest.fixture
def fake_harness(tmp_path):
    bin_dir = tmp_path / "bin"
    (bin_dir / "scripts").mkdir(parents=True)
    for path in (bin_dir / "harness", bin_dir / "scripts" / "harness"):
        path.write_text(WRAPPER.format(harness=str(HARNESS)))
        path.chmod(0o755)
    return bin_dir


def planned_runs(text):
    """The runs a --dry-run prints, each as (workload, allocator, round)."""
    lines = text.splitlines()
    assert lines and lines[0].startswith("plan"), text
    return [tuple(re.split(r"\s{2,}", line.strip())) for line in lines[1:] if line.startswith("  ")]


def run_shell(command, env, cwd):
    proc = subprocess.run(["bash", "-c", command], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def check_covers(command, shard_envs, fake_harness, tmp_path):
    """Runs `command` under each shard's variables: the shards' runs are the whole plan's, once."""
    base = {"PATH": f"{fake_harness}:/usr/bin:/bin", "HOME": str(tmp_path)}
    whole = planned_runs(run_shell(command, {**base, **shard_envs[0], "MEMHARNESS_NO_SHARD": "1"}, fake_harness))
    got = []
    for i, variables in enumerate(shard_envs):
        out = run_shell(command, {**base, **variables}, fake_harness)
        assert out.startswith(f"plan of shard {i + 1}/{len(shard_envs)}:"), out
        got += planned_runs(out)
    assert whole, "the whole plan has no runs"
    assert Counter(got) == Counter(whole)
    assert max(Counter(got).values()) == 1
    return whole


def test_slurm_array_script(fake_harness, tmp_path):
    script = (CI / "slurm" / "memharness-array.sbatch").read_text()
    array = re.search(r"^#SBATCH --array=(\d+)-(\d+)(%\d+)?$", script, re.M)
    assert array, "the script names its array"
    lo, hi = int(array[1]), int(array[2])
    ids = list(range(lo, hi + 1))
    envs = [{"SLURM_ARRAY_TASK_ID": str(i), "SLURM_ARRAY_TASK_MIN": str(lo), "SLURM_ARRAY_TASK_MAX": str(hi),
             "SLURM_ARRAY_TASK_STEP": "1", "SLURM_ARRAY_TASK_COUNT": str(len(ids)), "SLURM_ARRAY_JOB_ID": "7",
             "MEMHARNESS_OUT": str(tmp_path / "out")} for i in ids]
    script_file = tmp_path / "array.sbatch"
    script_file.write_text(script)
    whole = check_covers(f"bash {shlex.quote(str(script_file))}", envs, fake_harness, tmp_path)
    assert {r[1] for r in whole} == {"glibc", "scav"}
    submit = (CI / "slurm" / "submit.sh").read_text()
    assert "--dependency=" in submit and " merge " in submit


def test_kubernetes_indexed_job(fake_harness, tmp_path):
    job = yaml.safe_load((CI / "kubernetes" / "memharness-job.yaml").read_text())
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    container = spec["template"]["spec"]["containers"][0]
    stated = {e["name"]: e["value"] for e in container.get("env", [])}
    command = container["command"]
    assert command[:2] == ["sh", "-c"]
    envs = [{"JOB_COMPLETION_INDEX": str(i), **stated} for i in range(spec["completions"])]
    check_covers(command[2], envs, fake_harness, tmp_path)
    merge = yaml.safe_load((CI / "kubernetes" / "memharness-merge.yaml").read_text())
    merge_command = merge["spec"]["template"]["spec"]["containers"][0]["command"][2]
    assert merge_command.startswith("harness merge /results/shard-")
    # The image the manifests name is the Dockerfile's, with `harness` on its PATH.
    dockerfile = (CI / "kubernetes" / "Dockerfile").read_text()
    assert "cmake --install build --prefix /usr/local" in dockerfile
    assert container["image"] == merge["spec"]["template"]["spec"]["containers"][0]["image"] == "memharness:latest"


def test_gitlab_parallel_job(fake_harness, tmp_path):
    pipeline = yaml.safe_load((CI / "gitlab" / "memharness.gitlab-ci.yml").read_text())
    shards = [job for job in pipeline.values() if isinstance(job, dict) and "parallel" in job]
    assert len(shards) == 1
    job = shards[0]
    (command,) = [line for line in job["script"] if "--shard auto" in line]
    n = job["parallel"]
    envs = [{"CI_NODE_INDEX": str(i), "CI_NODE_TOTAL": str(n), "CI_JOB_ID": str(100 + i)} for i in range(1, n + 1)]
    check_covers(command, envs, fake_harness, tmp_path)
    merge = [j for j in pipeline.values() if isinstance(j, dict) and any(" merge " in s for s in j.get("script", []))]
    assert merge and merge[0]["stage"] != job["stage"]


def test_the_report_records_the_engine_and_bazel_is_told(tmp_path):
    out = tmp_path / "r.json"
    status = tmp_path / "shard-status"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TEST_SHARD_INDEX": "0", "TEST_TOTAL_SHARDS": "1",
           "TEST_SHARD_STATUS_FILE": str(status), "TEST_TARGET": "//mem:idle"}
    proc = subprocess.run([str(HARNESS), "-w", "micro", "--smoke", "-a", "glibc", "-n", "1", "--shard", "auto",
                           "--out", str(out), "-q"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    context = json.loads(out.read_text())["context"]
    assert context["shard_engine"]["engine"] == "bazel"
    assert context["shard_engine"]["shard"] == "1/1" == context["plan"]["shard"]
    assert context["shard_engine"]["job"] == {"TEST_TARGET": "//mem:idle"}
    assert status.exists()
    assert context["machine_id"] == (Path("/etc/machine-id").read_text().strip() or None)
    assert context["boot_id"] == Path("/proc/sys/kernel/random/boot_id").read_text().strip()
