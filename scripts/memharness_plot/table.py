"""The allocator matrix of `harness table` as heat maps: a panel per table, a row per
workload and figure, a column per allocator, each cell coloured by its ratio to the
row's best (white 1.00, dark red 2 times and more, log scale) and labelled with the
cell as the table shows it, the best in bold. Reads the table's CSV (its units are
the tables' own: MB, ms); each call builds a new Figure.
"""
import csv
import io
import math

from . import style, units
from .report import PlotError

CAP = 2.0   # ratios at or past this take the darkest colour


def parse(text):
    """[(table title, rows, allocators)], rows [(label, [cell dict])], from the CSV."""
    tables = {}
    for line in csv.DictReader(io.StringIO(text)):
        table = tables.setdefault(line["table"], {"rows": {}, "allocators": []})
        if line["allocator"] not in table["allocators"]:
            table["allocators"].append(line["allocator"])
        table["rows"].setdefault((line["workload"], line["figure"], line["better"]), []).append(line)
    return [(title, t["rows"], t["allocators"]) for title, t in tables.items()]


def _label(key, cells):
    workload, figure, better = key
    best = next((c for c in cells if c["best"] == "1"), None)
    shown = f"{workload}: {figure}" + (" (higher better)" if better == "higher" else "")
    if best:
        unit = f" {best['unit']}" if best["unit"] else ""
        shown += f"\nbest {best['allocator']} {three_digits(float(best['median']))}{unit}"
    return shown


def three_digits(v):
    """As the tables write a number: three significant digits, trailing zeros kept (66.0, 4.06, 17100)."""
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    v = float(f"{v:.3g}")   # 9.996 is 10.0: the precision is that of what it rounds to
    exponent = math.floor(math.log10(abs(v)))
    if exponent >= 2:
        return f"{round(v, 2 - exponent):.0f}"
    return f"{v:.{min(6, 2 - exponent)}f}"


def _value(cell):
    """How dark: log of the ratio (0 at the best) up to CAP; None for no figure."""
    if cell["ratio"]:   # at least 1, but for a bound ("> 0.8": a time that never came, of a short run)
        return min(max(math.log(max(float(cell["ratio"]), 1.0)) / math.log(CAP), 0.0), 1.0)
    if cell["cell"].startswith(("not run", "no figure")):
        return None
    return 1.0   # a figure where no ratio is defined: not the best


def _panel(ax, title, rows, allocators):
    from matplotlib import colormaps
    from matplotlib.patches import Rectangle
    cmap = colormaps["Reds"]
    keys = list(rows)
    for y, key in enumerate(keys):
        by = {c["allocator"]: c for c in rows[key]}
        for x, allocator in enumerate(allocators):
            cell = by.get(allocator)
            value = _value(cell) if cell else None
            colour = "#e6e6e6" if value is None else cmap(0.05 + 0.8 * value)
            ax.add_patch(Rectangle((x - 0.5, y - 0.5), 1, 1, facecolor=colour, edgecolor="white", linewidth=1.5))
            # The CSV guards a cell that opens with '-' against spreadsheet formulas: shown without it.
            text = cell["cell"].removeprefix("'") if cell else "not run"
            ratio_only = text.split(" (")[0] if cell and cell["ratio"] else text
            ax.text(x, y, ratio_only.replace(" (", "\n("), ha="center", va="center", fontsize=8,
                    color="white" if value is not None and value > 0.6 else "black",
                    weight="bold" if cell and cell["best"] == "1" else "normal")
    ax.set_xlim(-0.5, len(allocators) - 0.5)
    ax.set_ylim(len(keys) - 0.5, -0.5)
    ax.set_xticks(range(len(allocators)), allocators, rotation=20, ha="right")
    ax.set_yticks(range(len(keys)), [_label(k, rows[k]) for k in keys])
    ax.tick_params(length=0)
    ax.grid(False)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title(title, loc="left")


def table_figure(text, path="reports"):
    tables = parse(text)
    if not tables:
        raise PlotError(f"{path}: the reports have no figure to draw")
    with style.rc():
        heights = [0.55 * len(rows) + 1.3 for _, rows, _ in tables]
        widest = max(len(a) for _, _, a in tables)
        fig = style.new_figure(4.2 + 1.15 * widest, sum(heights) + 1.1)
        grid = fig.add_gridspec(len(tables), 1, height_ratios=heights)
        for i, (title, rows, allocators) in enumerate(tables):
            _panel(fig.add_subplot(grid[i]), title, rows, allocators)
        legend = ("each cell: the allocator's median over the row's best (1.00 best, bold; 1.37 = 37% worse; "
                  f"higher-is-better figures inverted); colour to {CAP:g} times, log scale; {units.CONVENTION}")
        lines = style.wrap_to_width(fig, legend, 9, fig.get_figwidth() * style.DPI * 0.95)
        fig.suptitle("\n".join(lines), fontsize=9)
        fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig
