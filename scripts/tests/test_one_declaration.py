"""One declaration per fact (STYLE.md): each fact below is declared in one place
of harness/src and everything else derives from it. The test reads the sources
(comments left out, string literals kept) and looks for a second declaration of
each; it builds nothing. A fact whose fix is on another branch is marked
xfail(strict=True) with the fact named: it starts passing when that branch is
merged, and then the mark has to go.
"""
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "harness" / "src"


@dataclass(frozen=True)
class Fact:
    name: str
    pattern: str        # a regular expression that finds one declaration
    example: str        # one declaration as the sources write it: the self-test puts it in twice
    where: tuple = ()   # the folders of harness/src searched; () for all of it
    per_file: bool = False  # count the files that have it rather than its places
    xfail: str = ""     # the branch that fixes it, when it is not this one


FACTS = [
    Fact("bad_input, the exit of a command on bad input, is defined once",
         r"\bint\s+bad_input\s*\([^)]*\)\s*\{",
         'int bad_input(const std::string& message) {\n  return 2;\n}\n'),
    Fact("the default run timeout (600 s) is declared once",
         r"\btimeout_s\s*=\s*600\b",
         "  double timeout_s = 600;\n"),
    Fact("the default sampling interval (10 ms) is declared once",
         r"\bsample_ms\s*=\s*10\b",
         "  double sample_ms = 10;\n"),
    Fact("compare's default rounds (5) are declared once",
         r"(?i)\b\w*(?:rounds|_runs)\w*\s*=\s*5\b",
         "inline constexpr int kMinRounds = 5;\n"),
    Fact("the metrics a workload declares are read in one helper (metrics declared by these jobs)",
         r"\bdeclared_metric_specs\s*\((?!\s*const\s+WorkloadInfo\b)",
         "  for (const auto& job : jobs) declared[job.workload.name] = declared_metric_specs(job.workload);\n"),
    Fact('the "workload." prefix of a workload\'s metrics is spelled in one file',
         r'"workload\.',
         'std::string workload_metric(const std::string& name) { return "workload." + name; }\n',
         per_file=True),
    Fact("a run's metrics are listed by one loop (the summary, the report and the registry read it)",
         r"\bfor\s*\([^;)]*:\s*[\w.>-]*?\b(?:workload_metrics|perf|curve)\s*\)",
         "  for (const auto& [name, m] : r.workload_metrics) add(name, m.value);\n",
         per_file=True),
    Fact('the reason a run metric is missing ("not measured") is given in one place',
         r'"not measured"',
         '  return r.samples.empty() ? kNoSampleReason : "not measured";\n'),
    Fact('the reason "no sample of the process could be read" is spelled once in the model and its exports',
         r'"no sample of the process could be read"',
         'inline constexpr const char* kNoSampleReason = "no sample of the process could be read";\n',
         where=("core", "report", "compare", "inputs")),
    Fact("the run summary and the comparison show a number by one rule",
         r'fmt::format\(\s*"\{:\.(?:\d+g|\{\}f)\}"',
         '  return fmt::format("{:.3g}", v);\n',
         where=("core", "report", "compare"), per_file=True),
    Fact("every table of the harness shows a number by that one rule",
         r'fmt::format\(\s*"\{:\.(?:\d+g|\{\}f)\}"',
         '  return fmt::format("{:.{}f}", v, decimals);\n',
         per_file=True),
]


def without_comments(text):
    """The text with // and /* */ comments blanked; string and character literals kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sources():
    """(path relative to harness/src, text without comments) of every source."""
    return [(p.relative_to(SRC), without_comments(p.read_text()))
            for p in sorted(SRC.rglob("*")) if p.suffix in (".cpp", ".h")]


def declarations(fact, files):
    """Where `fact` is declared in `files`: "path:line" each, or the paths when it counts files."""
    found = []
    for rel, text in files:
        if fact.where and rel.parts[0] not in fact.where:
            continue
        lines = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(fact.pattern, text)]
        if fact.per_file and lines:
            found.append(f"{rel}")
        else:
            found += [f"{rel}:{line}" for line in lines]
    return found


def marked(fact):
    if not fact.xfail:
        return fact
    return pytest.param(fact, marks=pytest.mark.xfail(strict=True, reason=fact.xfail))


@pytest.mark.parametrize("fact", [marked(f) for f in FACTS], ids=[f.name for f in FACTS])
def test_declared_once(fact):
    found = declarations(fact, sources())
    assert len(found) <= 1, f"{fact.name}, yet it is declared in:\n  " + "\n  ".join(found)


@pytest.mark.parametrize("fact", FACTS, ids=[f.name for f in FACTS])
def test_the_check_sees_a_second_declaration(fact):
    """Each check can fail: its example once passes, the same in two files does not."""
    folder = fact.where[0] if fact.where else "core"
    one = [(Path(folder) / "first.cpp", without_comments(fact.example))]
    two = one + [(Path(folder) / "second.cpp", without_comments(fact.example))]
    assert len(declarations(fact, one)) == 1, f"{fact.name}: the pattern does not find its own example"
    assert len(declarations(fact, two)) == 2, f"{fact.name}: a second declaration goes unseen"


def test_comments_are_not_declarations():
    text = without_comments('// "workload." in a comment\nx = "a // b"; /* "not measured" */\n')
    assert '"workload.' not in text and '"not measured"' not in text
    assert '"a // b"' in text
