// The script of the report page (page.h): builds the charts, tables and flame
// graphs from the inlined data with textContent only. Data, no state.
#include "report/page.h"

namespace mh::page {

const char* page_script() {
  static const char* const script =
      R"js(const data = JSON.parse(document.getElementById('page-data').textContent);
if (window.ChartZoom) Chart.register(window.ChartZoom);
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}
function fmt(v) {
  if (v === null || v === undefined || !isFinite(v)) return '-';
  const a = Math.abs(v);
  return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toPrecision(3);
}
const palette = ['rgb(31, 119, 180)', 'rgb(255, 127, 14)', 'rgb(44, 160, 44)', 'rgb(148, 103, 189)',
                 'rgb(140, 86, 75)', 'rgb(227, 119, 194)', 'rgb(127, 127, 127)', 'rgb(188, 189, 34)'];
const runName = r => (data.reports.length > 1 ? data.reports[r.report].name + ' · ' : '') + r.allocator +
  (r.role ? ' (' + r.role + ')' : '') + ' #' + r.repetition;
)js"
      R"js(// Marks as dashed lines, each name labelled once at its first time, labels
// staggered over rows so that none overlaps another; phases (between
// consecutive marks of the first run) shaded in turn.
function marksPlugin(marks, phases) {
  return {id: 'marks', beforeDatasetsDraw(chart) {
    const ctx = chart.ctx, area = chart.chartArea, x = chart.scales.x;
    ctx.save();
    phases.forEach(([a, b], k) => {
      if (k % 2) return;
      const l = Math.max(area.left, x.getPixelForValue(a)), r = Math.min(area.right, x.getPixelForValue(b));
      if (r > l) { ctx.fillStyle = 'rgba(0, 0, 0, 0.04)'; ctx.fillRect(l, area.top, r - l, area.bottom - area.top); }
    });
    ctx.restore();
  }, afterDatasetsDraw(chart) {
    const ctx = chart.ctx, area = chart.chartArea, x = chart.scales.x;
    const rows = [];
    ctx.save();
    ctx.font = '11px sans-serif';
    marks.forEach(m => {
      const px = x.getPixelForValue(m.x);
      if (px < area.left || px > area.right) return;
      ctx.strokeStyle = m.colour.replace('rgb(', 'rgba(').replace(')', ', 0.45)');
      ctx.lineWidth = 0.8;
      ctx.setLineDash([3, 3]);
      ctx.beginPath(); ctx.moveTo(px, area.top); ctx.lineTo(px, area.bottom); ctx.stroke();
      if (!m.label) return;
      const w = ctx.measureText(m.name).width + 6;
      let row = rows.findIndex(end => end < px);
      if (row < 0) { row = rows.length; rows.push(0); }
      rows[row] = px + w;
      ctx.fillStyle = 'rgba(255, 255, 255, 0.8)';
      ctx.fillRect(px + 2, area.top + 2 + 13 * row, w - 2, 12);
      ctx.fillStyle = '#333';
      ctx.fillText(m.name, px + 3, area.top + 12 + 13 * row);
    });
    ctx.restore();
  }};
}
// One chart per workload: each run's RSS (solid), anonymous RSS (dashed) and
// live heap (dotted, with --ledger) in MB against seconds; wheel or pinch to
// zoom, drag to pan (chartjs-plugin-zoom), the button resets.
function memoryCharts() {
  const box = document.getElementById('memory');
  const workloads = [...new Set(data.runs.map(r => r.workload))];
  const allocators = [...new Set(data.runs.map(r => (data.reports.length > 1 ? r.report + ':' : '') + r.allocator + r.role))];
  workloads.forEach((w, i) => {
    const runs = data.runs.filter(r => r.workload === w && r.t.length > 0);
    const section = el('section');
    section.appendChild(el('h2', w + ': memory over time'));
    section.appendChild(el('p', 'RSS solid, anonymous RSS dashed, live heap dotted (with --ledger), one colour per ' +
      'allocator, one line per run; the marks of the first run of each allocator dashed, the phases between them shaded in turn. Wheel or pinch to zoom, ' +
      'drag to pan.', 'note'));
    const reset = el('button', 'reset zoom');
    section.appendChild(reset);
    const canvas = el('canvas');
    canvas.id = 'memory-' + i;
    section.appendChild(canvas);
    box.appendChild(section);
    const datasets = [], marks = [], named = new Set();
    runs.forEach((r, n) => {
      const colour = palette[allocators.indexOf((data.reports.length > 1 ? r.report + ':' : '') + r.allocator + r.role) % palette.length];
      const line = ys => r.t.map((t, j) => ({x: t, y: ys[j]}));
      const first = runs.findIndex(o => o.allocator === r.allocator && o.role === r.role && o.report === r.report) === n;
      const name = runName(r);
      [['rss', 'RSS', [], 1.5], ['anon', 'anon RSS', [6, 3], 1], ['heap', 'live heap', [1, 2], 1.5]].forEach(([key, what, dash, width]) => {
        if (r[key] === null) return;
        datasets.push({label: name + ' ' + what, kind: key, run: n, data: line(r[key]), borderColor: colour,
                       backgroundColor: colour, borderWidth: width, borderDash: dash, pointRadius: 0,
                       hiddenInLegend: !first});
      });
      if (first) r.marks.forEach(([t, mark]) => {  // the marks of each allocator's first run only
        marks.push({x: t, name: mark, colour, label: !named.has(mark)});
        named.add(mark);
      });
    });
    const m0 = runs.length ? runs[0].marks.map(m => m[0]) : [];
    const phases = m0.slice(1).map((t, k) => [m0[k], t]);
    const chart = new Chart(canvas, {
      type: 'line', data: {datasets}, plugins: [marksPlugin(marks, phases)],
      options: {
        animation: false, parsing: false, aspectRatio: 2.4, spanGaps: true,
        scales: {x: {type: 'linear', title: {display: true, text: 's since the run started'}},
                 y: {title: {display: true, text: 'MB (10^6 bytes)'}, beginAtZero: true}},
        plugins: {
          legend: {position: 'bottom', labels: {boxHeight: 2, filter: (item, d) => !d.datasets[item.datasetIndex].hiddenInLegend}},
          tooltip: {mode: 'nearest', intersect: false, callbacks: {label: c => c.dataset.label + ': ' + fmt(c.parsed.y) + ' MB at ' + c.parsed.x.toFixed(3) + ' s'}},
          zoom: {zoom: {wheel: {enabled: true}, pinch: {enabled: true}, mode: 'x'}, pan: {enabled: true, mode: 'x'}},
        },
      },
    });
    reset.onclick = () => chart.resetZoom();
  });
}
)js"
      R"js(// Each report's run table, as `harness show` prints it, then its notes.
