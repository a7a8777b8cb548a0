#!/usr/bin/python3
"""The rounds of a comparison's runs report, per workload and metric, as the
replay of `compare --runs auto` reads them (harness/tests/sequential_test.cpp):

    scripts/aa_rounds.py OUT.json [NAME=]RUNS.json [[NAME=]RUNS.json...]

Keeps, for each workload and each metric that can regress (its direction from
the report's metrics manifest), the values of the ok runs by role in
repetition order; a time that never came within the run is its bound, and its
index among its role's values is listed under "<role>-above", so the replay
tests it as censored. NAME= keys a report's runs under NAME instead of their
workload (a suite entry that runs a workload again under a name of its own).
Only what the replay needs, so that forty rounds fit in a small fixture.
"""
import json
import sys

ROLES = ("baseline", "candidate", "baseline-again")


def figures(run):
    """Every metric of a run: name -> (value, censored): a censored time at its bound."""
    metrics = run.get("metrics", {})
    out = {}
    for name, value in metrics.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[name] = (value, False)
    for group, prefix in (("curve", ""), ("workload", "workload.")):
        for name, entry in (metrics.get(group) or {}).items():
            if not isinstance(entry, dict):
                continue
            value, above = entry.get("value"), False
            if value is None:
                value, above = entry.get("above"), True
            if isinstance(value, (int, float)):
                out[prefix + name] = (value, above)
    return out


def rounds_of(arg, workloads):
    """The rounds of one runs report ([NAME=]PATH) into workloads; returns its command."""
    name, sep, path = arg.partition("=")
    if not sep:
        name, path = None, arg
    with open(path) as f:
        report = json.load(f)
    manifest = report.get("metrics", {})
    runs = sorted((r for r in report["runs"] if r.get("status") == "ok" and r.get("role") in ROLES),
                  key=lambda r: r["repetition"])
    for run in runs:
        metrics = workloads.setdefault(name or run["workload"], {})
        for metric, (value, above) in figures(run).items():
            better = manifest.get(metric, {}).get("better", "none")
            if better not in ("lower", "higher"):
                continue
            entry = metrics.setdefault(metric, {"better": better, **{role: [] for role in ROLES}})
            if above:
                entry.setdefault(run["role"] + "-above", []).append(len(entry[run["role"]]))
            entry[run["role"]].append(value)
    return report.get("context", {}).get("command", "")


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: aa_rounds.py OUT.json [NAME=]RUNS.json [[NAME=]RUNS.json...]")
    workloads = {}
    commands = [rounds_of(path, workloads) for path in argv[2:]]
    out = {"about": "rounds of comparisons' runs reports by workload and gating metric (scripts/aa_rounds.py)",
           "commands": commands,
           "workloads": workloads}
    with open(argv[1], "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv)
