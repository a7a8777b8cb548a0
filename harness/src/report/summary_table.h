// The run summary as a table: a block per workload, a row per allocator, the
// median (min-max) over the ok runs of the workload's headline figures (its
// result, which ranks the rows), then the registry's columns (peak RSS, minor
// faults, wall and CPU time, RSS at exit), then notes on failed runs. Derived
// from the run records; the terminal shows it as text, summary_exports.h as
// markdown. Pure functions; any thread.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/metrics.h"
#include "core/record.h"

namespace mh {

// Headline figures by workload name; a workload without any keeps the order
// of the runs.
using HeadlinesByWorkload = std::map<std::string, std::vector<Headline>>;

// One workload's block: the header and a line per row, cells as shown, names
// as given (each destination escapes them: escape.h).
struct SummaryBlock {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> lines;
};
struct SummaryBlocks {
  std::vector<SummaryBlock> blocks;  // in order of first appearance of the workload
  bool ranked = false;               // some block has headline columns and ranks its rows by them
};
SummaryBlocks summary_blocks(const std::vector<RunRecord>& runs, const HeadlinesByWorkload& headlines);

// What the table's cells are, then a note per failed run; each line opens
// with `item` ("" for the terminal, "- " for a markdown list) and the names
// and reasons in it pass through `escaped` (escape.h's for the destination).
std::string summary_notes(const std::vector<RunRecord>& runs, bool ranked, const char* item,
                          std::string (*escaped)(std::string_view));

// The table as the terminal shows it, columns aligned.
std::string summary_table(const std::vector<RunRecord>& runs, const HeadlinesByWorkload& headlines = {});

}  // namespace mh
