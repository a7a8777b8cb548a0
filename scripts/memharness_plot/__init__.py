"""memharness plots as a library: load_report / load_comparison / load_sweep check a
file, rss_figure / compare_figure / sweep_figure turn parsed data into a matplotlib
Figure, save_figure writes it deterministically. Importing the package does not
import matplotlib (bootstrap must run first); the names below load their module on
first use.
"""
import importlib

_EXPORTS = {
    "PlotError": "report", "ReportError": "report", "load_report": "report",
    "load_comparison": "report", "load_sweep": "report", "load_any": "report",
    "compare_reports": "harness",
    "rss_figure": "rss", "compare_figure": "compare", "sweep_figure": "sweep", "save_figure": "style",
}
__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
