"""RSS over time: one colour per allocator, the median run strong and the other
repetitions faint, marks as labelled vertical lines, the phases between them shaded
in a lane per allocator, cumulative minor faults below. The curve metrics are drawn
where they are measured: the area after the --after mark shaded, the RSS 1 s after
it as a point. Units as the report's manifest declares them. Each call builds a new
Figure.
"""
import re
import textwrap
from dataclasses import dataclass, field

from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import EngFormatter
from matplotlib.transforms import blended_transform_factory

from . import defaults, style, text, units
from .report import PlotError, ReportError, is_number, select_workload

FIGSIZE = (12.0, 8.0)
LEFT, RIGHT, TOP, BOTTOM = 0.07, 0.79, 0.885, 0.15
MARK_FONT = 7.5
MARK_PAD_PX = 3      # between a mark line and its label
MARK_GAP_PX = 6      # between two labels in one row
MAX_SHIFT_PX = 80    # a label moves at most this far right of its mark before a new row
PHASE_FONT = 6.5
PHASE_PAD_PX = 4     # room left around a phase's name inside its segment
TITLE_FONT = 12
TITLE_RIGHT = 0.985  # a title wraps rather than run past this (figure fraction)
FAULTS = "minflt"
# The sampled column the harness measures the area after the --after mark on
# (curve.cpp: the area is of RSS), and how long after that mark the reading drawn
# as a dot is taken. Which metrics these are the report's manifest says.
AREA_COLUMN = "rss_kb"
READING_MS = 1000


@dataclass
class RunLine:
    index: int          # position in the report's runs[]
    repetition: int
    t: list             # seconds since exec
    y: list             # plotted column, shown units
    faults: list        # cumulative minor faults
    marks: list         # [(seconds, name)]
    peak: float
    after: tuple = None      # (seconds, mark name) of the --after mark, when the report has it
    one_second: float = None  # the plotted column 1 s after that mark, shown units, when measured
    # The run's peak where no sample saw it (the kernel's maximum, read at a
    # program's exit stop or by the workload): (seconds, shown units, where from).
    missed_peak: tuple = None