function tables() {
  const box = document.getElementById('tables');
  data.reports.forEach((rep, i) => {
    box.appendChild(el('h2', 'Runs' + (data.reports.length > 1 ? ': ' + rep.name : '')));
    rep.table.blocks.forEach((b, j) => {
      const t = el('table');
      t.id = 'table-' + i + '-' + j;
      const head = el('tr');
      b.header.forEach(h => head.appendChild(el('th', h)));
      t.appendChild(head);
      b.rows.forEach(row => {
        const tr = el('tr');
        row.forEach(c => tr.appendChild(el('td', c)));
        t.appendChild(tr);
      });
      box.appendChild(t);
    });
    const notes = el('pre', rep.table.notes, 'note');
    box.appendChild(notes);
  });
}
// A comparison: its verdict line first, then each metric's runs side by side
// on one scale, baseline above candidate; a run whose time never came is an
// open triangle at its bound, labelled "never".
function strip(m, lo, hi) {
  const ns = 'http://www.w3.org/2000/svg', W = 340, H = 34;
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('width', W); svg.setAttribute('height', H);
  const x = v => 8 + (hi > lo ? (v - lo) / (hi - lo) : 0.5) * (W - 90);
  [['baseline', 9, 'rgb(31, 119, 180)'], ['candidate', 25, 'rgb(214, 39, 40)']].forEach(([side, y, colour]) => {
    const s = m[side], above = new Set((s.above || []).map(String));
    s.values.forEach(v => {
      const censored = above.has(String(v)), px = x(v * m.scale);
      const shape = document.createElementNS(ns, censored ? 'path' : 'circle');
      if (censored) {
        shape.setAttribute('d', `M${px - 5},${y + 4} L${px + 5},${y + 4} L${px},${y - 5} Z`);
        shape.setAttribute('fill', 'none');
        shape.setAttribute('class', 'censored');
      } else {
        shape.setAttribute('cx', px); shape.setAttribute('cy', y); shape.setAttribute('r', 3.5);
        shape.setAttribute('fill', colour); shape.setAttribute('fill-opacity', '0.6');
      }
      shape.setAttribute('stroke', colour);
      const title = document.createElementNS(ns, 'title');
      title.textContent = side + ': ' + (censored ? 'never (> ' + fmt(v * m.scale) + ' ' + m.display_unit + ')' : fmt(v * m.scale) + ' ' + m.display_unit);
      shape.appendChild(title);
      svg.appendChild(shape);
    });
    if ((s.above || []).length) {
      const t = document.createElementNS(ns, 'text');
      t.setAttribute('x', W - 66); t.setAttribute('y', y + 4); t.setAttribute('font-size', '10');
      t.textContent = 'never: ' + s.above.length;
      svg.appendChild(t);
    }
  });
  return svg;
}
function comparison() {
  const c = data.comparison;
  if (c === null) return;
  document.getElementById('title').textContent = 'memharness comparison';
  const box = document.getElementById('comparison');
  const verdict = el('p', c.summary, /REGRESSION/.test(c.summary) ? 'regression' : '');
  verdict.id = 'verdict';
  box.appendChild(verdict);
  box.appendChild(el('p', 'Each metric\'s runs: baseline (blue, upper row) and candidate (red, lower row) on one ' +
    'scale from the lowest to the highest run; a run whose time never came is an open triangle at the time the run ' +
    'had left, "never". Hover a point for its value.', 'note'));
  c.workloads.forEach(w => {
    box.appendChild(el('h2', w.workload));
    const t = el('table');
    t.className = 'metrics';
    const head = el('tr');
    ['metric', 'unit', 'baseline', 'candidate', 'change', 'verdict', 'runs'].forEach(h => head.appendChild(el('th', h)));
    t.appendChild(head);
    w.metrics.forEach(m => {
      const all = m.baseline.values.concat(m.candidate.values).map(v => v * m.scale);
      if (all.length === 0) return;
      const side = s => (s.median_above ? '> ' : '') + fmt(s.median * m.scale) + (s.above && s.above.length ? ' (' + s.above.length + ' never)' : '');
      const tr = el('tr');
      tr.dataset.metric = m.metric;
      [m.metric, m.display_unit, side(m.baseline), side(m.candidate),
       (m.baseline.above || []).length + (m.candidate.above || []).length ? (m.candidate.median_above ? fmt(m.baseline.median * m.scale) + ' -> never' : 'censored') : (m.change >= 0 ? '+' : '') + (100 * m.change).toFixed(1) + '%', m.verdict].forEach(v => tr.appendChild(el('td', v)));
      if (m.verdict === 'regression' && m.gated) tr.className = 'regression';
      const cell = el('td');
      cell.appendChild(strip(m, Math.min(...all), Math.max(...all)));
      tr.appendChild(cell);
      t.appendChild(tr);
    });
    box.appendChild(t);
  });
}
)js"
      R"js(// The live heap by call site as a flame graph (d3-flame-graph): a frame's
