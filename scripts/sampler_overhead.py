"""What sampling costs a workload, measured with the harness.

The same workload runs under three arms per round: sampled every 10 ms (the
default), every 1000 ms (as good as unsampled), and every 1000 ms again (an A/A
control: what the method reports when nothing differs). Each round runs the arms
in an order drawn from a seeded generator, so drift on a busy machine and the
after-effects of one run on the next (page cache, writeback) fall on every arm
alike. The cost is the median over rounds of the paired change (10 ms against
1000 ms in the same round), with a bootstrap 95% confidence interval over the
rounds; the control's interval shows how finely the machine can resolve it.

Standard library only: runs under any python3.
  scripts/sampler-overhead [--rounds N] [--seed S] [--limit PCT] [-- harness options]
  scripts/sampler-overhead --analyse DIR...   (runs kept with --keep, pooled)
"""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ARMS = (("10 ms", 10), ("1000 ms", 1000), ("1000 ms again", 1000))
TESTED, BASE, CONTROL = (name for name, _ in ARMS)
DEFAULT_RUN = ["--workload", "burst-writefile", "--allocator", "glibc"]
BOOTSTRAP_RESAMPLES = 4000


def schedule(rounds, seed):
    """Arm names in run order for each round: every round is its own shuffle."""
    rng = random.Random(seed)
    order = []
    for _ in range(rounds):
        names = [name for name, _ in ARMS]
        rng.shuffle(names)
        order.append(names)
    return order


def paired_changes(tested, base):
    """Per round, tested / base - 1, for rounds where both have a value."""
    return [t / b - 1 for t, b in zip(tested, base) if t is not None and b is not None and b > 0]


def bootstrap_median_ci(values, seed, resamples=BOOTSTRAP_RESAMPLES, level=0.95):
    """Percentile bootstrap interval of the median of `values` (resampling rounds)."""
    if len(values) < 2:
        raise ValueError("a confidence interval needs at least 2 values, got %d" % len(values))
    rng = random.Random(seed)
    n = len(values)
    medians = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(resamples))
    tail = (1 - level) / 2
    lo = medians[int(tail * resamples)]
    hi = medians[min(resamples - 1, int((1 - tail) * resamples))]
    return lo, hi


def run_value(run, what):
    """One figure of one run record: wall_ms, cpu_ms, or a workload metric."""
    if what == "wall_ms":
        return run["wall_ms"]
    if what == "cpu_ms":
        return run["metrics"]["utime_ms"] + run["metrics"]["stime_ms"]
    return (run["metrics"].get("workload", {}).get(what) or {}).get("value")


def read_share(run):
    """Share of the run's wall time (%) the harness spent reading /proc."""
    s = run["sampler"]
    if s.get("cost_us_median") is None or not run["wall_ms"]:
        return None
    return s["cost_us_median"] * s["samples"] / 1000 / run["wall_ms"] * 100


def analyse(rounds, seed, figures=("wall_ms", "burst_ms", "cpu_ms")):
    """rounds: list of {arm name: run record or None}. Returns the summary dict."""
    complete = [r for r in rounds if all(r.get(name) is not None for name, _ in ARMS)]
    out = {"rounds": len(rounds), "complete_rounds": len(complete), "seed": seed, "figures": {}}
    for what in figures:
        per_arm = {name: [run_value(r[name], what) for r in complete] for name, _ in ARMS}
        if any(v is None for vals in per_arm.values() for v in vals) or len(complete) < 2:
            continue
        fig = {"arms": {}}
        for name, vals in per_arm.items():
            fig["arms"][name] = {"median": statistics.median(vals), "min": min(vals), "max": max(vals)}
        for label, tested in (("cost", TESTED), ("control", CONTROL)):
            changes = paired_changes(per_arm[tested], per_arm[BASE])
            lo, hi = bootstrap_median_ci(changes, seed)
            fig[label] = {
                "paired_median_pct": 100 * statistics.median(changes),
                "ci95_pct": [100 * lo, 100 * hi],
                "medians_pct": 100 * (fig["arms"][tested]["median"] / fig["arms"][BASE]["median"] - 1),
            }
        out["figures"][what] = fig
    shares = [read_share(r[TESTED]) for r in complete]
    shares = [s for s in shares if s is not None]
    if shares:
        out["harness_read_pct"] = {"median": statistics.median(shares), "min": min(shares), "max": max(shares)}
    return out


