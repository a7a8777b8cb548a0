// libFuzzer target: any bytes as the journal of a plan in progress (the
// reader of report/journal.cpp's files, as --resume, compare and merge read
// them). The reader must end in a clean read or a clean error, and the runs
// it reads must be written as a report and read again.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "report/report_json.h"
#include "report/report_read.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string copy(reinterpret_cast<const char*>(data), size);
  std::FILE* f = fmemopen(copy.data(), copy.size(), "r");
  if (!f) std::abort();
  mh::ReportData head;
  std::vector<mh::RunRecord> runs;
  std::string error;
  const bool read = mh::read_journal_runs(f, "input", {}, head,
                                          [&](mh::RunRecord&& r) { runs.push_back(std::move(r)); }, error);
  std::fclose(f);
  if (!read) return error.empty() ? (std::abort(), 0) : 0;
  const std::string again = mh::dump_canonical(mh::make_report(head.context, runs, false));
  if (!mh::report_from_text(again, "written again", error)) std::abort();
  return 0;
}
