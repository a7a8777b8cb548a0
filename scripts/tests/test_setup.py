"""Tests of scripts/lib/setup.sh, the set-up every script runs first: quiet when
the build is up to date or succeeds, the whole output when it fails, and a build
configured again when a cache setting it needs (-DNAME=VALUE) differs.
A throwaway one-file project stands in for memharness, so these run in seconds.
"""
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SETUP = ROOT / "scripts" / "lib" / "setup.sh"

PRESETS = """{"version": 6, "configurePresets": [
  {"name": "release", "binaryDir": "${sourceDir}/build", "cacheVariables": {"CMAKE_BUILD_TYPE": "Release"}}]}
"""
CMAKELISTS = """cmake_minimum_required(VERSION 3.25)
project(tiny LANGUAGES C)
option(TINY_WERROR "warnings are errors" OFF)
if(TINY_WERROR)
  add_compile_options(-Werror)
endif()
add_executable(tiny main.c)
"""
GOOD = "int main(void) { return 0; }\n"
WARNS = "int main(void) { int unused; return 0; }\n"   # -Wall: unused variable


@pytest.fixture
def project(tmp_path):
    (tmp_path / "scripts" / "lib").mkdir(parents=True)
    shutil.copy(SETUP, tmp_path / "scripts" / "lib" / "setup.sh")
    shutil.copy(SETUP.parent / "page-libs.sh", tmp_path / "scripts" / "lib" / "page-libs.sh")
    (tmp_path / "CMakePresets.json").write_text(PRESETS)
    (tmp_path / "CMakeLists.txt").write_text(CMAKELISTS.replace("project(tiny LANGUAGES C)",
                                                                "project(tiny LANGUAGES C)\nadd_compile_options(-Wall)"))
    (tmp_path / "main.c").write_text(GOOD)
    return tmp_path


def build(project, *settings, function="memharness_build"):
    script = f'source "{project}/scripts/lib/setup.sh" && {function} "$@"'
    return subprocess.run(["bash", "-c", script, "build"] + list(settings), capture_output=True, text=True,
                          timeout=300)


def test_build_is_silent_when_it_succeeds_or_is_up_to_date(project):
    for attempt in ("configure and build", "up to date"):
        result = build(project)
        assert result.returncode == 0, result.stderr
        assert (result.stdout, result.stderr) == ("", ""), attempt
    assert (project / "build" / "tiny").exists()


def test_failed_build_prints_its_whole_output(project):
    assert build(project).returncode == 0
    (project / "main.c").write_text("int main(void) { return undeclared_name; }\n")
    result = build(project)
    assert result.returncode == 2
    assert "undeclared_name" in result.stderr        # the compiler's own message
    assert "Building C object" in result.stderr      # and the rest of the build's output
    assert result.stderr.rstrip().endswith("build failed (the output above is the whole build's)")


def test_setting_reconfigures_and_warnings_become_errors(project):
    (project / "main.c").write_text(WARNS)
    assert build(project).returncode == 0            # a warning alone, quietly
    result = build(project, "-DTINY_WERROR=ON")
    assert result.returncode == 2, "the cache setting was not applied"
    assert "-Werror" in result.stderr and "unused" in result.stderr
    assert "TINY_WERROR:BOOL=ON" in (project / "build" / "CMakeCache.txt").read_text()


def test_a_build_for_runs_builds_only_what_a_run_needs(project):
    # ./scripts/harness's build: the memharness-run target, configured without the tests;
    # ./scripts/test's (memharness_build) builds everything.
    (project / "CMakeLists.txt").write_text(CMAKELISTS + "add_custom_target(memharness-run)\n"
                                            "add_dependencies(memharness-run tiny)\n"
                                            "if(BUILD_TESTING)\n  add_executable(tiny_tests main.c)\nendif()\n"
                                            "add_executable(bench main.c)\n")
    result = build(project, function="memharness_build_run")
    assert result.returncode == 0, result.stderr
    assert (project / "build" / "tiny").exists()
    assert not (project / "build" / "bench").exists() and not (project / "build" / "tiny_tests").exists()
    assert re.search(r"^BUILD_TESTING:[A-Z]*=OFF$", (project / "build" / "CMakeCache.txt").read_text(), re.M)
    result = build(project, "-DBUILD_TESTING=ON")
    assert result.returncode == 0, result.stderr
    assert (project / "build" / "bench").exists() and (project / "build" / "tiny_tests").exists()


