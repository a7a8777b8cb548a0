// The progress line (see progress.h).
#include "report/progress.h"

#include <fmt/format.h>

#include <cstdio>

#include "core/escape.h"

namespace mh {

void Progress::starting(size_t index, const std::string& workload, const std::string& allocator, int repetition) {
  index_ = index;
  if (!enabled_) return;
  current_ = fmt::format("[{}/{}] {} under {}, repetition {}", index + 1, total_, escape::terminal(workload),
                         escape::terminal(allocator), repetition);
  fmt::print(stderr, "\r\033[K{} ...", current_);
  std::fflush(stderr);
}

void Progress::running(double elapsed_ms, const std::string& last_mark) {
  if (!enabled_) return;
  fmt::print(stderr, "\r\033[K{}: {:.1f} s{}", current_, elapsed_ms / 1000,
             last_mark.empty() ? "" : fmt::format(", past mark {}", escape::terminal(last_mark)));
  std::fflush(stderr);
}

void Progress::finished(const RunRecord& r) {
  if (!enabled_) return;
  fmt::print(stderr, "\r\033[K[{}/{}] {} under {}, repetition {}: {} ({:.0f} ms, peak {:.1f} MB)", index_ + 1, total_,
             escape::terminal(r.workload), escape::terminal(r.allocator.name), r.repetition, status_name(r.status), r.wall_ms, r.peak_rss_kb * 1024.0 / 1e6);
  std::fflush(stderr);
}

void Progress::clear() {
  if (enabled_) fmt::print(stderr, "\r\033[K");
}

}  // namespace mh
