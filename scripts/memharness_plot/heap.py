"""Who holds the memory: RSS, anonymous RSS and the heap ledger's live heap on one
time axis, one panel per allocator, the gap between anonymous RSS and the live heap
shaded (memory outside the live malloc heap: what the allocator keeps, plus stacks,
the program's own mappings and heaps that are not malloc's)."""
from . import style, text
from .report import PlotError, select_workload

MB = 1024 / 1e6  # KiB to MB (the report's memory unit is KiB)
GAP_LABEL = "outside the live heap (allocator's keep, stacks, non-malloc heaps)"
UNTOUCHED_LABEL = "live but not resident (allocated, never touched)"
UNTOUCHED_COLOUR = "#b2182b"


def _column(run, name):
    values = run["samples"].get(name)
    return values if isinstance(values, list) else None


def _median_run(runs):
    """The run of median peak RSS among ok runs that have the live-heap column."""
    usable = [r for r in runs if r["status"] == "ok" and _column(r, "heap_live_kb")]
    if not usable:
        return None
    usable.sort(key=lambda r: max(v for v in _column(r, "rss_kb") if v is not None))
    return usable[len(usable) // 2]


def heap_series(reports, names, workload=None):
    """[(allocator, run)] of the median run per allocator, in report order."""
    workload = select_workload(reports, names, workload)
    by_allocator, families = {}, {}
    for report in reports:
        for run in report["runs"]:
            if run["workload"] == workload:
                by_allocator.setdefault(run["allocator"]["name"], []).append(run)
                families[run["allocator"]["name"]] = run["allocator"].get("family", "custom")
    out = [(name, _median_run(runs)) for name, runs in by_allocator.items()]
    missing = [name for name, run in out if run is None]
    if len(missing) == len(out):
        raise PlotError(f"no ok run of {workload} has a live-heap column (heap_live_kb): run it with --ledger")
    return workload, [(name, run) for name, run in out if run is not None], missing, families


def _points(run):
    t = _column(run, "t_ms")
    cols = [_column(run, c) for c in ("rss_kb", "anon_kb", "heap_live_kb")]
    rows = [(ti / 1000, *(c[i] * MB for c in cols)) for i, ti in enumerate(t)
            if all(c[i] is not None for c in cols)]
    return [list(x) for x in zip(*rows)] if rows else [[], [], [], []]


def heap_figure(reports, names, workload=None):
    """The figure; PlotError when no run has the ledger's column."""
    workload, series, missing, families = heap_series(reports, names, workload)
    colours = style.allocator_colours([(name, families[name]) for name, _ in series])
    with style.rc():
        fig = style.new_figure(10, 2.6 * len(series) + 1.0)
        axes = fig.subplots(len(series), 1, sharex=True, squeeze=False)[:, 0]
        for ax, (name, run) in zip(axes, series):
            t, rss, anon, live = _points(run)
            colour = colours[name]
            ax.plot(t, rss, color="0.55", lw=1.0, label="RSS", gid="rss")
            ax.plot(t, anon, color=colour, lw=1.6, label="anonymous RSS", gid="anon")
            ax.plot(t, live, color=colour, lw=1.6, ls="--", label="live heap (ledger)", gid="live")
            # The gap has two meanings: anonymous RSS above the live heap is memory
            # outside it; the live heap above anonymous RSS is memory allocated and
            # never touched, which no allocator keeps. Each shaded its own way.
            kept = [a >= h for a, h in zip(anon, live)]
            ax.fill_between(t, live, anon, where=kept, interpolate=True, color=colour, alpha=0.22, lw=0,
                            label=GAP_LABEL, gid="outside")
            if not all(kept):
                ax.fill_between(t, anon, live, where=[not k for k in kept], interpolate=True,
                                facecolor="none", edgecolor=UNTOUCHED_COLOUR, hatch="///", lw=0,
                                label=UNTOUCHED_LABEL, gid="untouched")
            for mark in run["marks"]:
                x = mark["t_ms"] / 1000
                ax.axvline(x, color="0.3", ls=":", lw=0.8)
                ax.text(x, 1.0, " " + mark["name"], transform=ax.get_xaxis_transform(), rotation=90,
                        va="top", ha="left", fontsize=7, color="0.25")
            ax.set_ylabel("MB")
            ax.set_title(f"{workload} under {name}", fontsize=10, loc="left")
            ax.legend(loc="upper left", fontsize=7)
        axes[-1].set_xlabel("time since exec (s)")
        note = ("Shaded: anonymous RSS minus the live malloc heap (the usable size of the blocks the program "
                "holds, counted by the heap ledger). It is what the allocator keeps after frees, plus thread stacks, "
                "the program's own mappings and heaps that are not malloc's. Hatched red: the live heap above "
                "anonymous RSS, blocks allocated and never touched (a page is resident from its first write), "
                "not memory the allocator keeps. Pages given back with MADV_FREE stay in RSS until the kernel needs them "
                "(lazyfree_kb). Median run by peak RSS per allocator.")
        if missing:
            note += f" Without a live-heap column (not run with --ledger): {', '.join(missing)}."
        note += " Source: " + ", ".join(text.file_label(n) for n in names)
        width_px = fig.get_figwidth() * fig.dpi * 0.9
        lines = style.wrap_to_width(fig, note, 7.5, width_px)
        fig.text(0.05, 0.01, "\n".join(lines), fontsize=7.5, va="bottom")
        fig.subplots_adjust(left=0.08, right=0.97, top=1 - 0.35 / fig.get_figheight(),
                            bottom=(0.75 + 0.14 * len(lines)) / fig.get_figheight(), hspace=0.35)
    return fig
