// The page command: reports read whole and shown on one interactive page
// (report/page.h), and what it shares with compare --page and show (pages.h).
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>

#include "commands/commands.h"
#include "commands/pages.h"
#include "commands/resolve.h"
#include "inputs/workloads.h"

namespace mh {

namespace {
constexpr const char* kWhoPage = "harness page";
}  // namespace

std::string page_libs_dir(const Layout& l) {
  if (const char* dir = std::getenv("MEMHARNESS_PAGE_LIBS"); dir && *dir) return dir;
  namespace fs = std::filesystem;
  const fs::path prefix = fs::path(l.libexec).parent_path().parent_path();
  std::error_code ec;
  for (const fs::path& dir : {prefix / "page-libs", fs::path(l.share) / "page-libs"})
    if (fs::is_directory(dir, ec)) return dir.string();
  return (prefix / "page-libs").string();
}

std::string write_runs_page(const std::string& dir, const std::string& name, const std::vector<RunRecord>& runs,
                            double diff_k, const Json& comparison) {
  ReportData report;
  report.context = Json::object();
  report.runs = runs;
  std::vector<page::PageReport> reports{{name, runs, report_headlines(report)}};
  return page::write_page(dir, page_libs_dir(find_layout()), page::page_data(reports, diff_k, comparison));
}

int page_command(const Options& o) {
  std::vector<page::PageReport> reports;
  for (const auto& path : o.inputs) {
    std::string error;
    auto report = read_report(path, error);
    if (!report) return bad_input(kWhoPage, error);
    HeadlinesByWorkload headlines = report_headlines(*report);
    reports.push_back({path, std::move(report->runs), std::move(headlines)});
  }
  const std::string libs = page_libs_dir(find_layout());
  if (auto e = page::write_page(o.page, libs, page::page_data(reports, o.diff_k)); !e.empty())
    return bad_input(kWhoPage, e);
  fmt::print("page: {}\n", (std::filesystem::path(o.page) / "index.html").string());
  return 0;
}

}  // namespace mh
