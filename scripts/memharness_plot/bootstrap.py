"""Find a Python that has matplotlib, before anything imports it.

Imported first by the plot scripts; uses only the standard library and old syntax,
since it runs under whatever `python3` the user typed. Process-wide effect: it may
replace the process (os.execv) or exit it.
"""
import os
import subprocess
import sys

# os.pathsep-separated interpreters to try instead of the default list; set but
# empty means "try none" (tests use it to reach the hint deterministically).
CANDIDATES_ENV = "MEMHARNESS_PYTHON_CANDIDATES"
# Set in the re-executed process: a second hop would mean the probe lied, so stop.
REEXEC_ENV = "MEMHARNESS_PLOT_REEXEC"
INSTALL_HINT = "apt-get install python3-matplotlib"


def has_matplotlib():
    try:
        __import__("matplotlib")
    except ImportError:
        return False
    return True


def candidates(environ=None, executable=None):
    """Interpreters to try, in order, without duplicates and without `executable`."""
    environ = os.environ if environ is None else environ
    executable = sys.executable if executable is None else executable
    listed = environ.get(CANDIDATES_ENV)
    if listed is not None:
        names = [p for p in listed.split(os.pathsep) if p]
    else:
        names = ["/usr/bin/python3", "/usr/local/bin/python3"]
        names += [os.path.join(d, "python3") for d in environ.get("PATH", "").split(os.pathsep) if d]
    # Compare paths, not resolved files: a venv's python is a symlink to the system
    # binary yet sees other packages, so the same file may still be a good candidate.
    skip = os.path.abspath(executable) if executable else None
    seen = set()
    result = []
    for name in names:
        path = os.path.abspath(name)
        if path == skip or path in seen:
            continue
        seen.add(path)
        result.append(path)
    return result


def probe(interpreter):
    """True when `interpreter` runs and can import matplotlib."""
    if not (os.path.isfile(interpreter) and os.access(interpreter, os.X_OK)):
        return False
    try:
        return subprocess.call([interpreter, "-c", "import matplotlib"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, timeout=60) == 0
    except (OSError, subprocess.SubprocessError):
        return False


def ensure_matplotlib():
    """Return, with matplotlib on its headless Agg backend, if it imports here;
    else re-exec the script under a Python that has it, or print what to
    install and exit 2."""
    if has_matplotlib():
        import matplotlib
        matplotlib.use("Agg")
        return
    prog = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "memharness plot"
    tried = []
    if not os.environ.get(REEXEC_ENV):
        for interpreter in candidates():
            tried.append(interpreter)
            if probe(interpreter):
                os.environ[REEXEC_ENV] = "1"
                sys.stdout.flush()
                sys.stderr.flush()
                os.execv(interpreter, [interpreter] + sys.argv)
    sys.stderr.write(
        "%s: matplotlib is not available to %s%s.\n"
        "Install it:  %s\n"
        "(or for this interpreter: %s -m pip install matplotlib)\n"
        % (prog, sys.executable or "this Python",
           " nor to any of: " + ", ".join(tried) if tried else " and no other python3 was found",
           INSTALL_HINT, sys.executable or "python3"))
    sys.exit(2)
