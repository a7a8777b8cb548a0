"""Baseline against candidate, one small panel per metric and one row of panels per
compared group (workload, allocator pair): medians with min-max bars, the single
runs, the noise floor as a band around the baseline median, the change and verdict
as text: what `harness compare` decided, nothing recomputed. Draws a
memharness.comparison/1 dict; each call builds a new Figure.
"""
import math
import textwrap

from matplotlib.ticker import EngFormatter

from . import style, text, units
from .report import PlotError

WIDTH = 12.0
TOP_IN, HEADER_IN, PANEL_IN, BELOW_IN = 0.85, 0.6, 1.95, 0.42
LEFT_IN, RIGHT_IN, GAP_IN = 0.75, 0.3, 0.72
MAX_COLUMNS = 5
FOOT_LINE_IN = 0.15
SIDES = (("baseline", "#555555"), ("candidate", "#1f77b4"), ("baseline_again", "#a0a0a0"))
TICKS = {"baseline": "baseline", "candidate": "candidate", "baseline_again": "again"}
GID_SIDE = {"baseline": "baseline", "candidate": "candidate", "baseline_again": "again"}
DATA_FRACTION = 0.62   # of a panel's height for the data; the text sits above


def choose_metrics(data, metrics=None):
    """Metric names to draw: `metrics` (each must occur somewhere), else those the
    comparison can call a regression (a direction, as its tables show), else every
    one present."""
    present, directed = [], []
    for group in data["workloads"]:
        present += [e["metric"] for e in group["metrics"] if e["metric"] not in present]
        directed += [e["metric"] for e in group["metrics"]
                     if e.get("direction") in ("lower", "higher") and e["metric"] not in directed]
    if metrics:
        unknown = [m for m in metrics if m not in present]
        if unknown:
            raise PlotError(f"metric {', '.join(unknown)} not in the comparison; available: "
                            f"{', '.join(present)}")
        return list(dict.fromkeys(metrics))
    return directed or present


def _group_title(group):
    """The workload's name and only the parameters that differ from its
    defaults (defaults.title_of), then the allocators compared."""
    from .defaults import title_of
    parts = [title_of(group["workload"], group.get("params") or {})]
    b, c = group.get("baseline_allocator"), group.get("candidate_allocator")
    if b and c:
        parts.append(b if b == c else f"{b} \u2192 {c}")
    return "  \u00b7  ".join(p for p in parts if p)


def _detail(entry):
    lines = []
    ci = entry.get("ci")
    if ci:
        ends = [text.percent(v) if v is not None else "n/a" for v in ci]
        lines.append(f"CI {ends[0]} \u2026 {ends[1]}")
    parts = []
    # The p-value the verdict used, as the terminal and markdown show it.
    if entry.get("p_adjusted") is not None:
        parts.append(f"p (Holm) {entry['p_adjusted']:.3f}")
    elif entry.get("p") is not None:
        parts.append(f"p {entry['p']:.3f}")
    n = [str(entry[s].get("n", "?")) for s, _ in SIDES if entry.get(s)]
    parts.append("n=" + "/".join(n))
    lines.append(" \u00b7 ".join(parts))
    limits = []
    if entry.get("noise_floor") is not None:
        limits.append(f"noise \u00b1{entry['noise_floor'] * 100:.1f}%")
    # The smallest change this comparison could have called a regression.
    if entry.get("resolution") is not None:
        limits.append(f"resolution {entry['resolution'] * 100:.1f}%")
    if limits:
        lines.append(" \u00b7 ".join(limits))
    return "\n".join(lines)


def side_points(stat, factor=1.0):
    """What a panel draws of one side, in shown units: {"median": (value,
    censored), "min", "max", "values": [(value, censored)]}. A censored value
    (a time that never came within its run, in the side's "above") is its
    bound: the run stands for more than it, drawn as "never"."""
    above = list(stat.get("above") or [])
    values = []
    for v in stat.get("values") or []:
        censored = v in above
        if censored:
            above.remove(v)
        values.append((v * factor, censored))
    return {"median": (stat["median"] * factor, bool(stat.get("median_above"))),
            "min": stat["min"] * factor, "max": stat["max"] * factor, "values": values}


def _number(value, unit=""):
    """Three significant digits, a whole number from 1000 up: "3010 ms"."""
    said = f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    return f"{said} {unit}" if unit else said


def _never_text(value, unit):
    return f"never\n(> {_number(value, unit)})"


def headline_text(entry, unit=""):
    """The panel's headline: the change and verdict; when a median never came,
    "never → 124 ms" as the tables say it."""
    verdict = entry.get("verdict") or "no verdict"
    b, c = (bool((entry.get(side) or {}).get("median_above")) for side in ("baseline", "candidate"))
    if b or c:
        scale = units.of_entry(entry).scale
        said = ["never" if above else _number(entry[side]["median"] * scale, unit)
                for side, above in (("baseline", b), ("candidate", c))]
        return f"{said[0]} → {said[1]}  {verdict}"
    change = entry.get("change")
    return f"{text.percent(change) if change is not None else 'n/a'}  {verdict}"


