"""scripts/check-function-size names each function over 100 lines, with its file,
line and size, and passes a file whose functions are all shorter: run on a
small source of its own with a compile database of its own (nothing of the
harness is built)."""
import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts" / "check-function-size"

pytestmark = pytest.mark.skipif(shutil.which("clang-tidy") is None, reason="clang-tidy is not installed")


def source(tmp_path, name, body_lines):
    body = "".join(f"  x += {i};\n" for i in range(body_lines))
    path = tmp_path / name
    path.write_text(f"int {name[:-4]}(int x) {{\n{body}  return x;\n}}\n")
    return path


def check(tmp_path, *files):
    db = [{"directory": str(tmp_path), "file": str(f), "command": f"c++ -std=c++17 -c {f}"} for f in files]
    (tmp_path / "compile_commands.json").write_text(json.dumps(db))
    return subprocess.run([str(CHECK), "-p", str(tmp_path), *map(str, files)],
                          capture_output=True, text=True, timeout=120)


def test_a_long_function_fails_naming_it(tmp_path):
    long_one = source(tmp_path, "too_long.cpp", 120)
    short_one = source(tmp_path, "short_enough.cpp", 60)
    proc = check(tmp_path, long_one, short_one)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "too_long.cpp:1: too_long is 122 lines (at most 100)" in proc.stderr
    assert "short_enough" not in proc.stderr
    assert "2 files, 1 functions over 100 lines" in proc.stdout


def test_short_functions_pass(tmp_path):
    proc = check(tmp_path, source(tmp_path, "short_enough.cpp", 90))
    assert proc.returncode == 0, proc.stdout + proc.stderr
