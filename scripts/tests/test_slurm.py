"""A real Slurm job array on this machine: munged, slurmctld and slurmd started in the
foreground with a configuration of the test's own (in a temporary folder, on free
ports, with a munge key and socket of its own), ci/slurm/submit.sh submits the quick
suite as an array of three tasks with `--shard auto` and the merge job after it, and
the merged report must hold exactly the single-machine plan's runs, each once, in the
plan's order. Every daemon is stopped at the end, also when the test fails. Skipped,
with the reason, where Slurm or munge is not installed or the test is not root.

By hand (as root): /usr/bin/python3 -m pytest -q -p no:cacheprovider scripts/tests/test_slurm.py
"""
import getpass
import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ROOT / "build" / "bin" / "harness"
SUBMIT = ROOT / "ci" / "slurm" / "submit.sh"
PROGRAMS = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "runuser"]

pytestmark = pytest.mark.slow


def missing_reason():
    absent = [p for p in PROGRAMS if not shutil.which(p) and not Path("/usr/sbin", p).exists()]
    if absent:
        return ("not installed: " + ", ".join(absent) +
                " (apt-get install --no-install-recommends slurm-wlm munge; scripts/lib/setup.sh does it)")
    if os.geteuid() != 0:
        return "slurmd and munged are started as root and munge: run as root"
    try:
        pwd.getpwnam("munge")
    except KeyError:
        return "there is no munge user (the munge package makes it)"
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def node_line():
    """This host as slurmd sees it (its CPUs and memory), without the uptime."""
    out = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout
    return next(line for line in out.splitlines() if line.startswith("NodeName="))


