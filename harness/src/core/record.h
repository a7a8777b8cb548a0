// The run record: what one run of a workload under one allocator produced. The
// runner fills it, the statistics read it, every exporter derives from it.
// Plain data; owned by one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mh {

using Json = nlohmann::ordered_json;

// A JSON value as text: the one way the harness writes JSON (reports,
// journals, pages, stores, keys). Text from outside is made valid UTF-8 where
// it enters (core/escape.h); should a byte that is not slip through anyway,
// it is written as U+FFFD instead of throwing, so no report is lost to it.
inline std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

struct Sample {
  double t_ms = 0;  // since the child was started
  int64_t rss_kb = 0, anon_kb = 0, file_kb = 0, shmem_kb = 0, anon_huge_kb = 0;
  int64_t minflt = 0, majflt = 0;
  double utime_ms = 0, stime_ms = 0;
  int64_t threads = 0;
  // LazyFree (smaps_rollup): pages the allocator gave back with MADV_FREE,
  // still resident until the kernel needs them.
  int64_t lazyfree_kb = 0;
  // The heap ledger's counters (--ledger): the usable size of the blocks the
  // program holds, their number, and allocation calls so far.
  int64_t heap_live_kb = 0, heap_blocks = 0, heap_allocs = 0;
  // The run's memory cgroup (measure/memory_group.h): what it is charged for
  // (page cache included), and the time its tasks stalled on memory since
  // the run started (PSI some and full, cumulative).
  int64_t cgroup_kb = 0;
  double psi_some_ms = 0, psi_full_ms = 0;
  // The columns this sample could not measure, a bit each (column_bit): null
  // in the report, never the 0 or the stale value the field holds; the reason
  // is in SamplerStats::null_cells.
  uint32_t missing = 0;
};

// The sampled columns, declared once: the JSON writer, the schema test and the
// plots (through the report's manifest, "samples.NAME") all follow this list.
struct SampleColumn {
  const char* name;
  const char* unit;   // as stored, in the registry's units (metrics.h)
  const char* title;  // what a plot calls it
  double (*get)(const Sample&);
  void (*set)(Sample&, double);  // what a report read back stores (integers truncated)
  bool summed;  // a process tree's sample adds its descendants' (everything but the time)
};
const std::vector<SampleColumn>& sample_columns();
// The bit of a column (by name) in Sample::missing.
uint32_t column_bit(std::string_view column);
inline bool cell_missing(const Sample& s, std::string_view column) { return (s.missing & column_bit(column)) != 0; }

// The live sampled heap by call stack (--heap-sample): a site's bytes are the
// sum of its sampled blocks' weights, its standard error sqrt(sum w(w - s)).
struct HeapFrame {
  HeapFrame() = default;
  HeapFrame(std::string object_, uint64_t offset_) : object(std::move(object_)), offset(offset_) {}
  std::string object;  // the mapping the return address falls in, as maps names it ("[anonymous]": none)
  uint64_t offset = 0;  // from the file's start (its first mapping)
  // Filled after the run from the object file (sys/symbolize.h): the function
  // (demangled), the file and line of the call where DWARF has them, and where
  // the name came from: "dwarf", "symtab", "dynsym", or "none" (then `reason`
  // says why; the frame is its object and offset). "" when not symbolised.
  std::string function, file;
  int line = 0;  // 0: unknown
  std::string source, reason;
};
struct HeapSite {
  double bytes = 0, stderr_bytes = 0;
  int64_t samples = 0;
  std::vector<HeapFrame> frames;  // innermost first; empty for the rest summed
};
struct HeapSites {
  uint64_t interval_bytes = 0;   // the mean gap between samples
  // By estimated bytes, at most 50; at a mark up to 50 more, those an
  // earlier mark kept among its heaviest (sys/heap_ledger.h).
  std::vector<HeapSite> top;
  HeapSite rest;                 // every other site summed
  int64_t rest_sites = 0;
  uint64_t dropped = 0;          // samples the ledger's tables had no room for
  // RunRecord::heap_sites_peak is the live heap by call site at its peak: the
  // ledger's last snapshot, read at the last mark or the exit stop. These two
  // are its only: the live heap when the ledger took it, and how many it took
  // in the run (a new one each time the live heap passed the last by 1%).
  int64_t heap_live_bytes = 0;
  uint64_t snapshots = 0;
};

// An object file the heap's call stacks went through: its GNU build ID (hex),
// so that its frames can be symbolised again later, or null with the reason.
struct HeapObject {
  std::optional<std::string> build_id;
  std::string reason;
};

// Anonymous memory at a mark that is not malloc's, read from /proc/PID/smaps
// under the heap ledger (--ledger): thread stacks (the main thread's [stack] and
// each mapping that holds a thread's stack pointer) and mappings the program
// named ([anon:NAME], prctl PR_SET_VMA_ANON_NAME). Resident KiB ("Anonymous:").
struct NotMalloc {
  int64_t stacks_kb = 0, named_kb = 0;
};

