// The export command: a view of a report written on its own, read back through
// the checking reader. --folded: the live heap's call sites of one run at one
// mark (or its peak) as folded stacks (core/heap_sites.h), or their change
// between two marks as differential folded stacks (core/mark_diff.h); --pprof:
// the same sites as a gzipped pprof profile (report/pprof_export.h); --trace:
// every run's memory over time as Chrome trace event JSON (report/trace_export.h).
#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "commands/commands.h"
#include "core/heap_sites.h"
#include "core/mark_diff.h"
#include "report/pprof_export.h"
#include "report/report_json.h"
#include "report/trace_export.h"
#include "sys/output_file.h"

namespace mh {

namespace {

constexpr const char* kWhoExport = "harness export";

std::string joined_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out.empty() ? "none" : out;
}

// The first ok run (else any) of the allocator asked (else of any) that has call sites.
const RunRecord* run_with_sites(const ReportData& report, const std::string& allocator, std::string& error) {
  std::vector<std::string> with_sites;
  for (bool ok_only : {true, false})
    for (const auto& r : report.runs) {
      if ((ok_only && r.status != Status::Ok) || !peak_sites(r)) continue;
      if (allocator.empty() || r.allocator.name == allocator) return &r;
      if (!ok_only) with_sites.push_back(r.allocator.name);
    }
  error = allocator.empty() ? "the report has no call sites (run with --ledger --heap-sample SIZE)"
                            : "--allocator " + allocator + " has no run with call sites in the report; those with: " +
                                  joined_names(with_sites);
  return nullptr;
}

std::string unknown_mark(const RunRecord& r, const std::string& mark) {
  std::vector<std::string> marks;
  for (const auto& m : r.marks)
    if (m.heap_sites) marks.push_back(m.name);
  return fmt::format("--mark {}: no such mark with call sites in run {} of {}; its marks with call sites: {}", mark,
                     r.repetition, r.allocator.name, joined_names(marks));
}

// The bytes of the export asked for, or nullopt with `error` (bad input).
std::optional<std::string> export_bytes(const ExportOptions& e, const std::string& report_path, std::string& error) {
  auto report = read_report_document(report_path, error);
  if (!report) return std::nullopt;
  if (!e.trace.empty()) return chrome_trace(*report);
  const RunRecord* run = run_with_sites(*report, e.allocator, error);
  if (!run) {
    error = report_path + ": " + error;
    return std::nullopt;
  }
  if (!e.from.empty()) {
    if (!e.pprof.empty()) {
      error = "--from and --to go with --folded (a pprof profile holds one snapshot: --mark NAME or --peak)";
      return std::nullopt;
    }
    const auto diff = mark_diff(*run, e.from, e.to, error);
    if (!diff) return std::nullopt;
    fmt::print(stderr, "{}", mark_diff_table(*diff));
    return folded_diff(*diff);
  }
  const HeapSites* sites = sites_at(*run, e.mark);
  if (!sites) {
    error = unknown_mark(*run, e.mark);
    return std::nullopt;
  }
  if (e.pprof.empty()) return folded_stacks(*sites);
  std::string where = e.mark;
  if (where.empty()) peak_sites(*run, &where);
  auto profile = pprof_profile(*run, *sites, where, error);
  if (!error.empty()) return std::nullopt;
  return profile;
}

}  // namespace

int export_command(const Options& o) {
  const ExportOptions& e = o.export_options;
  const std::string out = o.out.empty() ? output_file::kStdout : o.out;
  if (!e.pprof.empty() && out == output_file::kStdout)
    return bad_input(kWhoExport, "--pprof writes a gzipped binary file: give it with -o FILE (e.g. -o heap.pb.gz)");
  if (out != output_file::kStdout)
    if (auto err = output_file::check_target(out); !err.empty()) return bad_input(kWhoExport, "--out: " + err);
  const std::string& report_path = !e.folded.empty() ? e.folded : !e.trace.empty() ? e.trace : e.pprof;
  std::string error;
  auto text = export_bytes(e, report_path, error);
  if (!text) return bad_input(kWhoExport, error);
  if (out == output_file::kStdout) {
    std::fwrite(text->data(), 1, text->size(), stdout);
    return 0;
  }
  if (auto err = output_file::write_atomic(out, *text); !err.empty()) {
    fmt::print(stderr, "{}: {}\n", kWhoExport, err);
    return 1;
  }
  return 0;
}

}  // namespace mh
