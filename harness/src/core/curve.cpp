// RSS curve metrics (see curve.h).
#include "core/curve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/metrics.h"
#include "core/run_growth.h"
#include "core/units.h"

namespace mh {

namespace {


// The RSS (or anonymous RSS) curve as (t_ms, kB) points in time order, read
// linearly between samples.
class Curve {
 public:
  Curve(const std::vector<Sample>& samples, int64_t Sample::*column) {
    for (const auto& s : samples) points_.push_back({s.t_ms, double(s.*column)});
    std::stable_sort(points_.begin(), points_.end(), [](const Point& a, const Point& b) { return a.t < b.t; });
  }
  // A series derived from the samples that have it (`of` returns none for the others).
  Curve(const std::vector<Sample>& samples, std::optional<double> (*of)(const Sample&)) {
    for (const auto& s : samples)
      if (auto v = of(s)) points_.push_back({s.t_ms, *v});
    std::stable_sort(points_.begin(), points_.end(), [](const Point& a, const Point& b) { return a.t < b.t; });
  }
  bool empty() const { return points_.empty(); }
  double first_t() const { return points_.front().t; }
  double last_t() const { return points_.back().t; }
  double last_value() const { return points_.back().v; }

  double at(double t) const {
    if (t <= points_.front().t) return points_.front().v;
    if (t >= points_.back().t) return points_.back().v;
    auto hi = std::lower_bound(points_.begin(), points_.end(), t, [](const Point& p, double x) { return p.t < x; });
    auto lo = hi - 1;
    if (hi->t == lo->t) return hi->v;
    return lo->v + (hi->v - lo->v) * (t - lo->t) / (hi->t - lo->t);
  }

  // Integral over [t0, t1] in kB*ms, the trapezoid rule between samples.
  double area(double t0, double t1) const {
    t0 = std::max(t0, first_t());
    t1 = std::min(t1, last_t());
    if (t1 <= t0) return 0;
    double sum = 0, prev_t = t0, prev_v = at(t0);
    for (const auto& p : points_) {
      if (p.t <= t0) continue;
      if (p.t >= t1) break;
      sum += (prev_v + p.v) / 2 * (p.t - prev_t);
      prev_t = p.t;
      prev_v = p.v;
    }
    sum += (prev_v + at(t1)) / 2 * (t1 - prev_t);
    return sum;
  }

  double max(double t0, double t1) const {
    double m = std::max(at(t0), at(t1));
    for (const auto& p : points_)
      if (p.t >= t0 && p.t <= t1) m = std::max(m, p.v);
    return m;
  }

  // The first time at or after t0 the curve is at or below `level`, read
  // linearly between the two samples around the crossing; nullopt if never.
  std::optional<double> first_at_or_below(double t0, double level) const {
    double prev_t = t0, prev_v = at(t0);
    if (prev_v <= level) return t0;
    for (const auto& p : points_) {
      if (p.t <= t0) continue;
      if (p.v <= level) return prev_t + (p.t - prev_t) * (prev_v - level) / (prev_v - p.v);
      prev_t = p.t;
      prev_v = p.v;
    }
    return std::nullopt;
  }

