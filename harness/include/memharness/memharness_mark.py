"""Marks and metrics from a Python program to the memharness that runs it.

    import memharness_mark
    memharness_mark.mark("loaded")          # the harness samples the process here
    memharness_mark.metric("rows", 125000)  # workload.rows in the report
    memharness_mark.metric_above("ms_idle", 3000)  # never came: more than 3000

Without the harness (MEMHARNESS_MARK_FD absent) every call does nothing and
returns False. The protocol is in harness/include/memharness/mark.h and
docs/programs.md ("Programs that can change"). Marks from one thread at a time.
"""

import json
import os
import select

__all__ = ["mark", "metric", "metric_above"]

_ACK_TIMEOUT_S = 2.0


def _fd(variable):
    value = os.environ.get(variable, "")
    return int(value) if value.isdigit() else None


def _send(message):
    fd = _fd("MEMHARNESS_MARK_FD")
    if fd is None:
        return False
    data = (json.dumps(message) + "\n").encode()
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:
        return False
    return True


def mark(name):
    """A mark: True once the harness has sampled the process."""
    ack = _fd("MEMHARNESS_ACK_FD")
    message = {"mark": str(name)}
    if ack is not None:
        message["sync"] = True
    if not _send(message):
        return False
    if ack is None:
        return True
    ready, _, _ = select.select([ack], [], [], _ACK_TIMEOUT_S)
    return bool(ready) and len(os.read(ack, 4)) == 4


def metric(name, value):
    """A figure of the run, in the report as workload.NAME."""
    return _send({"metric": str(name), "value": float(value)})


def metric_above(name, bound):
    """A figure that never came within the run: more than bound (workload.NAME
    null with "above"), compared as longer than every figure below bound."""
    return _send({"metric": str(name), "value": None, "above": float(bound)})
