# Sourced by scripts/harness, scripts/test and ci/action.sh: installs the Debian
# packages the project needs (as root, or with sudo when asked; otherwise prints
# the apt-get line and exits 2), then configures and builds the Release build in
# build/ when it is missing or stale.

MEMHARNESS_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# What a run needs: build tools and libraries, the allocators under test, the
# plots (matplotlib comes from Debian: PyPI is not reachable everywhere), the apps
# suite's programs (redis, sqlite3, and g++, git, python3 and coreutils' sort, also
# needed for other reasons or essential), the pages' Chart.js (copied beside each
# page), and Protocol Buffers and zlib (harness export --pprof writes a gzipped
# profile.proto). Recommended packages are not installed.
MEMHARNESS_PACKAGES=(
  cmake g++ make git pkg-config
  libbenchmark-dev nlohmann-json3-dev libcli11-dev libfmt-dev libre2-dev libsqlite3-dev libdw-dev
  libprotobuf-dev protobuf-compiler zlib1g-dev
  libjemalloc2 libmimalloc2.0 libtcmalloc-minimal4
  python3 python3-matplotlib
  sqlite3 redis-server redis-tools coreutils
  time
  libjs-chart.js
)
# What only ./scripts/test needs: GoogleTest, clang (the scav-fuzz preset's
# libFuzzer), clang-tidy (the function-size check), pytest and jsonschema, the
# pages' browser tests (headless Chromium driven by Selenium; not installed on a CI
# runner by the Action, where Ubuntu's chromium is a snap), Go (`go tool pprof`
# reads the profiles harness export --pprof writes), npm (harness page's
# libraries, fetched once by page-libs.sh; ./scripts/harness fetches them too
# when npm is there), YAML for the CI examples' tests, and a one-node Slurm
# cluster for the job array's test (its daemons are started by the test, never
# at install: see memharness_no_services).
MEMHARNESS_TEST_PACKAGES=(
  libgtest-dev clang clang-tidy universal-ctags python3-pytest python3-jsonschema golang-go
  chromium chromium-driver python3-selenium npm
  python3-yaml slurm-wlm munge
)
# The targets memharness_build builds (words): ./scripts/harness asks for what its
# arguments run (memharness_run_targets), ./scripts/test for all. Settings
# in MEMHARNESS_FIRST_CONFIGURE apply when build/ is configured for the first time.
MEMHARNESS_BUILD_TARGET=${MEMHARNESS_BUILD_TARGET:-all}
MEMHARNESS_FIRST_CONFIGURE=()

# Ubuntu renamed libraries for its 64-bit time_t transition by adding "t64"
# (libtcmalloc-minimal4 is libtcmalloc-minimal4t64 there): a package counts as
# installed under either name, and the t64 name is asked of apt only when apt
# does not know the Debian one.
memharness_installed() {
  local name
  # npm also comes with NodeSource's nodejs, which Debian's npm conflicts with.
  [ "$1" = npm ] && command -v npm >/dev/null && return 0
  for name in "$1" "${1}t64"; do
    [ "$(dpkg-query -W -f='${Status}' "$name" 2>/dev/null)" = "install ok installed" ] && return 0
  done
  return 1
}

memharness_missing_packages() {
  local p missing=()
  for p in "${MEMHARNESS_PACKAGES[@]}"; do
    memharness_installed "$p" || missing+=("$p")
  done
  echo "${missing[@]}"
}

memharness_apt_name() {
  if ! apt-cache show "$1" >/dev/null 2>&1 && apt-cache show "${1}t64" >/dev/null 2>&1; then
    echo "${1}t64"
  else
    echo "$1"
  fi
}

# --sudo: when not root, install with sudo (a CI runner's user) instead of
# printing the command.
memharness_install() {
  local missing p names=() as_root=()
  missing=$(memharness_missing_packages)
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    if [ "${1:-}" = --sudo ] && command -v sudo >/dev/null; then
      as_root=(sudo -n)
    else
      echo "memharness needs these Debian packages: $missing" >&2
      echo "install them as root with:" >&2
      echo "  apt-get update && apt-get install -y --no-install-recommends $missing" >&2
      exit 2
    fi
  fi
  echo "installing: $missing" >&2
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2 || { echo "apt-get update failed" >&2; exit 2; }
  for p in $missing; do
    names+=("$(memharness_apt_name "$p")")
  done
  memharness_no_services "${as_root[@]}"
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${names[@]}" >&2 ||
    { memharness_services_again "${as_root[@]}"; echo "apt-get install failed: ${names[*]}" >&2; exit 2; }
  memharness_services_again "${as_root[@]}"
}