@dataclass
class Series:
    """The ok runs of one allocator in one report."""
    report: int
    name: str
    family: str
    params: dict
    runs: list = field(default_factory=list)
    label: str = ""
    colour: str = ""
    linestyle: str = "-"

    def median(self):
        """The median run by peak of the plotted column (lower median when even)."""
        ordered = sorted(self.runs, key=lambda r: (r.peak, r.repetition))
        return ordered[(len(ordered) - 1) // 2]


def _column(samples, name, n, path, where):
    values = samples.get(name)
    if not isinstance(values, list):
        raise ReportError(path, f"{where} has no samples.{name}")
    if len(values) != n:
        raise ReportError(path, f"{where}: samples.{name} has {len(values)} values, samples.t_ms has {n}")
    for k, v in enumerate(values):
        if not is_number(v):
            raise ReportError(path, f"{where}: samples.{name}[{k}] is not a number")
    return values


@dataclass(frozen=True)
class AfterMetrics:
    """The metrics measured from the --after mark that the plot draws on a column,
    by their names in the report (None: not drawn)."""
    area: str = None      # the area under the column after the mark
    reading: str = None   # the column READING_MS after the mark


_OFFSET = re.compile(r"(\d+)(ms|s)")


def _offset_ms(text):
    match = _OFFSET.fullmatch(text)
    return int(match.group(1)) * (1 if match.group(2) == "ms" else 1000) if match else None


def after_metrics(report, column, path="report"):
    """Which metrics of `report` the plot draws after the --after mark on the sampled
    `column`, taken from those its manifest declares with scope "after" rather
    than named here: the column's reading READING_MS after the mark is the one
    named for the column with that offset between its stem and unit suffix
    (samples.rss_kb: after.rss_1s_kb, or after.rss_1000ms_kb), stored in the
    column's unit; the area after the mark (on AREA_COLUMN only) is the one in
    a unit of an area over time (MB*s), whatever its name. A report
    without a manifest predates the curve metrics: none. For AREA_COLUMN, whose
    metrics the harness always measures, a manifest that lacks either is a
    ReportError listing what it declares: a renamed metric is not left out of
    the plot unsaid."""
    manifest = units.manifest_of(report)
    if manifest is None:
        return AfterMetrics()
    column_shown = units.shown(report, f"samples.{column}", path)
    stem, _, suffix = column.rpartition("_")
    after = {name: entry for name, entry in manifest.items()
             if isinstance(entry, dict) and entry.get("scope") == "after"}
    reading = area = None
    for name, entry in after.items():
        what = name.split(".", 1)[-1]
        if stem and what.startswith(f"{stem}_") and what.endswith(f"_{suffix}") \
                and _offset_ms(what[len(stem) + 1:-len(suffix) - 1]) == READING_MS:
            shown = units.shown(report, name, path)
            if shown.stored != column_shown.stored:
                raise ReportError(path, f"{name} is in {shown.stored} and samples.{column} in "
                                        f"{column_shown.stored}: one axis cannot show both")
            reading = name
        elif column == AREA_COLUMN and str(entry.get("unit")).endswith("*s"):
            area = name
    if column == AREA_COLUMN and (area is None or reading is None):
        missing = [what for what, name in (("area after the --after mark", area),
                                           (f"reading {READING_MS / 1000:g} s after it", reading)) if name is None]
        raise ReportError(path, f'the "metrics" manifest declares no {" and no ".join(missing)} for samples.{column} '
                                f'(scope "after": {", ".join(after) or "none"})')
    return AfterMetrics(area=area, reading=reading)


def _curve_value(run, name):
    entry = ((run.get("metrics") or {}).get("curve") or {}).get(name)
    value = entry.get("value") if isinstance(entry, dict) else None
    return value if is_number(value) else None


def run_line(run, index, path, metric, factor, align=None, reading=None):
    """The plotted points of one run: periodic samples plus the samples taken at
    marks (peak_rss_kb is the maximum over both), in time order; with `align`, the
    times counted from the first mark of that name; `reading`: the curve metric
    drawn READING_MS after the --after mark."""
    where = f"runs[{index}] ({run['allocator']['name']} #{run.get('repetition', '?')})"
    samples = run.get("samples")
    if not isinstance(samples, dict) or not samples:
        raise ReportError(path, f"{where} has no samples")
    t = samples.get("t_ms")
    if not isinstance(t, list) or not t:
        raise ReportError(path, f"{where} has no samples.t_ms")
    t = _column(samples, "t_ms", len(t), path, where)
    if metric not in samples:
        columns = ", ".join(k for k in samples if k != "t_ms")
        raise ReportError(path, f"{where} has no samples.{metric}; sampled columns: {columns}")
    y = _column(samples, metric, len(t), path, where)
    faults = _column(samples, FAULTS, len(t), path, where)
    points = list(zip(t, y, faults))
    marks = []
    raw_marks = run.get("marks") or []
    if not isinstance(raw_marks, list):
        raise ReportError(path, f"{where}: marks is not an array")
    for k, mark in enumerate(raw_marks):
        if not isinstance(mark, dict) or not is_number(mark.get("t_ms")) or not isinstance(mark.get("name"), str):
            raise ReportError(path, f"{where}: marks[{k}] needs t_ms and name")
        marks.append((mark["t_ms"] / 1000.0, mark["name"]))
        sample = mark.get("sample")
        if isinstance(sample, dict) and all(is_number(sample.get(c)) for c in (metric, FAULTS)):
            at = sample["t_ms"] if is_number(sample.get("t_ms")) else mark["t_ms"]
            points.append((at, sample[metric], sample[FAULTS]))
    points.sort(key=lambda p: p[0])
    zero = 0.0
    if align is not None:
        zero = next((t for t, name in marks if name == align), None)
        if zero is None:
            raise ReportError(path, f"{where} has no mark {align!r}; its marks: "
                                    f"{', '.join(name for _, name in marks) or 'none'}")
        marks = [(t - zero, name) for t, name in marks]
    ys = [p[1] * factor for p in points]
    line = RunLine(index=index, repetition=run.get("repetition", 0) or 0,
                   t=[p[0] / 1000.0 - zero for p in points], y=ys,
                   faults=[p[2] for p in points], marks=marks, peak=max(ys))
    line.missed_peak = missed_peak(run, metric, factor, line, zero)
    after = (run.get("curve_info") or {}).get("after")
    if isinstance(after, dict) and is_number(after.get("t_ms")):
        line.after = (after["t_ms"] / 1000.0 - zero, str(after.get("mark") or "?"))
        value = _curve_value(run, reading) if reading else None
        line.one_second = value * factor if value is not None else None
    return line


# A peak above the highest sample by more than this share is drawn on its own.
MISSED_SHARE = 0.005


def missed_peak(run, metric, factor, line, zero=0.0):
    """(seconds, value, source) of the run's peak RSS when the samples miss it
    (peak_rss_kb above their highest by more than MISSED_SHARE): at the run's
    end, where the kernel's maximum was read; None otherwise or for another column."""
    peak = (run.get("metrics") or {}).get("peak_rss_kb")
    if metric != "rss_kb" or not is_number(peak) or peak * factor <= line.peak * (1 + MISSED_SHARE):
        return None
    wall = (run.get("metrics") or {}).get("wall_ms")
    end = max(line.t[-1], wall / 1000.0 - zero) if is_number(wall) else line.t[-1]
    return end, peak * factor, str(run.get("peak_from") or "the kernel's maximum")


def _valid_columns(reports, workload):
    columns = None
    for report in reports:
        for run in report["runs"]:
            samples = run.get("samples")
            if run["workload"] != workload or run["status"] != "ok" or not isinstance(samples, dict):
                continue
            keys = [k for k in samples if k != "t_ms"]
            columns = keys if columns is None else [k for k in columns if k in keys]
    return columns or []


def column_shown(reports, names, metric):
    """How the column is shown, from each report's manifest; PlotError when two
    reports show it differently."""
    shown = None
    for report, path in zip(reports, names):
        this = units.shown(report, f"samples.{metric}", path)
        if shown is not None and (this.unit, this.scale) != (shown.unit, shown.scale):
            raise PlotError(f"the reports show {metric} in different units: {shown.unit} "
                            f"({names[0]}) and {this.unit} ({path})")
        shown = shown or this
    return shown


def collect(reports, names, workload, metric, align=None):
    """(series, left_out, total, shown, after): the ok runs grouped per report and
    allocator, the runs not drawn as {(allocator, status): count}, how the column
    is shown, and the metrics drawn after the --after mark of each report."""
    valid = _valid_columns(reports, workload)
    if valid and metric not in valid and (metric == "t_ms" or not any(
            metric in (run.get("samples") or {}) for report in reports for run in report["runs"])):
        raise PlotError(f"{', '.join(names)}: no sampled column {metric!r}; "
                        f"valid --metric values: {', '.join(valid)}")
    shown = column_shown(reports, names, metric)
    after = [after_metrics(report, metric, path) for report, path in zip(reports, names)]
    series, left_out, total = [], {}, 0
    for r, (report, path) in enumerate(zip(reports, names)):
        by_name = {}
        for i, run in enumerate(report["runs"]):
            if run["workload"] != workload:
                continue
            total += 1
            name = run["allocator"]["name"]
            if run["status"] != "ok":
                key = (name, run["status"])
                left_out[key] = left_out.get(key, 0) + 1
                continue
            s = by_name.get(name)
            if s is None:
                s = by_name[name] = Series(report=r, name=name,
                                           family=run["allocator"].get("family") or "custom",
                                           params=run.get("params") or {})
                series.append(s)
            scale = units.shown(report, f"samples.{metric}", path).scale
            s.runs.append(run_line(run, i, path, metric, scale, align, after[r].reading))
    if not series:
        raise PlotError(f"{', '.join(names)}: no run of {workload} has status ok "
                        f"({', '.join(f'{n} {c} {st}' for (n, st), c in left_out.items())})")
    return series, left_out, total, shown, after


def _label_series(series, names):
    """Labels name the allocator plus the parameters that differ between series;
    returns the parameters common to all (for the title)."""
    keys = []
    for s in series:
        keys += [k for k in s.params if k not in keys]
    missing = object()
    common = {k: series[0].params.get(k) for k in keys
              if all(s.params.get(k, missing) == series[0].params.get(k, missing) for s in series)}
    differing = [k for k in keys if k not in common]
    for s in series:
        extra = text.format_params({k: s.params.get(k) for k in differing}, keep_false=True)
        s.label = f"{s.name} {extra}".strip()
    labels = [s.label for s in series]
    for s in series:
        if labels.count(s.label) > 1:
            s.label = f"{s.label} [{text.file_label(names[s.report])}]"
    colours = style.allocator_colours((s.name, s.family) for s in series)
    seen = {}
    for s in series:
        s.colour = colours[s.name]
        s.linestyle = style.LINESTYLES[seen.get(s.name, 0) % len(style.LINESTYLES)]
        seen[s.name] = seen.get(s.name, 0) + 1
    return common


def _legend(ax, series, after_mark, one_second, missed=False):
    handles = []
    for s in series:
        n = len(s.runs)
        label = textwrap.fill(f"{s.label} ({n}\u00a0run{'s' if n != 1 else ''})", 32,
                              subsequent_indent="  ", break_on_hyphens=False)
        handles.append(Line2D([], [], color=s.colour, linestyle=s.linestyle, lw=2.0, label=label))
    handles.append(Line2D([], [], color="0.3", lw=2.0, label="median run"))
    handles.append(Line2D([], [], color="0.3", lw=0.9, alpha=0.35, label="other runs"))
    if after_mark:
        handles.append(Patch(facecolor="0.3", alpha=0.15, lw=0, label=f"area after {_short(after_mark, 20)}"))
    if one_second:
        handles.append(Line2D([], [], color="0.3", marker="o", ms=6, mec="white", ls="none",
                              label=f"{READING_MS / 1000:g} s after it"))
    if missed:
        handles.append(Line2D([], [], color="0.3", marker="v", ms=7, mec="black", ls="none",
                              label="peak no sample saw\n  (the kernel's maximum)"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.015, 1.0), borderaxespad=0.0,
              frameon=False, title="allocator", alignment="left")


@dataclass
class _Label:
    x: float
    name: str
    colours: list
    width: float = 0.0
    row: int = 0
    ha: str = "left"
    shift: float = 0.0   # px the label sits right of its usual place


def place_mark_labels(fig, ax, marks, x0, x1):
    """Merge same-name marks whose labels would collide and put the labels in rows
    so that none overlap; a label that finds no room at its mark moves right along a
    row (up to MAX_SHIFT_PX) before it opens a
    new row, so that marks close together (at the start) do not stack up: their
    labels read left to right in the order of the marks, each in its mark's colour.
    marks: [(x, name, colour)]. Returns ([_Label], row height px)."""
    box = ax.get_position()
    width_px = box.width * fig.get_figwidth() * fig.dpi
    span = (x1 - x0) or 1.0

    def px(x):
        return (x - x0) / span * width_px

    labels = []
    height = 0.0
    for x, name, colour in sorted(marks, key=lambda m: (m[0], m[1])):
        w, h = style.text_size_px(fig, name, MARK_FONT)
        height = max(height, h)
        for label in labels:
            if label.name == name and px(x) - px(label.x) <= w + MARK_GAP_PX:
                if colour not in label.colours:
                    label.colours.append(colour)
                break
        else:
            labels.append(_Label(x=x, name=name, colours=[colour], width=w))
    row_right = []
    for label in labels:
        left = px(label.x) + MARK_PAD_PX
        if left + label.width > width_px:
            label.ha = "right"
            left = px(label.x) - MARK_PAD_PX - label.width
        for row, right in enumerate(row_right):
            if left >= right + MARK_GAP_PX:
                break
        else:
            for row, right in enumerate(row_right):
                shifted = right + MARK_GAP_PX
                if (label.ha == "left" and shifted - left <= MAX_SHIFT_PX
                        and shifted + label.width <= width_px):
                    label.shift, left = shifted - left, shifted
                    break
            else:
                row = len(row_right)
                row_right.append(float("-inf"))
        label.row = row
        row_right[row] = left + label.width
    return labels, height + 4


def _draw_marks(fig, ax, lower, series, x0, x1):
    """Vertical lines for every mark of every median run (both panels) and
    non-overlapping labels in the top panel. Returns the fraction of the top
    panel's height the labels need."""
    marks = []
    for s in series:
        for t, name in s.median().marks:
            if not x0 <= t <= x1:
                continue
            for a in (ax, lower):
                a.axvline(t, color=s.colour, lw=0.9, linestyle=(0, (2, 2)), alpha=0.85, zorder=1,
                          gid="mark")
            marks.append((t, name, s.colour))
    labels, row_px = place_mark_labels(fig, ax, marks, x0, x1)
    height_px = ax.get_position().height * fig.get_figheight() * fig.dpi
    transform = blended_transform_factory(ax.transData, ax.transAxes)
    for label in labels:
        colour = label.colours[0] if len(label.colours) == 1 else "#333333"
        offset = MARK_PAD_PX + label.shift if label.ha == "left" else -MARK_PAD_PX
        y = 1.0 - (3 + label.row * row_px) / height_px
        ax.annotate(label.name, xy=(label.x, y), xycoords=transform, xytext=(offset * 72 / fig.dpi, 0),
                    textcoords="offset points", ha=label.ha, va="top", fontsize=MARK_FONT,
                    color=colour, gid="mark-label", annotation_clip=False,
                    bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.85))
    rows = 1 + max((label.row for label in labels), default=-1)
    return (6 + rows * row_px) / height_px