def slurm_conf(d, munge_socket):
    node = node_line()
    host = re.match(r"NodeName=(\S+)", node)[1]
    return f"""ClusterName=memharness
SlurmctldHost={host}
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
AuthType=auth/munge
AuthInfo=socket={munge_socket}
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
{node}
PartitionName=memharness Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""


class Cluster:
    """The three daemons, each in a process group of its own, and where they keep things."""

    def __init__(self, d):
        self.d = d
        self.procs = []
        self.env = {**os.environ, "SLURM_CONF": str(d / "slurm.conf")}
        self.leftovers = []

    def start(self, name, argv, **kw):
        log = open(self.d / f"{name}.out", "w")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=self.env, **kw)
        self.procs.append((name, p))
        return p

    def logs(self):
        out = ""
        for path in sorted(self.d.glob("*.out")) + sorted(self.d.glob("*.log")):
            out += f"--- {path.name}\n" + path.read_text(errors="replace")[-3000:]
        return out

    def ours(self):
        """Processes started under this cluster's configuration (job steps), by id."""
        mark = f"SLURM_CONF={self.d}/slurm.conf".encode()
        pids = []
        for proc in Path("/proc").iterdir():
            if proc.name.isdigit() and int(proc.name) != os.getpid():
                try:
                    if mark in (proc / "environ").read_bytes().split(b"\0"):
                        pids.append(int(proc.name))
                except OSError:
                    pass
        return pids

    def stop(self):
        if any(name == "slurmctld" and p.poll() is None for name, p in self.procs):
            subprocess.run(["scancel", "-u", getpass.getuser()], env=self.env, capture_output=True, timeout=30)
            end = time.monotonic() + 20
            while time.monotonic() < end and not queue_empty(self, []):
                time.sleep(0.5)
        for name, p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for name, p in reversed(self.procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        # A job's process that outlived the daemons.
        self.leftovers = self.ours()
        for pid in self.leftovers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def start_munge(c):
    m = c.d / "munge"
    m.mkdir()
    m.chmod(0o755)  # munged: every user may reach its socket, none other may write here
    key = m / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    user = pwd.getpwnam("munge")
    for path in (m, key):
        os.chown(path, user.pw_uid, user.pw_gid)
    sock = m / "munge.socket"
    c.start("munged", ["runuser", "-u", "munge", "--", "munged", "-F", f"--socket={sock}", f"--key-file={key}",
                       f"--log-file={m}/munged.log", f"--pid-file={m}/munged.pid", f"--seed-file={m}/munged.seed"])
    wait_for(lambda: sock.exists(), 20, c, "munged's socket")
    return sock


def wait_for(ready, seconds, c, what):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if ready():
            return
        dead = [name for name, p in c.procs if p.poll() is not None]
        if dead:
            pytest.fail(f"{', '.join(dead)} ended while waiting for {what}\n{c.logs()}")
        time.sleep(0.5)
    pytest.fail(f"no {what} after {seconds} s\n{c.logs()}")


def node_idle(c):
    out = subprocess.run(["sinfo", "-h", "-o", "%t"], env=c.env, capture_output=True, text=True).stdout
    return out.strip() in ("idle", "mix", "alloc")


def never_runs(c, job):
    """A job whose dependency failed (a task of the array ended badly) waits forever."""
    out = subprocess.run(["squeue", "-h", "-j", job, "-o", "%r"], env=c.env, capture_output=True, text=True)
    return "DependencyNeverSatisfied" in out.stdout


def queue_empty(c, jobs):
    """No job of `jobs` (of any, when empty) is pending or running."""
    argv = ["squeue", "-h"] + (["-j", ",".join(jobs)] if jobs else [])
    out = subprocess.run(argv, env=c.env, capture_output=True, text=True)
    return out.returncode == 0 and not out.stdout.strip()


@pytest.fixture
def cluster():
    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    d = Path(tempfile.mkdtemp(prefix="memharness-slurm-"))
    d.chmod(0o755)
    for sub in ("state", "spool", "out"):
        (d / sub).mkdir()
    c = Cluster(d)
    # Stopped by a signal (a time limit), the daemons are still stopped.
    previous = signal.signal(signal.SIGTERM, lambda *_: pytest.exit("stopped by SIGTERM", returncode=1))
    try:
        sock = start_munge(c)
        (d / "slurm.conf").write_text(slurm_conf(d, sock))
        c.start("slurmctld", ["slurmctld", "-D", "-i", "-f", str(d / "slurm.conf")])
        c.start("slurmd", ["slurmd", "-D", "-f", str(d / "slurm.conf")])
        wait_for(lambda: node_idle(c), 60, c, "an idle node")
        yield c
    finally:
        c.stop()
        signal.signal(signal.SIGTERM, previous)
        left = [name for name, p in c.procs if p.poll() is None] + [f"job process {p}" for p in c.leftovers]
        shutil.rmtree(d, ignore_errors=True)
        assert not left, f"still running after the test: {left}"


def test_array_of_three_shards_merges_into_the_plan(cluster):
    c = cluster
    out = c.d / "out"
    env = {**c.env, "MEMHARNESS_HARNESS": str(HARNESS), "MEMHARNESS_OUT": str(out)}
    submitted = subprocess.run(["bash", str(SUBMIT)], env=env, cwd=c.d, capture_output=True, text=True, timeout=60)
    assert submitted.returncode == 0, submitted.stderr + c.logs()
    merge_job = submitted.stdout.strip().split(";")[0]
    jobs = [merge_job]
    def ended():
        if never_runs(c, merge_job):
            pytest.fail("a task of the array failed: the merge job will never run\n" + "\n".join(
                p.name + ": " + p.read_text()[-2000:] for p in c.d.glob("memharness-*.log")) + c.logs())
        return queue_empty(c, jobs)

    wait_for(ended, 900, c, "the array and the merge job to end")
    merged = out / "merged.json"
    assert merged.exists(), "no merged report\n" + "\n".join(
        p.name + ": " + p.read_text()[-2000:] for p in c.d.glob("memharness-*.log")) + c.logs()

    plan = subprocess.run([str(HARNESS), "--suite", "quick", "-a", "glibc", "-a", "scav", "-n", "1", "--dry-run"],
                          capture_output=True, text=True, check=True).stdout
    planned = [tuple(re.split(r"\s{2,}", line.strip())) for line in plan.splitlines()[1:] if line.startswith("  ")]
    report = json.loads(merged.read_text())
    runs = [(r["workload"], r["allocator"]["name"], f"round {r['repetition']}") for r in report["runs"]]
    assert runs == planned
    assert len(set(runs)) == len(runs)
    shards = [ctx["context"] if "context" in ctx else ctx for ctx in report["context"]["merged_from"]]
    assert sorted(s["plan"]["shard"] for s in shards) == ["1/3", "2/3", "3/3"]
    assert {s["shard_engine"]["engine"] for s in shards} == {"slurm"}
    assert len({s["shard_engine"]["job"]["SLURM_ARRAY_JOB_ID"] for s in shards}) == 1
