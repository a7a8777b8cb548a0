// The canonical JSON report (schema memharness.report/1, results/SCHEMA.md):
// building it from run records, writing it atomically, reading it back.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/metrics.h"
#include "core/record.h"
#include "sys/json_read.h"

namespace mh {

inline constexpr const char* kReportSchema = "memharness.report/1";

Json run_to_json(const RunRecord& r);
// The inverse of run_to_json, for reports read back (compare, merge): every
// field checked (json_read.h); throws JsonError naming the first bad one.
RunRecord run_from_json(const JsonIn& j);
// A run's sampled columns as read apart from its document (report_read.cpp
// parses them without making a JSON value of every cell): each column's cells
// in order, none for a null one.
using SampleCells = std::map<std::string, std::vector<std::optional<double>>>;
// Fills the samples of `r` (read by run_from_json from its document, with
// those columns empty) from `cells`, checked as run_from_json checks them;
// false when any is refused (the whole-document reader then names it).
bool samples_from_cells(const SampleCells& cells, RunRecord& r);
// complete: false while runs of the plan are still to come (or never came:
// the harness was interrupted).
// Its "metrics" manifest (metrics.h) names every metric's unit and direction,
// the declared ones of the workloads as well.
Json make_report(const Json& context, const std::vector<RunRecord>& runs, bool complete = true,
                 const DeclaredMetrics& declared = {});

// The report's text: the same as dump_canonical(make_report(context, runs,
// complete, declared)), made a run at a time, so that what it holds besides
// the text is one run's document, not the whole report's.
std::string report_text(const Json& context, const std::vector<RunRecord>& runs, bool complete,
                        const DeclaredMetrics& declared = {});

struct ReportData {
  Json context;
  Json manifest;         // "metrics"; null in reports from before it existed
  bool complete = true;  // reports from before "complete" existed were complete
  std::vector<RunRecord> runs;
};
// Reads a memharness.report/1 file as one document (report_read.h reads it a
// run at a time, and this way only to name what is wrong); nullopt with a
// message naming the file, the JSON path and what is wrong there otherwise
// ("r.json: runs[3].status: expected a string, found 3").
std::optional<ReportData> read_report_document(const std::string& path, std::string& error);
// The top of a report, all but its runs (which stay empty), checked the same
// way; a journal's header (journal.h) is read as one of its own schema.
ReportData report_head_from(const JsonIn& j, const char* expected_schema = kReportSchema);
// The same for a report's text, named `name` in errors.
std::optional<ReportData> report_from_text(std::string_view text, const std::string& name, std::string& error);

// Deterministic text: objects indented, arrays of scalars on one line.
std::string dump_canonical(const Json& j);

}  // namespace mh
