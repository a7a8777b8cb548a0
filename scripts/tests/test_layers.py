"""The harness's folders are its layers (harness/src/README.md): each folder includes
only the folders its row of that table names, the command line (options.h) is
included only by main.cpp, commands/commands.h, commands/from_options.{h,cpp}
and the *_command.cpp files, and no header or source
sits in harness/src outside a folder except main.cpp and the options. Reads the
sources; builds nothing.
"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "harness" / "src"
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def allowed_layers():
    """folder -> the folders it may include, read from the README's table."""
    table = {}
    for line in (SRC / "README.md").read_text().splitlines():
        m = re.match(r"\|\s*\[(\w+)/\]\(\w+/\)\s*\|[^|]*\|\s*([^|]*)\|", line)
        if not m:
            continue
        folder, may = m.group(1), m.group(2).strip()
        table[folder] = set() if may == "-" else {w.strip() for w in may.split(",")}
    everything = set(table)
    for folder, may in table.items():
        if may == {"everything above"}:
            order = list(table)
            table[folder] = set(order[:order.index(folder)])
    assert everything, "harness/src/README.md has no layer table"
    return table


def sources():
    return sorted(p for p in SRC.rglob("*") if p.suffix in (".cpp", ".h"))


def test_every_source_is_in_a_layer():
    layers = allowed_layers()
    for path in sources():
        rel = path.relative_to(SRC)
        if len(rel.parts) == 1:
            assert rel.name in ("main.cpp", "options.h", "options.cpp"), f"{rel}: not in a layer folder"
        else:
            assert rel.parts[0] in layers, f"{rel}: folder {rel.parts[0]} is not in harness/src/README.md"


# What may read the command line besides the root's files and *_command.cpp:
# the commands' header, and the file that turns Options into jobs and run
# settings (so that commands/resolve and commands/execute take values).
READS_OPTIONS = {"commands/commands.h", "commands/from_options.h", "commands/from_options.cpp"}


def reads_options(rel):
    return len(rel.parts) == 1 or rel.name.endswith("_command.cpp") or rel.as_posix() in READS_OPTIONS


def include_violations(files, layers):
    """files: (path relative to harness/src, text) pairs; the includes that break the table."""
    wrong = []
    for rel, text in files:
        own = rel.parts[0] if len(rel.parts) > 1 else None
        for inc in INCLUDE.findall(text):
            if inc == "build_info.h":
                continue
            target = Path(inc).parts
            if len(target) == 1:
                if inc == "options.h" and reads_options(rel):
                    continue
                wrong.append(f"{rel} includes {inc}")
                continue
            if inc in READS_OPTIONS and inc.endswith(".h") and not reads_options(rel):
                wrong.append(f"{rel} includes {inc} (which includes options.h)")
                continue
            if own is None or target[0] == own or target[0] in layers[own]:
                continue
            wrong.append(f"{rel} includes {inc} ({own} may include {sorted(layers[own]) or 'nothing'})")
    return wrong


def test_includes_follow_the_layers():
    files = [(p.relative_to(SRC), p.read_text()) for p in sources()]
    wrong = include_violations(files, allowed_layers())
    assert not wrong, "\n".join(wrong)


def test_the_check_sees_a_wrong_include():
    """The rule can fail: an upward include, and the driver including the command line."""
    files = [(Path("core/probe.h"), '#include "measure/runner.h"\n'),
             (Path("commands/execute.cpp"), '#include "options.h"\n'),
             (Path("commands/resolve.h"), '#include "options.h"\n'),
             (Path("commands/run_command.cpp"), '#include "options.h"\n'),
             (Path("commands/from_options.h"), '#include "options.h"\n'),
             (Path("commands/execute.h"), '#include "commands/from_options.h"\n'),
             (Path("commands/sweep_command.cpp"), '#include "commands/from_options.h"\n')]
    assert include_violations(files, allowed_layers()) == [
        "core/probe.h includes measure/runner.h (core may include nothing)",
        "commands/execute.cpp includes options.h",
        "commands/resolve.h includes options.h",
        "commands/execute.h includes commands/from_options.h (which includes options.h)"]
