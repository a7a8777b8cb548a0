"""The documentation as a test: every command block of README.md and of every page
docs/*.md runs, smoke-sized, so an example that stops working fails the suite. The
pages run in one order, README.md first, then docs/*.md by name, each in its own
order.

Command blocks:
  - a fenced block marked `sh`: each line is a command (a trailing backslash
    continues it; `#` starts a comment);
  - any other fenced block: its lines that start with `$ ` are commands; the rest is
    the output shown, which is not compared (the figures are one machine's).
A fenced block with no command must say what it is instead: `json`, `yaml` or `text`
(data, a workflow, or output shown). Any other block (no language and no `$ ` line, or a language such
as `bash` without `$ ` lines) is one this test does not know how to run, and fails it.
A command not to run is marked on its page by an HTML comment before its block,
`<!-- README test skips COMMAND: why -->`; the block's lines that start with COMMAND
are then left out. Nothing else is left out.

The rules, the only changes made to a command:
  1. `harness` as the first word is this build's build/bin/harness; `./scripts/NAME`
     or `scripts/NAME` is this checkout's scripts/NAME.
  2. Smoke size: a harness command that runs workloads (`--workload`/`-w` or
     `--suite`, in a run, `compare`, `bisect` or `sweep`; in `history`, `show`, `table`,
     `export`, `merge` and `plot` `--workload` only names one) gets `--runs 1` in place of its own `--runs`/`-n`; one with
     `--workload`/`-w` gets `--smoke` at its end (workload parameters follow the
     workload); `--suite seeds` becomes `--suite quick` (the same workloads at smoke
     size); `--rounds N` (scripts/sampler-overhead) becomes `--rounds 2`, its least.
  3. The commands run with bash, one after the other, in one scratch folder whose
     results/ starts with a copy of the committed results/reference/, as at the top
     of a fresh clone; what they write stays there, for the later pages too (the
     plots of docs/reports.md draw the reports the README's runs wrote).
  4. Each must exit 0, except `harness compare`: 0 or 1, its verdict (2 is bad input).
"""
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README] + sorted((ROOT / "docs").glob("*.md"))
HARNESS = ROOT / "build" / "bin" / "harness"
# Subcommands that read what runs wrote: their --workload picks a series or a report's part.
READERS = ("history", "show", "export", "merge", "plot", "table")
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
SKIP = re.compile(r"<!--\s*README test skips\s+(\S+?):")
WORKLOAD_FLAGS = ("--workload", "-w")
RUNS_FLAGS = ("--runs", "-n")
LEAST_ROUNDS = "2"
TIMEOUT_S = 900
QUIET_LANGS = ("json", "yaml", "text")  # blocks that hold no command by what they are


@dataclass
class Block:
    line: int                   # of the opening fence, 1-based
    lang: str = ""
    commands: list = field(default_factory=list)
    skipped: list = field(default_factory=list)


def blocks(text):
    """The fenced blocks of `text` that hold commands, in order."""
    return [b for b in fenced(text) if b.commands or b.skipped]


def unknown(text):
    """The fenced blocks of `text` that hold no command and do not say they hold none."""
    return [b for b in fenced(text)
            if not (b.commands or b.skipped) and b.lang != "sh" and b.lang not in QUIET_LANGS]


def fenced(text):
    """Every fenced block of `text`, in order, with its commands."""
    out, lines, i, marker = [], text.splitlines(), 0, None
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            if lines[i].strip():
                skip = SKIP.search(lines[i])
                marker = skip.group(1) if skip else None
            i += 1
            continue
        indent, lang, start = fence.group(1), fence.group(2), i
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        block = Block(line=start + 1, lang=lang)
        for command in commands(body, lang):
            (block.skipped if marker and command.startswith(marker) else block.commands).append(command)
        out.append(block)
        marker = None
    return out


def commands(body, lang):
    if lang != "sh":
        return [line[2:].strip() for line in body if line.startswith("$ ")]
    out, pending = [], ""
    for line in body:
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        if pending.strip() and not pending.lstrip().startswith("#"):
            out.append(" ".join(pending.split()))
        pending = ""
    return out


