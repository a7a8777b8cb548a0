"""The points of a sweep (memharness.sweep/1, from `harness sweep`): one panel per
workload, each point's medians of the two metrics with min-max bars, labelled by
the options it sets, the Pareto front (the points no other point beats on both, as
the sweep marks them) joined. Axes in the units the sweep declares for its two
metrics. Draws a checked sweep dict (load_sweep); each call builds a new Figure.
Built outside style.rc() (matplotlib's own look), so each text taken from the
sweep says parse_math=False itself.
"""
import textwrap

from . import style, text, units
from .report import PlotError


def point_label(allocator):
    """'scav:purge_delay_ms=100' -> 'purge_delay_ms=100': the family is in the title."""
    return allocator.split(":", 1)[1] if ":" in allocator else allocator


def _axis_label(axis):
    label = units.of_entry(axis).label()
    return label + (" (higher is better)" if axis.get("better") == "higher" else "")


def _scaled(points, side, scale):
    """Medians and their (below, above) bar lengths of one side, shown units."""
    medians = [p[side]["median"] * scale for p in points]
    bars = [[(p[side]["median"] - p[side]["min"]) * scale for p in points],
            [(p[side]["max"] - p[side]["median"]) * scale for p in points]]
    return medians, bars


def _panel(ax, group, x_axis, y_axis):
    points = group["points"]
    px, xerr = _scaled(points, "x", units.of_entry(x_axis).scale)
    py, yerr = _scaled(points, "y", units.of_entry(y_axis).scale)
    ax.errorbar(px, py, xerr=xerr, yerr=yerr, fmt="o", color="0.45", ecolor="0.75", capsize=2, zorder=2)
    front = sorted((x, y) for x, y, p in zip(px, py, points) if p.get("pareto"))
    if front:
        ax.plot([f[0] for f in front], [f[1] for f in front], "-o", color="C3", zorder=3,
                label="Pareto front: no other point better on both")
    # Labels above and below in turn, in the order of x, so that neighbours do not overlap.
    order = sorted(range(len(points)), key=lambda k: (px[k], py[k]))
    for rank, k in enumerate(order):
        ax.annotate(point_label(points[k]["allocator"]), (px[k], py[k]), textcoords="offset points",
                    xytext=(5, 6 if rank % 2 == 0 else -13), fontsize=8, parse_math=False)
    ax.set_xlabel(_axis_label(x_axis), parse_math=False)
    ax.set_ylabel(_axis_label(y_axis), parse_math=False)
    # A point far from the others (a decay of 0 paying a fault per page) would
    # flatten the rest: a range of more than 20 times is drawn on a log scale.
    for values, set_scale, axis in ((px, ax.set_xscale, "x"), (py, ax.set_yscale, "y")):
        if min(values) > 0 and max(values) / min(values) > 20:
            set_scale("log")
        else:
            ax.ticklabel_format(axis=axis, useOffset=False, style="plain")
    params = textwrap.fill(text.format_params(group.get("params", {})), 70)
    ax.set_title(f"{group['workload']}\n{params}".strip(), fontsize=9, parse_math=False)
    ax.grid(True, alpha=0.3)
    if front:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(0, -0.13), frameon=False)


def sweep_figure(data, path="sweep"):
    """Figure for a checked memharness.sweep/1 dict; PlotError (naming `path`) when
    no workload has a point with both metrics."""
    workloads = data["workloads"]
    if not any(w["points"] for w in workloads):
        raise PlotError(f"{path} has no point with both metrics")
    columns, rows = min(len(workloads), 2), (len(workloads) + 1) // 2
    fig = style.new_figure(8.5 * columns, 5.6 * rows)
    families = sorted({p["allocator"].split(":", 1)[0] for w in workloads for p in w["points"]})
    for i, group in enumerate(workloads):
        _panel(fig.add_subplot(rows, columns, i + 1), group, data["x"], data["y"])
    fig.suptitle(textwrap.fill(f"sweep of {', '.join(families)}: medians with min-max over the runs; "
                               f"{units.CONVENTION}", 100), fontsize=10, parse_math=False)
    fig.tight_layout()
    return fig
