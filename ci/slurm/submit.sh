#!/bin/bash
# Submits the array (memharness-array.sbatch) and a merge job that starts when
# every task has ended well; prints the merge job's id. Run from the folder the
# reports should go under (MEMHARNESS_OUT, default results/slurm).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
harness=${MEMHARNESS_HARNESS:-harness}
out=${MEMHARNESS_OUT:-results/slurm}
array=$(sbatch --parsable "$here/memharness-array.sbatch")
sbatch --parsable --job-name=memharness-merge --dependency="afterok:${array%%;*}" --output=memharness-merge-%j.log \
  --wrap "\"$harness\" merge \"$out\"/shard-*.json -o \"$out/merged.json\""
