// The sampled column list and status names (see record.h).
#include "core/record.h"

namespace mh {

const std::vector<SampleColumn>& sample_columns() {
  static const std::vector<SampleColumn> cols = {
      {"t_ms", "ms", "time since exec", [](const Sample& s) { return s.t_ms; }},
      {"rss_kb", "KiB", "RSS", [](const Sample& s) { return double(s.rss_kb); }},
      {"anon_kb", "KiB", "anonymous memory", [](const Sample& s) { return double(s.anon_kb); }},
      {"file_kb", "KiB", "file-backed memory", [](const Sample& s) { return double(s.file_kb); }},
      {"shmem_kb", "KiB", "shared memory", [](const Sample& s) { return double(s.shmem_kb); }},
      {"anon_huge_kb", "KiB", "anonymous huge pages", [](const Sample& s) { return double(s.anon_huge_kb); }},
      {"minflt", "faults", "minor faults (cumulative)", [](const Sample& s) { return double(s.minflt); }},
      {"majflt", "faults", "major faults (cumulative)", [](const Sample& s) { return double(s.majflt); }},
      {"utime_ms", "ms", "user CPU (cumulative)", [](const Sample& s) { return s.utime_ms; }},
      {"stime_ms", "ms", "system CPU (cumulative)", [](const Sample& s) { return s.stime_ms; }},
      {"threads", "count", "threads", [](const Sample& s) { return double(s.threads); }},
  };
  return cols;
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
