"""The limits a squeeze tried (memharness.squeeze/1, from `harness squeeze`): per
workload two panels sharing the limit axis (MB): the change of the figure of merit
under each limit against the unlimited runs of the same rounds, with its interval and
the allowed change (what the search decides on), and the limited runs' PSI stall;
one line per allocator; a limit that did not keep the speed is a hollow marker (an x
where runs were OOM-killed, a diamond where its cost sat on the threshold), the limit
found a star with a dotted line down both panels. Draws a checked squeeze dict
(load_squeeze); each call builds a new Figure.
"""
import textwrap

from . import style, text, units
from .report import PlotError

MB = 1e6


def _shown_metric(question):
    """How the figure of merit is shown: its unit and scale as the squeeze wrote them."""
    return units.Shown(question["metric"], question.get("metric_display_unit", ""),
                       float(question.get("metric_display_scale", 1.0)), question.get("metric_unit", ""))


def _change_key(entries):
    """The change the plot shows: within rounds (each limited run against its own round's
    unlimited runs, what the search judges) where the squeeze has it, else of the medians
    (squeezes written before the within-rounds rule)."""
    for e in entries:
        for p in e.get("probes", []):
            if p["figures"].get("fom_change_within_rounds") is not None:
                return "fom_change_within_rounds"
    return "fom_change"


def _marker(ax, x, y, color, probe, err=None):
    # A limit no run reached kept the speed whatever its figure: a square; one
    # whose interval still reached both sides of the threshold: a diamond.
    face = color if probe.get("keeps") else "white"
    shape = "s" if probe.get("never_reached") else "D" if probe.get("on_threshold") else "o"
    if err is None:
        ax.plot([x], [y], shape, color=color, zorder=3, markerfacecolor=face)
    else:
        ax.errorbar([x], [y], yerr=[[y - err[0]], [err[1] - y]], fmt=shape, color=color, zorder=3,
                    markerfacecolor=face, capsize=3, elinewidth=1)


def _draw_allocator(ax_fom, ax_stall, entry, color, change_key):
    probes = sorted(entry.get("probes", []), key=lambda p: p["limit_bytes"])
    for ax, key, scale in ((ax_fom, change_key, 100.0), (ax_stall, "stall_ms", 1.0)):
        shown = [p for p in probes if p["figures"].get(key) is not None]
        ax.plot([p["limit_bytes"] / MB for p in shown], [p["figures"][key] * scale for p in shown], "-",
                color=color, alpha=0.5, zorder=1)
        for p in probes:
            x, value = p["limit_bytes"] / MB, p["figures"].get(key)
            if p["figures"].get("oom_kills"):
                # No figure of an OOM-killed run: an x at the foot of the panel.
                ax.plot([x], [0.04], "x", color=color, markersize=8, zorder=3, transform=ax.get_xaxis_transform())
            elif value is not None:
                interval = p["figures"].get("fom_change_interval") if ax is ax_fom else None
                err = [v * scale for v in interval] if interval and change_key == "fom_change_within_rounds" else None
                _marker(ax, x, value * scale, color, p, err)
    limit = entry.get("limit_bytes")
    if limit is None:
        return
    found = next((p for p in probes if p["limit_bytes"] == limit), None)
    for ax, key, scale in ((ax_fom, change_key, 100.0), (ax_stall, "stall_ms", 1.0)):
        ax.axvline(limit / MB, color=color, linestyle=":", zorder=0)
        if found is not None and found["figures"].get(key) is not None:
            ax.plot([limit / MB], [found["figures"][key] * scale], "*", color=color, markersize=14, zorder=4,
                    markeredgecolor="black", markeredgewidth=0.5)


def _threshold(entries):
    """The threshold the probes were judged against (a fraction: the least change any
    probe was allowed), or None."""
    allowed = [p["figures"]["fom_allowed"] for e in entries for p in e.get("probes", [])
               if p["figures"].get("fom_allowed") is not None]
    return min(allowed) if allowed else None


def _panel_pair(fig, rows, row, workload, entries, shown):
    ax_fom = fig.add_subplot(rows, 2, 2 * row + 1)
    ax_stall = fig.add_subplot(rows, 2, 2 * row + 2, sharex=ax_fom)
    change_key = _change_key(entries)
    higher_is_better = shown.title.endswith("_rps")
    sign = -1 if higher_is_better else 1
    threshold = _threshold(entries)
    for k, entry in enumerate(entries):
        color = f"C{k % 10}"
        _draw_allocator(ax_fom, ax_stall, entry, color, change_key)
        limit = entry.get("limit_bytes")
        label = entry["allocator"] + (f": {limit / MB:.3g} MB" if limit is not None else ": no limit found")
        ax_fom.plot([], [], "-*", color=color, label=label)
    ax_fom.axhline(0, color="black", linewidth=0.8, zorder=0)
    if threshold is not None:
        edge = sign * 100 * threshold
        ax_fom.axhline(edge, color="grey", linestyle="--", linewidth=1, zorder=0)
        ax_fom.plot([], [], "--", color="grey", label=f"threshold: {edge:+.0f}%")
    if any(p.get("never_reached") for e in entries for p in e.get("probes", [])):
        ax_fom.plot([], [], "s", color="grey", label="never reached (no limit event): kept")
    if any(p.get("on_threshold") for e in entries for p in e.get("probes", [])):
        ax_fom.plot([], [], "D", color="grey", markerfacecolor="white",
                    label="on the threshold (its interval on both sides): inside the bracket")
    how = "within rounds" if change_key == "fom_change_within_rounds" else "medians"
    ax_fom.set_ylabel(f"{shown.title} under the limit, change % ({how})"
                      + (", higher is better" if higher_is_better else ""), parse_math=False)
    ax_stall.set_ylabel("PSI some stall of the limited runs (ms)", parse_math=False)
    params = text.format_params(entries[0].get("params", {}))
    for ax in (ax_fom, ax_stall):
        ax.set_xlabel("memory limit (MB)", parse_math=False)
        ax.grid(True, alpha=0.3)
        # A program's parameters are its whole command line: three lines of it at most.
        title = textwrap.shorten(f"{workload} {params}".strip(), 170, placeholder=" ...")
        ax.set_title(textwrap.fill(title, 60), fontsize=9, parse_math=False)
    # Under the panel: the probes spread over the whole of it.
    ax_fom.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2,
                  title="limit found (star)", title_fontsize=8)


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
    fig = style.new_figure(13, 6.2 * len(workloads))
    for row, w in enumerate(workloads):
        _panel_pair(fig, len(workloads), row, w, [e for e in results if e.get("workload") == w], shown)
    if _change_key(results) == "fom_change_within_rounds":
        left = ("left: each limit's runs against the unlimited runs of the same rounds, with the 90% "
                "interval the search judges against the threshold")
    else:
        left = "left: the median of each limit's runs against the median of its unlimited runs"
    fig.suptitle(textwrap.fill("squeeze: the smallest memory limit that keeps the speed; filled: kept it, "
                               f"hollow: slowed or failed, diamond: on the threshold, x: OOM-killed; {left}; {units.CONVENTION}", 110),
                 fontsize=10, parse_math=False)
    fig.tight_layout()
    return fig
