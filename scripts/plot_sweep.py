#!/usr/bin/env python3
"""The points of a sweep (memharness.sweep/1, from `harness sweep`) per workload, the
Pareto front marked. Thin wrapper: the figure is memharness_plot.sweep.sweep_figure.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memharness_plot import bootstrap  # noqa: E402  (stdlib only)

bootstrap.ensure_matplotlib()  # also selects the headless Agg backend

import argparse  # noqa: E402

from memharness_plot import cli  # noqa: E402
from memharness_plot.report import load_sweep  # noqa: E402

PROG = "plot_sweep.py"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Plot the points of a sweep: one panel per workload, each point's medians of the\n"
                    "two metrics with min-max bars, labelled by the options it sets, and the Pareto\n"
                    "front (the points no other point beats on both) joined. Units as the sweep\n"
                    "declares them.",
        epilog="exit status: 0 written, 2 bad arguments or input (the message names the file)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", metavar="SWEEP.json", help="the -sweep.json harness sweep writes")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="output image, .png or .svg")
    return cli.checked_output(parser, parser.parse_args(argv))


def main(argv):
    args = parse_args(argv)

    def draw():
        data = load_sweep(args.sweep)
        # Drawing modules load only now: bad input is reported without their import time.
        from memharness_plot.style import save_figure
        from memharness_plot.sweep import sweep_figure
        save_figure(sweep_figure(data, args.sweep), args.output)

    return cli.run(PROG, draw)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
