// The dashboard: a static page (index.html, with Chart.js copied beside it)
// that opens from file:// and on any static host. Its data is inlined as a
// JSON script element and every string from the store is inserted as text,
// never as HTML. Main thread only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/record.h"
#include "history/steps.h"
#include "history/store.h"

namespace mh::history {

// Debian's libjs-chart.js; the page refers to it as chart.min.js.
inline constexpr const char* kChartJs = "/usr/share/javascript/chart.js/chart.min.js";
// What is read of it at most (Debian's is about 200 KB).
inline constexpr size_t kMaxChartJsBytes = size_t(16) << 20;

struct PageSeries {
  Series series;
  std::string title;  // as `history show` names the series; "" for workload and params
  std::vector<Step> steps;
  std::map<size_t, std::string> acknowledged;  // step index -> the reason
};

// The store's ids of the runs the charts show, each once: the runs whose
// traces the page inlines (a click on a point plots its runs' RSS over time).
std::vector<int64_t> shown_runs(const std::vector<PageSeries>& series);

// What the page shows, as the page's script reads it, with the traces of
// the runs the charts show (Store::traces of shown_runs).
Json page_data(const std::vector<PageSeries>& series, const std::vector<TracedRun>& runs);
// The page over `data`.
std::string page_html(const Json& data);
// Writes DIR/index.html and DIR/chart.min.js, each as output_file writes a
// report (checked first, then a new file renamed over it: a link or a device
// planted at either name is refused, never followed); "" or the error.
std::string write_page(const std::string& dir, const std::vector<PageSeries>& series,
                       const std::vector<TracedRun>& runs);

}  // namespace mh::history
