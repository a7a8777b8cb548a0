// --soak's duration and the bounded series of a long run (see soak.h).
#include "core/soak.h"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/cells.h"

namespace mh {

std::optional<double> parse_duration(const std::string& text) {
  if (text.empty() || text.size() > 32) return std::nullopt;
  const char unit = text.back();
  const double scale = unit == 's' ? 1 : unit == 'm' ? 60 : unit == 'h' ? 3600 : 0;
  if (scale == 0) return std::nullopt;
  const std::string number = text.substr(0, text.size() - 1);
  if (number.empty() || !(std::isdigit(static_cast<unsigned char>(number[0])) || number[0] == '.'))
    return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v) || v <= 0) return std::nullopt;
  const double seconds = v * scale;
  if (seconds > 7 * 86400.0) return std::nullopt;
  return seconds;
}

Sample merge_samples(const Sample& a, const Sample& b) {
  Sample out = b;
  for (const auto& c : sample_columns()) {
    const bool a_has = !cell_missing(a, c.name), b_has = !cell_missing(b, c.name);
    if (a_has && (!b_has || c.get(a) > c.get(b))) c.set(out, c.get(a));
  }
  out.missing = a.missing & b.missing;
  return out;
}

void SeriesBound::add(std::vector<Sample>& series, const Sample& s) {
  if (newest_) merged_ = merged_ ? merge_samples(*merged_, *newest_) : *newest_;
  newest_ = s;
  if (++taken_ < bucket()) return;
  series.push_back(merged_ ? merge_samples(*merged_, *newest_) : *newest_);
  merged_.reset();
  newest_.reset();
  taken_ = 0;
  if (series.size() < bound_) return;
  size_t kept = 0;
  for (size_t i = 0; i < series.size(); i += 2)
    series[kept++] = i + 1 < series.size() ? merge_samples(series[i], series[i + 1]) : series[i];
  series.resize(kept);
  ++halvings_;
}

void SeriesBound::flush(std::vector<Sample>& series) {
  if (merged_) series.push_back(*merged_);
  if (newest_) series.push_back(*newest_);
  merged_.reset();
  newest_.reset();
  taken_ = 0;
}

std::string soak_note(const std::vector<RunRecord>& runs) {
  std::string out;
  for (const auto& r : runs) {
    if (!r.soak) continue;
    const auto& s = *r.soak;
    const auto& st = r.sampler;
    const std::string series =
        st.series_bound ? fmt::format("{} points every {} ms (at most {})", r.samples.size(),
                                      number_text(st.interval_ms * double(uint64_t{1} << st.series_halvings)),
                                      st.series_bound)
                        : fmt::format("{} points", r.samples.size());
    const auto mb = [](int64_t kb) { return number_text(double(kb) * 1024 / 1e6); };
    const std::string rss = r.samples.empty() ? "no samples"
                                              : fmt::format("RSS {} MB first, {} MB last, peak {} MB", mb(r.samples.front().rss_kb),
                                                            mb(r.samples.back().rss_kb), mb(r.peak_rss_kb));
    out += fmt::format("soak: {} under {} (run {}): {} s of {} s, {} start{}, {} run{} of the load generator, {}; "
                       "series of {}; {}\n",
                       r.workload, r.allocator.name, r.repetition, number_text(s.ran_s), number_text(s.duration_s),
                       s.repetitions, s.repetitions == 1 ? "" : "s", s.loops, s.loops == 1 ? "" : "s",
                       s.complete ? "complete" : "incomplete", series, rss);
  }
  return out;
}

}  // namespace mh
