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


def one_input_main(argv, prog, description, metavar, input_help, load, figure):
    """main() of a plot script that draws one figure from one JSON file:
    positional INPUT (shown as `metavar`), -o FILE; `load(path)` reads and checks
    the input (PlotError on bad input), `figure(data, path)` draws it. The drawing
    modules are imported by `figure` only once the input has been read, so bad
    input is reported without their import time."""
    import argparse
    parser = argparse.ArgumentParser(
        prog=prog, description=description,
        epilog="exit status: 0 written, 2 bad arguments or input (the message names the file)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input", metavar=metavar, help=input_help)
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="output image, .png or .svg")
    args = checked_output(parser, parser.parse_args(argv))

    def draw():
        data = load(args.input)
        from .style import save_figure
        save_figure(figure(data, args.input), args.output)

    return run(prog, draw)


def time_range(text):
    """argparse type of --xlim START:END (seconds, either side may be left
    out: "2:", ":5"): (start or None, end or None)."""
    import argparse
    start, sep, end = str(text).partition(":")
    try:
        if not sep:
            raise ValueError
        lo = float(start) if start.strip() else None
        hi = float(end) if end.strip() else None
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not START:END in seconds (e.g. 0:2.5, 1:, :3)") from None
    if lo is not None and hi is not None and hi <= lo:
        raise argparse.ArgumentTypeError(f"{text!r}: the end must come after the start")
    return lo, hi


def window(text):
    """argparse type of --window SECONDS: (0, SECONDS)."""
    import argparse
    try:
        seconds = float(text)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time in seconds above 0 (e.g. 2.5)")
    return 0.0, seconds
