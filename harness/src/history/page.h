// The dashboard: a static page (index.html, with Chart.js copied beside it)
// that opens from file:// and on any static host. Its data is inlined as a
// JSON script element and every string from the store is inserted as text,
// never as HTML. Main thread only.
#pragma once

#include <cstdint>
#include <map>
#include <set>
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

// The traces index.html carries itself: of each series' last kInlineRevisions
// revisions and of the revisions either side of its steps. The other runs'
// traces go into traces/traces-K.js, kChunkRuns runs each, which the page loads
// with a script element when a click needs one (Chromium refuses fetch() of
// files): the page's size does not grow with every run.
inline constexpr size_t kInlineRevisions = 20;
inline constexpr size_t kChunkRuns = 200;

// The store's ids of the runs the charts show, each once: the runs whose
// traces the page inlines (a click on a point plots its runs' RSS over time).
std::vector<int64_t> shown_runs(const std::vector<PageSeries>& series);

// The ids of the runs whose traces index.html inlines.
std::set<int64_t> inlined_runs(const std::vector<PageSeries>& series);

// What the page shows, as the page's script reads it, with the traces of
// `inlined` runs and the first and last id of each chunk file's runs.
Json page_data(const std::vector<PageSeries>& series, const std::vector<TracedRun>& inlined,
               const std::vector<std::pair<int64_t, int64_t>>& chunks = {});
// The page over `data`.
std::string page_html(const Json& data);
// Writes DIR/index.html, DIR/chart.min.js and DIR/traces/traces-K.js (the
// traces of `runs`, the runs the charts show, not inlined), each as
// output_file writes a report (checked first, then a new file renamed over
// it: a link or a device planted at a name is refused, never followed); ""
// or the error.
std::string write_page(const std::string& dir, const std::vector<PageSeries>& series,
                       const std::vector<TracedRun>& runs);

}  // namespace mh::history