struct Mark {
  double t_ms = 0;
  std::string name;
  Sample sample;  // taken when the harness received the mark
  // VmHWM read with that sample: the peak since the previous mark when that
  // mark's reset worked, else since the start. None when it could not be read.
  std::optional<int64_t> hwm_kb;
  // Whether VmHWM was reset after this mark (/proc/PID/clear_refs, 5), so that
  // the next mark's VmHWM is the peak of the phase in between.
  bool hwm_reset = false;
  // The live heap by call site at this mark (runs with --heap-sample only).
  std::optional<HeapSites> heap_sites;
  // With the ledger: the anonymous memory at this mark that is not malloc's.
  std::optional<NotMalloc> not_malloc;
};

struct ThreadStat {
  int tid = 0;
  std::string name;
  uint64_t cpu_ns = 0, wait_ns = 0, vol_ctxsw = 0, invol_ctxsw = 0;
};

// A measurement that may be missing: value, or null with the reason. A time
// that never came within the run (memory never given back) is null with
// `above` set: it is more than `above`, the time the run had left
// (right-censored), and a comparison ranks it above every time below that.
struct Maybe {
  std::optional<double> value;
  std::string reason;
  std::optional<double> above = std::nullopt;
};

struct AllocatorRecord {
  std::string name;     // as asked: "jemalloc:background_thread=true", "mine=/x/libfoo.so"
  std::string family;   // glibc, jemalloc, mimalloc, tcmalloc, scav, snmalloc, custom
  std::string version;  // as the workload found it in-process
  std::string library;  // what was preloaded ("" for glibc)
  std::map<std::string, std::string> env;  // allocator options as environment
  bool verified = false;
  std::string identified;  // the family the workload found serving malloc ("" if it never said)
  std::string served_by;   // the library that served malloc, as the workload found it
  // "probe": the workload said itself (built-in workloads); "maps": the harness
  // found the library mapped in the process (any program; see maps_check.h).
  std::string verified_by = "probe";
  std::string why_unverified;  // maps: why not verified (for exit.error)
  // maps: heaps the program keeps apart from malloc's, found in its maps
  // ("pymalloc"); the ledger does not see them (core/ledger_notes.h).
  std::vector<std::string> other_heaps;
};

// interrupted: stopped because the harness was asked to stop (SIGINT, SIGTERM,
// SIGHUP); oom: killed by the kernel for passing --memory-limit.
enum class Status { Ok, Failed, Crashed, Timeout, Interrupted, Oom };
inline constexpr Status kAllStatuses[] = {Status::Ok,      Status::Failed,      Status::Crashed,
                                          Status::Timeout, Status::Interrupted, Status::Oom};
const char* status_name(Status s);

struct ExitInfo {
  std::optional<int> code;    // exit status when it exited
  std::optional<int> signal;  // the signal that ended it
  std::string error;          // why the run is not ok, for a person
};

struct SamplerStats {
  double interval_ms = 0;              // asked
  std::optional<double> achieved_ms;   // median gap between periodic samples (none: fewer than two)
  double cost_us_median = 0;       // harness time to take one sample
  double cost_us_max = 0;
  int64_t count = 0;
  // smaps_rollup (AnonHugePages) is read at marks and, when smaps_ms is not 0,
  // at most every smaps_ms; these say how often that was and what it cost.
  double smaps_ms = 0;
  int64_t smaps_reads = 0;
  double smaps_cost_us_median = 0;
  // Sampled columns that could not be read at all, with the reason: written as
  // null, never 0.
  std::map<std::string, std::string> unreadable;
  // Columns read in some samples and not in others (Sample::missing), with
  // the reason: those cells are null.
  std::map<std::string, std::string> null_cells;
  // Why VmHWM could not be reset at marks ("" when it could, or was not tried):
  // the phases' peaks are then the sampled maxima.
  std::string hwm_reset_error;
  // Whether each sample summed the process and its live descendants
  // (proc_tree.h), how they were found, and the most processes one sample
  // summed (none when only the started process was sampled).
  bool tree = false;
  std::string tree_found_by;
  std::optional<int64_t> processes_max;
  // A series kept within a bound (a --soak run, core/soak.h): at most
  // series_bound points (0: every sample kept), each the merge of
  // 2^series_halvings consecutive samples, so one point every
  // interval_ms * 2^series_halvings.
  uint64_t series_bound = 0;
  int series_halvings = 0;
};

// A --soak run: how long it was asked to last, how often its workload or
// program was started and its load generator run, and whether it ran to the
// end (else why not: interrupted, failed, timed out).
struct SoakRecord {
  double duration_s = 0;
  double ran_s = 0;
  int64_t repetitions = 0;  // processes started one after the other (1 for a server under load)
  int64_t loops = 0;        // runs of the load generator (0 without one)
  bool complete = false;
  std::string incomplete_why;
};

// A process of a run still running when what started it had ended (a
// daemon, a background child): the report's leftover_processes. `from` names
// what started it: "program" (the workload or program), "load generator" or
// "set-up".
struct LeftoverProcess {
  int pid = 0;
  std::string comm, cmdline, from;
};

