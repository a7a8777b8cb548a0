// The live heap's call sites at the peak on the terminal (see heap_sites_table.h).
#include "report/heap_sites_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/escape.h"
#include "core/heap_sites.h"
#include "core/units.h"

namespace mh {

namespace {

std::string site_line(const HeapSite& s, const std::string& label) {
  const DisplayUnit mb = display_unit("bytes");
  return fmt::format("  {:>9} ± {:<6} {}\n", display_number(s.bytes, mb), display_number(s.stderr_bytes, mb),
                     escape::terminal(label));
}

// The labels of the first n sites, each with two callers, or more where two
// would read the same (one function reached from different places): a line per
// site that says which it is, up to 8 callers.
std::vector<std::string> distinct_labels(const HeapSites& h, size_t n, const std::string& allocator_library) {
  n = std::min(n, h.top.size());
  std::vector<size_t> callers(n, 2);
  std::vector<std::string> labels(n);
  for (int round = 0; round < 7; ++round) {
    for (size_t i = 0; i < n; ++i) labels[i] = site_label(h.top[i], allocator_library, callers[i]);
    bool same = false;
    for (size_t i = 0; i < n; ++i)
      for (size_t j = i + 1; j < n; ++j)
        if (labels[i] == labels[j]) {
          same = true;
          ++callers[i];
          ++callers[j];
        }
    if (!same) break;
  }
  return labels;
}

// The first ok run of each workload and allocator that has sites, else the
// first with sites at all.
std::vector<const RunRecord*> shown_runs(const std::vector<RunRecord>& runs) {
  std::vector<const RunRecord*> out;
  std::set<std::pair<std::string, std::string>> done;
  for (bool ok_only : {true, false})
    for (const auto& r : runs)
      if ((!ok_only || r.status == Status::Ok) && peak_sites(r) && done.emplace(r.workload, r.allocator.name).second)
        out.push_back(&r);
  return out;
}

}  // namespace

std::string heap_sites_table(const std::vector<RunRecord>& runs, size_t top) {
  std::string out;
  bool stripped = false;
  for (const RunRecord* r : shown_runs(runs)) {
    std::string where;
    const HeapSites* sites = peak_sites(*r, &where);
    if (out.empty()) out = "\nlive heap by call site at the peak (MB ± standard error, sampled):\n";
    out += fmt::format("{} under {} (run {}, {}{}):\n", escape::terminal(r->workload), escape::terminal(r->allocator.name),
                       r->repetition, where == "peak" ? "" : "mark ", escape::terminal(where));
    const auto labels = distinct_labels(*sites, top, r->allocator.library);
    for (size_t i = 0; i < labels.size(); ++i) {
      out += site_line(sites->top[i], labels[i]);
      stripped = stripped || labels[i].find(kDynsymMark) != std::string::npos;
    }
    const size_t others = (sites->top.size() > top ? sites->top.size() - top : 0) + size_t(sites->rest_sites);
    if (others) out += fmt::format("  and {} other sites\n", others);
  }
  if (stripped) out += stripped_names_note();
  return out;
}

}  // namespace mh
