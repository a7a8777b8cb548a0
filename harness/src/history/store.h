// The history store: one SQLite file of runs across revisions, each run keyed
// by what makes two figures comparable and holding every metric's value (a
// censored one with its bound, a null with its reason). Opening migrates an
// older file; a run is stored once (its content hash). Main thread only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compare/compare_stats.h"

struct sqlite3;

namespace mh::history {

// 1: runs and values without bounds; 2: censored bounds, the machine's CPU
// model and acknowledged steps; 3: each run's sampled RSS, downsampled, and
// its marks (runs stored before have neither).
inline constexpr int kSchemaVersion = 3;

// What a run keeps of its samples: at most kMaxTracePoints of them, the
// first, the last and the peak RSS among them (from_report.h). A missing
// cell is none, never 0.
inline constexpr size_t kMaxTracePoints = 300;
inline constexpr size_t kMaxTraceMarks = 100;  // the first ones

struct TracePoint {
  double t_ms = 0;  // since the run's start, to 0.1 ms
  std::optional<int64_t> rss_kb, anon_kb;
};

struct TraceMark {
  double t_ms = 0;
  std::string name;
};

// A run's RSS over time as the store keeps it; both empty for a run stored
// by a harness of schema version 2 or older.
struct RunTrace {
  std::vector<TracePoint> points;
  std::vector<TraceMark> marks;
};

struct StoredValue {
  std::optional<double> value;
  std::optional<double> above;  // right-censored: more than this
  std::string reason;           // why value is null
};

// One run as the store keeps it. allocator is the pin without its revision
// ("scav" for scav@c3b7a36), so that one series crosses revisions.
struct StoredRun {
  std::string hash;  // of the run's content: adding it again adds nothing
  std::string workload, params;  // params as canonical JSON text
  std::string allocator, allocator_revision;
  std::string revision;
  std::optional<int64_t> position;  // first-parent order of the revision, when known
  std::string machine, cpu_model, kernel, thp, harness_version, date, status, role;
  int64_t repetition = 0;
  std::map<std::string, StoredValue> values;
  RunTrace trace;
};

// A stored run as a page names it, with its trace.
struct TracedRun {
  int64_t id = 0;
  std::string role;
  int64_t repetition = 0;
  RunTrace trace;
};

// The runs of one revision in a series, ok runs only.
struct Point {
  std::string revision;
  std::optional<int64_t> position;
  std::vector<compare::Observation> values;
  std::vector<int64_t> runs;  // the store's id of each value's run
};

// metric x workload (with its parameters) x allocator x machine, across revisions.
struct Series {
  std::string metric, workload, params, allocator, machine;
  std::vector<Point> points;  // by position, then by when first added
};

struct SeriesFilter {
  std::string metric, workload, allocator, machine;  // "" any
};

struct Acknowledgement {
  std::string workload, allocator, metric, revision, reason;
};

class Store {
 public:
  // Opens or creates `path`, migrating an older schema; nullopt with a
  // message naming the file otherwise (not SQLite, a newer schema, a schema
  // that is not its version's or holds a trigger or view: schema_check.h).
  // The file and SQLite's -journal, -wal and -shm beside it must be regular
  // files or none (never a link, a device or a FIFO).
  static std::unique_ptr<Store> open(const std::string& path, std::string& error);
  // The same checks and migration over a database already open (an in-memory
  // one made from bytes, for the fuzzer); the store owns `db` either way.
  static std::unique_ptr<Store> open_checked(sqlite3* db, const std::string& name, std::string& error);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Adds the runs not stored yet, in one transaction; how many were new.
  std::optional<size_t> add(const std::vector<StoredRun>& runs, std::string& error);
  // Adds the runs of another store (migrated first) not stored here yet.
  std::optional<size_t> merge_from(const std::string& other, std::string& error);
  // The readers: nullopt with the error (naming the table and SQLite's
  // message) when a statement does not prepare or a step fails.
  std::optional<std::vector<Series>> series(const SeriesFilter& f, std::string& error);
  bool acknowledge(const Acknowledgement& a, std::string& error);
  std::optional<std::vector<Acknowledgement>> acknowledgements(std::string& error);
  std::optional<size_t> run_count(std::string& error);
  // The runs of these ids with their traces, in the order given (unknown ids left out).
  std::optional<std::vector<TracedRun>> traces(const std::vector<int64_t>& ids, std::string& error);

 private:
  explicit Store(sqlite3* db) : db_(db) {}
  bool exec(const std::string& sql, std::string& error);
  std::optional<int64_t> stored_version(const std::string& path, std::string& error);
  bool migrate(const std::string& path, std::string& error);
  sqlite3* db_;
};

}  // namespace mh::history
