// Chrome trace event JSON of a report (see trace_export.h). The format is
// Google's "Trace Event Format" document: counters with numeric args, one
// track per arg, named by the event's name and the arg's key.
#include "report/trace_export.h"

#include <fmt/format.h>

#include "core/record.h"
#include "core/units.h"

namespace mh {

namespace {

// A counter track: the event's name, its arg's key (the unit Perfetto shows
// after the name), the sampled column and how a value is shown.
struct Track {
  const char* name;
  const char* unit;
  const char* column;
  double (*value)(const Sample&);
};

double mb_of_kb(int64_t kb) { return double(kb) * display_unit("KiB").scale; }

const Track kTracks[] = {
    {"RSS", "MB", "rss_kb", [](const Sample& s) { return mb_of_kb(s.rss_kb); }},
    {"anonymous RSS", "MB", "anon_kb", [](const Sample& s) { return mb_of_kb(s.anon_kb); }},
    {"live heap", "MB", "heap_live_kb", [](const Sample& s) { return mb_of_kb(s.heap_live_kb); }},
    {"minor faults", "so far", "minflt", [](const Sample& s) { return double(s.minflt); }},
    {"major faults", "so far", "majflt", [](const Sample& s) { return double(s.majflt); }},
};

// The live heap's track only where the ledger ran: some sample has it.
bool has_column(const RunRecord& r, const Track& t) {
  if (std::string_view(t.column) != "heap_live_kb") return true;
  for (const auto& s : r.samples)
    if (!cell_missing(s, t.column) && s.heap_live_kb > 0) return true;
  return false;
}

std::string process_name(const RunRecord& r) {
  std::string name = fmt::format("{} {} run {}", r.workload, r.allocator.name, r.repetition);
  if (!r.role.empty()) name += fmt::format(" ({})", r.role);
  if (r.status != Status::Ok) name += fmt::format(" [{}]", status_name(r.status));
  return name;
}

Json metadata(int pid, const char* what, const Json& args) {
  return {{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", 0}, {"args", args}};
}

void add_counters(Json& events, const RunRecord& r, int pid) {
  for (const auto& t : kTracks) {
    if (!has_column(r, t)) continue;
    for (const auto& s : r.samples) {
      if (cell_missing(s, t.column)) continue;
      events.push_back({{"name", t.name},
                        {"ph", "C"},
                        {"ts", s.t_ms * 1000.0},
                        {"pid", pid},
                        {"tid", 0},
                        {"args", {{t.unit, t.value(s)}}}});
    }
  }
}

void add_marks(Json& events, const RunRecord& r, int pid) {
  for (const auto& m : r.marks) {
    Json args = Json::object();
    if (!cell_missing(m.sample, "rss_kb")) args["RSS MB"] = mb_of_kb(m.sample.rss_kb);
    events.push_back(
        {{"name", m.name}, {"ph", "i"}, {"s", "p"}, {"ts", m.t_ms * 1000.0}, {"pid", pid}, {"tid", 0}, {"args", args}});
  }
}

}  // namespace

std::string chrome_trace(const ReportData& report) {
  Json events = Json::array();
  int pid = 0;
  for (const auto& r : report.runs) {
    ++pid;
    events.push_back(metadata(pid, "process_name", {{"name", process_name(r)}}));
    events.push_back(metadata(pid, "process_sort_index", {{"sort_index", pid}}));
    events.push_back(metadata(pid, "thread_name", {{"name", "memory"}}));
    add_counters(events, r, pid);
    add_marks(events, r, pid);
  }
  Json doc = {{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ms"},
              {"otherData", {{"source", "memharness"}, {"units", "MB = 10^6 bytes; ts in microseconds since exec"}}}};
  return json_text(doc) + "\n";
}

}  // namespace mh
