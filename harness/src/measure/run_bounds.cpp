// The bounds of what a run keeps of its program's sends (see run_bounds.h).
#include "measure/run_bounds.h"

#include <algorithm>

#include <fmt/format.h>

namespace mh {

namespace {

// What the runs of a plan may add to its report from what their programs
// send, at most: half of the 1 GiB a report's reader takes (kFileLimits), the
// other half left to the sampled series and the rest of each run.
constexpr double kReportProgramBytes = double(size_t(512) << 20);
// A kept mark in the report besides its name (its sample, time, VmHWM), and a
// kept frame of a call site (its object's path, offset and, once named, its
// function, file and line), at most as the bounds count them.
constexpr double kMarkBytes = 1024, kFrameBytes = 512;
// Below these a plan of many runs does not go: a built-in workload's own marks
// and figures fit in them.
constexpr size_t kMinMarks = 16, kMinMessageBytes = 16u << 10;

double run_bytes_at_most(const RunBounds& b) {
  return double(b.marks) * (double(b.mark_name_bytes) + kMarkBytes) + double(b.message_bytes) +
         double(b.site_frames) * kFrameBytes;
}

// What a message replaces when it comes again ("" for one that adds to the
// record each time, or holds nothing that grows: a mark, the VmHWM).
std::string message_key(const Json& m, size_t errors) {
  auto name = [&](const Json& v) { return v.is_string() ? v.get<std::string>() : json_text(v); };
  if (m.contains("metric")) return "metric:" + name(m["metric"]);
  if (m.contains("allocator")) return "allocator";
  if (m.contains("allocator_stats")) return "allocator_stats";
  if (m.contains("data")) {
    const Json& d = m["data"];
    return "data:" + (d.is_object() && d.contains("key") ? name(d["key"]) : std::string());
  }
  if (m.contains("error")) return fmt::format("error#{}", errors);
  return "";
}

}  // namespace

RunBounds bounds_for_plan(size_t runs) {
  RunBounds b;
  const double share = kReportProgramBytes / double(std::max<size_t>(runs, 1));
  const double scale = std::min(1.0, share / run_bytes_at_most(b));
  if (scale >= 1) return b;
  b.marks = std::max(kMinMarks, size_t(double(b.marks) * scale));
  b.message_bytes = std::max(kMinMessageBytes, size_t(double(b.message_bytes) * scale));
  b.site_frames = size_t(double(b.site_frames) * scale);
  return b;
}

void RunBudget::drop(const char* what, const std::string& why) {
  Dropped& d = rec_.dropped[what];
  ++d.count;
  // The reasons are few and fixed: each is said once.
  if (d.why.find(why) == std::string::npos) d.why += (d.why.empty() ? "" : "; ") + why;
}

bool RunBudget::admit_mark(const std::string& name) {
  if (name.size() > bounds_.mark_name_bytes) {
    drop("marks", fmt::format("a name longer than {} bytes", bounds_.mark_name_bytes));
    return false;
  }
  if (marks_ >= bounds_.marks) {
    drop("marks", fmt::format("past the {} marks a run keeps", bounds_.marks));
    return false;
  }
  ++marks_;
  return true;
}

bool RunBudget::admit_message(const Json& message, size_t bytes) {
  const std::string key = message_key(message, errors_++);
  if (key.empty()) return true;
  auto it = held_.find(key);
  const size_t before = it == held_.end() ? 0 : it->second;
  // The first error is kept whatever the budget: it is what fails the run.
  const bool first_error = key.starts_with("error#") && rec_.protocol_errors.empty();
  if (message_bytes_ - before + bytes > bounds_.message_bytes && !first_error) {
    drop("messages", fmt::format("past the {} bytes of metrics, data, allocator statistics and errors a run keeps",
                                 bounds_.message_bytes));
    return false;
  }
  message_bytes_ = message_bytes_ - before + bytes;
  held_[key] = bytes;
  return true;
}

bool RunBudget::admit_sites(size_t frames) {
  if (frames_ + frames > bounds_.site_frames) {
    drop("heap_sites", fmt::format("past the {} frames of call sites a run keeps at its marks", bounds_.site_frames));
    return false;
  }
  frames_ += frames;
  return true;
}

void RunBudget::refuse_sites(const std::string& why) { drop("heap_sites", why); }

}  // namespace mh