def render(summary, limit=None):
    if "pooled_from" in summary:
        lines = ["%d rounds (%d complete) pooled from %s; bootstrap seed %d"
                 % (summary["rounds"], summary["complete_rounds"], ", ".join(summary["pooled_from"]),
                    summary["seed"])]
    else:
        lines = ["%d rounds (%d complete), arms in a random order per round, seed %d"
                 % (summary["rounds"], summary["complete_rounds"], summary["seed"])]
    for what, fig in summary["figures"].items():
        arms = "   ".join("%s %.1f (%.1f-%.1f)" % (name, a["median"], a["min"], a["max"])
                          for name, a in fig["arms"].items())
        lines.append("%s: %s" % (what, arms))
        for label, title in (("cost", "sampling at 10 ms"), ("control", "A/A control")):
            c = fig[label]
            lines.append("  %-17s %+.2f%% paired median, 95%% CI [%+.2f%%, %+.2f%%]; %+.2f%% between medians"
                         % (title, c["paired_median_pct"], c["ci95_pct"][0], c["ci95_pct"][1], c["medians_pct"]))
    if "harness_read_pct" in summary:
        h = summary["harness_read_pct"]
        lines.append("harness time reading /proc at 10 ms: %.2f%% of the wall time (%.2f-%.2f%%)"
                     % (h["median"], h["min"], h["max"]))
    if limit is not None and "wall_ms" in summary["figures"]:
        hi = summary["figures"]["wall_ms"]["cost"]["ci95_pct"][1]
        lines.append("wall-time cost under %g%%: %s (upper end of the 95%% CI %+.2f%%)"
                     % (limit, "yes" if hi < limit else "not shown", hi))
    return "\n".join(lines)


def read_run(path):
    """The one run of a report written by an arm: (record, None) when it is ok,
    else (None, why)."""
    try:
        with open(path) as f:
            run = json.load(f)["runs"][0]
    except (OSError, ValueError, KeyError, IndexError) as e:
        return None, "no report in %s: %s" % (path, e)
    if run["status"] != "ok":
        return None, "run %s ended %s: %s" % (path, run["status"], run.get("exit", {}).get("error"))
    return run, None


def run_arm(harness, run_args, ms, path):
    """One harness run; the run record, or None (with the reason on stderr)."""
    cmd = [harness] + run_args + ["--runs", "1", "--quiet", "--sample-ms", str(ms), "--out", path]
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode == 2:
        sys.stderr.write(proc.stderr)
        sys.exit(2)
    run, why = read_run(path)
    if why:
        sys.stderr.write("%s\n%s" % (why, proc.stderr))
    return run


def arm_file(index, name):
    return "%03d-%s.json" % (index, name.replace(" ", "_"))


def load_kept(folders):
    """Rounds from folders that --keep filled, pooled: one round per folder and index."""
    names = {name.replace(" ", "_"): name for name, _ in ARMS}
    rounds = {}
    for folder in folders:
        for entry in sorted(os.listdir(folder)):
            m = re.match(r"^(\d+)-(.+)\.json$", entry)
            if not m or m.group(2) not in names:
                continue
            run, why = read_run(os.path.join(folder, entry))
            if why:
                sys.stderr.write(why + "\n")
            rounds.setdefault((folder, int(m.group(1))), {})[names[m.group(2)]] = run
    return [rounds[k] for k in sorted(rounds)]


def main(argv=None):
    p = argparse.ArgumentParser(prog="sampler-overhead", description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=60, help="rounds of the three arms (default 60)")
    p.add_argument("--seed", type=int, default=None, help="order and bootstrap seed (default: from the clock)")
    p.add_argument("--limit", type=float, default=1.0, help="percent the wall-time cost should stay under")
    p.add_argument("--harness", default=None, help="harness binary (default build/bin/harness)")
    p.add_argument("--keep", default=None, help="keep the run reports in this folder")
    p.add_argument("--json", default=None, help="also write the summary as JSON to this file")
    p.add_argument("--analyse", nargs="+", metavar="DIR", default=None,
                   help="run nothing: analyse again the runs that --keep left in these folders, pooled")
    p.add_argument("run_args", nargs="*", help="harness run options (default: %s)" % " ".join(DEFAULT_RUN))
    args = p.parse_args(argv)
    if args.rounds < 2:
        p.error("--rounds must be at least 2, got %d" % args.rounds)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    harness = args.harness or os.path.join(root, "build", "bin", "harness")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    run_args = args.run_args or DEFAULT_RUN
    if args.analyse:
        for folder in args.analyse:
            if not os.path.isdir(folder):
                p.error("--analyse: %r is not a folder" % folder)
        return report(load_kept(args.analyse), args, seed, pooled_from=args.analyse)
    folder = args.keep or tempfile.mkdtemp(prefix="sampler-overhead-")
    os.makedirs(folder, exist_ok=True)
    try:
        return measure(args, harness, run_args, seed, folder)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


def measure(args, harness, run_args, seed, folder):
    """Runs the rounds into `folder`, prints the summary; the exit status."""
    interval = dict(ARMS)
    rounds = []
    for i, order in enumerate(schedule(args.rounds, seed)):
        got = {}
        for name in order:
            path = os.path.join(folder, arm_file(i, name))
            got[name] = run_arm(harness, run_args, interval[name], path)
        rounds.append(got)
        if sys.stderr.isatty():
            sys.stderr.write("\rround %d/%d" % (i + 1, args.rounds))
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    return report(rounds, args, seed, command=[harness] + run_args)


def report(rounds, args, seed, command=None, pooled_from=None):
    """Prints (and with --json writes) the summary of `rounds`; the exit status."""
    summary = analyse(rounds, seed)
    if command:
        summary["command"] = command
    if pooled_from:
        summary["pooled_from"] = pooled_from
    if summary["complete_rounds"] < 2:
        sys.stderr.write("fewer than 2 rounds had every arm ok: nothing to compare\n")
        return 1
    if command:
        print("sampling cost of: %s" % " ".join(command[1:]))
    print(render(summary, args.limit))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
