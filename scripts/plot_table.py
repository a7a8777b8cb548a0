#!/usr/bin/env python3
"""The allocator matrix of `harness table` as heat maps, one per table. Thin wrapper:
the figure is memharness_plot.table.table_figure over the table's CSV.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memharness_plot import bootstrap  # noqa: E402  (stdlib only)

bootstrap.ensure_matplotlib()  # also selects the headless Agg backend

import argparse  # noqa: E402

from memharness_plot import cli  # noqa: E402

PROG = "plot_table.py"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Draw the allocator matrix of any reports (harness table) as heat maps: a row per\n"
                    "workload and figure, a column per allocator, each cell its ratio to the row's best.",
        epilog="exit status: 0 written, 2 bad arguments or input (the harness's own message)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("reports", nargs="+", metavar="REPORT", help="reports (shards and sittings pool)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE", help="output image, .png or .svg")
    parser.add_argument("--metric", action="append", default=[], metavar="NAME",
                        help="a table of this figure (repeatable), as harness table --metric")
    return cli.checked_output(parser, parser.parse_args(argv))


def main(argv):
    args = parse_args(argv)

    def draw():
        from memharness_plot.harness import table_csv
        text = table_csv(args.reports, args.metric)
        from memharness_plot.style import save_figure
        from memharness_plot.table import table_figure
        save_figure(table_figure(text, " ".join(args.reports)), args.output)

    return cli.run(PROG, draw)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
