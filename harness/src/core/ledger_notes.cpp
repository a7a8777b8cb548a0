// Notes on the heap ledger's figures (see ledger_notes.h). Pure functions.
#include "core/ledger_notes.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

#include "core/cells.h"
#include "core/paths.h"

namespace mh {

namespace {

// A live heap this much above the anonymous RSS, and by a MiB at least, is
// untouched memory, not the sampling's noise (the two are read apart).
constexpr double kAboveRatio = 1.1, kAboveMinKb = 1024;
// A Python program's live heap under this share of its anonymous RSS, by
// 8 MiB at least, leaves most of its memory to pymalloc.
constexpr double kBelowShare = 0.5, kBelowMinKb = 8192;

std::string mb_text(double kb) { return number_text(kb * 1024 / 1e6); }

bool is_python(const std::string& path) {
  static const std::regex python("python[0-9.]*");
  return std::regex_match(base_name(path), python);
}

// PYTHONMALLOC=malloc (or malloc_debug) in the program's environment: pymalloc is off.
bool pymalloc_off(const RunRecord& run) {
  const Json env = run.params.value("env", Json::object());
  if (!env.is_object() || !env.contains("PYTHONMALLOC") || !env["PYTHONMALLOC"].is_string()) return false;
  return env["PYTHONMALLOC"].get<std::string>().rfind("malloc", 0) == 0;
}

}  // namespace

bool runs_python(const RunRecord& run) {
  const auto& heaps = run.allocator.other_heaps;
  if (std::find(heaps.begin(), heaps.end(), "pymalloc") != heaps.end()) return true;
  const Json command = run.params.value("command", Json::array());
  if (command.is_array() && !command.empty() && command[0].is_string() && is_python(command[0].get<std::string>()))
    return true;
  const Json path = run.params.value("path", Json());
  return path.is_string() && is_python(path.get<std::string>());
}

std::vector<LedgerNote> ledger_notes(const SummaryRow& row, const RunRecord& run) {
  const stats::Summary *live = row.find("peak_heap_live_kb"), *anon = row.find("peak_anon_kb");
  if (!live || !anon) return {};
  std::vector<LedgerNote> out;
  const double l = live->median, a = anon->median;
  const std::string figures = fmt::format("peak live heap {} MB, peak anonymous RSS {} MB", mb_text(l), mb_text(a));
  if (l > a * kAboveRatio && l - a >= kAboveMinKb)
    out.push_back({"live_not_resident", figures,
                   "the live heap is above the anonymous RSS: blocks were allocated and never touched (the kernel "
                   "gives a page memory at its first write); the live heap counts their size, RSS the pages written",
                   l, a});
  if (runs_python(run) && !pymalloc_off(run) && l < a * kBelowShare && a - l >= kBelowMinKb)
    out.push_back({"pymalloc", figures,
                   "Python serves its small objects from pymalloc's arenas, which the ledger does not see, so most "
                   "of the anonymous RSS is outside the live heap; --env PYTHONMALLOC=malloc sends them through "
                   "malloc, where the ledger counts them",
                   l, a});
  return out;
}

}  // namespace mh
