// The change of the live heap by call site between two marks (see mark_diff.h).
#include "core/mark_diff.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/cells.h"
#include "core/heap_sites.h"

namespace mh {

namespace {

// What one site is within one process: its frames exactly.
std::string frames_key(const HeapSite& s) {
  std::string key;
  for (const auto& f : s.frames) key += fmt::format("{}+{:x};", f.object, f.offset);
  return key;
}

const Mark* mark_named(const RunRecord& r, const std::string& name) {
  for (const auto& m : r.marks)
    if (m.name == name && m.heap_sites) return &m;
  return nullptr;
}

double smallest(const HeapSites& h) {
  double least = 0;
  for (const auto& s : h.top)
    if (least == 0 || s.bytes < least) least = s.bytes;
  return least;
}

std::string mb_of_bytes(double bytes) { return number_text(bytes / 1e6); }
std::string signed_mb(double bytes) { return fmt::format("{}{}", bytes >= 0 ? "+" : "", mb_of_bytes(bytes)); }

}  // namespace

std::optional<MarkDiff> mark_diff(const RunRecord& r, const std::string& from, const std::string& to,
                                  std::string& error) {
  const Mark* a = mark_named(r, from);
  const Mark* b = mark_named(r, to);
  if (!a || !b) {
    std::string with;
    for (const auto& m : r.marks)
      if (m.heap_sites) with += fmt::format("{}{}", with.empty() ? "" : ", ", m.name);
    error = fmt::format("{} {}: no such mark with call sites in run {} of {}; its marks with call sites: {}",
                        !a ? "--from" : "--to", !a ? from : to, r.repetition, r.allocator.name,
                        with.empty() ? "none" : with);
    return std::nullopt;
  }
  MarkDiff d;
  d.from = from;
  d.to = to;
  d.from_t_ms = a->t_ms;
  d.to_t_ms = b->t_ms;
  d.from_rest = a->heap_sites->rest.bytes;
  d.to_rest = b->heap_sites->rest.bytes;
  d.from_floor = smallest(*a->heap_sites);
  d.to_floor = smallest(*b->heap_sites);
  d.interval_bytes = b->heap_sites->interval_bytes;
  std::map<std::string, MarkSiteChange> by_key;
  std::map<std::string, std::pair<double, double>> variance;  // V at from, V at to
  for (const auto& [h, is_from] : {std::pair{&*a->heap_sites, true}, std::pair{&*b->heap_sites, false}})
    for (const auto& s : h->top) {
      auto& c = by_key[frames_key(s)];
      c.stack = folded_stack(s);
      c.label = site_label(s, r.allocator.library);
      (is_from ? c.from_bytes : c.to_bytes) += s.bytes;
      (is_from ? c.at_from : c.at_to) = true;
      (is_from ? variance[frames_key(s)].first : variance[frames_key(s)].second) += s.stderr_bytes * s.stderr_bytes;
    }
  for (auto& [key, c] : by_key) {
    const auto [v_from, v_to] = variance[key];
    c.stderr_bytes = std::sqrt(std::fabs(v_to - v_from));
    c.stderr_max = std::sqrt(v_from + v_to);
    d.sites.push_back(std::move(c));
  }
  std::stable_sort(d.sites.begin(), d.sites.end(),
                   [](const auto& x, const auto& y) { return std::fabs(x.change()) > std::fabs(y.change()); });
  return d;
}

std::string folded_diff(const MarkDiff& d) {
  std::string out;
  auto line = [&](const std::string& stack, double from, double to) {
    if (std::llround(from) > 0 || std::llround(to) > 0)
      out += fmt::format("{} {} {}\n", stack, std::llround(from), std::llround(to));
  };
  for (const auto& s : d.sites) line(s.stack, s.from_bytes, s.to_bytes);
  line("[other call sites]", d.from_rest, d.to_rest);
  return out;
}

std::string mark_diff_table(const MarkDiff& d, size_t top) {
  double total = 0;
  for (const auto& s : d.sites) total += s.change();
  total += d.to_rest - d.from_rest;
  std::string out = fmt::format(
      "live heap by call site from {} ({} s) to {} ({} s): {} MB in all (sampled every {} bytes on average)\n",
      d.from, number_text(d.from_t_ms / 1e3), d.to, number_text(d.to_t_ms / 1e3),
      signed_mb(total), d.interval_bytes);
  out += fmt::format("{:>11} {:>9} {:>9} {:>9} {:>9}  {}\n", "change MB", "+- MB", "at most", "from MB", "to MB",
                     "site");
  for (size_t i = 0; i < d.sites.size() && i < top; ++i) {
    const auto& s = d.sites[i];
    const std::string from = s.at_from ? mb_of_bytes(s.from_bytes) : fmt::format("<{}", mb_of_bytes(d.from_floor));
    const std::string to = s.at_to ? mb_of_bytes(s.to_bytes) : fmt::format("<{}", mb_of_bytes(d.to_floor));
    out += fmt::format("{:>11} {:>9} {:>9} {:>9} {:>9}  {}\n", signed_mb(s.change()),
                       mb_of_bytes(s.stderr_bytes), mb_of_bytes(s.stderr_max), from, to, s.label);
  }
  out += "+-: the standard error of the change from the sampled blocks made or freed between the marks, exact when "
         "the site only grew or only shrank; at most: its bound when it did both. A site a mark did not keep held "
         "less than that mark's smallest kept site (<); it counts as 0 in the folded file. MB = 10^6 bytes\n";
  return out;
}

}  // namespace mh