def _short(label, width=34):
    return label if len(label) <= width else label[:width - 1] + "\u2026"


def _phase_label(fig, name, width_px):
    """`name`, or as much of it as fits in `width_px` with an ellipsis; "" when
    not even one letter does."""
    if style.text_size_px(fig, name, PHASE_FONT)[0] + PHASE_PAD_PX <= width_px:
        return name
    for keep in range(len(name) - 1, 0, -1):
        short = name[:keep] + "\u2026"
        if style.text_size_px(fig, short, PHASE_FONT)[0] + PHASE_PAD_PX <= width_px:
            return short
    return ""


def _draw_phases(fig, lanes, series, x0, x1):
    """One lane per series: the phases between consecutive marks of its median run,
    shaded in its colour, alternately darker and lighter so each boundary shows, and
    each named inside by the mark that opens it (shortened to fit its width)."""
    width_px = lanes.get_position().width * fig.get_figwidth() * fig.dpi
    for lane, s in enumerate(series):
        marks = s.median().marks
        for k in range(len(marks) - 1):
            (start, name), (stop, _) = marks[k], marks[k + 1]
            start, stop = max(start, x0), min(stop, x1)
            if stop <= start:
                continue
            lanes.axvspan(start, stop, ymin=1 - (lane + 0.85) / len(series),
                          ymax=1 - (lane + 0.15) / len(series), color=s.colour,
                          alpha=0.55 if k % 2 == 0 else 0.25, lw=0, gid="phase")
            label = _phase_label(fig, name, (stop - start) / ((x1 - x0) or 1.0) * width_px)
            if label:
                lanes.text((start + stop) / 2, lane + 0.5, label, ha="center", va="center",
                           fontsize=PHASE_FONT, color="0.1", clip_on=False, gid=f"phase-label:{name}")
    lanes.set_ylim(len(series), 0)
    lanes.set_yticks([k + 0.5 for k in range(len(series))])
    lanes.set_yticklabels([_short(s.label) for s in series], fontsize=7.5)
    # Labels on the right, in the legend's column, where long labels have room.
    lanes.yaxis.tick_right()
    lanes.tick_params(axis="y", length=0, pad=4)
    for tick, s in zip(lanes.yaxis.get_major_ticks(), series):
        tick.label1.set_color(s.colour)
        tick.label2.set_color(s.colour)
    lanes.tick_params(axis="x", labelbottom=False)
    lanes.grid(False, axis="y")
    lanes.set_ylabel("phases", fontsize=8)
    lanes.spines["left"].set_visible(False)