 private:
  struct Point {
    double t, v;
  };
  std::vector<Point> points_;
};

// MB*s to a thousandth; times to 0.01 ms.
double mb_s(double kb_ms) { return std::round(kb_ms * kMbPerKb) / 1000; }
double round_ms(double v) { return std::round(v * 100) / 100; }
std::string mb_label(double kb) { return fmt::format("{:.1f} MB", kb * kMbPerKb); }

Maybe value(double v) { return Maybe{v, ""}; }
Maybe none(std::string why) { return Maybe{std::nullopt, std::move(why)}; }

struct After {
  std::string mark;   // chosen, "" when none
  std::string chosen_by;  // --after, the workload, the last mark
  std::string why_none;   // when no mark could be used
  const Mark* at = nullptr;
};

After choose_after(const std::vector<Mark>& marks, const std::string& asked, const std::string& declared) {
  After a;
  if (!asked.empty()) a.mark = asked, a.chosen_by = "--after";
  else if (!declared.empty()) a.mark = declared, a.chosen_by = "the workload's idle mark";
  else if (!marks.empty()) a.mark = marks.back().name, a.chosen_by = "the last mark";
  if (a.mark.empty()) {
    a.why_none = "the run has no marks to measure after";
    return a;
  }
  for (const auto& m : marks)
    if (m.name == a.mark) {
      a.at = &m;
      return a;
    }
  std::string names;
  for (const auto& m : marks) names += (names.empty() ? "" : ", ") + m.name;
  a.why_none = fmt::format("no mark '{}' ({}) in this run; its marks: {}", a.mark, a.chosen_by,
                           names.empty() ? "none" : names);
  return a;
}

}  // namespace

std::vector<std::string> phase_names(const std::vector<Mark>& marks) {
  std::vector<std::string> out = {"launch"};
  std::map<std::string, int> seen;
  for (const auto& m : marks) {
    if (out.size() == kMaxPhases) break;
    const int n = ++seen[m.name];
    out.push_back(n == 1 ? m.name : fmt::format("{}#{}", m.name, n));
  }
  return out;
}

namespace {

void put_curve(RunRecord& rec, const std::string& name, Maybe m) { rec.curve.push_back({name, std::move(m)}); }

// Why the run's RSS curve cannot be read at all ("" when it can).
std::string unusable_reason(const RunRecord& rec, const Curve& rss) {
  if (rss.empty()) return kNoSampleReason;
  if (rec.sampler.unreadable.count("rss_kb")) return "RSS could not be read: " + rec.sampler.unreadable.at("rss_kb");
  return "";
}

// Where the after.* metrics are measured from: the mark, and the level memory
// comes back to (the "start" mark's RSS when the run has one before the mark,
// else the first sample's).
struct Reference {
  std::string why_none;  // set when nothing after a mark can be measured
  const Mark* mark = nullptr;
  double t_ms = 0;
  double start_kb = 0;
  std::string start_from = "the first sample";
};

Reference reference_of(const RunRecord& rec, const Curve& rss, const After& after, const std::string& unusable) {
  Reference ref;
  ref.why_none = !unusable.empty() ? unusable : after.at ? "" : after.why_none;
  if (!ref.why_none.empty()) return ref;
  ref.mark = after.at;
  ref.t_ms = after.at->t_ms;
  ref.start_kb = rss.at(rss.first_t());
  for (const auto& m : rec.marks) {
    if (&m == after.at) break;
    if (m.name == "start") {
      ref.start_kb = double(m.sample.rss_kb);
      ref.start_from = "the start mark";
      break;
    }
  }
  return ref;
}

// curve_info "after": which mark, chosen how, and the reference levels.
Json after_info(const After& after, const Reference& ref) {
  Json info = {{"mark", after.mark}, {"chosen_by", after.chosen_by}};
  if (!ref.why_none.empty()) {
    info["reason"] = ref.why_none;
    return info;
  }
  info["t_ms"] = round_ms(ref.t_ms);
  info["start_kb"] = ref.start_kb;
  info["start_from"] = ref.start_from;
  info["rss_at_mark_kb"] = ref.mark->sample.rss_kb;
  return info;
}

// RSS and anonymous RSS a fixed time after the mark (kAfterOffsets).
void put_levels_after(RunRecord& rec, const Curve& rss, const Curve& anon, const Reference& ref) {
  for (const auto& off : kAfterOffsets)
    for (auto [column, curve] : {std::pair{"rss", &rss}, std::pair{"anon", &anon}}) {
      const std::string name = fmt::format("after.{}_{}_kb", column, off.suffix);
      if (!ref.why_none.empty()) put_curve(rec, name, none(ref.why_none));
      else if (ref.t_ms + off.ms > curve->last_t())
        put_curve(rec, name, none(fmt::format("the run ended {:.0f} ms after the mark '{}'", curve->last_t() - ref.t_ms,
                                        ref.mark->name)));
      else put_curve(rec, name, value(std::round(curve->at(ref.t_ms + off.ms))));
    }
}

// How soon after the mark half, and 90%, of the RSS above the start level is given back.
void put_give_back_times(RunRecord& rec, const Curve& rss, const Reference& ref) {
  for (auto [name, fraction, said] :
       {std::tuple{"after.ms_to_half", 0.5, "half"}, std::tuple{"after.ms_to_90pct", 0.9, "90%"}}) {
    if (!ref.why_none.empty()) {
      put_curve(rec, name, none(ref.why_none));
      continue;
    }
    const double level = double(ref.mark->sample.rss_kb);
    const double above = level - ref.start_kb;
    if (above <= 0) {
      put_curve(rec, name, value(0));  // nothing above the start to give back
      continue;
    }
    const double target = level - fraction * above;
    if (auto t = rss.first_at_or_below(ref.t_ms, target)) {
      put_curve(rec, name, value(round_ms(*t - ref.t_ms)));
      continue;
    }
    // Not missing: longer than the run had left after the mark (right-censored).
    Maybe never = none(fmt::format("RSS never came down to {} ({} of the {} above the start, {} from {}) in the {:.0f} "
                                   "ms after the mark '{}'; it was {} at the last sample",
                                   mb_label(target), said, mb_label(above), mb_label(ref.start_kb), ref.start_from,
                                   rss.last_t() - ref.t_ms, ref.mark->name, mb_label(rss.last_value())));
    never.above = round_ms(rss.last_t() - ref.t_ms);
    put_curve(rec, name, std::move(never));
  }
}

// Phases: launch to the first mark, then from each mark to the next (the last
// to the last sample): area, peak and minor faults of each.
void put_phases(RunRecord& rec, const Curve& rss) {
  const auto names = phase_names(rec.marks);
  Json phases = Json::array();
  for (size_t i = 0; i < names.size(); ++i) {
    const Mark* open = i == 0 ? nullptr : &rec.marks[i - 1];
    const Mark* close = i + 1 < names.size() ? &rec.marks[i] : nullptr;  // the last phase runs to the end
    const double t0 = open ? open->t_ms : rss.first_t(), t1 = close ? close->t_ms : rss.last_t();
    const std::string prefix = "phase." + names[i] + ".";
    put_curve(rec, prefix + "area_mb_s", value(mb_s(rss.area(t0, t1))));
    // The kernel's peak when VmHWM was reset at the opening mark (or the phase
    // is the first) and read at the closing one; the sampled maximum otherwise.
    double peak = rss.max(t0, t1);
    if (close) peak = std::max(peak, double(close->sample.rss_kb));
    std::string peak_from = "sampled maximum";
    if (close && close->hwm_kb && (!open || open->hwm_reset)) {
      peak = std::max(peak, double(*close->hwm_kb));
      peak_from = "VmHWM";
    }
    put_curve(rec, prefix + "peak_rss_kb", value(peak));
    const int64_t faults0 = open ? open->sample.minflt : 0, faults1 = close ? close->sample.minflt : rec.minflt;
    put_curve(rec, prefix + "minflt", value(double(std::max<int64_t>(0, faults1 - faults0))));
    phases.push_back(Json{{"name", names[i]},
                          {"start_ms", round_ms(t0)},
                          {"end_ms", round_ms(t1)},
                          {"peak_from", peak_from}});
  }
  rec.curve_info["phases"] = phases;
  if (rec.marks.size() + 1 > kMaxPhases)
    rec.curve_info["phases_note"] =
        fmt::format("{} marks; the last phase runs from mark {} to the end", rec.marks.size(), kMaxPhases - 1);
}

// ---- the heap ledger's figures (--ledger) -----------------------------------

// Anonymous RSS outside the live malloc heap: what the allocator keeps, plus
// stacks, the program's own mappings and heaps that are not malloc's.
std::optional<double> outside_of(const Sample& s) {
  if (cell_missing(s, "heap_live_kb") || cell_missing(s, "anon_kb")) return std::nullopt;
  return double(s.anon_kb - s.heap_live_kb);
}

// The same net of LazyFree: pages given back with MADV_FREE, resident until
// the kernel needs them, are not kept.
std::optional<double> outside_net_of(const Sample& s) {
  const auto o = outside_of(s);
  if (!o || cell_missing(s, "lazyfree_kb")) return std::nullopt;
  return *o - double(s.lazyfree_kb);
}

std::optional<double> heap_live_of(const Sample& s) {
  if (cell_missing(s, "heap_live_kb")) return std::nullopt;
  return double(s.heap_live_kb);
}

void put_outside_after(RunRecord& rec, const Curve& outside, const Reference& ref, double start_outside) {
  for (const auto& off : kAfterOffsets) {
    const std::string name = fmt::format("after.outside_{}_kb", off.suffix);
    if (!ref.why_none.empty()) put_curve(rec, name, none(ref.why_none));
    else if (ref.t_ms + off.ms > outside.last_t())
      put_curve(rec, name, none(fmt::format("the run ended {:.0f} ms after the mark '{}'", outside.last_t() - ref.t_ms,
                                      ref.mark->name)));
    else put_curve(rec, name, value(std::round(outside.at(ref.t_ms + off.ms))));
  }
  const char* name = "after.outside_ms_to_90pct";
  if (!ref.why_none.empty()) return put_curve(rec, name, none(ref.why_none));
  const double level = outside.at(ref.t_ms), above = level - start_outside;
  if (above <= 0) return put_curve(rec, name, value(0));
  const double target = level - 0.9 * above;
  if (auto t = outside.first_at_or_below(ref.t_ms, target)) return put_curve(rec, name, value(round_ms(*t - ref.t_ms)));
  Maybe never = none(fmt::format("the memory outside the live heap never came down to {} (90% of the way from {} "
                                 "at the mark '{}' to {} at the start) in the {:.0f} ms after it",
                                 mb_label(target), mb_label(level), ref.mark->name, mb_label(start_outside), outside.last_t() - ref.t_ms));
  never.above = round_ms(outside.last_t() - ref.t_ms);
  put_curve(rec, name, std::move(never));
}

// Each phase's live-heap peak and, at its closing mark, the memory outside the
// live heap with and without LazyFree (read at every mark).
void put_heap_phases(RunRecord& rec, const Curve& live) {
  const auto names = phase_names(rec.marks);
  for (size_t i = 0; i < names.size(); ++i) {
    const Mark* open = i == 0 ? nullptr : &rec.marks[i - 1];
    const Mark* close = i + 1 < names.size() ? &rec.marks[i] : nullptr;
    const double t0 = open ? open->t_ms : live.first_t(), t1 = close ? close->t_ms : live.last_t();
    const std::string prefix = "phase." + names[i] + ".";
    put_curve(rec, prefix + "peak_heap_live_kb", value(std::round(live.max(t0, t1))));
    if (!close) continue;
    const auto o = outside_of(close->sample), net = outside_net_of(close->sample);
    put_curve(rec, prefix + "outside_end_kb", o ? value(*o) : none("the closing mark has no live-heap reading"));
    put_curve(rec, prefix + "outside_net_end_kb", net ? value(*net) : none("the closing mark has no LazyFree or live-heap reading"));
  }
}

// The ledger's metrics; none at all for a run without it.
void put_heap_metrics(RunRecord& rec, const Reference& ref, const std::string& unusable) {
  if (rec.sampler.unreadable.count("heap_live_kb") || !unusable.empty()) return;
  const Curve live(rec.samples, &heap_live_of), outside(rec.samples, &outside_of);
  if (live.empty()) {
    put_curve(rec, "peak_heap_live_kb", none("no sample has a live-heap reading (see sampler.null_cells)"));
    return;
  }
  put_curve(rec, "peak_heap_live_kb", value(live.max(live.first_t(), live.last_t())));
  double start = outside.at(outside.first_t());
  for (const auto& m : rec.marks)
    if (auto o = outside_of(m.sample); o && m.name == "start") {
      start = *o;
      break;
    }
  put_curve(rec, "outside_at_start_kb", value(start));
  const Sample& last = rec.samples.back();
  if (!cell_missing(last, "heap_allocs") && last.t_ms > 0)
    put_curve(rec, "alloc_rate_per_s", value(std::round(double(last.heap_allocs) / (last.t_ms / 1000))));
  put_outside_after(rec, outside, ref, start);
  put_heap_phases(rec, live);
}

}  // namespace

void compute_curve(RunRecord& rec, const std::string& asked, const std::string& declared) {
  rec.curve.clear();
  rec.curve_info = Json::object();
  const Curve rss(rec.samples, &Sample::rss_kb), anon(rec.samples, &Sample::anon_kb);
  const std::string unusable = unusable_reason(rec, rss);
  put_curve(rec, "rss_area_mb_s", unusable.empty() ? value(mb_s(rss.area(rss.first_t(), rss.last_t()))) : none(unusable));

  const After after = choose_after(rec.marks, asked, declared);
  const Reference ref = reference_of(rec, rss, after, unusable);
  put_levels_after(rec, rss, anon, ref);
  put_give_back_times(rec, rss, ref);
  put_curve(rec, "after.area_mb_s", ref.why_none.empty() ? value(mb_s(rss.area(ref.t_ms, rss.last_t()))) : none(ref.why_none));
  rec.curve_info["after"] = after_info(after, ref);

  if (unusable.empty()) put_phases(rec, rss);
  put_heap_metrics(rec, ref, unusable);
  compute_growth(rec);
}

}  // namespace mh