// width is the MB held under it; click to zoom, search, hover for MB and the
// standard error. Trees are built from the sites, outermost frame first; a
// frame's own bytes are those of the sites that end there.
const sources = [];
data.runs.forEach((r, n) => Object.keys(r.sites).forEach(mark => sources.push({run: n, mark, name: runName(r) + ' · ' + r.workload + ' · ' + (mark === '(peak)' ? 'at the peak' : 'at mark ' + mark)})));
function siteTree(src) {
  const root = {name: 'all', kids: new Map(), own: [0, 0, 0, 0]};
  const add = (s, side) => {
    let node = root;
    s.frames.forEach(f => {
      if (!node.kids.has(f)) node.kids.set(f, {name: f, kids: new Map(), own: [0, 0, 0, 0]});
      node = node.kids.get(f);
    });
    node.own[2 * side] += s.mb;
    node.own[2 * side + 1] += s.se * s.se;
  };
  src.forEach((sites, side) => sites.forEach(s => add(s, side)));
  return root;
}
// To d3-flame-graph's form: value is the frame's own width (selfValue), a
// and b the totals of each side with their variances.
function finish(node, diff) {
  const children = [...node.kids.values()].map(k => finish(k, diff));
  const total = [0, 1, 2, 3].map(i => node.own[i] + children.reduce((s, c) => s + c.tot[i], 0));
  const value = diff ? Math.max(node.own[0], node.own[2]) : node.own[0];
  return {name: node.name, value, children, tot: total, own: node.own};
}
const sitesOf = s => data.runs[s.run].sites[s.mark].sites;
const seText = v => fmt(Math.sqrt(v));
function flameChart(target, details, diff) {
  const k = data.diff_k;
  const make = [flamegraph.flamegraph, flamegraph.default, flamegraph].find(f => typeof f === 'function');
  const chart = make().width(Math.min(1200, target.clientWidth || 1100)).cellHeight(18)
    .selfValue(true).transitionDuration(0).minFrameSize(2).setDetailsElement(details).sort(true)
    .getName(d => d.data.name + ' · ' + (diff ? fmt(d.data.tot[0]) + ' -> ' + fmt(d.data.tot[2]) : fmt(d.data.tot[0])) + ' MB');
  if (!diff) {
    chart.setLabelHandler(d => d.data.name + ': ' + fmt(d.data.tot[0]) + ' MB (standard error ' + seText(d.data.tot[1]) +
      ' MB), ' + fmt(d.data.own[0]) + ' MB allocated here');
    return chart;
  }
  chart.setLabelHandler(d => {
    const o = d.data.own, t = d.data.tot, change = o[2] - o[0];
    return d.data.name + ': ' + fmt(t[0]) + ' -> ' + fmt(t[2]) + ' MB under it; allocated here ' + fmt(o[0]) + ' -> ' +
      fmt(o[2]) + ' MB (' + (change >= 0 ? '+' : '') + fmt(change) + ' MB, standard error ' + seText(o[1] + o[3]) + ' MB): ' + d.data.change;
  });
  chart.setColorMapper(d => d.data.change === 'grown' ? 'rgb(214, 39, 40)' : d.data.change === 'shrunk' ? 'rgb(31, 119, 180)' : 'rgb(204, 204, 204)');
  return chart;
}
// A diff frame's change: its own bytes grown or shrunk by more than k standard errors.
function judge(node, k) {
  const change = node.own[2] - node.own[0], se = Math.sqrt(node.own[1] + node.own[3]);
  node.change = Math.abs(change) > k * se && change !== 0 ? (change > 0 ? 'grown' : 'shrunk') : 'same';
  node.children.forEach(c => judge(c, k));
}
function select(id, labelText, chosen) {
  const label = el('label', labelText + ' ');
  const s = el('select');
  s.id = id;
  sources.forEach((src, i) => { const o = el('option', src.name); o.value = i; s.appendChild(o); });
  s.value = chosen;
  label.appendChild(s);
  return [label, s];
}
function flameSection(box, diff) {
  const section = el('section');
  section.appendChild(el('h2', diff ? 'What changed: the diff flame graph' : 'Who holds the memory: the flame graph'));
  section.appendChild(el('p', diff ?
    'Width: the larger of the two sides. Red: a frame whose own bytes (the sites ending there) grew by more than k = ' +
    data.diff_k + ' standard errors of the difference; blue: shrank by more than that; grey: within it. Click to zoom.' :
    'The live heap by call site (sampled by --heap-sample), outermost frame at the bottom, widths in MB. Click a frame ' +
    'to zoom, search to highlight, hover for MB and the standard error.', 'note'));
  const controls = el('div', null, 'controls');
  // Shown first: a report's first run at its peak. The diff: the first report
  // against the second, or a run's first mark against its peak.
  const ofReport = rep => sources.map((s, i) => i).filter(i => data.runs[sources[i].run].report === rep);
  const atPeak = ids => ids.find(i => sources[i].mark === '(peak)') ?? ids[0];
  const one = data.reports.length < 2 || ofReport(1).length === 0;
  const first = diff && one ? 0 : atPeak(ofReport(0));
  const second = one ? atPeak(sources.map((s, i) => i).filter(i => sources[i].run === sources[0].run)) : atPeak(ofReport(1));
  const [la, a] = select(diff ? 'diff-a' : 'flame-source', diff ? 'from' : 'sites', first);
  controls.appendChild(la);
  let b = null;
  if (diff) {
    const [lb, sb] = select('diff-b', 'to', second === first ? Math.min(first + 1, sources.length - 1) : second);
    controls.appendChild(lb);
    b = sb;
  }
  const search = el('input');
  search.placeholder = 'search frames';
  search.id = diff ? 'diff-search' : 'flame-search';
  const reset = el('button', 'reset zoom');
  controls.appendChild(search);
  controls.appendChild(reset);
  section.appendChild(controls);
  const details = el('p', ' ', 'note');
  details.id = diff ? 'diff-details' : 'flame-details';
  const target = el('div', null, 'flame');
  target.id = diff ? 'diff-flame' : 'flame';
  section.appendChild(details);
  section.appendChild(target);
  box.appendChild(section);
  const draw = () => {
    const src = diff ? [sitesOf(sources[a.value]), sitesOf(sources[b.value])] : [sitesOf(sources[a.value])];
    const tree = finish(siteTree(src), diff);
    if (diff) judge(tree, data.diff_k);
    target.replaceChildren();
    const chart = flameChart(target, details, diff);
    d3.select(target).datum(tree).call(chart);
    search.oninput = () => search.value ? chart.search(search.value) : chart.clear();
    reset.onclick = () => chart.resetZoom();
    window[diff ? 'diffFlame' : 'flame'] = chart;
  };
  a.onchange = draw;
  if (b) b.onchange = draw;
  draw();
}
function flames() {
  if (sources.length === 0) return;
  const box = document.getElementById('flames');
  flameSection(box, false);
  if (sources.length > 1) flameSection(box, true);
}
comparison();
memoryCharts();
tables();
flames();
document.getElementById('status').textContent = data.reports.map(r => r.name).join(', ') + ': ' + data.runs.length +
  ' runs' + (sources.length ? ', ' + sources.length + ' sets of heap sites' : ', no heap sites (run with --ledger --heap-sample for the flame graph)');
document.body.dataset.rendered = String(data.runs.length);
)js";
  return script;
}

}  // namespace mh::page