def _footnote(series, left_out, total, shown, names, legacy, shaded, after):
    lines = [f"Strong line: the median run by peak {shown.title}; faint: the other repetitions. "
             "Dashed verticals: marks of each median run; phases: the time between its marks, "
             "each named by the mark that opens it."]
    if shaded:
        area = ", ".join(dict.fromkeys(a.area for a in after if a.area)) or "not in the report"
        reading = ", ".join(dict.fromkeys(a.reading for a in after if a.reading)) or "not in the report"
        lines.append(f"Shaded: the area under each median run's RSS after its --after mark ({area}); "
                     f"dot: its reading {READING_MS / 1000:g} s after that mark ({reading}), "
                     "where the run lasted that long.")
    dropped = sum(left_out.values())
    if dropped:
        detail = ", ".join(f"{name} {count} {status}" for (name, status), count in left_out.items())
        note = f"Left out {dropped} of {total} runs that were not ok: {detail}."
    else:
        note = f"All {total} runs ok."
    note += f" Memory in {units.CONVENTION}; parameters in binary units (MiB = 2^20 bytes) as given."
    if legacy:
        note += " Units by the report format's naming rule: a report without a metric manifest."
    lines.append(note)
    lines.append("Source: " + ", ".join(text.file_label(n) for n in names))
    return "\n".join(lines)


