#!/usr/bin/env python3
"""The points of a sweep (memharness.sweep/1, from `harness sweep`): one panel per
workload, each point's medians of the two metrics with min-max bars, labelled by the
options it sets, the Pareto front (the points no other point beats on both) joined
and marked.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memharness_plot import bootstrap  # noqa: E402  (stdlib only)

bootstrap.ensure_matplotlib()  # also selects the headless Agg backend

import argparse  # noqa: E402
import json  # noqa: E402
import textwrap  # noqa: E402

from memharness_plot import style, text  # noqa: E402

PROG = "plot_sweep.py"
SCHEMA = "memharness.sweep/1"


def fail(message):
    print(f"{PROG}: {message}", file=sys.stderr)
    sys.exit(2)


def load(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        fail(f"cannot read {path}: {e.strerror}")
    except json.JSONDecodeError:
        fail(f"{path} is not JSON")
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        fail(f"{path} is not a sweep ({SCHEMA}, written by harness sweep)")
    return data


def axis_title(axis):
    unit = axis.get("display_unit") or ""
    return f"{axis['metric']} ({unit})" if unit else axis["metric"]


def point_label(allocator):
    """'scav:purge_delay_ms=100' -> 'purge_delay_ms=100': the family is in the title."""
    return allocator.split(":", 1)[1] if ":" in allocator else allocator


def sweep_figure(data):
    workloads = data["workloads"]
    fig = style.new_figure(8.5 * min(len(workloads), 2), 5.6 * ((len(workloads) + 1) // 2))
    xs, ys = data["x"], data["y"]
    families = sorted({p["allocator"].split(":", 1)[0] for w in workloads for p in w["points"]})
    for i, w in enumerate(workloads):
        ax = fig.add_subplot((len(workloads) + 1) // 2, min(len(workloads), 2), i + 1)
        points = w["points"]
        px = [p["x"]["median"] * xs["display_scale"] for p in points]
        py = [p["y"]["median"] * ys["display_scale"] for p in points]
        xerr = [[(p["x"]["median"] - p["x"]["min"]) * xs["display_scale"] for p in points],
                [(p["x"]["max"] - p["x"]["median"]) * xs["display_scale"] for p in points]]
        yerr = [[(p["y"]["median"] - p["y"]["min"]) * ys["display_scale"] for p in points],
                [(p["y"]["max"] - p["y"]["median"]) * ys["display_scale"] for p in points]]
        ax.errorbar(px, py, xerr=xerr, yerr=yerr, fmt="o", color="0.45", ecolor="0.75", capsize=2, zorder=2)
        front = sorted((x, y) for x, y, p in zip(px, py, points) if p["pareto"])
        if front:
            ax.plot([f[0] for f in front], [f[1] for f in front], "-o", color="C3", zorder=3,
                    label="Pareto front: no other point better on both")
        # Labels above and below in turn, in the order of x, so that neighbours do not overlap.
        order = sorted(range(len(points)), key=lambda k: (px[k], py[k]))
        for rank, k in enumerate(order):
            ax.annotate(point_label(points[k]["allocator"]), (px[k], py[k]), textcoords="offset points",
                        xytext=(5, 6 if rank % 2 == 0 else -13), fontsize=8)
        ax.set_xlabel(axis_title(xs) + (" (higher is better)" if xs.get("better") == "higher" else ""))
        ax.set_ylabel(axis_title(ys) + (" (higher is better)" if ys.get("better") == "higher" else ""))
        # A point far from the others (a decay of 0 paying a fault per page) would
        # flatten the rest: a range of more than 20 times is drawn on a log scale.
        for values, set_scale, axis in ((px, ax.set_xscale, "x"), (py, ax.set_yscale, "y")):
            if min(values) > 0 and max(values) / min(values) > 20:
                set_scale("log")
            else:
                ax.ticklabel_format(axis=axis, useOffset=False, style="plain")
        params = textwrap.fill(text.format_params(w.get("params", {})), 70)
        ax.set_title(f"{w['workload']}\n{params}".strip(), fontsize=9)
        ax.grid(True, alpha=0.3)
        if front:
            ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0, -0.13), frameon=False)
    fig.suptitle(textwrap.fill(f"sweep of {', '.join(families)}: medians with min-max over the runs; "
                               "MB = 10^6 bytes", 100), fontsize=10)
    fig.tight_layout()
    return fig


def main(argv=None):
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__,
                                     epilog="exit status: 0 written, 2 bad arguments or input")
    parser.add_argument("sweep", metavar="SWEEP.json", help="the -sweep.json harness sweep writes")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="output image, .png or .svg")
    args = parser.parse_args(argv)
    if os.path.splitext(args.output)[1].lower() not in (".png", ".svg"):
        parser.error(f"-o {args.output}: the output must end in .png or .svg")
    data = load(args.sweep)
    if not any(w["points"] for w in data["workloads"]):
        fail(f"{args.sweep} has no point with both metrics")
    style.save_figure(sweep_figure(data), args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
