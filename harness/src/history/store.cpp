// The history store over SQLite's C API (see store.h). A new file is made at
// version 1 and migrated like an old one, so every migration runs on every
// new store as well as on the files it was written for.
#include "history/store.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <filesystem>
#include <tuple>

#include "history/schema_check.h"
#include "history/statement.h"
#include "sys/input_file.h"

namespace mh::history {

namespace {

// Version 1 as it was released: kept as it is, since files of it exist.
constexpr const char* kSchemaV1 = R"(
CREATE TABLE schema_version(version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
CREATE TABLE runs(id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, workload TEXT NOT NULL,
  params TEXT NOT NULL, allocator TEXT NOT NULL, allocator_revision TEXT NOT NULL, revision TEXT NOT NULL,
  position INTEGER, machine TEXT NOT NULL, kernel TEXT NOT NULL, thp TEXT NOT NULL,
  harness_version TEXT NOT NULL, date TEXT NOT NULL, status TEXT NOT NULL, role TEXT NOT NULL,
  repetition INTEGER NOT NULL);
CREATE TABLE run_values(run_id INTEGER NOT NULL REFERENCES runs(id), metric TEXT NOT NULL, value REAL,
  reason TEXT NOT NULL, PRIMARY KEY(run_id, metric));
)";

// Each entry takes a file from version i+1 to i+2.
constexpr const char* kMigrations[] = {
    R"(
ALTER TABLE runs ADD COLUMN cpu_model TEXT NOT NULL DEFAULT '';
ALTER TABLE run_values ADD COLUMN above REAL;
CREATE TABLE acknowledgements(workload TEXT NOT NULL, allocator TEXT NOT NULL, metric TEXT NOT NULL,
  revision TEXT NOT NULL, reason TEXT NOT NULL, PRIMARY KEY(workload, allocator, metric, revision));
CREATE INDEX run_values_metric ON run_values(metric);
UPDATE schema_version SET version = 2;
)",
    // Without rowid: a run's points lie together under its id, no second index.
    R"(
CREATE TABLE run_samples(run_id INTEGER NOT NULL REFERENCES runs(id), seq INTEGER NOT NULL, t_ms REAL NOT NULL,
  rss_kb INTEGER, anon_kb INTEGER, PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
CREATE TABLE run_marks(run_id INTEGER NOT NULL REFERENCES runs(id), seq INTEGER NOT NULL, t_ms REAL NOT NULL,
  name TEXT NOT NULL, PRIMARY KEY(run_id, seq)) WITHOUT ROWID;
UPDATE schema_version SET version = 3;
)"};
static_assert(std::size(kMigrations) == kSchemaVersion - 1);

constexpr const char* kRunColumns =
    "hash, workload, params, allocator, allocator_revision, revision, position, machine, kernel, thp, "
    "harness_version, date, status, role, repetition, cpu_model";

void bind_run(Statement& s, const StoredRun& r) {
  int i = 0;
  for (const auto* v : {&r.hash, &r.workload, &r.params, &r.allocator, &r.allocator_revision, &r.revision})
    s.text(++i, *v);
  s.integer(++i, r.position);
  for (const auto* v : {&r.machine, &r.kernel, &r.thp, &r.harness_version, &r.date, &r.status, &r.role})
    s.text(++i, *v);
  s.integer(++i, r.repetition);
  s.text(++i, r.cpu_model);
}

// A new run's trace under its id; false when an insert failed.
bool insert_trace(Statement& sample, Statement& mark, int64_t id, const RunTrace& t) {
  bool ok = true;
  for (size_t i = 0; i < t.points.size() && ok; ++i) {
    sample.integer(1, id);
    sample.integer(2, int64_t(i));
    sample.real(3, t.points[i].t_ms);
    sample.integer(4, t.points[i].rss_kb);
    sample.integer(5, t.points[i].anon_kb);
    ok = sample.step() == SQLITE_DONE;
    sample.reset();
  }
  for (size_t i = 0; i < t.marks.size() && ok; ++i) {
    mark.integer(1, id);
    mark.integer(2, int64_t(i));
    mark.real(3, t.marks[i].t_ms);
    mark.text(4, t.marks[i].name);
    ok = mark.step() == SQLITE_DONE;
    mark.reset();
  }
  return ok;
}

// The key of a series and the order of its points (by position, unknown
// positions last, then by the first run added).
using SeriesKey = std::tuple<std::string, std::string, std::string, std::string, std::string>;
struct PointOrder {
  bool no_position;
  int64_t position, first_id;
  bool operator<(const PointOrder& o) const {
    return std::tie(no_position, position, first_id) < std::tie(o.no_position, o.position, o.first_id);
  }
};

}  // namespace

Store::~Store() { sqlite3_close(db_); }

bool Store::exec(const std::string& sql, std::string& error) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) == SQLITE_OK) return true;
  error = message ? message : sqlite3_errmsg(db_);
  sqlite3_free(message);
  return false;
}