def _draw_after(ax, series, metric):
    """The area after each median run's --after mark (only for the column the
    area is measured on) and its +1 s reading. Returns (mark name or "", whether
    a reading was drawn)."""
    marks, drawn = [], False
    # One area reads; several overlap into one block: then each is the region
    # under its curve from its mark, left unshaded.
    fill = sum(s.median().after is not None for s in series) == 1
    for s in series:
        run = s.median()
        if run.after is None:
            continue
        start, mark = run.after
        marks.append(mark)
        if metric == AREA_COLUMN and fill:
            xs = [start] + [t for t in run.t if t > start]
            ys = [_at(run, start)] + [y for t, y in zip(run.t, run.y) if t > start]
            ax.fill_between(xs, 0, ys, color=s.colour, alpha=0.13, lw=0, zorder=1, gid="after-area")
        if run.one_second is not None:
            ax.plot([start + 1.0], [run.one_second], ls="none", marker="o", ms=6, color=s.colour, mec="white",
                    mew=1.0, zorder=5, gid="after-1s")
            drawn = True
    names = sorted(set(marks))
    shaded = names if metric == AREA_COLUMN and fill else []
    return (shaded[0] if len(shaded) == 1 else "the --after mark" if shaded else ""), drawn


def _at(run, t):
    """The run's plotted value at time t (linear between samples)."""
    for (t0, y0), (t1, y1) in zip(zip(run.t, run.y), zip(run.t[1:], run.y[1:])):
        if t0 <= t <= t1:
            return y0 if t1 == t0 else y0 + (y1 - y0) * (t - t0) / (t1 - t0)
    return run.y[-1] if t > run.t[-1] else run.y[0]


