"""Look and output of every plot: fonts, allocator colours, figure creation and
deterministic saving. rc settings apply only inside `rc()`; nothing global is changed.
Text is drawn as written: mathtext is off (PLAIN_TEXT), since names, marks and
parameters come from reports, and `$\\undefined{x}$` in one would stop the plot.
"""
import contextlib
import os

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .report import PlotError

DPI = 100

# Every Text made while a figure is built inside rc() (titles, labels, legends,
# annotations, named ticks) reads this when it is made: a '$' in a mark's name is
# a '$', never mathtext. A figure built outside rc() (sweep) passes
# parse_math=False on each text it takes from a report.
PLAIN_TEXT = {"text.parse_math": False}

RC = {
    **PLAIN_TEXT,
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8.5,
    "legend.title_fontsize": 9,
    "figure.titlesize": 12,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
    "axes.grid": True,
    "grid.color": "#d8d8d8",
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.formatter.useoffset": False,
    "svg.hashsalt": "memharness",
    "svg.fonttype": "path",
    "path.simplify": True,
}

# One fixed palette per family; several names of one family (scav, scav:opt=1)
# take its colours in the order they first appear in the input.
FAMILY_COLOURS = {
    "glibc": ["#1f77b4", "#17becf", "#08306b"],
    "jemalloc": ["#ff7f0e", "#bcbd22", "#a63603"],
    "mimalloc": ["#2ca02c", "#74c476", "#00441b"],
    "tcmalloc": ["#d62728", "#e377c2", "#67000d"],
    "scav": ["#9467bd", "#8c564b", "#3f007d"],
    "snmalloc": ["#006d77", "#66c2a4", "#00363b"],
    "custom": ["#7f7f7f", "#8c564b", "#e377c2", "#bcbd22", "#17becf"],
}
LINESTYLES = ["-", "--", "-.", (0, (5, 1, 1, 1, 1, 1))]

VERDICT_COLOURS = {
    "regression": "#c0392b",
    "improvement": "#1e8449",
    "no change": "#555555",
    "noisy": "#b9770e",
}


def rc():
    return matplotlib.rc_context(RC)


def allocator_colours(allocators):
    """{name: colour} for (name, family) pairs in input order; deterministic."""
    names_by_family = {}
    colours = {}
    for name, family in allocators:
        if name in colours:
            continue
        palette = FAMILY_COLOURS.get(family, FAMILY_COLOURS["custom"])
        seen = names_by_family.setdefault(family if family in FAMILY_COLOURS else "custom", [])
        colours[name] = palette[len(seen) % len(palette)]
        seen.append(name)
    return colours


def new_figure(width_in, height_in):
    """A Figure with an Agg canvas (for text measurement) and no pyplot state."""
    fig = Figure(figsize=(width_in, height_in), dpi=DPI)
    FigureCanvasAgg(fig)
    return fig


def text_size_px(fig, text, fontsize, weight="normal"):
    """(width, height) in pixels of `text` drawn at `fontsize` points."""
    from matplotlib.font_manager import FontProperties
    renderer = fig.canvas.get_renderer()
    width, height, _ = renderer.get_text_width_height_descent(
        text, FontProperties(family=RC["font.family"], size=fontsize, weight=weight), ismath=False)
    return width, height


def wrap_to_width(fig, text, fontsize, width_px, weight="normal"):
    """`text` broken at spaces into lines no wider than `width_px` when drawn
    (a single word wider than that stays whole on its own line)."""
    lines = []
    for word in text.split():
        candidate = f"{lines[-1]} {word}" if lines else word
        if lines and text_size_px(fig, candidate, fontsize, weight)[0] <= width_px:
            lines[-1] = candidate
        else:
            lines.append(word)
    return lines


# Tick labels made while saving are the formatters' numbers, which a log axis
# writes as mathtext (10^k): parse_math stays as matplotlib has it then.
SAVE_RC = {k: v for k, v in RC.items() if k not in PLAIN_TEXT}

FORMATS = {".png": "png", ".svg": "svg"}
METADATA = {  # no dates or versions: the same input gives the same bytes
    "png": {"Software": None},
    "svg": {"Date": None, "Creator": None},
}


def save_figure(fig, path):
    """Write `fig` as PNG or SVG (by suffix), atomically, without timestamps."""
    fmt = FORMATS.get(os.path.splitext(path)[1].lower())
    if fmt is None:
        raise PlotError(f"{path}: output must end in .png or .svg")
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with matplotlib.rc_context(SAVE_RC):
            fig.savefig(tmp, format=fmt, dpi=DPI, metadata=METADATA[fmt])
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise PlotError(f"{path}: cannot write: {e.strerror or e}") from None
