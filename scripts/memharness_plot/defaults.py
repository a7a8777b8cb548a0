"""A workload's default parameters, as its own binary resolves them with
nothing given (`WORKLOAD --check [--smoke]`): what a title leaves out. The
binary is found beside the harness (PREFIX/bin/harness ->
PREFIX/libexec/memharness/WORKLOAD). Standard library only.
"""
import json
import os
import re
import subprocess

from .harness import find_harness
from .report import PlotError

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_cache = {}


def workload_binary(workload, environ=None):
    """The workload's binary beside the harness, or None (not a workload of this
    build, or no harness found)."""
    if not _NAME.fullmatch(str(workload)):
        return None
    try:
        harness = find_harness(environ)
    except PlotError:
        return None
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(harness))), "libexec", "memharness",
                        workload)
    return path if os.path.isfile(path) and os.access(path, os.X_OK) else None


def workload_defaults(workload, smoke=False, environ=None):
    """{name: value} of the workload's parameters with nothing given (with
    --smoke when `smoke`), or None when they cannot be known (a program, a
    workload this build does not have): then a title shows every parameter."""
    key = (workload, bool(smoke))
    if key not in _cache:
        _cache[key] = None
        binary = workload_binary(workload, environ)
        if binary:
            try:
                result = subprocess.run([binary, "--check"] + (["--smoke"] if smoke else []), capture_output=True,
                                        text=True, timeout=30, stdin=subprocess.DEVNULL)
                value = json.loads(result.stdout) if result.returncode == 0 else None
                _cache[key] = value if isinstance(value, dict) else None
            except (OSError, subprocess.SubprocessError, ValueError):
                pass
    return _cache[key]


def title_of(workload, params):
    """The plot title of `workload` run with `params` (text.plot_title), its
    defaults asked of its binary."""
    from .text import is_program, plot_title
    params = params or {}
    defaults = None if is_program(params) else workload_defaults(workload, params.get("smoke") is True)
    return plot_title(workload, params, defaults)