# With --align, the time before the mark takes at most this share of the axis
# (unless --xlim says otherwise): the phase after it is what is being looked at.
BEFORE_SHARE = 0.2


def x_range(xmin, xmax, aligned=False, xlim=None):
    """The x axis's (left, right) in seconds: `xlim` (left, right), either None
    for the data's; else the data's with a 2% margin, the part before 0 cut to
    BEFORE_SHARE of the axis when `aligned`."""
    if aligned and xmin < 0 < xmax:
        xmin = max(xmin, -xmax * BEFORE_SHARE / (1 - BEFORE_SHARE))
    x0 = xmin - (xmax - xmin) * 0.02 if xmin < 0 else 0.0
    x1 = xmax + (xmax - x0) * 0.02 if xmax > x0 else x0 + 1.0
    lo, hi = xlim or (None, None)
    x0, x1 = (x0 if lo is None else lo), (x1 if hi is None else hi)
    if x1 <= x0:
        raise PlotError(f"the time range {x0:g}..{x1:g} s is empty: the end must come after the start")
    return x0, x1


def _visible(run, x0, x1):
    """The values of a run drawn between x0 and x1 (all of them when none is)."""
    inside = [y for t, y in zip(run.t, run.y) if x0 <= t <= x1]
    return inside or run.y


def _draw_missed_peaks(ax, series):
    """A marker at each median run's peak that no sample saw (missed_peak);
    whether any was drawn."""
    drawn = False
    for s in series:
        peak = s.median().missed_peak
        if peak is None:
            continue
        x, y, source = peak
        ax.plot([x], [y], ls="none", marker="v", ms=8, color=s.colour, mec="black", mew=0.8, zorder=6,
                gid="missed-peak")
        ax.annotate(f"peak {y:.3g}", xy=(x, y), xytext=(-4, 6), textcoords="offset points", ha="right",
                    va="bottom", fontsize=MARK_FONT, color=s.colour, gid=f"missed-peak-label:{source}")
        drawn = True
    return drawn


def title_text(workload, series):
    """The figure's title: the workload's name and only the parameters every
    series shares that differ from its defaults; a program's name alone."""
    if any(text.is_program(s.params) for s in series):
        return workload
    keys = [k for k in series[0].params if all(k in s.params and s.params[k] == series[0].params[k] for s in series)]
    common = {k: series[0].params[k] for k in keys}
    return text.plot_title(workload, common, defaults.workload_defaults(workload, common.get("smoke") is True))


