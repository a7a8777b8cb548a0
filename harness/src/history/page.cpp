// The dashboard page (see page.h).
#include "history/page.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "core/escape.h"
#include "core/metrics.h"
#include "core/units.h"
#include "sys/input_file.h"
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
              {"censored", s.above.size()},
              {"run_ids", p.runs}};
}

// A run's trace as the page's script reads it: columns of times (ms), RSS and
// anonymous RSS (kB, null where not read; anon null when never read), marks
// as [t_ms, name].
Json trace_json(const TracedRun& r) {
  Json t = Json::array(), rss = Json::array(), anon = Json::array(), marks = Json::array();
  bool any_anon = false;
  const auto cell = [](const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); };
  for (const auto& p : r.trace.points) {
    t.push_back(p.t_ms);
    rss.push_back(cell(p.rss_kb));
    anon.push_back(cell(p.anon_kb));
    any_anon = any_anon || p.anon_kb.has_value();
  }
  for (const auto& m : r.trace.marks) marks.push_back(Json{m.t_ms, m.name});
  return Json{{"role", r.role}, {"repetition", r.repetition}, {"t", t},
              {"rss", rss},       {"anon", any_anon ? anon : Json(nullptr)}, {"marks", marks}};
}

Json page_step_json(const Step& st, const std::map<size_t, std::string>& acknowledged) {
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
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}
)js"
// The panel a click on a point opens under its chart: the RSS (solid) and
// anonymous RSS (dashed) of each of the revision's runs against seconds since
// the run's start, its marks as vertical lines named on the canvas.
R"js(
const palette = ['rgb(54, 162, 235)', 'rgb(220, 50, 50)', 'rgb(40, 160, 90)', 'rgb(240, 140, 30)',
                 'rgb(150, 90, 200)', 'rgb(120, 120, 120)'];
