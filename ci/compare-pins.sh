#!/usr/bin/env bash
# Compares an allocator pin at two revisions on the quick suite: PIN@BASE as
# baseline, PIN@HEAD as candidate, baseline again, in shuffled interleaved
# rounds. PIN is any pin with a repository in allocators/pins.json (default
# scav, this repository's allocator); both revisions are built from
# `git archive` of their commit into build/pins/ (cached).
#
#   ci/compare-pins.sh BASE_REV HEAD_REV [extra harness compare options]
#
# Environment: PIN (default scav), RUNS (rounds, default 5), SUITE (default
# quick), SHARD (I/N: run one shard and write only its runs report), OUT
# (folder, default results/compare-pins). Exit: 0 no regression, 1 a regression
# (or a failed run), 2 bad input. The markdown table for a pull request is
# $OUT/comparison.md.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BASE_REV HEAD_REV [harness compare options]" >&2
  exit 2
fi
base=$1 head=$2
shift 2
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
source "$root/scripts/lib/setup.sh"
memharness_setup_run

out=${OUT:-$root/results/compare-pins}
mkdir -p "$out"
harness="$root/build/bin/harness"
pin=${PIN:-scav}
base_sha=$base head_sha=$head
if [ "$pin" = scav ]; then
  # This repository's scav: resolve both now, so a moving branch name cannot
  # change under the job. (Another pin's revisions are resolved in its own
  # repository by the harness, before anything runs.)
  base_sha=$(git -C "$root" rev-parse --verify "$base^{commit}") || { echo "unknown revision $base" >&2; exit 2; }
  head_sha=$(git -C "$root" rev-parse --verify "$head^{commit}") || { echo "unknown revision $head" >&2; exit 2; }
fi

args=(compare --baseline "$pin@$base_sha" --candidate "$pin@$head_sha" --suite "${SUITE:-quick}"
      --runs "${RUNS:-5}" --quiet)
if [ -n "${SHARD:-}" ]; then
  # One shard of a job matrix: only the runs; `harness merge` and
  # `harness compare MERGED.json` make the verdict once every shard is in.
  tag=${SHARD/\//-of-}
  "$harness" "${args[@]}" --shard "$SHARD" --report "$out/runs-$tag.json" --out "$out/comparison-$tag.json" "$@" || true
  [ -f "$out/runs-$tag.json" ] || exit 2
  exit 0
fi
start=$(date +%s)
set +e
"$harness" "${args[@]}" --report "$out/runs.json" --out "$out/comparison.json" --export-markdown "$out/comparison.md" "$@"
rc=$?
set -e
echo "compare-pins: $pin@${base_sha:0:12} -> $pin@${head_sha:0:12}: exit $rc after $(( $(date +%s) - start )) s" >&2
exit $rc
