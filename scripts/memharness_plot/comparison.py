"""A memharness.comparison/1 record derived from two reports, so plot_compare draws
two reports and a `harness compare` result the same way. Pure functions.

Two reports carry no noise floor or confidence interval: the verdict here only says
whether the min-max ranges of the runs overlap (`"verdict_basis": "ranges"`).
"""
from .report import COMPARISON_SCHEMA, PlotError, ReportError, is_number
from .text import file_label, format_value, unit_of

DEFAULT_METRICS = ("peak_rss_kb", "final_rss_kb", "minflt", "wall_ms", "cpu_ms")
FEW_RUNS = 5

_LOWER_IS_BETTER = ("_kb", "_ms", "_ns", "minflt", "majflt", "ctxsw", "faults", "page-faults",
                    "task-clock", "cycles", "instructions", "context-switches", "cpu-migrations")


def direction(metric):
    """"lower" when less is better (memory, time, faults), else None (unknown)."""
    return "lower" if metric.endswith(_LOWER_IS_BETTER) else None


def run_value(run, metric):
    """One run's value of a summary metric name (SCHEMA.md `summary[]`), or None."""
    metrics = run.get("metrics") or {}
    if metric == "wall_ms":
        value = run.get("wall_ms")
    elif metric == "cpu_ms":
        u, s = metrics.get("utime_ms"), metrics.get("stime_ms")
        value = u + s if is_number(u) and is_number(s) else None
    elif metric.startswith(("workload.", "perf.")):
        group, name = metric.split(".", 1)
        entry = (metrics.get(group) or {}).get(name)
        value = entry.get("value") if isinstance(entry, dict) else None
    else:
        value = metrics.get(metric)
    return value if is_number(value) else None


def _summaries(report, path):
    summary = report.get("summary")
    if not isinstance(summary, list):
        raise ReportError(path, 'no "summary" array')
    table = {}
    for i, entry in enumerate(summary):
        if not (isinstance(entry, dict) and isinstance(entry.get("workload"), str)
                and isinstance(entry.get("allocator"), str) and isinstance(entry.get("metrics"), dict)):
            raise ReportError(path, f"summary[{i}] needs workload, allocator and metrics")
        table[(entry["workload"], entry["allocator"])] = entry
    if not table:
        raise ReportError(path, "empty summary (no run finished?)")
    return table


def _ordered(keys, index):
    out = []
    for key in keys:
        if key[index] not in out:
            out.append(key[index])
    return out


def _pairs(base, cand, names, workload, allocator, base_alloc, cand_alloc):
    """[(workload, baseline allocator, candidate allocator)] to compare."""
    base_workloads, cand_workloads = _ordered(base, 0), _ordered(cand, 0)
    if workload is not None:
        for table, path, present in ((base, names[0], base_workloads), (cand, names[1], cand_workloads)):
            if workload not in present:
                raise ReportError(path, f"no workload {workload!r} in summary; workloads present: "
                                        f"{', '.join(present)}")
        workloads = [workload]
    else:
        workloads = [w for w in base_workloads if w in cand_workloads]
        if not workloads:
            raise PlotError(f"{names[0]} and {names[1]} have no workload in common "
                            f"({', '.join(base_workloads)} vs {', '.join(cand_workloads)})")
    pairs = []
    for w in workloads:
        in_base = [a for (wl, a) in base if wl == w]
        in_cand = [a for (wl, a) in cand if wl == w]
        if base_alloc or cand_alloc:
            b, c = base_alloc or allocator, cand_alloc or allocator
            if not b or not c:
                raise PlotError("give both --baseline-allocator and --candidate-allocator "
                                "(or --allocator for the one missing)")
            chosen = [(b, c)]
        elif allocator:
            chosen = [(allocator, allocator)]
        elif len(in_base) == 1 and len(in_cand) == 1:
            chosen = [(in_base[0], in_cand[0])]
        elif sorted(in_base) == sorted(in_cand):
            chosen = [(a, a) for a in in_base]
        else:
            raise PlotError(f"cannot pair the allocators of {w}: {names[0]} has {', '.join(in_base)}; "
                            f"{names[1]} has {', '.join(in_cand)}; choose with --allocator or "
                            f"--baseline-allocator/--candidate-allocator")
        for b, c in chosen:
            if b not in in_base:
                raise ReportError(names[0], f"no allocator {b!r} for {w}; present: {', '.join(in_base)}")
            if c not in in_cand:
                raise ReportError(names[1], f"no allocator {c!r} for {w}; present: {', '.join(in_cand)}")
            pairs.append((w, b, c))
    return pairs


