#!/usr/bin/env python3
"""The limits a squeeze tried (memharness.squeeze/1, from `harness squeeze`): the figure
of merit and the stall against the memory limit, one line per allocator, the limit
found marked. Thin wrapper: the figure is memharness_plot.squeeze.squeeze_figure.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memharness_plot import bootstrap  # noqa: E402  (stdlib only)

bootstrap.ensure_matplotlib()  # also selects the headless Agg backend

import argparse  # noqa: E402

from memharness_plot import cli  # noqa: E402
from memharness_plot.report import load_squeeze  # noqa: E402

PROG = "plot_squeeze.py"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Plot a squeeze: per workload, the figure of merit (median of the limited runs)\n"
                    "and the PSI stall against the memory limit tried, one line per allocator; a\n"
                    "limit where the run slowed, failed or was OOM-killed is a hollow marker, the\n"
                    "limit found a star and a dotted line.",
        epilog="exit status: 0 written, 2 bad arguments or input (the message names the file)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("squeeze", metavar="SQUEEZE.json", help="the JSON harness squeeze writes")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="output image, .png or .svg")
    return cli.checked_output(parser, parser.parse_args(argv))


def main(argv):
    args = parse_args(argv)

    def draw():
        data = load_squeeze(args.squeeze)
        from memharness_plot.style import save_figure
        from memharness_plot.squeeze import squeeze_figure
        save_figure(squeeze_figure(data, args.squeeze), args.output)

    return cli.run(PROG, draw)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