const panel = document.getElementById('run-panel');
function markLines(marks) {
  return {id: 'markLines', afterDatasetsDraw(chart) {
    const ctx = chart.ctx, area = chart.chartArea, x = chart.scales.x;
    const named = new Set();
    ctx.save();
    ctx.font = '11px sans-serif';
    marks.forEach(m => {
      const px = x.getPixelForValue(m.x);
      if (px < area.left || px > area.right) return;
      ctx.strokeStyle = ctx.fillStyle = m.colour;
      ctx.setLineDash([2, 3]);
      ctx.beginPath();
      ctx.moveTo(px, area.top);
      ctx.lineTo(px, area.bottom);
      ctx.stroke();
      if (named.has(m.name)) return;  // the same mark of the other runs: named once
      named.add(m.name);
      ctx.save();
      ctx.translate(px + 3, area.top + 2);
      ctx.rotate(Math.PI / 2);
      ctx.fillText(m.name, 0, 0);
      ctx.restore();
    });
    ctx.restore();
  }};
}
// Traces not inlined are in traces/traces-K.js, each calling historyTraces.
window.historyTraces = (k, runs) => { Object.assign(data.runs, runs); };
function chunkOf(id) { return data.chunks.findIndex(c => id >= c[0] && id <= c[1]); }
function withTraces(ids, then) {
  const wanted = [...new Set(ids.filter(id => !(id in data.runs)).map(chunkOf).filter(k => k >= 0))];
  let left = wanted.length;
  if (left === 0) return then();
  wanted.forEach(k => {
    const script = document.createElement('script');
    script.src = 'traces/traces-' + k + '.js';
    script.onload = script.onerror = () => { if (--left === 0) then(); };
    document.head.appendChild(script);
  });
}
function runLines(p) {
  const datasets = [], marks = [], notes = [];
  p.run_ids.forEach((id, n) => {
    const r = data.runs[id], colour = palette[n % palette.length];
    if (r === undefined) {
      notes.push('run ' + (n + 1) + ': its trace could not be loaded from traces/ (chunk ' + chunkOf(id) + ')');
      return;
    }
    const name = 'run ' + (n + 1) + (r.role ? ' ' + r.role : '') + ' (repetition ' + r.repetition + ')';
    if (r.t.length === 0) {
      notes.push(name + ': no series stored for this run');
      return;
    }
    // kB as read from /proc to MB (10^6 bytes), the unit of every table.
    const line = ys => r.t.map((t, j) => ({x: t / 1000, y: ys[j] === null ? null : ys[j] * 1.024e-3}));
    datasets.push({label: name + ' RSS', kind: 'rss', data: line(r.rss), borderColor: colour,
                   backgroundColor: colour, borderWidth: 1.5, pointRadius: 0});
    if (r.anon !== null)
      datasets.push({label: name + ' anon', kind: 'anon', data: line(r.anon), borderColor: colour,
                     backgroundColor: colour, borderWidth: 1, borderDash: [5, 3], pointRadius: 0});
    r.marks.forEach(([t, mark]) => marks.push({x: t / 1000, name: mark, colour}));
    const listed = r.marks.map(([t, mark]) => mark + ' ' + (t / 1000).toFixed(3) + ' s').join(', ');
    notes.push(name + (r.marks.length ? ' marks: ' + listed : ': no marks'));
  });
  return {datasets, marks, notes};
}
function showRuns(s, k, box) {
  const p = s.points[k], lines = runLines(p);
  if (panel.chart) panel.chart.destroy();
  panel.chart = null;
  panel.replaceChildren();
  box.appendChild(panel);
  panel.hidden = false;
  panel.dataset.revision = p.revision;
  panel.appendChild(el('h4', s.title + ' · ' + s.allocator + ' · ' + s.machine + ' at ' + p.revision +
                             ': RSS of ' + p.run_ids.length + ' runs'));
  const close = el('button', 'close');
  close.onclick = () => { panel.hidden = true; };
  panel.appendChild(close);
  const notes = el('ul');
  lines.notes.forEach(n => notes.appendChild(el('li', n)));
  panel.appendChild(notes);
  if (lines.datasets.length > 0) plotRuns(lines, notes);
  panel.scrollIntoView({block: 'nearest'});
}
function plotRuns(lines, notes) {
  const canvas = el('canvas');
  canvas.id = 'run-chart';
  panel.insertBefore(canvas, notes);
  panel.chart = new Chart(canvas, {
    type: 'line',
    data: {datasets: lines.datasets},
    options: {
      animation: false, aspectRatio: 3, spanGaps: true,
      scales: {x: {type: 'linear', title: {display: true, text: 's since the run started'}},
               y: {title: {display: true, text: 'MB'}}},
    },
    plugins: [markLines(lines.marks)],
  });
}
function pct(x) { return (x >= 0 ? '+' : '') + (100 * x).toFixed(1) + '%'; }
// A revision's commit page (--repo-url URL: URL/commit/SHA) for a revision
// that is a commit (it has a first-parent position); null otherwise.
function commitLink(p) {
  if (!data.repo_url || p.position === null) return null;
  const a = el('a', p.revision.slice(0, 12));
  a.href = data.repo_url.replace(/\/+$/, '') + '/commit/' + encodeURIComponent(p.revision);
  a.className = 'commit';
  return a;
}
const list = document.getElementById('steps'), charts = document.getElementById('charts');
const keys = ['title', 'allocator', 'metric', 'machine'];
const filters = {};
function applyFilters() {
  let shown = 0;
  data.series.forEach((s, i) => {
    const on = keys.every(k => filters[k].value === '' || filters[k].value === s[k]);
    document.getElementById('series-' + i).hidden = !on;
    shown += on;
  });
  document.getElementById('shown').textContent = shown + ' of ' + data.series.length + ' charts shown';
}
keys.forEach(k => {
  const label = el('label', (k === 'title' ? 'workload' : k) + ' ');
  const select = el('select');
  select.id = 'select-' + k;
  select.appendChild(el('option', 'all'));
  select.firstChild.value = '';
  [...new Set(data.series.map(s => s[k]))].sort().forEach(v => { const o = el('option', v); o.value = v; select.appendChild(o); });
  select.onchange = applyFilters;
  label.appendChild(select);
  document.getElementById('selector').appendChild(label);
  filters[k] = select;
});
let steps = 0, unordered = 0;
data.series.forEach((s, i) => {
  const name = s.title + ' · ' + s.allocator + ' · ' + s.machine + ': ' + s.metric;
  const shown = v => v === null ? null : v * s.scale;
  const unit = s.unit || 'count';
  s.steps.forEach(st => {
    const li = el('li');
    const to = el('a', st.verdict + ' ' + pct(st.change) + ' ' + name);
    to.href = '#series-' + i;
    to.onclick = () => { keys.forEach(k => { filters[k].value = s[k]; }); applyFilters(); };
    li.appendChild(to);
    li.appendChild(document.createTextNode(' at '));
    const p = s.points[st.index];
    li.appendChild(commitLink(p) || el('span', st.revision.slice(0, 12)));
    li.appendChild(document.createTextNode(' (p ' + st.p.toPrecision(2) + ')' +
                                           (st.acknowledged === null ? '' : ' acknowledged: ' + st.acknowledged)));
    li.className = st.verdict + (st.acknowledged === null ? '' : ' acknowledged');
    list.appendChild(li);
    steps++;
  });
  const box = el('section');
  box.id = 'series-' + i;
  box.appendChild(el('h3', name + ' (' + unit + ')'));
  const runs = s.points.map(p => p.runs), lo = Math.min(...runs), hi = Math.max(...runs);
  const n = lo === hi ? String(lo) : lo + '-' + hi;
  const free = s.points.filter(p => p.position === null).length;
  unordered += free;
  if (free > 0)
    box.appendChild(el('p', free + ' of its ' + s.points.length + ' revisions are not commits of a repository the ' +
                            'store knows: they are ordered by when they were added.', 'note'));
  const canvas = el('canvas');
  canvas.id = 'chart-' + i;
  box.appendChild(canvas);
  const links = el('p', null, 'note');
  box.appendChild(links);
  charts.appendChild(box);
  const at = new Set(s.steps.map(st => st.index));
  const median = s.points.map(p => shown(p.median));
  new Chart(canvas, {
    type: 'line',
    data: {
      labels: s.points.map(p => p.revision.slice(0, 10)),
      datasets: [
        {label: 'range min-max', kind: 'max', data: s.points.map(p => shown(p.max)), pointRadius: 0, borderWidth: 0,
         fill: '+1', backgroundColor: 'rgba(54, 162, 235, 0.2)'},
        {label: 'min', kind: 'min', data: s.points.map(p => shown(p.min)), pointRadius: 0, borderWidth: 0, fill: false},
        {label: 'median of ' + n + ' runs', kind: 'median', data: median, borderColor: 'rgb(54, 162, 235)',
         pointStyle: s.points.map((p, k) => at.has(k) ? 'triangle' : 'circle'),
         pointRadius: s.points.map((p, k) => at.has(k) ? 8 : 3),
         pointBackgroundColor: s.points.map((p, k) => at.has(k) ? 'rgb(220, 50, 50)' : 'rgb(54, 162, 235)')},
      ],
    },
    options: {
      animation: false,
      aspectRatio: 3,
      scales: {x: {title: {display: true, text: 'revision (' + (free === s.points.length ? 'in the order added' :
                 free ? 'commits in first-parent order, the others in the order added' : 'first-parent order') + ')'}},
               y: {title: {display: true, text: unit}}},
      plugins: {
        legend: {labels: {filter: item => item.text !== 'min'}},
        tooltip: {callbacks: {afterLabel: c => {
          const p = s.points[c.dataIndex];
          return p.runs + ' runs' + (p.censored ? ', ' + p.censored + ' censored' : '') + '; click: their RSS';
        }}}},
      onClick: (e, hit) => {
        if (!hit.length) return;
        const p = s.points[hit[0].index], link = commitLink(p);
        links.replaceChildren();
        if (link) { links.appendChild(document.createTextNode('commit: ')); links.appendChild(link); }
        withTraces(p.run_ids, () => showRuns(s, hit[0].index, box));
      },
      onHover: (e, hit) => { e.native.target.style.cursor = hit.length ? 'pointer' : 'default'; },
    },
  });
});
if (steps === 0) list.appendChild(el('li', 'no steps'));
applyFilters();
if (unordered > 0)
  document.getElementById('order-note').textContent = 'Revisions that are not commits of a repository the store ' +
    'knows (' + unordered + ' points) are ordered by when they were added, not by their history.';