def overall_verdict(data):
    """The comparison's verdict in one line: the harness's own summary when the
    file has it, else the regressions by name and the other verdicts counted."""
    if data.get("summary"):
        return str(data["summary"]).split(" -- ")[0]
    said = {"regression": [], "counts": {}}
    for group in data["workloads"]:
        for e in group["metrics"]:
            verdict = e.get("verdict") or "no verdict"
            if verdict == "regression":
                said["regression"].append(f"{group['workload']}:{e['metric']}" if len(data["workloads"]) > 1
                                          else e["metric"])
            else:
                said["counts"][verdict] = said["counts"].get(verdict, 0) + 1
    rest = ", ".join(f"{n} {v}" for v, n in said["counts"].items())
    if said["regression"]:
        return f"REGRESSION in {len(said['regression'])}: {', '.join(said['regression'])}" + (f"; {rest}" if rest else "")
    return "no regression" + (f": {rest}" if rest else "")


def _draw_side(ax, x, points, colour, side, unit):
    """One side's median, min-max bar and single runs; censored ones as
    upward triangles with "never". Returns the values drawn."""
    med, med_censored = points["median"]
    bars = ax.errorbar([x], [med], yerr=[[med - points["min"]], [points["max"] - med]],
                       fmt="^" if med_censored else "o", mfc="white" if med_censored else colour,
                       color=colour, ms=7 if med_censored else 6, capsize=5, elinewidth=1.4, capthick=1.4, zorder=4)
    bars.lines[0].set_gid(f"median{'-never' if med_censored else ''}:{GID_SIDE[side]}")
    if med_censored:
        ax.annotate(_never_text(med, unit), xy=(x, med), xytext=(-8, 0), textcoords="offset points", ha="right",
                    va="center", fontsize=6.5, color=colour, gid=f"never:{GID_SIDE[side]}")
    values = points["values"]
    if values:
        step = 0.28 / max(1, len(values) - 1)
        xs = [x + 0.16 + k * step for k in range(len(values))] if len(values) > 1 else [x + 0.2]
        for censored in (False, True):
            chosen = [(xx, v) for xx, (v, c) in zip(xs, values) if c == censored]
            if chosen:
                ax.plot([c[0] for c in chosen], [c[1] for c in chosen], ls="none", marker="^" if censored else "o",
                        ms=4 if censored else 3, mfc="none", mec=colour, alpha=0.8, zorder=3,
                        gid=f"value{'-never' if censored else ''}:{GID_SIDE[side]}")
    return [v for v, _ in values] + [points["min"], points["max"]]


def _panel(ax, entry):
    shown = units.of_entry(entry)
    factor = shown.scale
    ax.set_title(shown.label(), loc="left", fontsize=8.5, gid="panel-title")
    sides = [(name, colour) for name, colour in SIDES if entry.get(name)]
    lows, highs = [], []
    for x, (name, colour) in enumerate(sides):
        drawn = _draw_side(ax, x, side_points(entry[name], factor), colour, name, shown.unit)
        lows.append(min(drawn))
        highs.append(max(drawn))
    base = entry["baseline"]["median"] * factor
    floor = entry.get("noise_floor")
    if floor is not None:
        ax.axhspan(base * (1 - floor), base * (1 + floor), color="#9e9e9e", alpha=0.28, lw=0,
                   zorder=1, gid="noise-floor")
        lows.append(base * (1 - floor))
        highs.append(base * (1 + floor))
    threshold = entry.get("threshold")
    if threshold:
        for sign in (-1, 1):
            ax.axhline(base * (1 + sign * threshold), color="0.45", lw=0.8, ls=(0, (4, 3)),
                       zorder=2, gid="threshold")
            lows.append(base * (1 - threshold))
            highs.append(base * (1 + threshold))
    lo, hi = min(lows), max(highs)
    span = (hi - lo) or (abs(hi) * 0.05 or 1.0)
    bottom = lo - 0.08 * span
    ax.set_ylim(bottom, bottom + (hi + 0.05 * span - bottom) / DATA_FRACTION)
    ax.set_xlim(-0.55, len(sides) - 0.35)
    ax.set_xticks(range(len(sides)))
    ax.set_xticklabels([TICKS[name] for name, _ in sides], fontsize=7.5 if len(sides) > 2 else 8)
    ax.grid(False, axis="x")
    if not shown.unit:
        ax.yaxis.set_major_formatter(EngFormatter(sep=""))
    verdict = entry.get("verdict") or "no verdict"
    headline = headline_text(entry, shown.unit)
    ax.text(0.03, 0.97, headline, transform=ax.transAxes, ha="left", va="top", fontsize=9,
            fontweight="bold", color=style.VERDICT_COLOURS.get(verdict, "#555555"), gid="verdict")
    ax.text(0.03, 0.84, _detail(entry), transform=ax.transAxes, ha="left", va="top", fontsize=7,
            color="0.3", linespacing=1.3, gid="detail")


