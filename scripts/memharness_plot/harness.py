"""Running `harness compare` on two reports, so that a plot of two reports shows
the verdicts the harness gives them (Mann-Whitney, noise floor, resolution) and
never decides "changed" by a rule of its own. Standard library only.
"""
import os
import shutil
import subprocess
import tempfile

from .report import PlotError, load_comparison

HARNESS_ENV = "MEMHARNESS_HARNESS"   # set by `harness plot` to itself
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # the scripts folder


def candidates(environ=None, scripts=HERE):
    """Where a harness may be, in order: $MEMHARNESS_HARNESS; beside the installed
    scripts (PREFIX/share/memharness/scripts -> PREFIX/bin/harness); this source
    tree's build (scripts/../build/bin/harness); `harness` on PATH."""
    environ = os.environ if environ is None else environ
    out = []
    if environ.get(HARNESS_ENV):
        out.append(environ[HARNESS_ENV])
    out.append(os.path.normpath(os.path.join(scripts, "..", "..", "..", "bin", "harness")))
    out.append(os.path.normpath(os.path.join(scripts, "..", "build", "bin", "harness")))
    on_path = shutil.which("harness", path=environ.get("PATH", os.defpath))
    if on_path:
        out.append(on_path)
    return out


def find_harness(environ=None, scripts=HERE):
    """The first harness of candidates() that is an executable file; PlotError
    naming the places looked in otherwise (and a bad $MEMHARNESS_HARNESS)."""
    environ = os.environ if environ is None else environ
    asked = environ.get(HARNESS_ENV)
    if asked and not (os.path.isfile(asked) and os.access(asked, os.X_OK)):
        raise PlotError(f"{HARNESS_ENV}={asked} is not an executable file")
    places = candidates(environ, scripts)
    for path in places:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise PlotError("two reports are compared by `harness compare`, and no harness was found (looked in "
                    f"{', '.join(places)} and on PATH); set {HARNESS_ENV}=/path/to/harness, or run "
                    "`harness compare OLD.json NEW.json -o cmp.json` and plot cmp.json")


def compare_reports(old, new, allocator=None, baseline_allocator=None, candidate_allocator=None,
                    environ=None, scripts=HERE):
    """The checked memharness.comparison/1 dict `harness compare OLD NEW` writes;
    PlotError with the harness's own message when it refuses the input."""
    arguments = ["compare", old, new]
    for flag, value in (("--allocator", allocator), ("--baseline-allocator", baseline_allocator),
                        ("--candidate-allocator", candidate_allocator)):
        if value:
            arguments += [flag, value]
    with tempfile.TemporaryDirectory(prefix="memharness-plot-") as folder:
        out = os.path.join(folder, "comparison.json")
        # 0: no regression, 1: a regression; both wrote the comparison.
        run_harness(arguments + ["-o", out], out, "compare refused the two reports", (0, 1), environ, scripts)
        return load_comparison(out)


def run_harness(arguments, out, refused, ok=(0,), environ=None, scripts=HERE):
    """Runs `harness ARGUMENTS`, which writes `out`; PlotError, `refused` and the
    harness's own message, when it cannot run, exits otherwise or wrote nothing."""
    harness = find_harness(environ, scripts)
    try:
        result = subprocess.run([harness] + arguments, stdin=subprocess.DEVNULL, capture_output=True,
                                text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        raise PlotError(f"cannot run {harness}: {e}") from None
    if result.returncode not in ok or not os.path.exists(out):
        message = result.stderr.strip() or result.stdout.strip() or f"exit status {result.returncode}"
        raise PlotError(f"{harness} {refused}: {message}")


def table_csv(reports, metrics=(), environ=None, scripts=HERE):
    """The matrix `harness table REPORTS --format csv` prints, as text; PlotError
    with the harness's own message when it refuses the reports."""
    harness = find_harness(environ, scripts)
    arguments = [harness, "table", *reports, "--format", "csv"]
    for metric in metrics:
        arguments += ["--metric", metric]
    try:
        result = subprocess.run(arguments, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        raise PlotError(f"cannot run {harness}: {e}") from None
    if result.returncode != 0:
        message = result.stderr.strip() or f"exit status {result.returncode}"
        raise PlotError(f"{harness} table refused the reports: {message}")
    return result.stdout
