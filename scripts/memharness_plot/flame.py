"""A flame graph of the live heap by call site: the folded stacks `harness export
--folded` writes (one derivation of the sites' names, the harness's), drawn as
nested bars, the root at the bottom, each frame as wide as the bytes its callees
hold. Standard library and matplotlib only.
"""
import os
import tempfile

from .harness import run_harness
from .report import PlotError
from .style import new_figure, rc

# Frames narrower than this share of the whole are not labelled.
LABEL_SHARE = 0.03
# Frames narrower than this share are not drawn (nor their callees): a deep stack
# of one sample would otherwise set the figure's height for a sliver.
DRAW_SHARE = 0.01
BAR_HEIGHT = 1.0
MB = 1e6


def folded_stacks(report, mark=None, allocator=None, environ=None):
    """[(frames root first, bytes)] of the report's call sites at `mark` (None:
    the peak); PlotError with the harness's message when it refuses."""
    arguments = ["export", "--folded", report]
    if mark:
        arguments += ["--mark", mark]
    if allocator:
        arguments += ["--allocator", allocator]
    with tempfile.TemporaryDirectory(prefix="memharness-flame-") as folder:
        out = os.path.join(folder, "stacks.folded")
        run_harness(arguments + ["-o", out], out, "export refused the report", environ=environ)
        with open(out, encoding="utf-8") as f:
            return [parse_line(line) for line in f if line.strip()]


def parse_line(line):
    stack, _, count = line.rstrip("\n").rpartition(" ")
    return stack.split(";"), int(count)


def frame_tree(stacks):
    """{name: [bytes, children]} summed over the stacks, root first."""
    root = {}
    for frames, count in stacks:
        level = root
        for name in frames:
            node = level.setdefault(name, [0, {}])
            node[0] += count
            level = node[1]
    return root


def short(name, width_chars):
    return name if len(name) <= width_chars else name[:max(width_chars - 1, 1)] + "…"


def visible_tree(tree, total, share=DRAW_SHARE):
    """The frames at least `share` of `total` wide, with their callees that are;
    the rest left out."""
    return {name: [count, visible_tree(children, total, share)]
            for name, (count, children) in tree.items() if count >= share * total}


def draw(ax, tree, x, depth, colours):
    """The frames of `tree` from `x` (MB) at `depth`, widest first."""
    ordered = sorted(tree.items(), key=lambda item: (-item[1][0], item[0]))
    x_max = ax.get_xlim()[1]
    for i, (name, (count, children)) in enumerate(ordered):
        width = count / MB
        ax.barh(depth, width, left=x, height=BAR_HEIGHT, color=colours[(depth + i) % len(colours)],
                edgecolor="white", linewidth=0.5, align="edge", gid=f"frame:{depth}")
        if width >= LABEL_SHARE * x_max:
            ax.text(x + 0.003 * x_max, depth + BAR_HEIGHT / 2, short(name, int(width / x_max * 160)),
                    va="center", ha="left", fontsize=7, clip_on=True, gid="frame-label")
        draw(ax, children, x, depth + 1, colours)
        x += width


def depth_of(tree):
    return 1 + max((depth_of(children) for _, children in tree.values()), default=0) if tree else 0


def count_frames(tree):
    return sum(1 + count_frames(children) for _, children in tree.values())


def flame_run(report, allocator=None):
    """The run `harness export` draws the sites of: the first ok run (else any)
    with call sites, of `allocator` when given; None when there is none."""
    def has_sites(run):
        return bool(run.get("heap_sites_peak")) or any(m.get("heap_sites") for m in run.get("marks") or [])
    for ok_only in (True, False):
        for run in report.get("runs") or []:
            if (ok_only and run.get("status") != "ok") or not has_sites(run):
                continue
            if allocator is None or run["allocator"]["name"] == allocator:
                return run
    return None


def flame_title(run, mark=None):
    """`redis under glibc, run 1: live heap by call site at the peak`."""
    where = f"mark {mark}" if mark else "the peak"
    if run is None:
        return f"live heap by call site at {where}"
    return (f"{run['workload']} under {run['allocator']['name']}, run {run.get('repetition', '?')}: "
            f"live heap by call site at {where}")


def flame_figure(stacks, title):
    total = sum(count for _, count in stacks)
    if total <= 0:
        raise PlotError("no live bytes in the call sites to draw")
    whole = frame_tree(stacks)
    tree = visible_tree(whole, total)
    depth = max(depth_of(tree), 1)
    hidden = count_frames(whole) - count_frames(tree)
    with rc():
        fig = new_figure(12, 1.5 + 0.3 * depth)
        ax = fig.add_subplot(1, 1, 1)
        ax.set_xlim(0, total / MB)
        draw(ax, tree, 0.0, 0, ["#e8743b", "#f2a541", "#f5c26b", "#e25f3e", "#f08a4b"])
        ax.set_ylim(0, depth)
        ax.set_yticks([])
        ax.grid(False)
        note = f"sampled live heap, MB (10^6 bytes; {total / MB:.3g} MB in all)"
        if hidden:
            note += f"; {hidden} frames under {DRAW_SHARE:.1%} of it not drawn"
        ax.set_xlabel(note)
        ax.set_title(title, loc="left", fontweight="bold")
        fig.tight_layout()
    return fig
