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


MARK_COLOUR = "0.25"


def _draw_marks(fig, ax, run):
    """Each mark a dotted line, its name in rows above the data that never
    overlap (rss.place_mark_labels); returns the share of the panel's height
    the rows take."""
    from .rss import MARK_FONT, MARK_PAD_PX, place_mark_labels
    marks = [(m["t_ms"] / 1000, m["name"], MARK_COLOUR) for m in run["marks"]]
    for x, _, _ in marks:
        ax.axvline(x, color=MARK_COLOUR, ls=":", lw=0.8, gid="mark")
    x0, x1 = ax.get_xlim()
    labels, row_px = place_mark_labels(fig, ax, marks, x0, x1)
    height_px = ax.get_position().height * fig.get_figheight() * fig.dpi
    for label in labels:
        offset = MARK_PAD_PX + label.shift if label.ha == "left" else -MARK_PAD_PX
        y = 1.0 - (2 + label.row * row_px) / height_px
        ax.annotate(label.name, xy=(label.x, y), xycoords=ax.get_xaxis_transform(),
                    xytext=(offset * 72 / fig.dpi, 0), textcoords="offset points", ha=label.ha, va="top",
                    fontsize=MARK_FONT, color=MARK_COLOUR, gid="mark-label", annotation_clip=False)
    rows = 1 + max((label.row for label in labels), default=-1)
    return (4 + rows * row_px) / height_px


def _draw_panel(ax, run, colour):
    t, rss, anon, live = _points(run)
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
    return max([0.0] + rss + anon + live)


def heap_figure(reports, names, workload=None):
    """The figure; PlotError when no run has the ledger's column."""
    from .defaults import title_of
    workload, series, missing, families = heap_series(reports, names, workload)
    colours = style.allocator_colours([(name, families[name]) for name, _ in series])
    with style.rc():
        fig = style.new_figure(10, 2.6 * len(series) + 1.9)
        axes = fig.subplots(len(series), 1, sharex=True, squeeze=False)[:, 0]
        note = _note(missing, names)
        width_px = fig.get_figwidth() * fig.dpi * 0.9
        lines = style.wrap_to_width(fig, note, 7.5, width_px)
        fig.text(0.05, 0.01, "\n".join(lines), fontsize=7.5, va="bottom")
        # Room on top for the title and the one legend, which stays off the data.
        fig.subplots_adjust(left=0.08, right=0.97, top=1 - 1.4 / fig.get_figheight(),
                            bottom=(0.75 + 0.14 * len(lines)) / fig.get_figheight(), hspace=0.35)
        tops = []
        for ax, (name, run) in zip(axes, series):
            tops.append(_draw_panel(ax, run, colours[name]))
            ax.set_ylabel("MB")
            ax.set_title(f"{name}, run {run.get('repetition', '?')}", fontsize=10, loc="left",
                         color=colours[name], gid="panel-title")
        for ax, (name, run), top in zip(axes, series, tops):
            headroom = _draw_marks(fig, ax, run)
            ax.set_ylim(0, (top or 1.0) / max(0.3, 1.0 - headroom - 0.02))
        fig.suptitle(title_of(workload, series[0][1].get("params")), x=0.08, y=1 - 0.12 / fig.get_figheight(),
                     ha="left", va="top", fontweight="bold", fontsize=12)
        handles, labels = axes[0].get_legend_handles_labels()
        for ax in axes[1:]:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
        fig.legend(handles, labels, loc="upper left", ncol=2, fontsize=7.5, frameon=False,
                   bbox_to_anchor=(0.08, 1 - 0.42 / fig.get_figheight()))
        axes[-1].set_xlabel("time since exec (s)")
    return fig


def _note(missing, names):
    note = ("Shaded: anonymous RSS minus the live malloc heap (the usable size of the blocks the program "
            "holds, counted by the heap ledger). It is what the allocator keeps after frees, plus thread stacks, "
            "the program's own mappings and heaps that are not malloc's. Hatched red: the live heap above "
            "anonymous RSS, blocks allocated and never touched (a page is resident from its first write), "
            "not memory the allocator keeps. Pages given back with MADV_FREE stay in RSS until the kernel needs them "
            "(lazyfree_kb). Median run by peak RSS per allocator; dotted lines: its marks. Memory in MB = 10^6 bytes.")
    if missing:
        note += f" Without a live-heap column (not run with --ledger): {', '.join(missing)}."
    return note + " Source: " + ", ".join(text.file_label(n) for n in names)
