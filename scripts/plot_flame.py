#!/usr/bin/env python3
"""A flame graph of the live heap by call site at one mark, or at the peak, of a
report made with --ledger --heap-sample. Thin wrapper: the stacks come from
`harness export --folded`, the figure is memharness_plot.flame.flame_figure.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memharness_plot import bootstrap  # noqa: E402  (stdlib only)

bootstrap.ensure_matplotlib()  # also selects the headless Agg backend

import argparse  # noqa: E402

from memharness_plot import cli  # noqa: E402

PROG = "plot_flame.py"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Draw the live heap by call site as a flame graph: the root at the bottom, each frame as\n"
                    "wide as the sampled live bytes of the calls under it. Needs a report made with\n"
                    "--ledger --heap-sample.",
        epilog="example: %(prog)s results/run.json --mark allocated -o heap-flame.png\n"
               "exit status: 0 written, 2 bad arguments or input (an unknown mark: the message names the marks)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report", metavar="REPORT", help="report JSON written by harness --ledger --heap-sample")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="output image, .png or .svg")
    parser.add_argument("--mark", metavar="NAME", help="the mark whose call sites to draw (default: the peak)")
    parser.add_argument("--allocator", metavar="NAME", help="the allocator whose run to draw (default: the first)")
    return cli.checked_output(parser, parser.parse_args(argv))


def main(argv):
    args = parse_args(argv)

    def draw():
        from memharness_plot.flame import flame_figure, flame_run, flame_title, folded_stacks
        from memharness_plot.report import load_report
        from memharness_plot.style import save_figure
        stacks = folded_stacks(args.report, mark=args.mark, allocator=args.allocator)
        title = flame_title(flame_run(load_report(args.report), args.allocator), args.mark)
        save_figure(flame_figure(stacks, title), args.output)

    return cli.run(PROG, draw)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