namespace {

// The DDL that makes a store of `version` from an empty database.
std::vector<const char*> schema_of(int version) {
  std::vector<const char*> ddl{kSchemaV1};
  for (int v = 1; v < version; ++v) ddl.push_back(kMigrations[v - 1]);
  return ddl;
}

// The store and the files SQLite keeps beside it are regular files or new
// ones, never a device, a FIFO or a link that SQLite would open and write.
std::string check_store_files(const std::string& path) {
  for (const char* suffix : {"", "-journal", "-wal", "-shm"})
    if (auto e = input_file::check_regular_or_absent(path + suffix); !e.empty())
      return fmt::format("{}: cannot be a history store: {} (a store is a regular file, or a new one)", path, e);
  return "";
}

// A connection that runs nothing a file's author put in it: no triggers, no
// views, no functions of the schema that are not innocuous, no extensions,
// no writes to the schema but the store's own DDL.
void harden(sqlite3* db) {
  sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_exec(db, "PRAGMA cell_size_check = ON; PRAGMA mmap_size = 0", nullptr, nullptr, nullptr);
}

}  // namespace

std::unique_ptr<Store> Store::open(const std::string& path, std::string& error) {
  if (error = check_store_files(path); !error.empty()) return nullptr;
  std::error_code ec;
  if (const auto parent = std::filesystem::path(path).parent_path(); !parent.empty())
    std::filesystem::create_directories(parent, ec);  // results/ of a fresh checkout; a failure shows below
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW,
                      nullptr) != SQLITE_OK) {
    error = path + ": cannot be opened as a history store: " + sqlite3_errmsg(db);
    sqlite3_close(db);
    return nullptr;
  }
  harden(db);
  std::unique_ptr<Store> store(new Store(db));
  sqlite3_busy_timeout(db, 10000);  // two harnesses adding to one file wait for each other
  if (!store->migrate(path, error)) return nullptr;
  return store;
}

std::unique_ptr<Store> Store::open_checked(sqlite3* db, const std::string& name, std::string& error) {
  harden(db);
  std::unique_ptr<Store> store(new Store(db));
  if (!store->migrate(name, error)) return nullptr;
  return store;
}

// The version a store says it is: 0 for an empty database (a new store), -1
// for one that holds no schema_version table; nullopt with the error when
// the table holds anything but one integer.
std::optional<int64_t> Store::stored_version(const std::string& path, std::string& error) {
  Statement has(db_, "SELECT count(*) FROM sqlite_master WHERE name = 'schema_version'");
  Statement tables(db_, "SELECT count(*) FROM sqlite_master");
  if (!has.row() || !tables.row()) {
    error = fmt::format("{}: not a history store ({})", path, first_error({&has, &tables}));
    return std::nullopt;
  }
  if (has.column_integer(0).value_or(0) == 0) return tables.column_integer(0).value_or(0) > 0 ? -1 : 0;
  Statement v(db_, "SELECT version, typeof(version) FROM schema_version LIMIT 2");
  const bool one = v.row() && v.column_text(1) == "integer" && v.column_integer(0).value_or(0) > 0;
  const int64_t version = one ? *v.column_integer(0) : 0;
  if (!one || v.row() || !v.ok()) {
    error = fmt::format("{}: not a memharness history store: its schema_version table holds no single version{}",
                        path, v.ok() ? "" : " (" + v.error() + ")");
    return std::nullopt;
  }
  return version;
}

bool Store::migrate(const std::string& path, std::string& error) {
  std::string why;
  if (!exec("BEGIN IMMEDIATE", why)) {
    error = path + ": not a history store (" + why + ")";
    return false;
  }
  const auto version = stored_version(path, error);
  if (version && (*version < 0 || *version > kSchemaVersion))
    error = *version < 0 ? path + ": an SQLite file, but not a history store (no schema_version table)"
                         : fmt::format("{}: history schema version {}, newer than this harness reads ({})", path,
                                       *version, kSchemaVersion);
  if (version && *version > 0 && error.empty())
    if (auto d = schema_difference(db_, "main", schema_of(int(*version))); !d.empty())
      error = fmt::format("{}: not a memharness history store of version {}: {}", path, *version, d);
  if (!error.empty()) {
    exec("ROLLBACK", why);
    return false;
  }
  int v = int(*version);
  bool ok = v > 0 || (exec(kSchemaV1, why) && (v = 1));
  for (; ok && v < kSchemaVersion; ++v) ok = exec(kMigrations[v - 1], why);
  if (ok && exec("COMMIT", why)) return true;
  exec("ROLLBACK", why);
  error = path + ": the history store could not be set up or migrated: " + why;
  return false;
}

