#!/usr/bin/env python3
"""The limits a squeeze tried (memharness.squeeze/1, from `harness squeeze`): the change
of the figure of merit under each limit and the stall against the memory limit, one
line per allocator, the limit found marked. Thin wrapper: the figure is memharness_plot.squeeze.squeeze_figure.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from memharness_plot import bootstrap  # noqa: E402  (stdlib only)

bootstrap.ensure_matplotlib()  # also selects the headless Agg backend

from memharness_plot import cli  # noqa: E402
from memharness_plot.report import load_squeeze  # noqa: E402

DESCRIPTION = ("Plot a squeeze: per workload, the change of the figure of merit under each\n"
    "memory limit tried (its runs against the unlimited runs of the same rounds, with\n"
    "the 90% interval and the allowed change the search judged it by) and the PSI\n"
    "stall, one line per allocator; a limit where the run slowed, failed or was\n"
    "OOM-killed is a hollow marker, the limit found a star and a dotted line.")


def squeeze_figure(data, path):
    from memharness_plot.squeeze import squeeze_figure as figure
    return figure(data, path)


def main(argv):
    return cli.one_input_main(argv, "plot_squeeze.py", DESCRIPTION, "SQUEEZE.json", "the JSON harness squeeze writes", load_squeeze,
                              squeeze_figure)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
