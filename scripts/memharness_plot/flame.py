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
BAR_HEIGHT = 1.0


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


def draw(ax, tree, x, depth, total, colours):
    for i, (name, (count, children)) in enumerate(sorted(tree.items())):
        share = count / total
        ax.barh(depth, share, left=x, height=BAR_HEIGHT, color=colours[(depth + i) % len(colours)],
                edgecolor="white", linewidth=0.5, align="edge")
        if share >= LABEL_SHARE:
            ax.text(x + 0.003, depth + BAR_HEIGHT / 2, short(name, int(share * 160)), va="center", ha="left",
                    fontsize=7, clip_on=True)
        draw(ax, children, x, depth + 1, total, colours)
        x += share


def depth_of(tree):
    return 1 + max((depth_of(children) for _, children in tree.values()), default=0) if tree else 0


def flame_figure(stacks, title):
    total = sum(count for _, count in stacks)
    if total <= 0:
        raise PlotError("no live bytes in the call sites to draw")
    tree = frame_tree(stacks)
    depth = depth_of(tree)
    with rc():
        fig = new_figure(12, 1.2 + 0.28 * depth)
        ax = fig.add_subplot(1, 1, 1)
        draw(ax, tree, 0.0, 0, total, ["#e8743b", "#f2a541", "#f5c26b", "#e25f3e", "#f08a4b"])
        ax.set_xlim(0, 1)
        ax.set_ylim(0, depth)
        ax.set_yticks([])
        ax.grid(False)
        ax.set_xlabel(f"share of the sampled live heap ({total / 1e6:.1f} MB in all)")
        ax.set_title(title)
        fig.tight_layout()
    return fig