def rss_figure(reports, metric="rss_kb", workload=None, names=None, align=None, xlim=None):
    """Figure of `metric` (a sampled column, default rss_kb) over time for every
    allocator in `reports` (checked report dicts, see load_report). `names` (file
    names) are used in messages and the footnote; `align`: a mark name, every run's
    time counted from its first mark of that name; `xlim`: (left, right) seconds
    shown, either None for the data's. Raises PlotError / ReportError."""
    reports = list(reports)
    if not reports:
        raise PlotError("no report given")
    names = list(names) if names is not None else [f"report {i + 1}" for i in range(len(reports))]
    workload = select_workload(reports, names, workload)
    series, left_out, total, shown, after = collect(reports, names, workload, metric, align)
    _label_series(series, names)
    title_line = title_text(workload, series)
    with style.rc():
        fig = style.new_figure(*FIGSIZE)
        # No phases (no series with two marks): no lane for them.
        phased = any(len(s.median().marks) > 1 for s in series)
        lane_ratio = 0.11 * len(series) + 0.05 if phased else 0.001
        grid = fig.add_gridspec(3, 1, height_ratios=[3.0, lane_ratio, 1.2], left=LEFT, right=RIGHT,
                                top=TOP, bottom=BOTTOM, hspace=0.06)
        ax = fig.add_subplot(grid[0])
        lanes = fig.add_subplot(grid[1], sharex=ax)
        lower = fig.add_subplot(grid[2], sharex=ax)
        ymax, ymin, xmin, xmax = 0.0, 0.0, 0.0, 0.0
        for s in series:
            med = s.median()
            for run in s.runs:
                strong = run is med
                kw = dict(color=s.colour, linestyle=s.linestyle, lw=1.8 if strong else 0.9,
                          alpha=1.0 if strong else 0.35, zorder=3 if strong else 2,
                          gid="run:median" if strong else "run:other")
                ax.plot(run.t, run.y, **kw)
                lower.plot(run.t, run.faults, **kw)
                xmax = max(xmax, run.t[-1], *(m[0] for m in run.marks))
                xmin = min(xmin, run.t[0], *(m[0] for m in run.marks))
            if med.one_second is not None:
                xmax = max(xmax, med.after[0] + 1.0)
            if med.missed_peak is not None:
                xmax = max(xmax, med.missed_peak[0])
        x0, x1 = x_range(xmin, xmax, aligned=align is not None, xlim=xlim)
        for s in series:
            for run in s.runs:
                visible = _visible(run, x0, x1)
                ymax, ymin = max(ymax, max(visible)), min(ymin, min(visible))
            med = s.median()
            for extra in (med.one_second, med.missed_peak[1] if med.missed_peak else None):
                ymax = max(ymax, extra) if extra is not None else ymax
        after_mark, one_second = _draw_after(ax, series, metric)
        missed = _draw_missed_peaks(ax, series)
        ax.set_xlim(x0, x1)
        headroom = _draw_marks(fig, ax, lower, series, x0, x1)
        _draw_phases(fig, lanes, series, x0, x1)
        lanes.set_visible(phased)
        top = ymax if ymax > ymin else ymin + 1.0
        ax.set_ylim(ymin, ymin + (top - ymin) / max(0.2, 1.0 - headroom - 0.03))
        lower.set_ylim(bottom=0)
        ax.set_ylabel(shown.label())
        ax.tick_params(labelbottom=False)
        lower.set_ylabel("minor faults\n(cumulative)")
        lower.yaxis.set_major_formatter(EngFormatter(sep=""))
        lower.set_xlabel(f"time since the mark {align} (s)" if align else "time since exec (s)")
        _legend(ax, series, after_mark, one_second, missed)
        # A title with many parameters wraps onto a second line instead of running
        # off the right edge; the machine line moves down with it.
        title = style.wrap_to_width(fig, title_line, TITLE_FONT,
                                    (TITLE_RIGHT - LEFT) * fig.get_figwidth() * fig.dpi, weight="bold")
        fig.suptitle("\n".join(title), x=LEFT, y=0.975, ha="left", fontweight="bold",
                     fontsize=TITLE_FONT, linespacing=1.15)
        below = 0.935 - 0.0225 * (min(len(title), 2) - 1)
        fig.text(LEFT, below, text.machines(r.get("context") for r in reports), ha="left",
                 va="center", fontsize=9, color="0.3")
        legacy = any(units.manifest_of(r) is None for r in reports)
        fig.text(LEFT, 0.012, _footnote(series, left_out, total, shown, names, legacy, bool(after_mark), after), ha="left",
                 va="bottom", fontsize=7.5, color="0.3", linespacing=1.4)
    return fig
