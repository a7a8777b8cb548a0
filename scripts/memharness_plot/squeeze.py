"""The limits a squeeze tried (memharness.squeeze/1, from `harness squeeze`): per
workload two panels sharing the limit axis (MB), the figure of merit of the limited
runs above and their PSI stall below, one line per allocator through the limits
that kept the speed; a limit that did not is a hollow marker (an x where runs were
OOM-killed), the limit found a star with a dotted line down both panels. Draws a
checked squeeze dict (load_squeeze); each call builds a new Figure.
"""
import textwrap

from . import style, text, units
from .report import PlotError

MB = 1e6


def _shown_metric(question):
    """How the figure of merit is shown: its unit and scale as the squeeze wrote them."""
    return units.Shown(question["metric"], question.get("metric_display_unit", ""),
                       float(question.get("metric_display_scale", 1.0)), question.get("metric_unit", ""))


def _draw_allocator(ax_fom, ax_stall, entry, color, shown):
    probes = sorted(entry.get("probes", []), key=lambda p: p["limit_bytes"])
    for ax, key, scale in ((ax_fom, "fom_limited", shown.scale), (ax_stall, "stall_ms", 1.0)):
        xs = [p["limit_bytes"] / MB for p in probes if p["figures"].get(key) is not None]
        ys = [p["figures"][key] * scale for p in probes if p["figures"].get(key) is not None]
        ax.plot(xs, ys, "-", color=color, alpha=0.5, zorder=1)
        for p in probes:
            value = p["figures"].get(key)
            if value is None and not p["figures"].get("oom_kills"):
                continue
            x = p["limit_bytes"] / MB
            if p["figures"].get("oom_kills"):
                # No figure of an OOM-killed run: an x at the foot of the panel.
                ax.plot([x], [0.04], "x", color=color, markersize=8, zorder=3, transform=ax.get_xaxis_transform())
            else:
                ax.plot([x], [value * scale], "o", color=color, zorder=3,
                        markerfacecolor=color if p.get("keeps") else "white")
    unlimited = sorted(p["figures"]["fom_unlimited"] for p in probes if p["figures"].get("fom_unlimited") is not None)
    if unlimited:
        ax_fom.axhline(unlimited[len(unlimited) // 2] * shown.scale, color=color, linestyle="--", linewidth=0.8,
                       alpha=0.6, zorder=0)
    limit = entry.get("limit_bytes")
    at = entry.get("at_limit", {})
    if limit is None:
        return
    for ax, key, scale in ((ax_fom, "fom_limited", shown.scale), (ax_stall, "stall_ms", 1.0)):
        ax.axvline(limit / MB, color=color, linestyle=":", zorder=0)
        if at.get(key) is not None:
            ax.plot([limit / MB], [at[key] * scale], "*", color=color, markersize=14, zorder=4,
                    markeredgecolor="black", markeredgewidth=0.5)


def _panel_pair(fig, rows, row, workload, entries, shown):
    ax_fom = fig.add_subplot(rows, 2, 2 * row + 1)
    ax_stall = fig.add_subplot(rows, 2, 2 * row + 2, sharex=ax_fom)
    for k, entry in enumerate(entries):
        color = f"C{k % 10}"
        _draw_allocator(ax_fom, ax_stall, entry, color, shown)
        limit = entry.get("limit_bytes")
        label = entry["allocator"] + (f": {limit / MB:.0f} MB" if limit is not None else ": no limit found")
        ax_fom.plot([], [], "-*", color=color, label=label)
    ax_fom.set_ylabel(f"{shown.label()} of the limited runs"
                      + (" (higher is better)" if shown.title.endswith("_rps") else ""), parse_math=False)
    ax_stall.set_ylabel("PSI some stall of the limited runs (ms)", parse_math=False)
    params = text.format_params(entries[0].get("params", {}))
    for ax in (ax_fom, ax_stall):
        ax.set_xlabel("memory limit (MB)", parse_math=False)
        ax.grid(True, alpha=0.3)
        ax.set_title(textwrap.fill(f"{workload} {params}".strip(), 60), fontsize=9, parse_math=False)
    ax_fom.legend(fontsize=8, loc="best", title="limit found (star)", title_fontsize=8)


def squeeze_figure(data, path="squeeze"):
    """Figure for a checked memharness.squeeze/1 dict; PlotError (naming `path`) when
    no allocator has a probe."""
    results = data["results"]
    if not any(e.get("probes") for e in results):
        raise PlotError(f"{path} has no limit tried yet")
    workloads = []
    for e in results:
        if e.get("workload") not in workloads:
            workloads.append(e.get("workload"))
    shown = _shown_metric(data["question"])
    fig = style.new_figure(13, 4.8 * len(workloads))
    for row, w in enumerate(workloads):
        _panel_pair(fig, len(workloads), row, w, [e for e in results if e.get("workload") == w], shown)
    fig.suptitle(textwrap.fill("squeeze: the smallest memory limit that keeps the speed; filled: kept it, "
                               "hollow: slowed or failed, x: OOM-killed; dashed: unlimited; medians of the runs; "
                               f"{units.CONVENTION}", 110), fontsize=10, parse_math=False)
    fig.tight_layout()
    return fig