def _stat(summary_stat, report, workload, allocator, metric):
    values = [run_value(run, metric) for run in report["runs"]
              if run["workload"] == workload and run["allocator"]["name"] == allocator
              and run["status"] == "ok"]
    values = [v for v in values if v is not None]
    stat = {key: summary_stat[key] for key in ("median", "min", "max")}
    stat["n"] = summary_stat.get("n", len(values))
    stat["values"] = values if len(values) == stat["n"] else None
    return stat


def _verdict(metric, base, cand):
    overlap = cand["min"] <= base["max"] and base["min"] <= cand["max"]
    if overlap:
        return "no change"
    if direction(metric) != "lower":
        return "changed"
    return "improvement" if cand["median"] < base["median"] else "regression"


def _params(report, workload):
    for run in report["runs"]:
        if run["workload"] == workload:
            return run.get("params") or {}
    return {}


def comparison_from_reports(baseline, candidate, names=("baseline", "candidate"), workload=None,
                            allocator=None, baseline_allocator=None, candidate_allocator=None):
    """memharness.comparison/1-shaped dict comparing the `summary[]` metrics of two
    checked reports: one group per (workload, allocator pair)."""
    names = list(names)
    base, cand = _summaries(baseline, names[0]), _summaries(candidate, names[1])
    pairs = _pairs(base, cand, names, workload, allocator, baseline_allocator, candidate_allocator)
    groups, warnings, fewest = [], [], None
    for w, b, c in pairs:
        bs, cs = base[(w, b)], cand[(w, c)]
        base_params, cand_params = _params(baseline, w), _params(candidate, w)
        changed = {k: [base_params.get(k), cand_params.get(k)]
                   for k in list(base_params) + [k for k in cand_params if k not in base_params]
                   if base_params.get(k) != cand_params.get(k)}
        metrics = []
        for m in [m for m in bs["metrics"] if m in cs["metrics"]]:
            bm, cm = bs["metrics"][m], cs["metrics"][m]
            if not all(is_number(s.get(k)) for s in (bm, cm) for k in ("median", "min", "max")):
                continue
            bstat, cstat = _stat(bm, baseline, w, b, m), _stat(cm, candidate, w, c, m)
            change = ((cstat["median"] - bstat["median"]) / bstat["median"]
                      if bstat["median"] else None)
            metrics.append({
                "metric": m, "unit": unit_of(m), "direction": direction(m), "threshold": None,
                "baseline": bstat, "candidate": cstat, "baseline_again": None,
                "change": change, "ci": None, "p": None, "noise_floor": None,
                "verdict": _verdict(m, bstat, cstat), "verdict_basis": "ranges"})
            fewest = min(n for n in (fewest, bstat["n"], cstat["n"]) if n is not None)
        for side, entry, path in (("baseline", bs, names[0]), ("candidate", cs, names[1])):
            ok, total = entry.get("runs_ok"), entry.get("runs_total")
            if is_number(ok) and is_number(total) and ok < total:
                warnings.append(f"{side} {entry['allocator']} ({file_label(path)}): "
                                f"{total - ok} of {total} runs not ok, left out")
        groups.append({"workload": w, "params": base_params, "params_changed": changed,
                       "baseline_allocator": b, "candidate_allocator": c, "metrics": metrics})
    if fewest is not None and fewest < FEW_RUNS:
        warnings.insert(0, f"only {fewest} runs per side: the verdict says whether the min-max ranges "
                           f"overlap, nothing more (no noise floor or confidence interval from two reports)")
    contexts = [baseline.get("context") or {}, candidate.get("context") or {}]
    for key in ("host", "kernel", "cpus", "thp", "build_type"):
        if contexts[0].get(key) != contexts[1].get(key):
            warnings.append(f"context.{key} differs: {contexts[0].get(key)} vs {contexts[1].get(key)}")
    return {
        "schema": COMPARISON_SCHEMA, "context": contexts[0],
        "baseline": {"name": file_label(names[0])}, "candidate": {"name": file_label(names[1])},
        "rounds": None, "warnings": warnings, "workloads": groups,
    }


def describe_change(changed):
    """`release-on-pool false→true` for a group's params_changed."""
    return " ".join(f"{k} {format_value(k, b)}\u2192{format_value(k, c)}" for k, (b, c) in changed.items())
