# Sourced by scripts/lib/setup.sh: the JavaScript libraries of `harness page`
# (chartjs-plugin-zoom with hammerjs, d3 7, d3-flame-graph 5), fetched once from
# the npm registry with Debian's npm into build/page-libs/, the folder the
# harness copies beside each page (pages never fetch anything when opened).
# Versions are pinned here; a folder whose VERSIONS file differs is fetched again.

MEMHARNESS_PAGE_LIBS_VERSIONS="chartjs-plugin-zoom@2.2.0 hammerjs@2.0.8 d3@7.9.0 d3-flame-graph@5.0.0"

# The files the harness copies, as each package ships them.
memharness_page_lib_files() {
  cat <<'LIST'
chartjs-plugin-zoom/dist/chartjs-plugin-zoom.min.js chartjs-plugin-zoom.min.js
hammerjs/hammer.min.js hammer.min.js
d3/dist/d3.min.js d3.min.js
d3-flame-graph/dist/d3-flamegraph.umd.min.js d3-flamegraph.min.js
d3-flame-graph/dist/d3-flamegraph.css d3-flamegraph.css
LIST
}

# memharness_page_libs DIR: DIR/*.js as listed above; quiet unless it fails
# (then npm's output and exit 2).
memharness_page_libs() {
  local dir=$1 work log from to
  if [ -f "$dir/VERSIONS" ] && [ "$(cat "$dir/VERSIONS")" = "$MEMHARNESS_PAGE_LIBS_VERSIONS" ]; then
    return 0
  fi
  command -v npm >/dev/null || { echo "npm is not installed (apt-get install npm)" >&2; exit 2; }
  work=$(mktemp -d "${TMPDIR:-/tmp}/memharness-npm.XXXXXX") || exit 2
  log="$work/npm.log"
  # --ignore-scripts: nothing of the packages runs here; --no-save: no lock file kept.
  # shellcheck disable=SC2086
  if ! (cd "$work" && npm install --no-audit --no-fund --ignore-scripts --no-save --omit=dev \
          --prefix "$work" $MEMHARNESS_PAGE_LIBS_VERSIONS >"$log" 2>&1); then
    cat "$log" >&2
    rm -rf "$work"
    echo "npm install of the pages' libraries failed: $MEMHARNESS_PAGE_LIBS_VERSIONS" >&2
    exit 2
  fi
  mkdir -p "$dir" || exit 2
  while read -r from to; do
    cp "$work/node_modules/$from" "$dir/$to" || { rm -rf "$work"; exit 2; }
  done < <(memharness_page_lib_files)
  echo "$MEMHARNESS_PAGE_LIBS_VERSIONS" >"$dir/VERSIONS"
  rm -rf "$work"
}
