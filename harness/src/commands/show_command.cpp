// The show command: a report's table printed again, as the run printed it
// (or as its markdown or CSV export), from the runs the report holds. The
// workloads' headline figures come from the report's context, else from the
// installed workloads of that name.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "commands/commands.h"
#include "commands/pages.h"
#include "commands/resolve.h"
#include "inputs/workloads.h"
#include "report/heap_sites_table.h"
#include "report/report_read.h"
#include "report/summary_exports.h"
#include "report/summary_table.h"

namespace mh {

namespace {

constexpr const char* kWhoShow = "harness show";

}  // namespace

int show_command(const Options& o) {
  const std::string& path = o.inputs.at(0);
  if (std::FILE* f = std::fopen(path.c_str(), "rb")) std::fclose(f);
  else return bad_input(kWhoShow, fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  std::string error;
  auto report = read_report(path, error);
  if (!report) return bad_input(kWhoShow, error);
  if (auto err = check_reference(report->runs, o.table.reference); !err.empty())
    return bad_input(kWhoShow, fmt::format("{}: {}", path, err));
  const HeadlinesByWorkload headlines = report_headlines(*report);
  if (o.show_format == "markdown") {
    fmt::print("{}", summary_markdown(report->runs, headlines, o.table.reference));
  } else if (o.show_format == "csv") {
    fmt::print("{}", summary_csv(report->runs, declared_from_manifest(report->manifest, report->runs)));
  } else {
    fmt::print("{}{}", summary_table(report->runs, headlines, o.table), heap_sites_table(report->runs));
    if (!report->complete) fmt::print("the report is incomplete: runs of its plan are missing\n");
  }
  return 0;
}

}  // namespace mh
