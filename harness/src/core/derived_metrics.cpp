// Derived run metrics (see derived_metrics.h).
#include "core/derived_metrics.h"

#include <algorithm>

namespace mh {

namespace {

void peak_and_final_rss(RunRecord& rec) {
  rec.peak_rss_kb = 0;
  for (const auto& s : rec.samples) rec.peak_rss_kb = std::max(rec.peak_rss_kb, s.rss_kb);
  if (!rec.samples.empty()) rec.final_rss_kb = rec.samples.back().rss_kb;
  // The workload's `end` mark, its last moment, when it sent one.
  for (const auto& m : rec.marks)
    if (m.name == "end") rec.final_rss_kb = m.sample.rss_kb;
}

// With VmHWM reset at marks, each mark's reading is the peak of the phase it
// closes, and the kernel's figures at exit cover only the last phase: the
// workload's VmHWM, and wait4's ru_maxrss (the larger of the high-water mark
// since the last reset and the harness's image from before the exec). Both
// are raised to the largest phase peak.
void raise_to_phase_peaks(RunRecord& rec) {
  if (std::none_of(rec.marks.begin(), rec.marks.end(), [](const Mark& m) { return m.hwm_reset; })) return;
  int64_t peak = 0;
  for (const auto& m : rec.marks) peak = std::max(peak, m.hwm_kb.value_or(0));
  if (rec.hwm_kb.value) rec.hwm_kb.value = std::max(*rec.hwm_kb.value, double(peak));
  rec.maxrss_kb = std::max(rec.maxrss_kb, peak);
}

// Sampling misses what a program grew in its last interval; the kernel's
// high-water mark does not. wait4's ru_maxrss is trusted only above the
// harness's image the child was forked with.
void raise_peak_to_kernel(RunRecord& rec) {
  for (const auto& m : rec.marks) rec.peak_rss_kb = std::max(rec.peak_rss_kb, m.hwm_kb.value_or(0));
  rec.peak_from = "samples";
  if (rec.hwm_kb.value) {
    rec.peak_rss_kb = std::max(rec.peak_rss_kb, static_cast<int64_t>(*rec.hwm_kb.value));
    rec.peak_from = rec.hwm_at_exit_stop ? "exit_stop" : "workload";
  } else if (rec.harness_rss_at_fork_kb && rec.maxrss_kb > *rec.harness_rss_at_fork_kb) {
    rec.peak_rss_kb = std::max(rec.peak_rss_kb, rec.maxrss_kb);
    rec.peak_from = "wait4";
  }
}

}  // namespace

void derive_run_metrics(RunRecord& rec) {
  peak_and_final_rss(rec);
  raise_to_phase_peaks(rec);
  raise_peak_to_kernel(rec);
  derive_anon_peak_and_cpu(rec);
}

void derive_anon_peak_and_cpu(RunRecord& rec) {
  rec.peak_anon_kb = 0;
  for (const auto& s : rec.samples) rec.peak_anon_kb = std::max(rec.peak_anon_kb, s.anon_kb);
  rec.cpu_ms = rec.utime_ms + rec.stime_ms;
}

}  // namespace mh
