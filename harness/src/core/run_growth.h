// Growth over a run: "leak or allocator?". The slope of the live heap (the
// heap ledger's, --ledger) is the program's growth; the slope of anonymous RSS
// outside it is mostly the allocator's (fragmentation, retention). Without
// the ledger only anonymous RSS as a whole is tested. Fills the growth.*
// metrics (metrics.cpp) and the run's growth block with the verdict. Pure
// functions of the record; any thread.
#pragma once

#include <string>
#include <vector>

#include "core/record.h"

namespace mh {

// The window tested: from the mark "growth-start" to the mark "growth-end"
// when the workload sends them (either alone bounds one side); otherwise the
// run after its first kWarmupShare (start-up: a heap, a cache filling), up to
// the "end" mark (the workload's teardown) or the last sample.
inline constexpr const char* kGrowthStartMark = "growth-start";
inline constexpr const char* kGrowthEndMark = "growth-end";
inline constexpr double kWarmupShare = 0.2;
// A series is tested with at least this many samples spanning this long in
// the window; with fewer its metric is null with the reason.
inline constexpr size_t kGrowthMinSamples = 30;
inline constexpr double kGrowthMinSpanMs = 2000;

// The call sites named in the growth block (grown_sites), most grown first.
inline constexpr size_t kGrowthSites = 5;

// growth.live_mb_per_min and growth.outside_mb_per_min with the ledger,
// growth.anon_mb_per_min without, into rec.curve; the window, each series'
// slope, interval, p and direction, and the verdict into rec.growth.
void compute_growth(RunRecord& rec);

// A run's verdict, from its growth block: each growing series ("live heap
// growing at 1.05 MB/min [1.01-1.09] (a leak?)"; the share outside the live
// heap "growing outside malloc" when at least half of its growth between the
// window's marks is thread stacks and named mappings (NotMalloc), else "the
// allocator's share growing"; where the live heap grew and
// the block has grown_sites, "; most grown: SITE (+X MB between 'A' and 'B')"),
// or "no growth beyond Z
// MB/min (the smallest this run could see)"; "" when nothing was tested.
std::string growth_verdict(const Json& growth);

// The notes under the run table: per workload and allocator, the verdict of
// the runs (how many of them alike), where a series grew, the run had the
// ledger, or the workload marked its window. Names pass through `escaped`.
std::vector<std::string> growth_notes(const std::vector<RunRecord>& runs, std::string (*escaped)(std::string_view));

}  // namespace mh
