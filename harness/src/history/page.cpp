// The dashboard page (see page.h).
#include "history/page.h"

#include <filesystem>
#include <sstream>

#include "core/escape.h"
#include "core/metrics.h"
#include "sys/output_file.h"

namespace mh::history {

namespace {

Json point_json(const Point& p) {
  const auto s = compare::censored_side_stats(p.values);
  return Json{{"revision", p.revision},
              {"position", p.position ? Json(*p.position) : Json(nullptr)},
              {"runs", p.values.size()},
              {"median", s.median},
              {"min", s.min},
              {"max", s.max},
              {"censored", s.above.size()}};
}

Json step_json(const Step& st, const std::map<size_t, std::string>& acknowledged) {
  auto ack = acknowledged.find(st.index);
  return Json{{"index", st.index},
              {"revision", st.revision},
              {"verdict", compare::verdict_name(st.verdict)},
              {"change", st.change},
              {"before", st.before},
              {"after", st.after},
              {"ci", {st.ci.lo, st.ci.hi}},
              {"p", st.p},
              {"acknowledged", ack == acknowledged.end() ? Json(nullptr) : Json(ack->second)}};
}

// The page's script: builds the steps list and one chart per series from the
// inlined data, with textContent only; the body's data-rendered says it ran.
constexpr const char* kScript = R"js(
const data = JSON.parse(document.getElementById('history-data').textContent);
function el(tag, text) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  return e;
}
function pct(x) { return (x >= 0 ? '+' : '') + (100 * x).toFixed(1) + '%'; }
const list = document.getElementById('steps'), charts = document.getElementById('charts');
let steps = 0;
data.series.forEach((s, i) => {
  const name = s.workload + ' · ' + s.allocator + ' · ' + s.machine + ': ' + s.metric;
  s.steps.forEach(st => {
    const li = el('li', st.verdict + ' ' + pct(st.change) + ' ' + name + ' at ' + st.revision.slice(0, 12) +
                        ' (p ' + st.p.toPrecision(2) + ')' +
                        (st.acknowledged === null ? '' : ' acknowledged: ' + st.acknowledged));
    li.className = st.verdict + (st.acknowledged === null ? '' : ' acknowledged');
    list.appendChild(li);
    steps++;
  });
  const box = el('section');
  box.appendChild(el('h3', name + (s.unit ? ' (' + s.unit + ')' : '')));
  box.appendChild(el('p', s.workload + ' ' + s.params));
  const canvas = el('canvas');
  canvas.id = 'chart-' + i;
  box.appendChild(canvas);
  charts.appendChild(box);
  const at = new Set(s.steps.map(st => st.index));
  const median = s.points.map(p => p.median);
  new Chart(canvas, {
    type: 'line',
    data: {
      labels: s.points.map(p => p.revision.slice(0, 10)),
      datasets: [
        {label: 'max', data: s.points.map(p => p.max), pointRadius: 0, borderWidth: 0, fill: '+1',
         backgroundColor: 'rgba(54, 162, 235, 0.2)'},
        {label: 'min', data: s.points.map(p => p.min), pointRadius: 0, borderWidth: 0, fill: false},
        {label: 'median', data: median, borderColor: 'rgb(54, 162, 235)',
         pointStyle: s.points.map((p, k) => at.has(k) ? 'triangle' : 'circle'),
         pointRadius: s.points.map((p, k) => at.has(k) ? 8 : 3),
         pointBackgroundColor: s.points.map((p, k) => at.has(k) ? 'rgb(220, 50, 50)' : 'rgb(54, 162, 235)')},
      ],
    },
    options: {
      animation: false,
      aspectRatio: 3,
      plugins: {tooltip: {callbacks: {afterLabel: c => {
        const p = s.points[c.dataIndex];
        return p.runs + ' runs' + (p.censored ? ', ' + p.censored + ' censored' : '');
      }}}},
    },
  });
});
if (steps === 0) list.appendChild(el('li', 'no steps'));
document.getElementById('status').textContent = data.series.length + ' charts, ' + steps + ' steps';
document.body.dataset.rendered = String(data.series.length);
)js";

}  // namespace

Json page_data(const std::vector<PageSeries>& series) {
  Json out = Json::array();
  for (const auto& ps : series) {
    const Series& s = ps.series;
    Json points = Json::array(), steps = Json::array();
    for (const auto& p : s.points) points.push_back(point_json(p));
    for (const auto& st : ps.steps) steps.push_back(step_json(st, ps.acknowledged));
    out.push_back(Json{{"workload", s.workload},
                       {"params", s.params},
                       {"allocator", s.allocator},
                       {"machine", s.machine},
                       {"metric", s.metric},
                       {"unit", metric_info(s.metric, s.workload, {}).unit},
                       {"points", points},
                       {"steps", steps}});
  }
  return Json{{"series", out}};
}

std::string page_html(const Json& data) {
  std::ostringstream html;
  html << "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<title>memharness history</title>\n<script src=\"chart.min.js\"></script>\n"
          "<style>body{font-family:sans-serif;max-width:70em;margin:auto}section{margin:2em 0}"
          "li.regression{color:#b00}li.acknowledged{color:#666}</style>\n</head>\n<body>\n"
          "<h1>memharness history</h1>\n<p id=\"status\">the page's script did not run</p>\n"
          "<h2>Steps</h2>\n<ul id=\"steps\"></ul>\n<h2>Series</h2>\n<div id=\"charts\"></div>\n"
          "<script type=\"application/json\" id=\"history-data\">"
       << escape::script_json(data.dump()) << "</script>\n<script>" << kScript << "</script>\n</body>\n</html>\n";
  return html.str();
}

std::string write_page(const std::string& dir, const std::vector<PageSeries>& series) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(kChartJs, ec))
    return std::string("Chart.js is not installed (") + kChartJs + "): apt-get install libjs-chart.js";
  fs::create_directories(dir, ec);
  if (ec) return dir + ": " + ec.message();
  fs::copy_file(kChartJs, fs::path(dir) / "chart.min.js", fs::copy_options::overwrite_existing, ec);
  if (ec) return dir + "/chart.min.js: " + ec.message();
  return output_file::write_atomic((fs::path(dir) / "index.html").string(), page_html(page_data(series)));
}

}  // namespace mh::history
