// The sampled column list and status names (see record.h).
#include "core/record.h"

#include <type_traits>
#include <utility>

namespace mh {

namespace {

// The column of a Sample field: its reader and writer from the field itself.
template <auto Field>
SampleColumn column(const char* name, const char* unit, const char* title, bool summed = true) {
  using T = std::remove_reference_t<decltype(std::declval<Sample&>().*Field)>;
  return {name, unit, title, [](const Sample& s) { return double(s.*Field); },
          [](Sample& s, double v) { s.*Field = T(v); }, summed};
}

}  // namespace

const std::vector<SampleColumn>& sample_columns() {
  static const std::vector<SampleColumn> cols = {
      column<&Sample::t_ms>("t_ms", "ms", "time since exec", /*summed=*/false),
      column<&Sample::rss_kb>("rss_kb", "KiB", "RSS"),
      column<&Sample::anon_kb>("anon_kb", "KiB", "anonymous memory"),
      column<&Sample::file_kb>("file_kb", "KiB", "file-backed memory"),
      column<&Sample::shmem_kb>("shmem_kb", "KiB", "shared memory"),
      column<&Sample::anon_huge_kb>("anon_huge_kb", "KiB", "anonymous huge pages"),
      column<&Sample::minflt>("minflt", "faults", "minor faults (cumulative)"),
      column<&Sample::majflt>("majflt", "faults", "major faults (cumulative)"),
      column<&Sample::utime_ms>("utime_ms", "ms", "user CPU (cumulative)"),
      column<&Sample::stime_ms>("stime_ms", "ms", "system CPU (cumulative)"),
      column<&Sample::threads>("threads", "count", "threads"),
      column<&Sample::lazyfree_kb>("lazyfree_kb", "KiB", "lazily freed (MADV_FREE) memory"),
      column<&Sample::heap_live_kb>("heap_live_kb", "KiB", "live heap"),
      column<&Sample::heap_blocks>("heap_blocks", "count", "live heap blocks"),
      column<&Sample::heap_allocs>("heap_allocs", "count", "allocation calls (cumulative)"),
      // The run's cgroup holds the whole tree: never summed over its processes.
      column<&Sample::cgroup_kb>("cgroup_kb", "KiB", "memory cgroup charge (page cache included)", false),
      column<&Sample::psi_some_ms>("psi_some_ms", "ms", "memory stall, some (cumulative)", false),
      column<&Sample::psi_full_ms>("psi_full_ms", "ms", "memory stall, full (cumulative)", false),
  };
  return cols;
}

uint32_t column_bit(std::string_view column) {
  const auto& cols = sample_columns();
  for (size_t i = 0; i < cols.size(); ++i)
    if (column == cols[i].name) return 1u << i;
  return 0;
}

const char* status_name(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Failed: return "failed";
    case Status::Crashed: return "crashed";
    case Status::Timeout: return "timeout";
    case Status::Interrupted: return "interrupted";
    case Status::Oom: return "oom";
  }
  return "failed";
}

}  // namespace mh
