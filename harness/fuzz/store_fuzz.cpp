// libFuzzer target: any bytes as a history store's file, opened from memory
// (sqlite3_deserialize) and read as show, steps and page read it: the schema
// check, the migration, the series, their steps, the acknowledgements, the
// traces and the page. Each must end in a clean read or a clean error.
#include <sqlite3.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "history/page.h"
#include "history/steps.h"
#include "history/store.h"
#include "report/report_json.h"

namespace {

// A database the size of the input, growing at most to a few MB (the migration writes).
sqlite3* database_of(const uint8_t* data, size_t size) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) std::abort();
  auto* bytes = static_cast<unsigned char*>(sqlite3_malloc64(size > 0 ? size : 1));
  if (!bytes) std::abort();
  if (size > 0) std::memcpy(bytes, data, size);
  const int flags = SQLITE_DESERIALIZE_FREEONCLOSE | SQLITE_DESERIALIZE_RESIZEABLE;
  if (sqlite3_deserialize(db, "main", bytes, sqlite3_int64(size), sqlite3_int64(size), flags) != SQLITE_OK) {
    sqlite3_close(db);
    return nullptr;
  }
  sqlite3_int64 limit = sqlite3_int64(8) << 20;
  sqlite3_file_control(db, "main", SQLITE_FCNTL_SIZE_LIMIT, &limit);
  return db;
}

void fail_unless_said(const std::string& error) {
  if (error.empty()) std::abort();  // a failure must say what failed
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mh::history;
  sqlite3* db = database_of(data, size);
  if (!db) return 0;
  std::string error;
  auto store = Store::open_checked(db, "input", error);
  if (!store) return fail_unless_said(error), 0;
  auto series = store->series({}, error);
  if (!series) return fail_unless_said(error), 0;
  auto acks = store->acknowledgements(error);
  if (!acks) return fail_unless_said(error), 0;
  std::vector<PageSeries> page;
  const mh::MetricRule rule{mh::compare::Direction::Lower, 0.05, 0};
  for (auto& s : *series) {
    auto steps = find_steps(s, rule, StepRule{2, 0.05, 20});
    page.push_back({std::move(s), "", std::move(steps), {}});
  }
  auto runs = store->traces(shown_runs(page), error);
  if (!runs) return fail_unless_said(error), 0;
  const std::string html = page_html(page_data(page, *runs));
  if (html.empty()) std::abort();
  return 0;
}