// What a run did not keep of what its program sent, past a bound of the run
// (measure/run_bounds.h) or refused as out of range: how many, and why.
struct Dropped {
  int64_t count = 0;
  std::string why;
};

// The run's memory cgroup at its end. peak_kb: the most it was charged at
// once, page cache included (v2 memory.peak, v1 memory.max_usage_in_bytes);
// psi_*: the time its tasks stalled on memory (PSI, from its v2 group);
// high_events: times it went past memory.high (v2 only); max_events: times
// a charge hit the limit (v2 memory.events max, v1 memory.failcnt);
// oom_kills: processes the OOM killer ended in it.
struct MemoryGroupFigures {
  std::optional<double> peak_kb, psi_some_ms, psi_full_ms, high_events, max_events, oom_kills;
};

struct RunRecord {
  std::string workload;
  Json params = Json::object();
  AllocatorRecord allocator;
  std::string role;  // "" for a plain run; baseline, candidate or baseline-again in a comparison
  int repetition = 0;
  Status status = Status::Failed;
  ExitInfo exit;
  double wall_ms = 0;
  std::vector<Sample> samples;
  std::vector<Mark> marks;
  std::optional<HeapSites> heap_sites_peak;
  // The objects of the heap sites' frames (--heap-sample), by path.
  std::map<std::string, HeapObject> heap_objects;
  // Metrics: from the samples and marks, from the kernel (wait4), from the
  // workload itself. The derived ones are computed in derived_metrics.h.
  // The largest RSS of any sample, raised to the kernel's high-water mark where
  // one is known (peak_from says which); the largest anonymous RSS of any sample.
  int64_t peak_rss_kb = 0, peak_anon_kb = 0;
  // Where peak_rss_kb comes from: "exit_stop" (a program's VmHWM read at its exit
  // stop, program_trace.h), "workload" (the workload's own VmHWM), "wait4"
  // (ru_maxrss, when above harness_rss_at_fork_kb), "samples" (none of these).
  std::string peak_from;
  // The harness's RSS when it forked the child: ru_maxrss counts the child's
  // copy of the harness's image, so below this it says nothing of the program.
  std::optional<int64_t> harness_rss_at_fork_kb;
  int64_t final_rss_kb = 0;  // RSS at the workload's `end` mark (its last moment), else at the last sample
  // The kernel's peak RSS (VmHWM): the workload's reading of its
  // /proc/self/status just before it exited, or the harness's reading at a
  // program's exit stop, raised to the marks' readings where the harness reset
  // VmHWM at marks (each then a phase's peak). Null with the reason when
  // neither was read (a program untraced, or killed before its exit stop).
  Maybe hwm_kb;
  bool hwm_at_exit_stop = false;  // hwm_kb was read at a program's exit stop
  // wait4's ru_maxrss of this child, raised like hwm_kb to the marks' VmHWM
  // where the harness reset it (the reset lowers ru_maxrss too).
  int64_t maxrss_kb = 0;
  int64_t minflt = 0, majflt = 0;
  double utime_ms = 0, stime_ms = 0;
  double cpu_ms = 0;  // utime_ms + stime_ms
  int64_t vol_ctxsw = 0, invol_ctxsw = 0;
  // Registry metrics (metrics.h) that were not measured although their field
  // holds a number, by name, with the reason: null in the report (wait4's
  // figures of a child that never reached its exec are the harness's own).
  std::map<std::string, std::string> unmeasured;
  std::map<std::string, Maybe> perf;
  std::map<std::string, Maybe> workload_metrics;
  Json allocator_stats;  // null when the allocator exposes none
  Json data = Json::object();  // the workload's structured results by key
  std::vector<ThreadStat> threads;
  SamplerStats sampler;
  std::string output_tail;  // last lines of the workload's stdout+stderr
  // What went wrong in the mark protocol (a mark out of step, one the harness
  // never acknowledged in time): a run with any is not ok.
  std::vector<std::string> protocol_errors;
  // By what: "marks", "messages", "heap_sites" (none when nothing was dropped).
  std::map<std::string, Dropped> dropped;
  // The processes that outlived the program, its load generator or its
  // set-up, named before they were killed (or left, --leftovers allow).
  std::vector<LeftoverProcess> leftover_processes;
  Json memory_limit;  // null without --memory-limit; else bytes, mechanism and any note
  // The run's memory cgroup figures (measure/memory_group.h), each a registry
  // metric: null with the reason in `unmeasured` where the kernel has none.
  MemoryGroupFigures memory_group;
  // How they were read: the memory group's and the pressure group's kind,
  // any --memory-high, and why a figure is missing.
  Json memory_group_info;
  // The metrics of the RSS curve (curve.h), computed by the harness from the
  // samples and marks: in report order, each a value or null with the reason.
  std::vector<std::pair<std::string, Maybe>> curve;
  // How they were computed: the mark they are measured after, the start level,
  // the phases with where each peak came from.
  Json curve_info;
  // Set for a --soak run.
  std::optional<SoakRecord> soak;
  // Growth over the run (run_growth.h): the window, each series' slope with
  // its interval, p and direction, and the verdict; null when not computed.
  Json growth;
};

}  // namespace mh
