#!/bin/sh
# run_bench.sh - run scav_bench under LD_PRELOAD of each allocator, interleaved, and
# print the median ns/op per benchmark and allocator.
#   usage: run_bench.sh [BUILD_DIR] [ROUNDS]     (default build-scav, 5 rounds)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-"$here/../../../build-scav"}
rounds=${2:-5}
bench="$build/bench/scav_bench"
lib=/usr/lib/x86_64-linux-gnu
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
set -- glibc: \
  jemalloc:$lib/libjemalloc.so.2 \
  mimalloc:$lib/libmimalloc.so.2 \
  tcmalloc:$lib/libtcmalloc_minimal.so.4 \
  scav:"$build/libscav.so"
r=1
while [ "$r" -le "$rounds" ]; do
  for spec in "$@"; do
    name=${spec%%:*}
    path=${spec#*:}
    LD_PRELOAD="$path" "$bench" --benchmark_min_time=0.3 --benchmark_format=json \
      > "$out/$name.$r.json" 2>/dev/null
  done
  r=$((r + 1))
done
python3 - "$out" "$rounds" "$@" <<'PY'
import json, statistics, sys, glob, os
out, rounds, specs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
names = [s.split(':', 1)[0] for s in specs]
res = {}
for n in names:
    for f in glob.glob(os.path.join(out, n + '.*.json')):
        for b in json.load(open(f))['benchmarks']:
            t = b['real_time'] if 'ProducerConsumer' in b['name'] else b['cpu_time']
            res.setdefault(b['name'], {}).setdefault(n, []).append(t)
print('median ns/op over %d interleaved rounds' % rounds)
print('%-32s' % 'benchmark' + ''.join('%11s' % n for n in names))
for b in sorted(res):
    print('%-32s' % b + ''.join('%11.2f' % statistics.median(res[b].get(n, [float('nan')])) for n in names))
PY