def rewrite(command):
    """(bash command line, allowed exit codes) by the rules in this file's docstring."""
    words = shlex.split(command, comments=True)
    first = words[0]
    if first == "harness":
        words[0] = str(HARNESS)
    elif first.startswith(("./scripts/", "scripts/")):
        words[0] = str(ROOT / "scripts" / first.split("scripts/", 1)[1])
    harness = words[0] in (str(HARNESS), str(ROOT / "scripts" / "harness"))
    runs = harness and not (len(words) > 1 and words[1] in READERS)
    if runs and any(w in words for w in WORKLOAD_FLAGS + ("--suite",)):
        kept = []
        for w in words:
            if kept and kept[-1] in RUNS_FLAGS:
                kept.pop()
                continue
            kept.append(w)
        words = kept + ["--runs", "1"]
        words = [("quick" if w == "seeds" and words[k - 1] == "--suite" else w) for k, w in enumerate(words)]
        if any(w in words for w in WORKLOAD_FLAGS):
            words.append("--smoke")
    words = [LEAST_ROUNDS if k and words[k - 1] == "--rounds" else w for k, w in enumerate(words)]
    # A comparison's regression and a squeeze's limit not found are results (exit 1).
    compare = harness and len(words) > 1 and words[1] in ("compare", "squeeze")
    line = " ".join(w if re.search(r"[*?]", w) else shlex.quote(w) for w in words)
    return line, (0, 1) if compare else (0,)


def page_name(page):
    return page.relative_to(ROOT).as_posix()


BLOCKS = [(page_name(page), block) for page in PAGES for block in blocks(page.read_text())]


def test_pages_have_command_blocks():
    # Every block with a command is run below, or its skipped commands are marked.
    assert page_name(PAGES[0]) == "README.md" and len(PAGES) >= 2, PAGES
    assert sum(page == "README.md" for page, _ in BLOCKS) >= 2
    assert len(BLOCKS) >= 8
    assert sum(len(b.commands) for _, b in BLOCKS) >= 12
    skipped = [shlex.split(c, comments=True)[:2] for _, b in BLOCKS for c in b.skipped]
    assert skipped == [["./scripts/test"], ["harness", "-a"], ["harness", "-a"], ["harness", "-w"],
                       ["harness", "bisect"], ["/usr/bin/python3", "-m"]]


@pytest.mark.parametrize("page", PAGES, ids=page_name)
def test_page_has_no_block_it_cannot_run(page):
    found = [f"{page_name(page)}:{b.line}: ```{b.lang}" for b in unknown(page.read_text())]
    assert not found, ("fenced blocks that are neither commands (`sh`, or `$ ` lines) nor marked "
                       f"as {' or '.join(QUIET_LANGS)}: " + ", ".join(found))


def test_rules():
    assert rewrite("harness --workload idle-return -n 6 -o old.json") == (
        f"{HARNESS} --workload idle-return -o old.json --runs 1 --smoke", (0,))
    line, exits = rewrite("harness compare --baseline a --candidate b --suite seeds --runs 5 --markdown -")
    assert line == f"{HARNESS} compare --baseline a --candidate b --suite quick --markdown - --runs 1"
    assert exits == (0, 1)
    assert rewrite("harness plot results/x-*.json -o rss.png  # a comment")[0] == \
        f"{HARNESS} plot results/x-*.json -o rss.png"
    assert rewrite("scripts/sampler-overhead --rounds 120 --seed 1130")[0] == \
        f"{ROOT}/scripts/sampler-overhead --rounds 2 --seed 1130"


def test_parser_reads_sh_blocks_output_blocks_and_markers():
    text = ("<!-- README test skips ./scripts/test: it is this suite -->\n\n```sh\n./scripts/harness -w x\n"
            "./scripts/test\n```\n\n```\n$ harness --list\nworkload ...\n```\n\n  ```sh\n  harness -w a \\\n"
            "    -a glibc   # two lines\n  ```\n\n```json\n{}\n```\n")
    found = blocks(text)
    assert [(b.line, b.commands, b.skipped) for b in found] == [
        (3, ["./scripts/harness -w x"], ["./scripts/test"]),
        (8, ["harness --list"], []),
        (13, ["harness -w a -a glibc # two lines"], [])]
    assert unknown(text) == []


def test_blocks_that_say_nothing_are_unknown():
    text = ("```bash\nharness -w x\n```\n\n```\nharness -w y\n```\n\n```text\nan output\n```\n\n"
            "```sh\n# only a comment\n```\n\n```console\n$ harness --list\n```\n")
    assert [(b.line, b.lang) for b in unknown(text)] == [(1, "bash"), (5, "")]
    assert [b.commands for b in blocks(text)] == [["harness --list"]]


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    folder = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "results" / "reference", folder / "results" / "reference")
    return folder


@pytest.mark.parametrize("page,block", BLOCKS, ids=[f"{page}:{b.line}" for page, b in BLOCKS])
def test_page_block(page, block, scratch):
    for command in block.commands:
        line, exits = rewrite(command)
        result = subprocess.run(["bash", "-c", line], cwd=scratch, capture_output=True, text=True,
                                timeout=TIMEOUT_S)
        assert result.returncode in exits, (
            f"{page}:{block.line}: `{command}` ran as `{line}` and exited {result.returncode}\n"
            f"stdout (end):\n{result.stdout[-3000:]}\nstderr (end):\n{result.stderr[-3000:]}")
