// The journal of a plan in progress: a file beside the report with one line
// per finished run, synced before the next run starts, from which the report is
// written once at the end (schema memharness.journal/1, docs/reports.md).
// Main thread only.
#pragma once

#include <string>

#include "core/metrics.h"
#include "core/record.h"

namespace mh {

inline constexpr const char* kJournalSchema = "memharness.journal/1";

// Its first line holds what the report's top will hold (the schema, the report
// it is for, the context, the manifest of the declared metrics); each further
// line is one run as the report writes it, on one line. A harness that is
// killed or crashes leaves it behind, readable as an incomplete report by
// --resume, compare and merge (report_read.h).
class Journal {
 public:
  Journal() = default;
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  ~Journal();  // closes the file; never removes it

  // Creates REPORT.journal-<random> beside `report` (a name nobody can plant
  // ahead) with its header line. "" or the error.
  std::string open(const std::string& report, const Json& context, const DeclaredMetrics& declared);
  // Appends the run's line and syncs it. "" or the error.
  std::string add(const RunRecord& r);
  // Once the report holds every run of it.
  void remove();
  const std::string& path() const { return path_; }
  bool is_open() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace mh
