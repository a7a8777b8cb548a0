"""Text for titles, axes and footnotes: parameters, sizes, machines.
Pure string functions, no matplotlib.
"""
import json
import os
import re

# Size parameters are in bytes (SCHEMA.md) and shown in binary units, as the user
# gives them (--total 256M). The report does not say a parameter's type, so these
# are the size parameters' names of the workloads (their --describe, type "size").
_SIZE_PARAM = re.compile(r"(size|bytes|block|total|tolerance|heap|files|level|burst|rate|keep-every)", re.IGNORECASE)

MINUS = "\u2212"


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


def is_program(params):
    """Whether a run's parameters are a program's (harness -- CMD, the apps suite):
    its command, path and environment, which no title shows."""
    return isinstance(params, dict) and "command" in params


def differing_params(params, defaults):
    """The parameters a title shows: those that differ from the workload's
    `defaults` (its resolved parameters with nothing given; None: not known, all
    of them), never "smoke" (a word of its own) nor a program's."""
    if is_program(params):
        return {}
    missing = object()
    return {k: v for k, v in (params or {}).items()
            if k != "smoke" and (defaults is None or defaults.get(k, missing) != v)}


def plot_title(workload, params, defaults=None):
    """`burst-writefile threads=8 smoke`: the workload's name, then only the
    parameters that differ from its defaults; a program's name alone."""
    shown = format_params(differing_params(params, defaults), keep_false=defaults is not None)
    smoke = isinstance(params, dict) and params.get("smoke") is True
    return " ".join(p for p in (workload, shown, "smoke" if smoke else "") if p)