document.getElementById('status').textContent = data.series.length + ' charts, ' + steps + ' steps';
document.getElementById('traces-note').textContent = 'RSS over time: the traces of ' +
  data.inline.runs + ' runs (the last ' + data.inline.revisions + ' revisions of each series and those either ' +
  'side of its steps) are in this page; ' + (data.chunks.length === 0 ? 'there are no others.' :
  'the other ' + data.inline.loaded + ' runs\' are loaded on a click from ' + data.chunks.length +
  ' files traces/traces-K.js beside it.');
document.body.dataset.rendered = String(data.series.length);
)js";

}  // namespace

std::vector<int64_t> shown_runs(const std::vector<PageSeries>& series) {
  std::set<int64_t> ids;
  for (const auto& ps : series)
    for (const auto& p : ps.series.points) ids.insert(p.runs.begin(), p.runs.end());
  return {ids.begin(), ids.end()};
}

std::set<int64_t> inlined_runs(const std::vector<PageSeries>& series) {
  std::set<int64_t> ids;
  const auto take = [&](const Point& p) { ids.insert(p.runs.begin(), p.runs.end()); };
  for (const auto& ps : series) {
    const auto& points = ps.series.points;
    for (size_t i = points.size() > kInlineRevisions ? points.size() - kInlineRevisions : 0; i < points.size(); ++i)
      take(points[i]);
    for (const auto& st : ps.steps) {
      if (st.index > 0) take(points[st.index - 1]);
      if (st.index < points.size()) take(points[st.index]);
    }
  }
  return ids;
}

