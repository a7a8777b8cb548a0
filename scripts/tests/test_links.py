"""Every relative link of the committed markdown files resolves: the file or folder it
names is in the repository, and its `#anchor`, on a markdown file, is one of that
file's headings by GitHub's rule, so a page or section that moves cannot leave a
dead link behind.

The files: every .md file git knows in this checkout (committed, or new and not
ignored); without git, every .md file outside build folders. Links are inline
(`[text](target)`, `![alt](target)`), reference definitions (`[name]: target`) and
HTML `href`/`src`; those in fenced blocks and code spans are text, not links.
A target with a scheme (`https:`, `mailto:`) is not checked.

Anchors of a markdown file: its headings (`#` lines, also in block quotes, and
underlined ones), each as GitHub slugs it: the heading's text without its markup,
lower case, every character that is not a letter, digit, `_`, `-` or space left
out, spaces turned into `-`; a slug met again gets `-1`, `-2`, ...; and the `id` or
`name` of an HTML element. Anchors of other files (a source line's `#L10`) are not
checked.
"""
import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
QUOTE = re.compile(r"^ {0,3}(?:> ?)+")
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
HTML_LINK = re.compile(r"<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']*)[\"']", re.I)
HTML_ANCHOR = re.compile(r"<[a-z][^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.I)
CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def markdown_files(root):
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=root, capture_output=True, text=True, check=True).stdout
        names = sorted({n for n in out.split("\0") if n})
        return [root / n for n in names if n.endswith(".md") and (root / n).is_file()], names
    except (OSError, subprocess.CalledProcessError):
        skip = ("build", "build-", ".git", "out")
        found = [p for p in root.rglob("*.md")
                 if not any(part.startswith(skip) for part in p.relative_to(root).parts[:-1])]
        return sorted(found), None


def outside_fences(text):
    """The lines of `text` with the lines of fenced blocks (fences included) blanked."""
    out, fence = [], None
    for line in text.splitlines():
        opening = FENCE.match(QUOTE.sub("", line))
        if fence is None and opening:
            fence = opening.group(1)
            out.append("")
        elif fence is not None:
            closing = FENCE.match(QUOTE.sub("", line))
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence) \
                    and not QUOTE.sub("", line).strip().lstrip(fence[0]):
                fence = None
            out.append("")
        else:
            out.append(line)
    return out


def plain_text(heading):
    """A heading's text as rendered: code spans keep their text, other markup goes."""
    parts, last = [], 0
    for span in CODE_SPAN.finditer(heading):
        parts.append(("markup", heading[last:span.start()]))
        parts.append(("code", span.group(2).strip()))
        last = span.end()
    parts.append(("markup", heading[last:]))
    text = ""
    for kind, part in parts:
        if kind == "markup":
            part = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", part)
            part = re.sub(r"<[^>]+>", "", part)
            part = re.sub(r"(\*\*|__)(.+?)\1", r"\2", part)
            part = re.sub(r"(?<![\w*])([*_])(?!\s)(.+?)(?<!\s)\1(?![\w*])", r"\2", part)
        text += part
    return text.strip()


def slug(heading):
    return re.sub(r"[^\w\- ]", "", plain_text(heading).lower()).replace(" ", "-")


def anchors(text):
    """Every anchor a link may name in a markdown text."""
    found, seen = set(), {}
    lines = outside_fences(text)
    headings = []
    for k, raw in enumerate(lines):
        line = QUOTE.sub("", raw)
        atx = ATX.match(line)
        if atx:
            headings.append(atx.group(2) or "")
        elif SETEXT.match(line) and k:
            above = QUOTE.sub("", lines[k - 1]).strip()
            if above and not ATX.match(above) and not above.startswith(("|", "- ", "* ", "+ ")):
                headings.append(above)
    for heading in headings:
        base = slug(heading)
        name, n = base, seen.get(base, 0)
        while name in found:
            n += 1
            name = f"{base}-{n}"
        seen[base] = n
        found.add(name)
    found.update(HTML_ANCHOR.findall("\n".join(lines)))
    return found


