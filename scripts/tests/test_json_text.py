"""Every JSON the harness writes goes through json_text (core/record.h), which
writes a byte that is not UTF-8 as U+FFFD where nlohmann's plain dump() throws
and loses the report. Text from outside is made valid where it enters
(core/escape.h); this is the backstop, and no caller can forget it: no other
call of dump() in the harness's sources but one that replaces as well (an
error message's ASCII rendering). Reads the sources; builds nothing.
"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "harness" / "src"
DUMP = re.compile(r"\.dump\s*\(")


def test_json_is_written_only_through_json_text():
    calls = []
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in (".cpp", ".h") or path == SRC / "core" / "record.h":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("//")[0]
            if DUMP.search(code) and "error_handler_t::replace" not in code:
                calls.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not calls, "dump() outside json_text (use json_text(j)):\n" + "\n".join(calls)
    assert "error_handler_t::replace" in (SRC / "core" / "record.h").read_text()