Json page_data(const std::vector<PageSeries>& series, const std::vector<TracedRun>& runs,
               const std::vector<std::pair<int64_t, int64_t>>& chunks) {
  Json out = Json::array();
  for (const auto& ps : series) {
    const Series& s = ps.series;
    Json points = Json::array(), steps = Json::array();
    for (const auto& p : s.points) points.push_back(point_json(p));
    for (const auto& st : ps.steps) steps.push_back(page_step_json(st, ps.acknowledged));
    const DisplayUnit unit = display_unit(metric_info(s.metric, s.workload, {}).unit);
    out.push_back(Json{{"workload", s.workload},
                       {"params", s.params},
                       {"title", ps.title.empty() ? s.workload : ps.title},
                       {"allocator", s.allocator},
                       {"machine", s.machine},
                       {"metric", s.metric},
                       {"unit", unit.unit},
                       {"scale", unit.scale},
                       {"points", points},
                       {"steps", steps}});
  }
  Json traces = Json::object();
  for (const auto& r : runs) traces[std::to_string(r.id)] = trace_json(r);
  Json ranges = Json::array();
  for (const auto& [first, last] : chunks) ranges.push_back(Json{first, last});
  return Json{{"series", out},
              {"runs", traces},
              {"chunks", ranges},
              {"inline", {{"revisions", kInlineRevisions}, {"runs", runs.size()}, {"loaded", 0}}},
              {"repo_url", nullptr}};
}

std::string page_html(const Json& data) {
  std::ostringstream html;
  html << "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<title>memharness history</title>\n<script src=\"chart.min.js\"></script>\n"
          "<style>body{font-family:sans-serif;max-width:70em;margin:auto}section{margin:2em 0}"
          "li.regression{color:#b00}li.regression a{color:#b00}li.acknowledged{color:#666}.note{color:#555;font-size:90%}"
          "#selector label{margin-right:1em}#run-panel{border:1px solid #ccc;padding:0 1em}"
          "</style>\n</head>\n<body>\n"
          "<h1>memharness history</h1>\n<p id=\"status\">the page's script did not run</p>\n"
          "<p id=\"traces-note\"></p>\n"
          "<h2>Steps</h2>\n<ul id=\"steps\"></ul>\n<h2>Series</h2>\n<p id=\"selector\"></p>\n"
          "<p id=\"shown\"></p>\n<p id=\"order-note\" class=\"note\"></p>\n<div id=\"charts\"></div>\n"
          "<section id=\"run-panel\" hidden></section>\n"
          "<script type=\"application/json\" id=\"history-data\">"
       << escape::script_json(json_text(data)) << "</script>\n<script>" << kScript << "</script>\n</body>\n</html>\n";
  return html.str();
}

