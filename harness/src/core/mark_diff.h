// The change of the live heap by call site between two marks of one run
// (--heap-sample): each site's estimated bytes at both marks, matched by its
// frames (one process: the same objects and offsets), and the standard error
// of the change. Pure functions over the record.
#pragma once

#include <string>
#include <vector>

#include "core/record.h"

namespace mh {

struct MarkSiteChange {
  std::string stack;  // folded: root first (folded_stack)
  std::string label;  // the innermost program frame and two callers (site_label)
  double from_bytes = 0, to_bytes = 0;
  // Whether the mark kept the site: one it did not keep had no sampled block
  // live then, or was among the sites summed as the rest (below the floor).
  bool at_from = false, at_to = false;
  // The change's standard error from the sampled blocks made or freed between
  // the marks: the blocks live at both marks are the same blocks and cancel.
  // A mark keeps each site's sum of w(w - s) over its live sampled blocks
  // (V, its stderr squared), not the blocks themselves, so the error is
  // sqrt(|V_to - V_from|): exact when the site only grew or only shrank
  // between the marks, a lower bound when it did both; stderr_max =
  // sqrt(V_from + V_to) is then the upper bound (no block common to both).
  double stderr_bytes = 0, stderr_max = 0;
  double change() const { return to_bytes - from_bytes; }
};

struct MarkDiff {
  std::string from, to;  // the marks' names
  double from_t_ms = 0, to_t_ms = 0;
  std::vector<MarkSiteChange> sites;  // largest absolute change first
  double from_rest = 0, to_rest = 0;  // the bytes of the sites each mark summed as the rest
  // The smallest site each mark kept: a site it did not keep held less (0: it kept none).
  double from_floor = 0, to_floor = 0;
  uint64_t interval_bytes = 0;
};

// Nullopt when either mark has no call sites (`error` names the marks that do).
std::optional<MarkDiff> mark_diff(const RunRecord& r, const std::string& from, const std::string& to,
                                  std::string& error);
// inferno's and flamegraph.pl's differential folded form (difffolded.pl): a
// line per site, "STACK FROM_BYTES TO_BYTES", the rest as "[other call sites]";
// a site with 0 at both is left out.
std::string folded_diff(const MarkDiff& d);
// For a terminal: the `top` largest changes in MB with their errors, and what
// the errors mean.
std::string mark_diff_table(const MarkDiff& d, size_t top = 10);

}  // namespace mh