def links(text):
    """(line, target) of every link in a markdown text."""
    body = "\n".join(outside_fences(text))
    body = re.sub(r"<!--.*?-->", lambda m: re.sub(r"[^\n]", " ", m.group(0)), body, flags=re.S)
    # Code spans may run over a line break but not over a blank line: blank them
    # paragraph by paragraph, keeping the line breaks so the line numbers hold.
    paragraphs = re.split(r"(\n[ \t]*\n)", body)
    body = "".join(CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), p) for p in paragraphs)
    out = []
    for pattern in (INLINE, DEFINITION, HTML_LINK):
        for m in pattern.finditer(body):
            out.append((body.count("\n", 0, m.start(1)) + 1, m.start(1), m.group(1)))
    return [(line, target) for line, _, target in sorted(out)]


def problems(page, root, known=None):
    """What is wrong with the relative links of one markdown file: a list of messages."""
    out = []
    for line, target in links(page.read_text()):
        if not target or SCHEME.match(target):
            continue
        where = f"{page.relative_to(root).as_posix()}:{line}: ({target})"
        path, _, fragment = target.partition("#")
        path = unquote(path)
        dest = (root / path.lstrip("/")) if path.startswith("/") else (page.parent / path if path else page)
        dest = Path(*dest.parts).resolve()
        try:
            name = dest.relative_to(root.resolve()).as_posix()
        except ValueError:
            out.append(f"{where}: outside the repository")
            continue
        if not dest.exists():
            out.append(f"{where}: {name} does not exist")
            continue
        if known is not None and name != "." and name not in known and \
                not any(k.startswith(name.rstrip("/") + "/") for k in known):
            out.append(f"{where}: {name} is not in the repository (ignored by git)")
            continue
        if fragment and dest.suffix == ".md" and dest.is_file():
            if unquote(fragment) not in anchors(dest.read_text()):
                out.append(f"{where}: no heading of {name} has the anchor #{fragment}")
    return out


FILES, KNOWN = markdown_files(ROOT)
KNOWN_SET = set(KNOWN) if KNOWN is not None else None


def test_the_files_are_found():
    names = [p.relative_to(ROOT).as_posix() for p in FILES]
    assert "README.md" in names and "docs/README.md" in names and "results/README.md" in names, names
    assert len(links((ROOT / "README.md").read_text())) >= 10


@pytest.mark.parametrize("page", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_links_resolve(page):
    found = problems(page, ROOT, KNOWN_SET)
    assert not found, "\n".join(found)


def test_slugs_follow_githubs_rule():
    assert slug("Finding the commit: bisect") == "finding-the-commit-bisect"
    assert slug("API (`include/scav.h`)") == "api-includescavh"
    assert slug("Options, exit codes and stopping") == "options-exit-codes-and-stopping"
    assert slug("`--after MARK` and __bold__ *it*") == "--after-mark-and-bold-it"
    assert slug("purge_delay_ms: 10 -> 100") == "purge_delay_ms-10---100"
    assert slug("[Memory](docs/reports.md) over time") == "memory-over-time"
    text = ("# Title\n\n## Options\n\n```sh\n# not a heading\n```\n\n## Options\n\n"
            "> ### Quoted: yes\n\nUnderlined\n----------\n\n<a id=\"kept\"></a>\n")
    assert anchors(text) == {"title", "options", "options-1", "quoted-yes", "underlined", "kept"}


def test_broken_links_are_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# A page\n\n## Its part\n")
    (tmp_path / "README.md").write_text(
        "# Front\n\n"
        "[ok](docs/page.md#its-part) [ok too](#front) [folder](docs/) [web](https://example.com/x#y)\n"
        "[no file](docs/gone.md) [no anchor](docs/page.md#a-part) [no anchor here](#nowhere)\n"
        "`[in code](docs/gone.md)`\n\n```sh\n[in a block](docs/gone.md)\n```\n\n"
        "![image](docs/missing.png) [out](../../x.md)\n\n[ref]: docs/page.md#nope\n")
    found = problems(tmp_path / "README.md", tmp_path)
    assert [f.split(": ", 1)[0] for f in found] == [
        "README.md:4", "README.md:4", "README.md:4", "README.md:11", "README.md:11", "README.md:13"], found
    assert "docs/gone.md does not exist" in found[0]
    assert "#a-part" in found[1] and "#nowhere" in found[2]
    assert "docs/missing.png does not exist" in found[3]
    assert "outside the repository" in found[4]
    assert "#nope" in found[5]
    assert problems(tmp_path / "docs" / "page.md", tmp_path) == []
