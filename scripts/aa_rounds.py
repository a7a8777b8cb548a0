#!/usr/bin/python3
"""The rounds of a comparison's runs report, per workload and metric, as the
replay of `compare --runs auto` reads them (harness/tests/sequential_test.cpp):

    scripts/aa_rounds.py OUT.json RUNS.json [RUNS.json...]

Keeps, for each workload and each metric that can regress (its direction from
the report's metrics manifest), the values of the ok runs by role in
repetition order; a time that never came within the run is its bound ("above").
Only what the replay needs, so that forty rounds fit in a small fixture.
"""
import json
import sys

ROLES = ("baseline", "candidate", "baseline-again")


def figures(run):
    """Every metric of a run: name -> value (a censored time at its bound)."""
    metrics = run.get("metrics", {})
    out = {}
    for name, value in metrics.items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[name] = value
    for group, prefix in (("curve", ""), ("workload", "workload.")):
        for name, entry in (metrics.get(group) or {}).items():
            if not isinstance(entry, dict):
                continue
            value = entry.get("value")
            if value is None:
                value = entry.get("above")
            if isinstance(value, (int, float)):
                out[prefix + name] = value
    return out


def rounds_of(path, workloads):
    """The rounds of one runs report into workloads; returns its command."""
    with open(path) as f:
        report = json.load(f)
    manifest = report.get("metrics", {})
    runs = sorted((r for r in report["runs"] if r.get("status") == "ok" and r.get("role") in ROLES),
                  key=lambda r: r["repetition"])
    for run in runs:
        metrics = workloads.setdefault(run["workload"], {})
        for name, value in figures(run).items():
            better = manifest.get(name, {}).get("better", "none")
            if better not in ("lower", "higher"):
                continue
            entry = metrics.setdefault(name, {"better": better, **{role: [] for role in ROLES}})
            entry[run["role"]].append(value)
    return report.get("context", {}).get("command", "")


def main(argv):
    if len(argv) < 3:
        sys.exit("usage: aa_rounds.py OUT.json RUNS.json [RUNS.json...]")
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
