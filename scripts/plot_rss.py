#!/usr/bin/env python3
"""RSS (or another sampled column) over time from memharness reports, per allocator.
Thin wrapper: the figure is memharness_plot.rss.rss_figure.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memharness_plot import bootstrap  # noqa: E402  (stdlib only)

bootstrap.ensure_matplotlib()  # also selects the headless Agg backend

import argparse  # noqa: E402

from memharness_plot import cli  # noqa: E402
from memharness_plot.report import load_report  # noqa: E402
from memharness_plot.units import CONVENTION  # noqa: E402

PROG = "plot_rss.py"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Plot RSS over time for each allocator of one or more memharness reports\n"
                    "(memharness.report/1): the median run (by peak) strong, the other repetitions\n"
                    "faint, the marks of the median runs as labelled vertical lines, the phases\n"
                    "between marks, and cumulative minor faults below. The area under RSS after\n"
                    "the --after mark is shaded and the RSS 1 s after it drawn as a point, where\n"
                    "the report has them (the curve metrics its manifest declares). Units as the\n"
                    f"report declares them: memory in {CONVENTION}. Only runs with status ok are\n"
                    "drawn; the footnote says how many were left out.",
        epilog="example: %(prog)s results/burst.json -o burst.png\n"
               "         %(prog)s a.json b.json --metric anon_kb -o anon.svg\n"
               "         %(prog)s results/idle-return.json --align freed -o idle.png\n"
               "         %(prog)s results/burst.json --align all-done --window 0.5 -o after.png\n"
               "exit status: 0 written, 2 bad arguments or input (the message names the file)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+", metavar="REPORT", help="report JSON written by harness")
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="output image, .png or .svg")
    parser.add_argument("--metric", default="rss_kb", metavar="COLUMN",
                        help="sampled column to plot instead of rss_kb, e.g. anon_kb, anon_huge_kb, "
                             "file_kb, shmem_kb (memory is drawn in MB)")
    parser.add_argument("--workload", metavar="NAME",
                        help="workload to plot when the reports hold several")
    parser.add_argument("--align", metavar="MARK",
                        help="count every run's time from its first mark MARK, so that every "
                             "allocator's curve starts that phase at t=0 (the time before it then takes at "
                             "most a fifth of the axis)")
    span = parser.add_mutually_exclusive_group()
    span.add_argument("--xlim", type=cli.time_range, metavar="START:END",
                      help="the time shown, in seconds (since exec, or since the --align mark); either end may "
                           "be left out: 2:, :5, and a negative start follows an '=': --xlim=-0.5:3")
    span.add_argument("--window", type=cli.window, metavar="SECONDS",
                      help="the SECONDS from t=0 (exec, or the --align mark): the same as --xlim 0:SECONDS")
    return cli.checked_output(parser, parser.parse_args(argv))


def main(argv):
    args = parse_args(argv)

    def draw():
        reports = [load_report(path) for path in args.reports]
        # Drawing modules load only now: bad input is reported without their import time.
        from memharness_plot.rss import rss_figure
        from memharness_plot.style import save_figure
        figure = rss_figure(reports, metric=args.metric, workload=args.workload, names=args.reports,
                            align=args.align, xlim=args.xlim or args.window)
        save_figure(figure, args.output)

    return cli.run(PROG, draw)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
