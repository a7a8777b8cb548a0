// Reading reports and journals back (compare, merge, --resume) a run at a
// time: what the reader holds at once is one run's document, never the whole
// report's, however long the report. Main thread only (a journal's cut-off
// last line is a warning on standard error).
#pragma once

#include <cstdio>
#include <functional>
#include <optional>
#include <string>

#include "report/report_json.h"

namespace mh {

struct ReadSettings {
  // Each run's sampled series in full. Without, a run keeps only its last
  // sample: the metrics read back come from the report's figures, not from
  // the series (compare, unless --after measures the curves again).
  bool series = true;
};

// Reads a memharness.report/1 file, or the journal of an unfinished plan
// (journal.h; read as a report with "complete": false, a last line cut off by
// a crash ignored with a warning), handing each run to `each` in the report's
// order; `head` gets the rest (its runs stay empty). false with a message
// naming the file, the JSON path and what is wrong there otherwise
// ("r.json: runs[3].status: expected a string, found 3").
bool read_report_runs(const std::string& path, const ReadSettings& settings, ReportData& head,
                      const std::function<void(RunRecord&&)>& each, std::string& error);
// The journal reader alone, over a stream open at the journal's first line
// (what read_report_runs does with a journal), named `name` in errors.
bool read_journal_runs(std::FILE* f, const std::string& name, const ReadSettings& settings, ReportData& head,
                       const std::function<void(RunRecord&&)>& each, std::string& error);
// The same, the runs gathered into the ReportData.
std::optional<ReportData> read_report(const std::string& path, std::string& error, const ReadSettings& settings = {});

// The report a file given to --resume stands for: for a journal, the one its
// own name says (REPORT.journal-XXXXXX), which its header must name as well;
// any other file is itself. "" with `error` for a journal whose name says no
// report or whose header names another file.
std::string resumed_report(const std::string& path, std::string& error);

}  // namespace mh
