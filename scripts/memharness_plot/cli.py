"""What the plot scripts (scripts/plot_*.py) share around their own arguments and
figure: the check of the output's name and the exit status of bad input. Stdlib
only, like bootstrap: it runs before matplotlib is known to be there.
"""
import os
import sys

from .report import PlotError


def checked_output(parser, args):
    """args, once args.output names a .png or .svg; else argparse's error (exit 2)."""
    if os.path.splitext(args.output)[1].lower() not in (".png", ".svg"):
        parser.error(f"-o {args.output}: the output must end in .png or .svg")
    return args


def run(prog, draw):
    """Exit status of draw(): 0 when it wrote the figure, 2 when the input was bad
    (its PlotError said on stderr as "PROG: error: ...")."""
    try:
        draw()
    except PlotError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    return 0
