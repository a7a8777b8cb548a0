"""Reading memharness JSON files: reports (memharness.report/1), comparisons
(memharness.comparison/1) and sweeps (memharness.sweep/1). Checks only the structure the plots rely on and raises
ReportError naming the file and what is missing. Pure functions, no matplotlib.
"""
import json
import numbers

REPORT_SCHEMA = "memharness.report/1"
COMPARISON_SCHEMA = "memharness.comparison/1"
SWEEP_SCHEMA = "memharness.sweep/1"
SQUEEZE_SCHEMA = "memharness.squeeze/1"


class PlotError(Exception):
    """Bad input or a bad choice (metric, workload, allocator): the scripts print
    the message and exit 2."""


class ReportError(PlotError):
    """A file that cannot be used; the message starts with the file name."""

    def __init__(self, path, problem):
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")


def is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _json_type(value):
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null"}.get(type(value), "a number")


def load_json(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ReportError(path, f"cannot read: {e.strerror or e}") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ReportError(path, "not JSON (not UTF-8 text)") from None
    except json.JSONDecodeError as e:
        raise ReportError(path, f"not JSON ({e.msg} at line {e.lineno} column {e.colno})") from None


def schema_of(data, path):
    if not isinstance(data, dict):
        raise ReportError(path, f"not a memharness file: the top level is {_json_type(data)}, "
                                f'expected an object with "schema"')
    schema = data.get("schema")
    if schema is None:
        raise ReportError(path, f'not a memharness file: no "schema" field '
                                f'(expected "{REPORT_SCHEMA}" or "{COMPARISON_SCHEMA}")')
    return schema


def check_report(data, path):
    """Raise ReportError unless `data` has the report structure every plot needs.
    Samples are checked by the plot that draws them (plot_compare needs none)."""
    schema = schema_of(data, path)
    if schema != REPORT_SCHEMA:
        if schema == COMPARISON_SCHEMA:
            raise ReportError(path, f"is a comparison ({COMPARISON_SCHEMA}), not a report ({REPORT_SCHEMA})")
        raise ReportError(path, f'"schema" is {json.dumps(schema)}, expected "{REPORT_SCHEMA}"')
    runs = data.get("runs")
    if not isinstance(runs, list):
        raise ReportError(path, 'no "runs" array')
    if not runs:
        raise ReportError(path, 'no runs ("runs" is empty)')
    for i, run in enumerate(runs):
        if not isinstance(run, dict):
            raise ReportError(path, f"runs[{i}] is {_json_type(run)}, expected an object")
        if not isinstance(run.get("workload"), str) or not run["workload"]:
            raise ReportError(path, f"runs[{i}] has no workload name")
        allocator = run.get("allocator")
        if not isinstance(allocator, dict) or not isinstance(allocator.get("name"), str):
            raise ReportError(path, f"runs[{i}] has no allocator.name")
        if not isinstance(run.get("status"), str):
            raise ReportError(path, f"runs[{i}] has no status")
    for key in ("context",):
        if key in data and not isinstance(data[key], dict):
            raise ReportError(path, f'"{key}" is {_json_type(data[key])}, expected an object')
    if "summary" in data and not isinstance(data["summary"], list):
        raise ReportError(path, '"summary" is not an array')
    return data


def _check_stat(stat, path, where):
    if not isinstance(stat, dict):
        raise ReportError(path, f"{where} is {_json_type(stat)}, expected an object with median, min, max")
    for key in ("median", "min", "max"):
        if not is_number(stat.get(key)):
            raise ReportError(path, f"{where} has no numeric {key}")
    values = stat.get("values")
    if values is not None and not (isinstance(values, list) and all(is_number(v) for v in values)):
        raise ReportError(path, f"{where}.values is not an array of numbers")


def _workload_groups(data, path):
    """(where, group) for each entry of a comparison's or a sweep's "workloads": a
    non-empty array of objects, each naming its workload."""
    workloads = data.get("workloads")
    if not isinstance(workloads, list) or not workloads:
        raise ReportError(path, 'no "workloads" (an array with at least one entry)')
    for i, group in enumerate(workloads):
        where = f"workloads[{i}]"
        if not isinstance(group, dict) or not isinstance(group.get("workload"), str):
            raise ReportError(path, f"{where} has no workload name")
        yield where, group


def check_comparison(data, path):
    """Raise ReportError unless `data` is a memharness.comparison/1 the plot can draw."""
    schema = schema_of(data, path)
    if schema != COMPARISON_SCHEMA:
        if schema == REPORT_SCHEMA:
            raise ReportError(path, f"is a report ({REPORT_SCHEMA}), not a comparison ({COMPARISON_SCHEMA})")
        raise ReportError(path, f'"schema" is {json.dumps(schema)}, expected "{COMPARISON_SCHEMA}"')
    for where, group in _workload_groups(data, path):
        metrics = group.get("metrics")
        if not isinstance(metrics, list) or not metrics:
            raise ReportError(path, f'{where} ({group["workload"]}) has no "metrics"')
        for j, entry in enumerate(metrics):
            if not isinstance(entry, dict) or not isinstance(entry.get("metric"), str):
                raise ReportError(path, f"{where}.metrics[{j}] has no metric name")
            at = f'{where}.metrics[{j}] ({entry["metric"]})'
            _check_stat(entry.get("baseline"), path, f"{at}.baseline")
            _check_stat(entry.get("candidate"), path, f"{at}.candidate")
            if entry.get("baseline_again") is not None:
                _check_stat(entry["baseline_again"], path, f"{at}.baseline_again")
            # How the metric is shown; a comparison written before them has neither.
            if "display_unit" in entry or "display_scale" in entry:
                scale = entry.get("display_scale")
                if not isinstance(entry.get("display_unit"), str) or not is_number(scale) or scale <= 0:
                    raise ReportError(path, f"{at} needs display_unit (a string) and a positive display_scale; "
                                            f"it has {entry.get('display_unit')!r} and {scale!r}")
            for key in ("change", "p", "noise_floor", "threshold"):
                if entry.get(key) is not None and not is_number(entry[key]):
                    raise ReportError(path, f"{at}.{key} is not a number")
            ci = entry.get("ci")
            # An end is null where it is not finite (a baseline median of 0).
            if ci is not None and not (isinstance(ci, list) and len(ci) == 2
                                       and all(v is None or is_number(v) for v in ci)):
                raise ReportError(path, f"{at}.ci is not [low, high]")
    return data


def _check_axis(axis, path, name):
    if not isinstance(axis, dict) or not isinstance(axis.get("metric"), str):
        raise ReportError(path, f'"{name}" has no metric name')
    scale = axis.get("display_scale")
    if not isinstance(axis.get("display_unit"), str) or not is_number(scale) or scale <= 0:
        raise ReportError(path, f'"{name}" ({axis["metric"]}) needs display_unit (a string) and a positive '
                                f"display_scale; it has {axis.get('display_unit')!r} and {scale!r}")


def check_sweep(data, path):
    """Raise ReportError unless `data` is a memharness.sweep/1 the plot can draw."""
    schema = schema_of(data, path)
    if schema != SWEEP_SCHEMA:
        raise ReportError(path, f'is not a sweep ({SWEEP_SCHEMA}, written by harness sweep); "schema" is '
                                f"{json.dumps(schema)}")
    for name in ("x", "y"):
        _check_axis(data.get(name), path, name)
    for where, group in _workload_groups(data, path):
        points = group.get("points")
        if not isinstance(points, list):
            raise ReportError(path, f'{where} ({group["workload"]}) has no "points"')
        for j, point in enumerate(points):
            if not isinstance(point, dict) or not isinstance(point.get("allocator"), str):
                raise ReportError(path, f"{where}.points[{j}] has no allocator")
            at = f'{where}.points[{j}] ({point["allocator"]})'
            _check_stat(point.get("x"), path, f"{at}.x")
            _check_stat(point.get("y"), path, f"{at}.y")
    return data


def load_report(path):
    """Parse and check a memharness.report/1 file; ReportError otherwise."""
    return check_report(load_json(path), path)


def load_comparison(path):
    """Parse and check a memharness.comparison/1 file; ReportError otherwise."""
    return check_comparison(load_json(path), path)


def load_sweep(path):
    """Parse and check a memharness.sweep/1 file; ReportError otherwise."""
    return check_sweep(load_json(path), path)


def check_squeeze(data, path):
    """Raise ReportError unless `data` is a memharness.squeeze/1 the plot can draw."""
    schema = schema_of(data, path)
    if schema != SQUEEZE_SCHEMA:
        raise ReportError(path, f'is not a squeeze ({SQUEEZE_SCHEMA}, written by harness squeeze); "schema" is '
                                f"{json.dumps(schema)}")
    question, results = data.get("question"), data.get("results")
    if not isinstance(question, dict) or not isinstance(question.get("metric"), str):
        raise ReportError(path, '"question" names no metric')
    if not isinstance(results, list):
        raise ReportError(path, 'has no "results" array')
    for i, entry in enumerate(results):
        if not isinstance(entry, dict) or not isinstance(entry.get("allocator"), str):
            raise ReportError(path, f"results[{i}] has no allocator")
        for j, probe in enumerate(entry.get("probes", [])):
            if not isinstance(probe, dict) or not is_number(probe.get("limit_bytes")) \
                    or not isinstance(probe.get("figures"), dict):
                raise ReportError(path, f"results[{i}].probes[{j}] has no limit_bytes or figures")
    return data


def load_squeeze(path):
    """Parse and check a memharness.squeeze/1 file; ReportError otherwise."""
    return check_squeeze(load_json(path), path)


def load_any(path):
    """(schema, data) for a report or a comparison, checked."""
    data = load_json(path)
    schema = schema_of(data, path)
    if schema == COMPARISON_SCHEMA:
        return schema, check_comparison(data, path)
    return REPORT_SCHEMA, check_report(data, path)


def workloads_of(report):
    """Workload names of a checked report, in the order they first ran."""
    names = []
    for run in report["runs"]:
        if run["workload"] not in names:
            names.append(run["workload"])
    return names


def select_workload(reports, names, workload):
    """The one workload to plot from `reports`, or PlotError listing those present."""
    present = []
    for report in reports:
        for w in workloads_of(report):
            if w not in present:
                present.append(w)
    if workload is None:
        if len(present) > 1:
            raise PlotError(f"{', '.join(names)} hold{'s' if len(names) == 1 else ''} several workloads; "
                            f"choose one with --workload: {', '.join(present)}")
        return present[0]
    for report, path in zip(reports, names):
        if workload not in workloads_of(report):
            raise ReportError(path, f"no workload {json.dumps(workload)}; workloads present: "
                                    f"{', '.join(workloads_of(report))}")
    return workload
