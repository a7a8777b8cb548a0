// The interactive page of reports (`harness page`, `compare --page`): one
// index.html that opens from file:// with the libraries it uses copied beside
// it, never fetched. Its data is inlined as a JSON script element and every
// string from a report is inserted by the page's script as text. Main thread only.
#pragma once

#include <string>
#include <vector>

#include "core/record.h"
#include "report/summary_table.h"

namespace mh::page {

// The libraries a page uses, as scripts/lib/page-libs.sh leaves them in its
// folder (and Debian's Chart.js 3.9), each copied beside index.html.
struct PageLib {
  const char* file;    // its name beside the page
  const char* origin;  // where it comes from, for the error when it is missing
};
const std::vector<PageLib>& page_libs();
inline constexpr const char* kDebianChartJs = "/usr/share/javascript/chart.js/chart.min.js";

// One report given to the page, named as the user gave it.
struct PageReport {
  std::string name;
  std::vector<RunRecord> runs;
  HeadlinesByWorkload headlines;
};

// How the diff flame graph tells a change from noise: a frame's own bytes
// changed by more than k standard errors of the difference.
inline constexpr double kDefaultDiffK = 3.0;

// What the page shows, as its script reads it: per run the memory over time
// in MB against seconds, its marks, its heap sites per mark and at the peak;
// per report the run table as `harness show` draws it. `comparison` is a
// comparison's JSON (compare_report.h), null for reports.
Json page_data(const std::vector<PageReport>& reports, double diff_k, const Json& comparison = nullptr);
// The page over `data`.
std::string page_html(const Json& data);
// Writes DIR/index.html and the libraries beside it, from `libs_dir` (the
// folder page-libs.sh fills) and Debian's Chart.js; checked first, so a
// page is written whole or not at all; "" or the error.
std::string write_page(const std::string& dir, const std::string& libs_dir, const Json& data);

}  // namespace mh::page
