"""The harness library is compiled in batches of files (a unity build): the
check that no two files' anonymous namespaces define one name, and that no file
opens a namespace to the files after it (scripts/check-unity-names). Reads the
sources; builds nothing."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHECK = ROOT / "scripts" / "check-unity-names"


def check(*files):
    return subprocess.run([sys.executable, str(CHECK), *map(str, files)], capture_output=True, text=True,
                          timeout=120)


def test_the_harness_sources_have_no_name_a_batch_could_mix_up():
    result = check()
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


def test_a_function_of_one_name_in_two_files_is_named_with_both(tmp_path):
    # Different signatures: in one batch these would overload, and a call in b.cpp
    # with an int would silently pick a.cpp's function.
    (tmp_path / "a.cpp").write_text("namespace mh {\nnamespace {\nint mb(long kb) { return kb; }\n}  // namespace\n}\n")
    (tmp_path / "b.cpp").write_text("namespace mh {\nnamespace {\ndouble mb(double bytes) { return bytes; }\n"
                                    "using Clock = int;\n}  // namespace\n}\n")
    (tmp_path / "c.cpp").write_text("namespace mh {\nnamespace {\nusing Clock = int;\n}  // namespace\n}\n")
    result = check(tmp_path / "a.cpp", tmp_path / "b.cpp", tmp_path / "c.cpp")
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines == [f"mb: {tmp_path / 'a.cpp'}, {tmp_path / 'b.cpp'}"]  # the alias to one type is allowed
    assert "give each its own name" in result.stderr


def test_a_using_directive_at_namespace_scope_is_named(tmp_path):
    (tmp_path / "a.cpp").write_text("namespace mh {\nusing namespace compare;\n"
                                    "void f() {\n  using namespace std;\n}\n}\n")
    result = check(tmp_path / "a.cpp")
    assert result.returncode == 1
    assert result.stdout.count("using namespace") == 1 and "compare" in result.stdout
