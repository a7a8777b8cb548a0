// A long run (--soak DURATION): the duration as the user writes it, and the
// sampled series kept within a bound however long the run. Pure; the sampler
// owns one SeriesBound per run and is its only user (main thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/record.h"

namespace mh {

// What --soak accepts, for its error message.
inline constexpr const char* kDurationForms =
    "a positive number with a unit s, m or h (e.g. 30s, 10m, 1.5h; at most 7 days)";

// "30s", "10m", "1.5h" in seconds; nullopt for anything else (no unit, a
// unit not listed, zero, negative, past a week).
std::optional<double> parse_duration(const std::string& text);

// The points a soak's series keeps at most (the report's sampler.series.bound).
inline constexpr size_t kSoakSeriesPoints = 4096;

// Two neighbouring samples as one: every column the larger of the two. The
// level columns (RSS and its parts, the live heap, threads) keep their peak;
// the cumulative ones (faults, CPU time, allocations, stall) and the time
// their later value. A cell one of them lacks is the other's.
Sample merge_samples(const Sample& a, const Sample& b);

// Keeps a series at most `bound` points long. Every sample is read; each
// point holds `bucket()` consecutive samples merged (merge_samples). When the
// series reaches the bound, neighbouring pairs are merged and the bucket
// doubles: the series then holds bound/2 points at twice the interval.
// Invariant: series.size() < bound after every add.
class SeriesBound {
 public:
  explicit SeriesBound(size_t bound) : bound_(bound < 4 ? 4 : bound) {}
  void add(std::vector<Sample>& series, const Sample& s);
  // The samples of the bucket not yet full, as they are: the merged earlier
  // ones, then the last sample unmerged (the run's end is read exactly).
  void flush(std::vector<Sample>& series);
  size_t bound() const { return bound_; }
  int halvings() const { return halvings_; }
  uint64_t bucket() const { return uint64_t{1} << halvings_; }

 private:
  size_t bound_;
  int halvings_ = 0;
  uint64_t taken_ = 0;  // samples in the bucket being filled
  std::optional<Sample> merged_, newest_;
};

// A line per soak run for under the table: how long it ran of how long, the
// starts and the load generator's runs, whether complete, the series' points
// and interval, RSS at its first and last sample and its peak, in MB. "" when
// no run soaked.
std::string soak_note(const std::vector<RunRecord>& runs);

}  // namespace mh