def _footnote(data):
    entries = [e for group in data["workloads"] for e in group["metrics"]]
    legend = ["Dot: median; bar: min\u2013max; rings: single runs"]
    if any((e.get(side) or {}).get("above") for e in entries for side, _ in SIDES):
        legend.append("triangle: never, a time that did not come within its run, drawn at its bound "
                      "(the run had that long left; it stands for more)")
    if any(e.get("baseline_again") for e in entries):
        legend.append("again: the baseline measured again after the candidate")
    if any(e.get("noise_floor") is not None for e in entries):
        legend.append("grey band: noise floor around the baseline median")
    if any(e.get("threshold") for e in entries):
        legend.append("dashed: verdict threshold")
    lines = textwrap.wrap("; ".join(legend) + ". Change = candidate median / baseline median \u2212 1; "
                          f"verdicts as `harness compare` gave them; {units.CONVENTION}.", 175)
    for warning in data.get("warnings") or []:
        lines += textwrap.wrap(f"warning: {warning}", 175, subsequent_indent="    ")
    return lines


def compare_figure(data, metrics=None):
    """Figure for a checked memharness.comparison/1 dict (load_comparison).
    `metrics`: names to draw (default: those with a direction). Raises PlotError."""
    chosen = choose_metrics(data, metrics)
    groups = data["workloads"]
    columns = min(MAX_COLUMNS, len(chosen))
    rows_per_group = -(-len(chosen) // columns)
    foot = _footnote(data)
    row_in = HEADER_IN + PANEL_IN + BELOW_IN
    foot_in = 0.2 + FOOT_LINE_IN * len(foot)
    # Whole pixels, so the PNG is exactly figsize * dpi.
    height = math.ceil((TOP_IN + row_in * rows_per_group * len(groups) + foot_in) * style.DPI) / style.DPI
    panel_w = (WIDTH - LEFT_IN - RIGHT_IN - GAP_IN * (columns - 1)) / columns
    with style.rc():
        fig = style.new_figure(WIDTH, height)
        for g, group in enumerate(groups):
            entries = {e["metric"]: e for e in group["metrics"]}
            for k, metric in enumerate(chosen):
                row = g * rows_per_group + k // columns
                col = k % columns
                top_in = TOP_IN + row * row_in + HEADER_IN
                if k % columns == 0:
                    title = _group_title(group) if k == 0 else f"{group['workload']} (continued)"
                    fig.text(LEFT_IN / WIDTH, 1 - (top_in - 0.3) / height, title, ha="left",
                             va="bottom", fontsize=10, fontweight="bold", color="0.15")
                rect = ((LEFT_IN + col * (panel_w + GAP_IN)) / WIDTH,
                        1 - (top_in + PANEL_IN) / height, panel_w / WIDTH, PANEL_IN / height)
                ax = fig.add_axes(rect, gid=f"panel:{g}:{metric}")
                if metric in entries:
                    _panel(ax, entries[metric])
                else:
                    ax.set_title(metric, loc="left", fontsize=8.5, gid="panel-title")
                    ax.text(0.5, 0.5, "not in this\ncomparison", transform=ax.transAxes, ha="center",
                            va="center", color="0.5", gid="missing")
                    ax.set_xticks([])
                    ax.set_yticks([])
        rounds = data.get("rounds")
        size = data.get("sample_size") or (f"{rounds} rounds" if rounds else None)
        title = (f"baseline {data.get('baseline', {}).get('name', '?')}  vs  "
                 f"candidate {data.get('candidate', {}).get('name', '?')}")
        if size:
            title += f"  ({size})"
        fig.text(LEFT_IN / WIDTH, 1 - 0.3 / height, title, ha="left", va="center",
                 fontsize=12, fontweight="bold")
        verdict = overall_verdict(data)
        fig.text(LEFT_IN / WIDTH, 1 - 0.58 / height, "\n".join(textwrap.wrap(verdict, 140)[:2]), ha="left",
                 va="center", fontsize=9.5, fontweight="bold", gid="overall-verdict",
                 color=style.VERDICT_COLOURS["regression" if data.get("regression") else "no change"])
        fig.text((WIDTH - RIGHT_IN) / WIDTH, 1 - 0.3 / height, text.machine(data.get("context")), ha="right",
                 va="center", fontsize=9, color="0.3")
        fig.text(LEFT_IN / WIDTH, 0.1 / height, "\n".join(foot), ha="left", va="bottom",
                 fontsize=7.5, color="0.3", linespacing=1.35)
    return fig
