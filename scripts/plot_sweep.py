#!/usr/bin/env python3
"""The points of a sweep (memharness.sweep/1, from `harness sweep`) per workload, the
Pareto front marked. Thin wrapper: the figure is memharness_plot.sweep.sweep_figure.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memharness_plot import bootstrap  # noqa: E402  (stdlib only)

bootstrap.ensure_matplotlib()  # also selects the headless Agg backend

from memharness_plot import cli  # noqa: E402
from memharness_plot.report import load_sweep  # noqa: E402

DESCRIPTION = ("Plot the points of a sweep: one panel per workload, each point's medians of the\n"
    "two metrics with min-max bars, labelled by the options it sets, and the Pareto\n"
    "front (the points no other point beats on both) joined. Units as the sweep\n"
    "declares them.")


def sweep_figure(data, path):
    from memharness_plot.sweep import sweep_figure as figure
    return figure(data, path)


def main(argv):
    return cli.one_input_main(argv, "plot_sweep.py", DESCRIPTION, "SWEEP.json", "the -sweep.json harness sweep writes", load_sweep,
                              sweep_figure)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
