#!/usr/bin/env python3
"""Who holds the memory: RSS, anonymous RSS and the live heap of runs made with
--ledger, the gap shaded, one panel per allocator. Thin wrapper: the figure is
memharness_plot.heap.heap_figure.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memharness_plot import bootstrap  # noqa: E402  (stdlib only)

bootstrap.ensure_matplotlib()  # also selects the headless Agg backend

import argparse  # noqa: E402

from memharness_plot import cli  # noqa: E402
from memharness_plot.report import load_report  # noqa: E402

PROG = "plot_heap.py"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Plot RSS, anonymous RSS and the heap ledger's live heap over time, one panel per\n"
                    "allocator (the median run by peak RSS), the gap between anonymous RSS and the live\n"
                    "heap shaded: memory outside the live malloc heap. Needs runs made with --ledger.",
        epilog="example: %(prog)s results/idle-return.json -o idle-heap.png\n"
               "exit status: 0 written, 2 bad arguments or input (the message names the file)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+", metavar="REPORT", help="report JSON written by harness --ledger")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="output image, .png or .svg")
    parser.add_argument("--workload", metavar="NAME", help="workload to plot when the reports hold several")
    return cli.checked_output(parser, parser.parse_args(argv))


def main(argv):
    args = parse_args(argv)

    def draw():
        reports = [load_report(path) for path in args.reports]
        from memharness_plot.heap import heap_figure
        from memharness_plot.style import save_figure
        save_figure(heap_figure(reports, args.reports, workload=args.workload), args.output)

    return cli.run(PROG, draw)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
