#!/usr/bin/env bash
# The one step of action.yml: installs what the harness needs on the runner
# (with sudo when not root; MEMHARNESS_ACTION_SKIP_INSTALL=1 skips it), builds the
# harness (unless MEMHARNESS_ACTION_HARNESS names one), then ci/action.py compares.
# A set-up that fails is an error (verdict=error, exit 2), never a regression.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

fail_setup() {
  echo "::error::memharness: $1 failed (its output is above); nothing was compared"
  [ -n "${GITHUB_OUTPUT:-}" ] && echo "verdict=error" >>"$GITHUB_OUTPUT"
  exit 2
}

if [ "${MEMHARNESS_ACTION_SKIP_INSTALL:-0}" != 1 ]; then
  # setup.sh exits on failure: a subshell keeps this script to report it.
  (source "$root/scripts/lib/setup.sh" && memharness_install --sudo) || fail_setup "installing the packages"
fi
if [ -z "${MEMHARNESS_ACTION_HARNESS:-}" ]; then
  (source "$root/scripts/lib/setup.sh" && memharness_build_run) || fail_setup "building the harness"
  export MEMHARNESS_ACTION_HARNESS="$root/build/bin/harness"
fi
exec python3 "$root/ci/action.py"
