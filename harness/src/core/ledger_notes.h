// What a row's heap-ledger figures need said beside them to be read right:
// a live heap above the anonymous RSS (blocks allocated and never touched),
// and one far below it in a program whose objects live in a heap that is not
// malloc's (Python's pymalloc). Pure functions over the summary; any thread.
#pragma once

#include <string>
#include <vector>

#include "core/record.h"
#include "core/summary.h"

namespace mh {

struct LedgerNote {
  std::string code;     // "live_not_resident", "pymalloc"
  std::string figures;  // the row's own: "live heap 968 MB, anonymous RSS 146 MB"
  std::string why;      // the same for every row of the code: what it means, what to do
  double live_kb = 0, anon_kb = 0;  // the medians the note is about
};

// The notes of one row; `run` is one of its runs (its program and
// environment). None without ledger figures.
std::vector<LedgerNote> ledger_notes(const SummaryRow& row, const RunRecord& run);

// Whether a run's program is a CPython interpreter (its command's or
// executable's name: python, python3, python3.12).
bool runs_python(const RunRecord& run);

}  // namespace mh
