// The run summary as a table: a block per workload, a row per allocator, the
// median (min-max) over the ok runs of the workload's headline figures (its
// result, which ranks the rows), the ratio of its first to the reference
// allocator's, then the registry's columns that some run measured (peak RSS,
// minor faults, wall and CPU time, RSS at exit, the ledger's live heap), then
// a legend, notes on the ledger's figures and on failed runs. Cells follow
// core/cells.h. Derived from the run records; the terminal shows it as text
// (within a width, columns of less weight left out), summary_exports.h as
// markdown. Pure functions; any thread.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/ledger_notes.h"
#include "core/metrics.h"
#include "core/record.h"

namespace mh {

// Headline figures by workload name; a workload without any keeps the order
// of the runs.
using HeadlinesByWorkload = std::map<std::string, std::vector<Headline>>;
// As a report's context keeps them ("headlines"), so that `harness show`
// draws the table the run drew; read back leniently (nothing on a bad entry).
Json headlines_json(const HeadlinesByWorkload& h);
HeadlinesByWorkload headlines_from_json(const Json& j);

// How a table is drawn: the allocator the ratio column divides by ("": the
// first of the runs), and every column (`wide`) or those that fit in `width`.
struct TableSettings {
  std::string reference;
  bool wide = false;
  size_t width = 160;
};

// One workload's block: the header and a line per row, cells as shown, names
// as given (each destination escapes them: escape.h); per column the order in
// which a narrow terminal leaves it out (0: never; the highest first).
struct SummaryBlock {
  std::vector<std::string> header;
  std::vector<int> leave_out;
  std::vector<std::vector<std::string>> lines;
  std::string ratio_legend;  // what the ratio column is; "" without one
};
// A row's ledger notes (ledger_notes.h), with whose they are.
struct RowNotes {
  std::string workload, allocator, role;
  std::vector<LedgerNote> notes;
};
struct SummaryBlocks {
  std::vector<SummaryBlock> blocks;  // in order of first appearance of the workload
  bool ranked = false;               // some block has headline columns and ranks its rows by them
  bool never = false;                // some cell has a run whose time never came
  std::vector<RowNotes> notes;       // rows with ledger notes, in table order
};
SummaryBlocks summary_blocks(const std::vector<RunRecord>& runs, const HeadlinesByWorkload& headlines,
                             const std::string& reference = "");

// The allocators of the runs, in order of first appearance: what a reference may name.
std::vector<std::string> table_allocators(const std::vector<RunRecord>& runs);
// "" when `reference` is "" or one of table_allocators(runs); else the error,
// naming the valid ones.
std::string check_reference(const std::vector<RunRecord>& runs, const std::string& reference);

// The legend (what the cells and the ratio are), the ledger notes, then a
// note per failed run; each line opens with `item` ("" for the terminal, "- "
// for a markdown list) and the names and reasons in it pass through `escaped`
// (escape.h's for the destination).
std::string summary_notes(const std::vector<RunRecord>& runs, const SummaryBlocks& s, const char* item,
                          std::string (*escaped)(std::string_view));

// The table as the terminal shows it: columns aligned, long titles on two
// lines, within settings.width unless wide (the columns left out named under it).
std::string summary_table(const std::vector<RunRecord>& runs, const HeadlinesByWorkload& headlines = {},
                          const TableSettings& settings = {});

}  // namespace mh