namespace {

// DIR/traces/traces-K.js for each kChunkRuns of `rest`: a script calling
// historyTraces(K, {id: trace}); the ranges of ids, or the error.
std::string write_chunks(const std::string& dir, const std::vector<TracedRun>& rest,
                         std::vector<std::pair<int64_t, int64_t>>& ranges) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::path(dir) / "traces";
  std::error_code ec;
  fs::remove_all(folder, ec);  // chunks of an earlier page
  if (rest.empty()) return "";
  fs::create_directories(folder, ec);
  if (ec) return folder.string() + ": " + ec.message();
  for (size_t from = 0, k = 0; from < rest.size(); from += kChunkRuns, ++k) {
    Json traces = Json::object();
    const size_t to = std::min(rest.size(), from + kChunkRuns);
    for (size_t i = from; i < to; ++i) traces[std::to_string(rest[i].id)] = trace_json(rest[i]);
    ranges.emplace_back(rest[from].id, rest[to - 1].id);
    const auto path = (folder / ("traces-" + std::to_string(k) + ".js")).string();
    if (auto e = output_file::write_atomic(path, "historyTraces(" + std::to_string(k) + ", " +
                                                     escape::script_json(json_text(traces)) + ");\n");
        !e.empty())
      return e;
  }
  return "";
}

}  // namespace

std::string check_repo_url(const std::string& url) {
  const bool scheme = url.rfind("https://", 0) == 0 || url.rfind("http://", 0) == 0 || url.rfind("file://", 0) == 0;
  const bool plain = std::none_of(url.begin(), url.end(), [](char c) { return (unsigned char)c <= ' ' || c == 0x7f; });
  if (scheme && plain && url.size() > 8) return "";
  return fmt::format("--repo-url '{}': give the repository's web address, starting with https://, http:// or "
                     "file://, without spaces (e.g. https://github.com/OWNER/REPO); a revision links to URL/commit/SHA",
                     escape::terminal(url));
}

std::string write_page(const std::string& dir, const std::vector<PageSeries>& series,
                       const std::vector<TracedRun>& runs, const std::string& repo_url) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(kChartJs, ec))
    return std::string("Chart.js is not installed (") + kChartJs + "): apt-get install libjs-chart.js";
  std::string error;
  const auto chart = input_file::read_all(kChartJs, kMaxChartJsBytes, error);
  if (!chart) return "cannot copy Chart.js: " + error;
  // Both files are checked before either is written: a page is written whole or not at all.
  const std::string chart_path = (fs::path(dir) / "chart.min.js").string();
  const std::string index_path = (fs::path(dir) / "index.html").string();
  for (const auto& path : {chart_path, index_path})
    if (auto e = output_file::check_target(path); !e.empty()) return e;
  if (auto e = output_file::write_atomic(chart_path, *chart); !e.empty()) return e;
  // Chunks hold runs in id order, so that a page finds a run's chunk by its id.
  const auto inline_ids = inlined_runs(series);
  std::vector<TracedRun> inlined, rest;
  for (const auto& r : runs) (inline_ids.count(r.id) ? inlined : rest).push_back(r);
  std::sort(rest.begin(), rest.end(), [](const TracedRun& a, const TracedRun& b) { return a.id < b.id; });
  std::vector<std::pair<int64_t, int64_t>> ranges;
  if (auto e = write_chunks(dir, rest, ranges); !e.empty()) return e;
  Json data = page_data(series, inlined, ranges);
  data["inline"]["loaded"] = rest.size();
  data["repo_url"] = repo_url.empty() ? Json(nullptr) : Json(repo_url);
  return output_file::write_atomic(index_path, page_html(data));
}

}  // namespace mh::history