@pytest.mark.parametrize("args, targets", [
    # A first run names one workload: that workload is built, not the other seventeen.
    ("--workload burst-writefile --calls 3", "memharness-run-core wl-burst-writefile"),
    ("compare --baseline jemalloc --candidate scav -w idle-return --runs 5", "memharness-run-core wl-idle-return"),
    ("--workload=micro -a glibc", "memharness-run-core wl-micro"),
    ("-wfrag-shift", "memharness-run-core wl-frag-shift"),
    ("-- sort -n big.txt", "memharness-run-core"),                       # a program: no workload
    ("-w nope", "memharness-run-core"),                                  # the harness refuses the name
    ("-w ../etc", "memharness-run-core"),
    ("--suite quick", "memharness-run"),                                 # a suite: every workload
    ("--resume results/x.json", "memharness-run"),
    ("table a.json b.json", "memharness-run"),
    ("-- prog -w idle-return", "memharness-run-core"),                   # a program's own arguments
])
def test_a_run_builds_the_workloads_it_names(args, targets):
    script = f'source "{SETUP}" && memharness_run_targets {args}'
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == targets
    names = set(result.stdout.split()) - {"memharness-run-core", "memharness-run"}
    assert all((ROOT / "workloads" / n.removeprefix("wl-")).is_dir() for n in names)


def test_harness_help_prints_only_the_help():
    result = subprocess.run([str(ROOT / "scripts" / "harness"), "--help"], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    direct = subprocess.run([str(ROOT / "build" / "bin" / "harness"), "--help"], capture_output=True, text=True,
                            timeout=60)
    assert result.stdout == direct.stdout


def test_install_on_a_runner_uses_sudo_and_ubuntus_t64_names(tmp_path):
    # A runner's user (not root) with sudo, on Ubuntu: libtcmalloc-minimal4 is unknown
    # to apt, libtcmalloc-minimal4t64 is what it installs; nothing else is missing.
    fake = {"id": 'echo 1001',
            "dpkg-query": 'case "$3" in libtcmalloc-minimal4*) exit 1;; *) echo "install ok installed";; esac',
            "apt-cache": '[ "$2" = libtcmalloc-minimal4t64 ]',
            "sudo": f'echo "sudo $*" >> {tmp_path}/log; [ "$1" = -n ] && shift; "$@"',
            "apt-get": f'echo "apt-get $*" >> {tmp_path}/log'}
    for name, body in fake.items():
        (tmp_path / name).write_text(f"#!/bin/bash\n{body}\n")
        (tmp_path / name).chmod(0o755)
    script = f'PATH="{tmp_path}:$PATH"; source "{SETUP}" && memharness_install --sudo'
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    log = (tmp_path / "log").read_text().splitlines()
    assert log[-1] == "apt-get install -y -q --no-install-recommends libtcmalloc-minimal4t64"
    assert log[-2].startswith("sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install")
    without = subprocess.run(["bash", "-c", script.replace(" --sudo", "")], capture_output=True, text=True,
                             timeout=60)
    assert without.returncode == 2 and "apt-get install -y --no-install-recommends libtcmalloc-minimal4" in without.stderr


def policy_steps(policy, steps):
    script = f'source "{SETUP}" && {steps}'
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "MEMHARNESS_POLICY_RC": str(policy)})


def test_no_service_starts_during_the_install_on_a_fresh_machine(tmp_path):
    # A fresh machine has no policy-rc.d: one that denies every start is there
    # for the install (invoke-rc.d asks it: 101 is "action forbidden"), then gone.
    policy = tmp_path / "policy-rc.d"
    result = policy_steps(policy, f'memharness_no_services && "{policy}" munge start; echo "rc=$?"; '
                                  'memharness_services_again; [ -e "$MEMHARNESS_POLICY_RC" ] || echo removed')
    assert result.stdout.split() == ["rc=101", "removed"], result.stderr
    # One that was there stays as it was.
    policy.write_text("#!/bin/sh\nexit 0\n")
    result = policy_steps(policy, "memharness_no_services && memharness_services_again")
    assert result.returncode == 0 and policy.read_text() == "#!/bin/sh\nexit 0\n"