std::optional<size_t> Store::add(const std::vector<StoredRun>& runs, std::string& error) {
  if (!exec("BEGIN IMMEDIATE", error)) return std::nullopt;
  Statement insert(db_, std::string("INSERT OR IGNORE INTO runs(") + kRunColumns +
                            ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)");
  Statement value(db_, "INSERT INTO run_values(run_id, metric, value, above, reason) VALUES (?1, ?2, ?3, ?4, ?5)");
  Statement sample(db_, "INSERT INTO run_samples(run_id, seq, t_ms, rss_kb, anon_kb) VALUES (?1, ?2, ?3, ?4, ?5)");
  Statement mark(db_, "INSERT INTO run_marks(run_id, seq, t_ms, name) VALUES (?1, ?2, ?3, ?4)");
  size_t added = 0;
  bool failed = false;
  for (size_t i = 0; i < runs.size() && !failed; ++i) {
    bind_run(insert, runs[i]);
    failed = insert.step() != SQLITE_DONE;
    insert.reset();
    if (failed || sqlite3_changes(db_) == 0) continue;  // a failure, or stored before
    ++added;
    const int64_t id = sqlite3_last_insert_rowid(db_);
    for (const auto& [metric, v] : runs[i].values) {
      value.integer(1, id);
      value.text(2, metric);
      value.real(3, v.value);
      value.real(4, v.above);
      value.text(5, v.reason);
      failed = failed || value.step() != SQLITE_DONE;
      value.reset();
    }
    failed = failed || !insert_trace(sample, mark, id, runs[i].trace);
  }
  if (failed) {
    error = first_error({&insert, &value, &sample, &mark});
    if (error.empty()) error = sqlite3_errmsg(db_);
    std::string ignored;
    exec("ROLLBACK", ignored);
    return std::nullopt;
  }
  if (!exec("COMMIT", error)) return std::nullopt;
  return added;
}

std::optional<size_t> Store::merge_from(const std::string& other, std::string& error) {
  if (!Store::open(other, error)) return std::nullopt;  // migrated to this version first
  {
    Statement attach(db_, "ATTACH DATABASE ?1 AS other");
    attach.text(1, other);
    if (attach.step() != SQLITE_DONE) {
      error = other + ": " + attach.error();
      return std::nullopt;
    }
  }
  std::string ignored;
  // Checked again once attached: the file opened above may have been replaced since.
  if (auto d = schema_difference(db_, "other", schema_of(kSchemaVersion)); !d.empty()) {
    error = fmt::format("{}: not a memharness history store of version {}: {}", other, kSchemaVersion, d);
    exec("DETACH DATABASE other", ignored);
    return std::nullopt;
  }
  const auto before = run_count(error);
  const bool ok =
      before && exec("BEGIN IMMEDIATE", error) &&
      exec(std::string("INSERT OR IGNORE INTO main.runs(") + kRunColumns + ") SELECT " + kRunColumns +
               " FROM other.runs ORDER BY id;"
               "INSERT OR IGNORE INTO main.run_values(run_id, metric, value, above, reason) "
               "SELECT r.id, v.metric, v.value, v.above, v.reason FROM other.run_values v "
               "JOIN other.runs o ON o.id = v.run_id JOIN main.runs r ON r.hash = o.hash;"
               "INSERT OR IGNORE INTO main.run_samples(run_id, seq, t_ms, rss_kb, anon_kb) "
               "SELECT r.id, s.seq, s.t_ms, s.rss_kb, s.anon_kb FROM other.run_samples s "
               "JOIN other.runs o ON o.id = s.run_id JOIN main.runs r ON r.hash = o.hash;"
               "INSERT OR IGNORE INTO main.run_marks(run_id, seq, t_ms, name) "
               "SELECT r.id, m.seq, m.t_ms, m.name FROM other.run_marks m "
               "JOIN other.runs o ON o.id = m.run_id JOIN main.runs r ON r.hash = o.hash;"
               "INSERT OR IGNORE INTO main.acknowledgements SELECT * FROM other.acknowledgements;"
               "COMMIT",
           error);
  if (!ok && before) exec("ROLLBACK", ignored);
  exec("DETACH DATABASE other", ignored);
  if (!ok) return std::nullopt;
  const auto after = run_count(error);
  if (!after) return std::nullopt;
  return *after - *before;
}

