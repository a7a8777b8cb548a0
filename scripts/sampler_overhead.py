"""What sampling costs a workload, measured with the harness and judged by it.

The same workload runs under three arms per round: sampled every 10 ms (the
default), every 1000 ms (as good as unsampled), and every 1000 ms again (an A/A
control: what the method reports when nothing differs). Each round runs the arms
in an order drawn from a seeded generator, so drift on a busy machine and the
after-effects of one run on the next (page cache, writeback) fall on every arm
alike. `harness compare` then judges the runs as it judges two pins: the cost is
10 ms against 1000 ms, the control 1000 ms again against 1000 ms, each the change
of the medians with the harness's bootstrap confidence interval; the control's
interval shows how finely the machine can resolve the cost.

This script runs the arms itself only because they differ in --sample-ms, which
`harness compare` keeps the same for both pins. The one figure it computes is the
share of the wall time the harness spent reading /proc (each run's "sampler"
block has its cost; no harness summary or comparison covers it): its median and
range over the 10 ms runs.

Standard library only: runs under any python3.
  scripts/sampler-overhead [--rounds N] [--seed S] [--limit PCT] [-- harness options]
  scripts/sampler-overhead --analyse DIR...   (runs kept with --keep, pooled)
"""
import argparse
import copy
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
# The two comparisons made of the arms' runs: the role each arm takes in them.
COMPARISONS = (("cost", {BASE: "baseline", TESTED: "candidate"}),
               ("control", {BASE: "baseline", CONTROL: "candidate"}))
# The metrics reported, as the comparison names them (burst_ms: burst-writefile's own).
FIGURES = ("wall_ms", "workload.burst_ms", "cpu_ms")
REPORT_SCHEMA = "memharness.report/1"


def schedule(rounds, seed):
    """Arm names in run order for each round: every round is its own shuffle."""
    rng = random.Random(seed)
    order = []
    for _ in range(rounds):
        names = [name for name, _ in ARMS]
        rng.shuffle(names)
        order.append(names)
    return order


def complete(rounds):
    """The rounds in which every arm's run is ok."""
    return [r for r in rounds if all(r.get(name) is not None for name, _ in ARMS)]


def runs_report(rounds, roles):
    """One report of the complete rounds' runs of the arms in `roles` ({arm: role}),
    each run in its role and numbered by its round: what `harness compare RUNS.json`
    reads. Context and manifest are those of the first arm's report."""
    rounds = complete(rounds)
    first = rounds[0][next(iter(roles))]
    out = {"schema": REPORT_SCHEMA, "context": first.get("context", {})}
    if "metrics" in first:
        out["metrics"] = first["metrics"]
    out["runs"] = []
    for i, got in enumerate(rounds):
        for arm, role in roles.items():
            run = copy.deepcopy(got[arm]["runs"][0])
            run["role"], run["repetition"] = role, i + 1
            out["runs"].append(run)
    return out


