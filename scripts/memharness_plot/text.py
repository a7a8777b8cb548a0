"""Text for titles, axes and footnotes: parameters, sizes, machines, metric names.
Pure string functions, no matplotlib.
"""
import json
import os
import re

# Parameters are in bytes (SCHEMA.md); these names get a human size in titles.
_SIZE_PARAM = re.compile(r"(size|bytes)", re.IGNORECASE)

_TITLES = {
    "rss_kb": "RSS", "anon_kb": "anonymous memory", "file_kb": "file-backed memory",
    "shmem_kb": "shared memory", "anon_huge_kb": "anonymous huge pages",
    "minflt": "minor faults", "majflt": "major faults", "utime_ms": "user CPU",
    "stime_ms": "system CPU", "threads": "threads", "peak_rss_kb": "peak RSS",
    "final_rss_kb": "RSS at exit", "hwm_kb": "VmHWM", "maxrss_kb": "ru_maxrss",
    "wall_ms": "wall time", "cpu_ms": "CPU user+sys",
}

_UNITS = {  # unit as stored -> (unit shown, factor)
    "KiB": ("MiB", 1 / 1024), "kb": ("MiB", 1 / 1024), "B": ("MiB", 1 / 1048576),
    "bytes": ("MiB", 1 / 1048576), "MiB": ("MiB", 1.0), "ms": ("ms", 1.0),
    "ns": ("ms", 1e-6), "us": ("ms", 1e-3), "s": ("s", 1.0),
}

MINUS = "\u2212"


def unit_of(name):
    """Stored unit of a metric or column, from its suffix (SCHEMA.md conventions)."""
    if name.endswith("_kb"):
        return "KiB"
    if name.endswith("_ms"):
        return "ms"
    if name.endswith("_ns") or name == "perf.task-clock":
        return "ns"
    return ""


def display(name, unit=None):
    """(title, shown unit, factor): what to call `name` and how to scale it for axes."""
    unit = unit_of(name) if unit is None else unit
    shown, factor = _UNITS.get(unit, (unit, 1.0))
    return _TITLES.get(name, name), shown, factor


def axis_label(name, unit=None):
    title, shown, _ = display(name, unit)
    return f"{title} ({shown})" if shown else title


def format_bytes(n):
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            break
        value /= 1024
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return f"{text} {unit}"


def format_value(key, value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and _SIZE_PARAM.search(key) and abs(value) >= 1024:
        return format_bytes(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def format_params(params, keep_false=False):
    """`calls=300 size=1.5 MiB release-on-pool=true`; empty strings, nulls and (unless
    keep_false) false flags are left out as the defaults they almost always are."""
    parts = []
    for key, value in params.items():
        if value is None or value == "" or (value is False and not keep_false):
            continue
        parts.append(f"{key}={format_value(key, value)}")
    return " ".join(parts)


def kernel_short(kernel):
    """`Linux 6.18.44-fc-v657 #1 SMP ...` -> `Linux 6.18.44`."""
    words = str(kernel or "").split()
    if len(words) >= 2:
        return f"{words[0]} {words[1].split('-')[0]}"
    return words[0] if words else "kernel ?"


def machine(context):
    context = context or {}
    parts = [str(context.get("host") or "host ?")]
    cpus = context.get("cpus")
    parts.append(f"{cpus} cpu{'s' if cpus != 1 else ''}" if cpus is not None else "cpus ?")
    parts.append(kernel_short(context.get("kernel")))
    parts.append(f"THP {context.get('thp') or '?'}")
    return " \u00b7 ".join(parts)


def machines(contexts):
    lines = []
    for context in contexts:
        line = machine(context)
        if line not in lines:
            lines.append(line)
    return " | ".join(lines)


def percent(fraction, digits=1):
    """+1.2% / −3.4% (a real minus sign) for a relative change."""
    text = f"{fraction * 100:+.{digits}f}%"
    return text.replace("-", MINUS)


def file_label(path):
    return os.path.basename(path) if path else "?"