std::optional<size_t> Store::run_count(std::string& error) {
  Statement s(db_, "SELECT count(*) FROM runs");
  if (s.row()) return size_t(s.column_integer(0).value_or(0));
  error = s.error();
  return std::nullopt;
}

std::optional<std::vector<Series>> Store::series(const SeriesFilter& f, std::string& error) {
  Statement s(db_,
              "SELECT v.metric, r.workload, r.params, r.allocator, r.machine, r.revision, r.position, v.value, "
              "v.above, r.id FROM run_values v JOIN runs r ON r.id = v.run_id WHERE r.status = 'ok' AND "
              "(v.value IS NOT NULL OR v.above IS NOT NULL) AND (?1 = '' OR v.metric = ?1) AND "
              "(?2 = '' OR r.workload = ?2) AND (?3 = '' OR r.allocator = ?3) AND (?4 = '' OR r.machine = ?4) "
              "ORDER BY r.id");
  int i = 0;
  for (const auto* v : {&f.metric, &f.workload, &f.allocator, &f.machine}) s.text(++i, *v);
  std::map<SeriesKey, std::map<std::string, std::pair<PointOrder, Point>>> found;
  while (s.row()) {
    const SeriesKey key{s.column_text(1), s.column_text(2), s.column_text(3), s.column_text(4), s.column_text(0)};
    auto [it, fresh] = found[key].try_emplace(s.column_text(5));
    auto& [order, point] = it->second;
    if (fresh) {
      point.revision = it->first;
      point.position = s.column_integer(6);
      order = {!point.position, point.position.value_or(0), s.column_integer(9).value_or(0)};
    }
    const auto above = s.column_real(8);
    point.values.push_back({above ? *above : s.column_real(7).value_or(0), above.has_value()});
    point.runs.push_back(s.column_integer(9).value_or(0));
  }
  if (!s.ok()) {
    error = s.error();
    return std::nullopt;
  }
  std::vector<Series> out;
  for (auto& [key, points] : found) {
    Series series{std::get<4>(key), std::get<0>(key), std::get<1>(key), std::get<2>(key), std::get<3>(key), {}};
    std::vector<std::pair<PointOrder, Point>> ordered;
    for (auto& [rev, p] : points) ordered.push_back(std::move(p));
    std::sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [order, p] : ordered) series.points.push_back(std::move(p));
    out.push_back(std::move(series));
  }
  return out;
}

std::optional<std::vector<TracedRun>> Store::traces(const std::vector<int64_t>& ids, std::string& error) {
  Statement run(db_, "SELECT role, repetition FROM runs WHERE id = ?1");
  Statement samples(db_, "SELECT t_ms, rss_kb, anon_kb FROM run_samples WHERE run_id = ?1 ORDER BY seq");
  Statement marks(db_, "SELECT t_ms, name FROM run_marks WHERE run_id = ?1 ORDER BY seq");
  std::vector<TracedRun> out;
  for (const int64_t id : ids) {
    run.integer(1, id);
    if (run.row()) {
      TracedRun r{id, run.column_text(0), run.column_integer(1).value_or(0), {}};
      samples.integer(1, id);
      while (samples.row())
        r.trace.points.push_back({samples.column_real(0).value_or(0), samples.column_integer(1),
                                  samples.column_integer(2)});
      marks.integer(1, id);
      while (marks.row())
        r.trace.marks.push_back({marks.column_real(0).value_or(0), marks.column_text(1)});
      out.push_back(std::move(r));
    }
    for (auto* s : {&run, &samples, &marks}) s->reset();
  }
  if (error = first_error({&run, &samples, &marks}); !error.empty()) return std::nullopt;
  return out;
}

bool Store::acknowledge(const Acknowledgement& a, std::string& error) {
  Statement s(db_, "INSERT OR REPLACE INTO acknowledgements VALUES (?1, ?2, ?3, ?4, ?5)");
  int i = 0;
  for (const auto* v : {&a.workload, &a.allocator, &a.metric, &a.revision, &a.reason}) s.text(++i, *v);
  if (s.step() == SQLITE_DONE) return true;
  error = s.error();
  return false;
}

std::optional<std::vector<Acknowledgement>> Store::acknowledgements(std::string& error) {
  Statement s(db_, "SELECT workload, allocator, metric, revision, reason FROM acknowledgements");
  std::vector<Acknowledgement> out;
  while (s.row())
    out.push_back({s.column_text(0), s.column_text(1), s.column_text(2), s.column_text(3), s.column_text(4)});
  if (!s.ok()) {
    error = s.error();
    return std::nullopt;
  }
  return out;
}

}  // namespace mh::history
