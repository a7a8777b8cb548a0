#!/usr/bin/env python3
"""Baseline against candidate per metric, from one memharness.comparison/1 file or two
memharness reports. Thin wrapper: the figure is memharness_plot.compare.compare_figure.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memharness_plot import bootstrap  # noqa: E402  (stdlib only)

bootstrap.ensure_matplotlib()  # also selects the headless Agg backend

import argparse  # noqa: E402

from memharness_plot.harness import HARNESS_ENV, compare_reports  # noqa: E402
from memharness_plot import cli  # noqa: E402
from memharness_plot.report import COMPARISON_SCHEMA, PlotError, load_any  # noqa: E402
from memharness_plot.units import CONVENTION  # noqa: E402

PROG = "plot_compare.py"


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Plot baseline against candidate per metric: medians with min-max bars, the\n"
                    "noise floor as a band around the baseline median, the relative change and the\n"
                    "verdict. INPUT is either one comparison (memharness.comparison/1, from\n"
                    "`harness compare`) or two reports (memharness.report/1): baseline first,\n"
                    "candidate second, which this runs `harness compare OLD NEW` on and draws\n"
                    f"(the harness: ${HARNESS_ENV}, else beside the installed scripts, this\n"
                    "tree's build/bin, or PATH). Every verdict drawn is the harness's.\n"
                    f"Memory in {CONVENTION}.\n"
                    "The runs report `harness compare` writes beside a comparison is passed over\n"
                    "with a note, so results/compare-*.json after one comparison draws it.",
        epilog="example: %(prog)s cmp.json -o cmp.png\n"
               "         %(prog)s before.json after.json --allocator glibc -o glibc.png\n"
               "exit status: 0 written, 2 bad arguments or input (the message names the file), or\n"
               "             two reports and no harness to compare them",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("inputs", nargs="+", metavar="INPUT",
                        help="one comparison JSON (and, passed over, its runs report), or two report JSONs "
                             "(baseline candidate)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="output image, .png or .svg")
    parser.add_argument("--metric", action="append", metavar="NAME",
                        help="metric to draw, repeatable (default: those with a direction, as the "
                             "comparison's table shows)")
    parser.add_argument("--workload", metavar="NAME", help="draw only this workload")
    parser.add_argument("--allocator", metavar="NAME",
                        help="two reports: compare this allocator of both")
    parser.add_argument("--baseline-allocator", metavar="NAME",
                        help="two reports: the allocator of the baseline report")
    parser.add_argument("--candidate-allocator", metavar="NAME",
                        help="two reports: the allocator of the candidate report")
    return cli.checked_output(parser, parser.parse_args(argv))


def is_runs_report(schema, data):
    """A report whose runs carry comparison roles: what `harness compare` writes
    beside the comparison (compare-TIME-runs.json)."""
    return schema != COMPARISON_SCHEMA and any(run.get("role") for run in data["runs"])


def load(args):
    loaded = [load_any(path) for path in args.inputs]
    comparisons = [path for (schema, _), path in zip(loaded, args.inputs) if schema == COMPARISON_SCHEMA]
    if len(comparisons) > 1:
        raise PlotError(f"{len(comparisons)} comparisons given ({', '.join(comparisons)}); give one")
    if comparisons and len(loaded) > 1:
        # A glob such as results/compare-*.json also matches the comparison's runs report.
        for (schema, data), path in zip(loaded, args.inputs):
            if path in comparisons:
                continue
            if not is_runs_report(schema, data):
                raise PlotError(f"{comparisons[0]}: is a comparison; with two inputs both must be reports "
                                f"({path} is a plain report)")
            print(f"{PROG}: note: {path} is the runs report of a comparison, not drawn; drawing "
                  f"{comparisons[0]}", file=sys.stderr)
        return loaded[args.inputs.index(comparisons[0])][1]
    if len(loaded) > 2:
        raise PlotError(f"give one comparison or two reports, not {len(loaded)} reports")
    if len(loaded) == 1:
        schema, data = loaded[0]
        if schema != COMPARISON_SCHEMA:
            raise PlotError(f"{args.inputs[0]}: is a report; give a comparison "
                            f"({COMPARISON_SCHEMA}) or two reports (baseline candidate)")
        return data
    return compare_reports(args.inputs[0], args.inputs[1], allocator=args.allocator,
                           baseline_allocator=args.baseline_allocator,
                           candidate_allocator=args.candidate_allocator)


def only_workload(data, workload):
    """`data` with only the group of `workload`; PlotError listing those present."""
    if workload is None:
        return data
    present = [g["workload"] for g in data["workloads"]]
    if workload not in present:
        raise PlotError(f"no workload {workload!r} in the comparison; workloads present: {', '.join(present)}")
    return dict(data, workloads=[g for g in data["workloads"] if g["workload"] == workload])


def main(argv):
    args = parse_args(argv)

    def draw():
        data = only_workload(load(args), args.workload)
        # Drawing modules load only now: bad input is reported without their import time.
        from memharness_plot.compare import compare_figure
        from memharness_plot.style import save_figure
        figure = compare_figure(data, metrics=args.metric)
        save_figure(figure, args.output)

    return cli.run(PROG, draw)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