def compare(harness, report, folder, name):
    """`harness compare` on `report` (written to FOLDER/NAME-runs.json); the
    comparison it writes to FOLDER/NAME.json. Exits 2 with the harness's message
    when it writes none."""
    runs_path, out = os.path.join(folder, name + "-runs.json"), os.path.join(folder, name + ".json")
    with open(runs_path, "w") as f:
        json.dump(report, f, indent=1)
    proc = subprocess.run([harness, "compare", runs_path, "-o", out], stdin=subprocess.DEVNULL,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # 0: no regression, 1: a regression (a verdict by its thresholds, not asked here): both wrote it.
    if proc.returncode not in (0, 1) or not os.path.exists(out):
        sys.stderr.write("harness compare wrote no comparison of %s (exit %d)\n%s" % (runs_path, proc.returncode,
                                                                                   proc.stderr))
        sys.exit(2)
    with open(out) as f:
        return json.load(f)


def read_share(run):
    """Share of the run's wall time (%) the harness spent reading /proc."""
    s = run["sampler"]
    if s.get("cost_us_median") is None or not run["wall_ms"]:
        return None
    return s["cost_us_median"] * s["samples"] / 1000 / run["wall_ms"] * 100


def _side(stat, scale):
    return {k: stat[k] * scale for k in ("median", "min", "max")}


def _pct(value):
    return None if value is None else 100 * value


def summarise(rounds, comparisons, seed):
    """The summary of `rounds` ([{arm name: report or None}]) from the harness's
    comparisons ({"cost": ..., "control": ...}, as compare() returns them); `seed`:
    of the run order (None for runs pooled from kept folders)."""
    done = complete(rounds)
    out = {"rounds": len(rounds), "complete_rounds": len(done), "seed": seed,
           "confidence": 1 - comparisons["cost"]["alpha"], "figures": {}}
    entries = {label: {e["metric"]: e for e in c["workloads"][0]["metrics"]} for label, c in comparisons.items()}
    for metric in FIGURES:
        cost, control = entries["cost"].get(metric), entries["control"].get(metric)
        if cost is None or control is None:
            continue
        scale = cost["display_scale"]
        fig = {"unit": cost["display_unit"],
               "arms": {TESTED: _side(cost["candidate"], scale), BASE: _side(cost["baseline"], scale),
                        CONTROL: _side(control["candidate"], scale)}}
        for label, entry in (("cost", cost), ("control", control)):
            fig[label] = {"change_pct": _pct(entry["change"]), "ci_pct": [_pct(v) for v in entry["ci"]],
                          "p": entry["p"]}
        out["figures"][metric] = fig
    # Not a metric of the registry, so no harness summary has it: the one figure computed here.
    shares = [s for s in (read_share(r[TESTED]["runs"][0]) for r in done) if s is not None]
    if shares:
        out["harness_read_pct"] = {"median": statistics.median(shares), "min": min(shares), "max": max(shares)}
    return out


def _signed(value):
    return "n/a" if value is None else "%+.2f%%" % value


def render(summary, limit=None):
    if "pooled_from" in summary:
        lines = ["%d rounds (%d complete) pooled from %s" % (summary["rounds"], summary["complete_rounds"],
                                                             ", ".join(summary["pooled_from"]))]
    else:
        lines = ["%d rounds (%d complete), arms in a random order per round, seed %d"
                 % (summary["rounds"], summary["complete_rounds"], summary["seed"])]
    level = "%g%% CI" % (100 * summary["confidence"])
    for what, fig in summary["figures"].items():
        arms = "   ".join("%s %.1f (%.1f-%.1f)" % (name, a["median"], a["min"], a["max"])
                          for name, a in fig["arms"].items())
        lines.append("%s%s: %s" % (what, " (%s)" % fig["unit"] if fig["unit"] else "", arms))
        for label, title in (("cost", "sampling at 10 ms"), ("control", "A/A control")):
            c = fig[label]
            lines.append("  %-17s %s between medians, %s [%s, %s]"
                         % (title, _signed(c["change_pct"]), level, _signed(c["ci_pct"][0]), _signed(c["ci_pct"][1])))
    lines.append("changes and intervals by harness compare (bootstrap over the runs of each arm)")
    if "harness_read_pct" in summary:
        h = summary["harness_read_pct"]
        lines.append("harness time reading /proc at 10 ms: %.2f%% of the wall time (%.2f-%.2f%%)"
                     % (h["median"], h["min"], h["max"]))
    if limit is not None and "wall_ms" in summary["figures"]:
        hi = summary["figures"]["wall_ms"]["cost"]["ci_pct"][1]
        lines.append("wall-time cost under %g%%: %s (upper end of the %s %s)"
                     % (limit, "yes" if hi is not None and hi < limit else "not shown", level, _signed(hi)))
    return "\n".join(lines)


def read_arm(path):
    """The report an arm wrote, with its one run: (report, None) when the run is
    ok, else (None, why)."""
    try:
        with open(path) as f:
            report = json.load(f)
        run = report["runs"][0]
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        return None, "no report in %s: %s" % (path, e)
    if run["status"] != "ok":
        return None, "run %s ended %s: %s" % (path, run["status"], run.get("exit", {}).get("error"))
    return report, None


def run_arm(harness, run_args, ms, path):
    """One harness run; its report, or None (with the reason on stderr)."""
    cmd = [harness] + run_args + ["--runs", "1", "--quiet", "--sample-ms", str(ms), "--out", path]
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode == 2:
        sys.stderr.write(proc.stderr)
        sys.exit(2)
    report, why = read_arm(path)
    if why:
        sys.stderr.write("%s\n%s" % (why, proc.stderr))
    return report


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
            report, why = read_arm(os.path.join(folder, entry))
            if why:
                sys.stderr.write(why + "\n")
            rounds.setdefault((folder, int(m.group(1))), {})[names[m.group(2)]] = report
    return [rounds[k] for k in sorted(rounds)]


def main(argv=None):
    p = argparse.ArgumentParser(prog="sampler-overhead", description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=60, help="rounds of the three arms (default 60)")
    p.add_argument("--seed", type=int, default=None, help="seed of the run order (default: from the clock)")
    p.add_argument("--limit", type=float, default=1.0, help="percent the wall-time cost should stay under")
    p.add_argument("--harness", default=None, help="harness binary (default build/bin/harness)")
    p.add_argument("--keep", default=None, help="keep the run reports and the comparisons in this folder")
    p.add_argument("--json", default=None, help="also write the summary as JSON to this file")
    p.add_argument("--analyse", nargs="+", metavar="DIR", default=None,
                   help="run no workload: compare again the runs that --keep left in these folders, pooled")
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
    folder = args.keep if args.keep and not args.analyse else tempfile.mkdtemp(prefix="sampler-overhead-")
    os.makedirs(folder, exist_ok=True)
    try:
        if args.analyse:
            return report(load_kept(args.analyse), args, harness, None, folder, pooled_from=args.analyse)
        return measure(args, harness, run_args, seed, folder)
    finally:
        if folder != args.keep:
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
    return report(rounds, args, harness, seed, folder, command=[harness] + run_args)


def report(rounds, args, harness, seed, folder, command=None, pooled_from=None):
    """Compares the complete rounds' runs with the harness into `folder`, prints
    (and with --json writes) the summary; the exit status."""
    if len(complete(rounds)) < 2:
        sys.stderr.write("fewer than 2 rounds had every arm ok: nothing to compare\n")
        return 1
    comparisons = {label: compare(harness, runs_report(rounds, roles), folder, label)
                   for label, roles in COMPARISONS}
    summary = summarise(rounds, comparisons, seed)
    if command:
        summary["command"] = command
    if pooled_from:
        summary["pooled_from"] = pooled_from
    if folder == args.keep:
        summary["comparisons"] = {label: os.path.join(folder, label + ".json") for label, _ in COMPARISONS}
    if command:
        print("sampling cost of: %s" % " ".join(command[1:]))
    print(render(summary, args.limit))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
