// The dashboard: a static page (index.html, with Chart.js copied beside it)
// that opens from file:// and on any static host. Its data is inlined as a
// JSON script element and every string from the store is inserted as text,
// never as HTML. Main thread only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/record.h"
#include "history/steps.h"
#include "history/store.h"

namespace mh::history {

// Debian's libjs-chart.js; the page refers to it as chart.min.js.
inline constexpr const char* kChartJs = "/usr/share/javascript/chart.js/chart.min.js";

struct PageSeries {
  Series series;
  std::vector<Step> steps;
  std::map<size_t, std::string> acknowledged;  // step index -> the reason
};

// What the page shows, as the page's script reads it.
Json page_data(const std::vector<PageSeries>& series);
// The page over `data`.
std::string page_html(const Json& data);
// Writes DIR/index.html and DIR/chart.min.js; "" or the error.
std::string write_page(const std::string& dir, const std::vector<PageSeries>& series);

}  // namespace mh::history
