// Growth over a run (see run_growth.h).
#include "core/run_growth.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "core/growth.h"
#include "core/heap_sites.h"
#include "core/units.h"

namespace mh {

namespace {

constexpr double kMsPerMin = 60000;
// The share of the growth outside the live heap that, when not malloc's
// (stacks, named mappings), makes the verdict "growing outside malloc".
constexpr double kNotMallocMostly = 0.5;

struct Window {
  double from_ms = 0, to_ms = 0;
  std::string from, to;  // what bounds it, for a person
  bool marked = false;   // a growth-start or growth-end mark bounds it
};

const Mark* find_mark(const std::vector<Mark>& marks, const char* name, double after_ms) {
  for (const auto& m : marks)
    if (m.name == name && m.t_ms >= after_ms) return &m;
  return nullptr;
}

Window window_of(const RunRecord& rec) {
  Window w;
  const double first = rec.samples.front().t_ms;
  const Mark* start = find_mark(rec.marks, kGrowthStartMark, first);
  const Mark* end = find_mark(rec.marks, kGrowthEndMark, start ? start->t_ms : first);
  const Mark* teardown = find_mark(rec.marks, "end", first);
  w.to_ms = rec.samples.back().t_ms, w.to = "the last sample";
  if (end) w.to_ms = end->t_ms, w.to = fmt::format("the mark '{}'", kGrowthEndMark);
  else if (teardown) w.to_ms = teardown->t_ms, w.to = "the mark 'end'";
  if (start) {
    w.from_ms = start->t_ms, w.from = fmt::format("the mark '{}'", kGrowthStartMark);
  } else {
    w.from_ms = first + kWarmupShare * (w.to_ms - first);
    w.from = fmt::format("after the first {:.0f}% of the run (warm-up)", kWarmupShare * 100);
  }
  w.marked = start || end;
  return w;
}

// A series of the run: its values in MB by sample, none where a cell is missing.
struct Series {
  const char* name;    // live, outside, anon
  const char* metric;  // growth.NAME_mb_per_min
  std::optional<double> (*of)(const Sample&);
};

std::optional<double> live_mb_of(const Sample& s) {
  if (cell_missing(s, "heap_live_kb")) return std::nullopt;
  return double(s.heap_live_kb) * kMbPerKb;
}
std::optional<double> outside_mb_of(const Sample& s) {
  if (cell_missing(s, "heap_live_kb") || cell_missing(s, "anon_kb")) return std::nullopt;
  return double(s.anon_kb - s.heap_live_kb) * kMbPerKb;
}
std::optional<double> anon_mb_of(const Sample& s) {
  if (cell_missing(s, "anon_kb")) return std::nullopt;
  return double(s.anon_kb) * kMbPerKb;
}

constexpr Series kLive{"live", "growth.live_mb_per_min", &live_mb_of};
constexpr Series kOutside{"outside", "growth.outside_mb_per_min", &outside_mb_of};
constexpr Series kAnon{"anon", "growth.anon_mb_per_min", &anon_mb_of};

double rounded(double v) { return std::round(v * 1e5) / 1e5; }

const char* growth_direction_name(growth::Direction d) {
  return d == growth::Direction::Growing ? "growing" : d == growth::Direction::Falling ? "falling" : "flat";
}

// One series tested over the window: its entry in the growth block, and its
// metric (the slope, or null with the reason).
Json test_series(RunRecord& rec, const Series& s, const Window& w) {
  std::vector<growth::Point> points;
  for (const auto& sample : rec.samples)
    if (auto v = s.of(sample); v && sample.t_ms >= w.from_ms && sample.t_ms <= w.to_ms)
      points.push_back({sample.t_ms / kMsPerMin, *v});
  Json entry{{"name", s.name}, {"metric", s.metric}, {"samples", points.size()}};
  const double span_ms = points.empty() ? 0 : (points.back().t - points.front().t) * kMsPerMin;
  if (points.size() < kGrowthMinSamples || span_ms < kGrowthMinSpanMs) {
    const std::string why = fmt::format(
        "the growth window ({} to {}) has {} samples over {:.1f} s; a slope needs at least {} over {:.0f} s",
        w.from, w.to, points.size(), span_ms / 1000, kGrowthMinSamples, kGrowthMinSpanMs / 1000);
    rec.curve.push_back({s.metric, Maybe{std::nullopt, why}});
    entry["reason"] = why;
    return entry;
  }
  const growth::Trend t = growth::trend(std::move(points));
  rec.curve.push_back({s.metric, Maybe{rounded(t.slope), ""}});
  entry["points"] = t.n;
  entry["mb_per_min"] = rounded(t.slope);
  entry["lo"] = rounded(t.lo);
  entry["hi"] = rounded(t.hi);
  entry["p"] = t.p;
  entry["mann_kendall_s"] = t.s;
  entry["lag1_autocorrelation"] = std::round(t.lag1 * 1000) / 1000;
  entry["block_points"] = t.block;
  entry["blocks"] = t.blocks;
  entry["direction"] = growth_direction_name(growth::direction(t));
  return entry;
}

bool has_ledger(const RunRecord& rec) {
  if (rec.sampler.unreadable.count("heap_live_kb")) return false;
  return std::any_of(rec.samples.begin(), rec.samples.end(), [](const Sample& s) { return !cell_missing(s, "heap_live_kb"); });
}

// A growth block may come from a report read back: every field is checked
// for its type before it is read.
double num(const Json& e, const char* key) {
  const auto it = e.find(key);
  return it != e.end() && it->is_number() ? it->get<double>() : 0.0;
}
std::string text_of(const Json& e, const char* key) {
  const auto it = e.find(key);
  return it != e.end() && it->is_string() ? it->get<std::string>() : "";
}
std::vector<const Json*> series_of(const Json& growth) {
  std::vector<const Json*> out;
  if (!growth.is_object()) return out;
  const auto it = growth.find("series");
  if (it == growth.end() || !it->is_array()) return out;
  for (const auto& e : *it)
    if (e.is_object()) out.push_back(&e);
  return out;
}

std::string rate(double v) { return display_number(v, DisplayUnit{"MB/min", 1}); }

std::string plus_mb(double v) { return (v >= 0 ? "+" : "") + display_number(v, DisplayUnit{"MB", 1}) + " MB"; }

// The memory outside the live heap that is not malloc's, as its change between
// two marks: "thread stacks +X MB, named mappings +Y MB between 'A' and 'B'";
// `share` is that change over the outside series' growth in the same time.
std::string not_malloc_change(const Json& growth, const Json& outside, double& share) {
  share = 0;
  const auto it = growth.find("outside_malloc");
  if (it == growth.end() || !it->is_object()) return "";
  const double stacks = num(*it, "stacks_mb"), named = num(*it, "named_mb");
  const double grown = num(outside, "mb_per_min") * num(*it, "minutes");
  if (stacks + named <= 0 || grown <= 0) return "";
  share = (stacks + named) / grown;
  return fmt::format("thread stacks {}, named mappings {} between '{}' and '{}'", plus_mb(stacks), plus_mb(named),
                     text_of(*it, "from"), text_of(*it, "to"));
}

// What a growing series means, for the verdict. The share outside the live
// heap is the allocator's unless most of its growth is memory that is not
// malloc's (stacks, named mappings): then it is "growing outside malloc".
std::string growing_text(const std::string& name, const Json& e, const Json& growth) {
  const std::string at =
      fmt::format("{} MB/min [{}-{}]", rate(num(e, "mb_per_min")), rate(num(e, "lo")), rate(num(e, "hi")));
  if (name == "live") return fmt::format("live heap growing at {} (a leak?)", at);
  if (name == "outside") {
    double share = 0;
    const std::string not_malloc = not_malloc_change(growth, e, share);
    if (share >= kNotMallocMostly) return fmt::format("growing outside malloc at {}: {}", at, not_malloc);
    return fmt::format("the allocator's share growing at {} (fragmentation or retention{})", at,
                       not_malloc.empty() ? "" : "; of it not malloc's: " + not_malloc);
  }
  return fmt::format("anonymous RSS growing at {} (a leak or the allocator's: --ledger tells them apart)", at);
}

// The first and last marks in the window that hold what `has` asks for.
template <class Has>
std::pair<const Mark*, const Mark*> marks_with(const RunRecord& rec, const Window& w, Has has) {
  const Mark *first = nullptr, *last = nullptr;
  for (const auto& m : rec.marks) {
    if (!has(m) || m.t_ms < w.from_ms - 1 || m.t_ms > w.to_ms + 1) continue;
    if (!first) first = &m;
    last = &m;
  }
  return {first, last};
}

// The change of the memory that is not malloc's (thread stacks, named
// mappings: NotMalloc) between the window's first and last marks that read it.
Json outside_malloc(const RunRecord& rec, const Window& w) {
  const auto [from, to] = marks_with(rec, w, [](const Mark& m) { return m.not_malloc.has_value(); });
  if (!from || from == to) return nullptr;
  return Json{{"from", from->name},
              {"to", to->name},
              {"minutes", rounded((to->t_ms - from->t_ms) / kMsPerMin)},
              {"stacks_mb", rounded(double(to->not_malloc->stacks_kb - from->not_malloc->stacks_kb) * kMbPerKb)},
              {"named_mb", rounded(double(to->not_malloc->named_kb - from->not_malloc->named_kb) * kMbPerKb)}};
}

// The call sites whose live bytes grew most between the window's first and
// last marks with sites, matched by their program frames' names: at most
// kGrowthSites, largest growth first, in MB with the change's standard error
// (the two snapshots' errors combined: an upper bound). A site in neither
// top list counts 0 there.
Json grown_sites(const RunRecord& rec, const Window& w) {
  const auto [from, to] = marks_with(rec, w, [](const Mark& m) { return m.heap_sites.has_value(); });
  if (!from || from == to) return nullptr;
  struct Change {
    double bytes = 0, var = 0;
    const HeapSite* site = nullptr;
  };
  std::map<std::string, Change> by_key;
  for (const auto& s : to->heap_sites->top) {
    auto& c = by_key[site_key(s, rec.allocator.library)];
    c.bytes += s.bytes, c.var += s.stderr_bytes * s.stderr_bytes, c.site = &s;
  }
  for (const auto& s : from->heap_sites->top)
    if (auto it = by_key.find(site_key(s, rec.allocator.library)); it != by_key.end())
      it->second.bytes -= s.bytes, it->second.var += s.stderr_bytes * s.stderr_bytes;
  std::vector<const Change*> grown;
  for (const auto& [key, c] : by_key)
    if (c.bytes > 0) grown.push_back(&c);
  std::sort(grown.begin(), grown.end(), [](const Change* a, const Change* b) { return a->bytes > b->bytes; });
  Json out{{"from", from->name}, {"to", to->name}, {"sites", Json::array()}};
  for (size_t i = 0; i < grown.size() && i < kGrowthSites; ++i)
    out["sites"].push_back({{"site", site_label(*grown[i]->site, rec.allocator.library)},
                            {"mb", rounded(grown[i]->bytes / 1e6)},
                            {"stderr_mb", rounded(std::sqrt(grown[i]->var) / 1e6)}});
  return out;
}

}  // namespace

void compute_growth(RunRecord& rec) {
  rec.growth = Json();
  if (rec.samples.empty() || rec.sampler.unreadable.count("anon_kb")) return;
  const Window w = window_of(rec);
  Json series = Json::array();
  for (const Series* s : has_ledger(rec) ? std::vector<const Series*>{&kLive, &kOutside} : std::vector<const Series*>{&kAnon})
    series.push_back(test_series(rec, *s, w));
  rec.growth = Json{{"window",
                     {{"from_ms", std::round(w.from_ms * 100) / 100},
                      {"to_ms", std::round(w.to_ms * 100) / 100},
                      {"from", w.from},
                      {"to", w.to},
                      {"marked", w.marked}}},
                    {"series", series}};
  if (Json sites = grown_sites(rec, w); !sites.is_null()) rec.growth["grown_sites"] = std::move(sites);
  if (Json not_malloc = outside_malloc(rec, w); !not_malloc.is_null()) rec.growth["outside_malloc"] = std::move(not_malloc);
  rec.growth["verdict"] = growth_verdict(rec.growth);
}

namespace {

// ", most grown: SITE (+X MB between MARK and MARK)" when the live heap grew
// and the run has its call sites at both ends of the window.
std::string most_grown(const Json& growth) {
  bool live = false;
  for (const Json* e : series_of(growth)) live |= text_of(*e, "name") == "live" && text_of(*e, "direction") == "growing";
  const auto it = growth.find("grown_sites");
  if (!live || it == growth.end() || !it->is_object()) return "";
  const auto sites = it->find("sites");
  if (sites == it->end() || !sites->is_array() || sites->empty() || !(*sites)[0].is_object()) return "";
  const Json& top = (*sites)[0];
  return fmt::format("; most grown: {} (+{} MB between '{}' and '{}')", text_of(top, "site"),
                     display_number(num(top, "mb"), DisplayUnit{"MB", 1}), text_of(*it, "from"), text_of(*it, "to"));
}

}  // namespace

std::string growth_verdict(const Json& growth) {
  std::string growing;
  std::optional<double> bound;
  for (const Json* e : series_of(growth)) {
    if (!e->contains("mb_per_min")) continue;
    bound = std::max(bound.value_or(0.0), num(*e, "hi"));
    if (text_of(*e, "direction") == "growing") growing += (growing.empty() ? "" : "; ") + growing_text(text_of(*e, "name"), *e, growth);
  }
  if (!growing.empty()) return growing + most_grown(growth);
  if (!bound) return "";
  return fmt::format("no growth beyond {} MB/min (the smallest this run could see)", rate(*bound));
}

namespace {

// Whether a run's verdict belongs under the table: a series grew, the run had
// the ledger (someone asked who holds the memory), or the workload marked its
// window (it is about growth). Plain runs of a flat program say nothing.
bool worth_a_note(const Json& growth) {
  if (!growth.is_object() || text_of(growth, "verdict").empty()) return false;
  if (const auto w = growth.find("window"); w != growth.end() && w->is_object()) {
    const auto marked = w->find("marked");
    if (marked != w->end() && marked->is_boolean() && marked->get<bool>()) return true;
  }
  for (const Json* e : series_of(growth))
    if (text_of(*e, "name") == "live" || text_of(*e, "direction") == "growing") return true;
  return false;
}

// The kind of a verdict (which series grew), so that alike runs are counted together.
std::string kind_of(const Json& growth) {
  std::string kind;
  for (const Json* e : series_of(growth))
    if (text_of(*e, "direction") == "growing") kind += text_of(*e, "name") + " ";
  return kind;
}

// The figure that orders alike runs: the first growing series' slope, else the bound.
double order_of(const Json& growth) {
  double hi = 0;
  for (const Json* e : series_of(growth)) {
    if (text_of(*e, "direction") == "growing") return num(*e, "mb_per_min");
    hi = std::max(hi, num(*e, "hi"));
  }
  return hi;
}

}  // namespace

std::vector<std::string> growth_notes(const std::vector<RunRecord>& runs, std::string (*escaped)(std::string_view)) {
  // By workload and allocator in order of first appearance, then by kind.
  std::vector<std::pair<std::string, std::string>> rows;
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<const Json*>>> kinds;
  std::map<std::pair<std::string, std::string>, size_t> tested;
  for (const auto& r : runs) {
    if (r.status != Status::Ok || !worth_a_note(r.growth)) continue;
    const auto key = std::pair{r.workload, r.allocator.name};
    if (!tested.count(key)) rows.push_back(key);
    ++tested[key];
    kinds[key][kind_of(r.growth)].push_back(&r.growth);
  }
  std::vector<std::string> out;
  for (const auto& key : rows)
    for (auto& [kind, list] : kinds[key]) {
      std::stable_sort(list.begin(), list.end(), [](const Json* a, const Json* b) { return order_of(*a) < order_of(*b); });
      const std::string runs_said =
          tested[key] == 1 ? "" : fmt::format(" ({} of {} runs; the median one)", list.size(), tested[key]);
      out.push_back(fmt::format("growth of {} under {}{}: {}", escaped(key.first), escaped(key.second), runs_said,
                                escaped(text_of(*list[list.size() / 2], "verdict"))));
    }
  return out;
}

}  // namespace mh
