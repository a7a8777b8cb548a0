// libFuzzer target: any bytes as a report. The reader must end in a clean read
// or a clean error (no crash, no sanitizer report), and a report it reads must
// be written and read again.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "report/report_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string error;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto report = mh::report_from_text(text, "input", error);
  if (!report) return error.empty() ? (std::abort(), 0) : 0;
  const std::string again = mh::dump_canonical(mh::make_report(report->context, report->runs, report->complete));
  if (!mh::report_from_text(again, "written again", error)) std::abort();
  return 0;
}
