// Writing the journal of finished runs (see journal.h).
#include "report/journal.h"

#include <unistd.h>

#include "report/report_json.h"
#include "sys/output_file.h"

namespace mh {

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

std::string Journal::open(const std::string& report, const Json& context, const DeclaredMetrics& declared) {
  std::string error;
  fd_ = output_file::open_beside(report, ".journal-", path_, error);
  if (fd_ < 0) return "cannot keep the journal of the runs beside " + report + ": " + error;
  const Json header{{"schema", kJournalSchema},
                    {"report", report},
                    {"context", context},
                    {"metrics", metric_manifest({}, declared)}};
  return output_file::append_synced(fd_, json_text(header) + "\n", path_);
}

std::string Journal::add(const RunRecord& r) {
  return output_file::append_synced(fd_, json_text(run_to_json(r)) + "\n", path_);
}

void Journal::remove() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!path_.empty()) ::unlink(path_.c_str());
  path_.clear();
}

}  // namespace mh