# Packages with daemons (munge, slurmctld, slurmd) must not start them when
# installed: on a machine without systemd, or one that should not run a
# cluster, the tests start their own. A policy-rc.d that denies every start is
# put in place for the install when there is none, and taken away after.
MEMHARNESS_POLICY_RC=${MEMHARNESS_POLICY_RC:-/usr/sbin/policy-rc.d}
memharness_no_services() {
  MEMHARNESS_POLICY_ADDED=0
  [ -e "$MEMHARNESS_POLICY_RC" ] && return 0
  printf '#!/bin/sh\n# memharness set-up: no service starts while packages are installed\nexit 101\n' |
    "$@" tee "$MEMHARNESS_POLICY_RC" >/dev/null && "$@" chmod 755 "$MEMHARNESS_POLICY_RC" && MEMHARNESS_POLICY_ADDED=1
}
memharness_services_again() {
  [ "${MEMHARNESS_POLICY_ADDED:-0}" = 1 ] && "$@" rm -f "$MEMHARNESS_POLICY_RC"
  MEMHARNESS_POLICY_ADDED=0
}

# Quiet unless it fails: nothing is printed when the build is up to date or
# succeeds; a failure prints the whole configure or build output. Arguments are
# cache settings (-DNAME=VALUE) the build must have; it is configured again when
# one differs.
memharness_build() {
  local build="$MEMHARNESS_ROOT/build" log setting name configure=0
  local first=()
  [ -f "$build/CMakeCache.txt" ] || { configure=1; first=("${MEMHARNESS_FIRST_CONFIGURE[@]}"); }
  for setting in "$@"; do
    name=${setting#-D}
    name=${name%%=*}
    grep -qx "$name:[A-Z]*=${setting#*=}" "$build/CMakeCache.txt" 2>/dev/null || configure=1
  done
  log=$(mktemp "${TMPDIR:-/tmp}/memharness-build.XXXXXX") || exit 2
  if [ "$configure" -eq 1 ] && ! cmake --preset release -S "$MEMHARNESS_ROOT" "${first[@]}" "$@" >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "configure failed (the output above is cmake's)" >&2
    exit 2
  fi
  # cmake decides what is stale; an up-to-date build costs a second.
  # shellcheck disable=SC2086 # the targets are words
  if ! cmake --build "$build" -j "$(nproc)" --target $MEMHARNESS_BUILD_TARGET >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    echo "build failed (the output above is the whole build's)" >&2
    exit 2
  fi
  rm -f "$log"
}

source "$MEMHARNESS_ROOT/scripts/lib/page-libs.sh"

memharness_setup() {
  memharness_install
  memharness_build "$@"
  memharness_page_libs "$MEMHARNESS_ROOT/build/page-libs"
}

# For the scripts that only run the harness (./scripts/harness, the Action, the
# comparison of pins): what a run needs, no tests and no test packages.
memharness_build_run() {
  MEMHARNESS_BUILD_TARGET=${MEMHARNESS_RUN_TARGETS:-memharness-run}
  MEMHARNESS_FIRST_CONFIGURE=(-DBUILD_TESTING=OFF)
  memharness_build "$@"
}

# The targets a run of the harness with these arguments needs: memharness-run-core
# (the harness, the ledger, scav) and the workloads it names (-w NAME, --workload
# NAME or --workload=NAME, before any `--`), so that a first run builds one
# workload, not all of them. Every workload (memharness-run) for a suite, a report
# to resume, or arguments that name neither a workload nor a program. A name
# that is no workload's folder is left to the harness to refuse.
memharness_run_targets() {
  local arg value=0 all=0 program=0 name targets="memharness-run-core" named=()
  for arg in "$@"; do
    if [ "$value" -eq 1 ]; then named+=("$arg"); value=0; continue; fi
    case "$arg" in
      --) program=1; break ;;
      -w | --workload) value=1 ;;
      --workload=*) named+=("${arg#--workload=}") ;;
      -w?*) named+=("${arg#-w}") ;;
      --suite | --suite=* | --resume | --resume=*) all=1 ;;
    esac
  done
  if [ "$all" -eq 1 ] || { [ "${#named[@]}" -eq 0 ] && [ "$program" -eq 0 ]; }; then
    echo memharness-run
    return
  fi
  for name in "${named[@]}"; do
    case "$name" in runtime | apps | */* | .* | "") continue ;; esac
    [ -d "$MEMHARNESS_ROOT/workloads/$name" ] && targets+=" wl-$name"
  done
  echo "$targets"
}

# For ./scripts/harness ARGS: what a run needs and what ARGS run, then no more.
memharness_setup_run_for() {
  MEMHARNESS_RUN_TARGETS=$(memharness_run_targets "$@") memharness_setup_run
}

memharness_setup_run() {
  memharness_install
  memharness_build_run "$@"
  # harness page's libraries when npm is there; a run needs none of them.
  if command -v npm >/dev/null; then memharness_page_libs "$MEMHARNESS_ROOT/build/page-libs"; fi
}
