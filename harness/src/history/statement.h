// A prepared SQLite statement of the history store that keeps its error: a
// statement that does not prepare (a table or a column missing) or whose step
// fails names its table and SQLite's message, and is never stepped again.
// Main thread only, as the store.
#pragma once

#include <fmt/format.h>
#include <sqlite3.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>

namespace mh::history {

// The table a statement is about, for its errors: the first one it names
// after FROM, INTO or UPDATE ("runs" for "SELECT ... FROM runs r ...").
inline std::string table_of(const std::string& sql) {
  size_t at = std::string::npos;
  for (const char* word : {"FROM ", "INTO ", "UPDATE "})
    if (const size_t p = sql.find(word); p != std::string::npos && (at == std::string::npos || p < at))
      at = p + std::strlen(word);
  if (at == std::string::npos) return "?";
  size_t end = at;
  while (end < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[end])) || sql[end] == '_' || sql[end] == '.'))
    ++end;
  return sql.substr(at, end - at);
}

// One prepared statement, finalized when it goes out of scope. A statement
// that did not prepare, or whose step failed, keeps the error (naming its
// table and SQLite's message); every use of it after that does nothing.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql) : db_(db), table_(table_of(sql)) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &s_, nullptr) != SQLITE_OK || !s_) fail();
  }
  ~Statement() { sqlite3_finalize(s_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  void text(int i, const std::string& v) {
    if (s_) sqlite3_bind_text(s_, i, v.c_str(), int(v.size()), SQLITE_TRANSIENT);
  }
  void integer(int i, std::optional<int64_t> v) {
    if (!s_) return;
    if (v) sqlite3_bind_int64(s_, i, *v);
    else sqlite3_bind_null(s_, i);
  }
  void real(int i, std::optional<double> v) {
    if (!s_) return;
    if (v) sqlite3_bind_double(s_, i, *v);
    else sqlite3_bind_null(s_, i);
  }
  // SQLITE_ROW, SQLITE_DONE, or an error (kept).
  int step() {
    if (!ok()) return SQLITE_MISUSE;
    const int rc = sqlite3_step(s_);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) fail();
    return rc;
  }
  // The next row; false at the end or on an error (ok() says which).
  bool row() { return step() == SQLITE_ROW; }
  void reset() {
    if (!s_) return;
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  std::string column_text(int i) const {
    auto p = sqlite3_column_text(s_, i);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  std::optional<int64_t> column_integer(int i) const {
    if (sqlite3_column_type(s_, i) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_int64(s_, i);
  }
  std::optional<double> column_real(int i) const {
    if (sqlite3_column_type(s_, i) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_double(s_, i);
  }

 private:
  void fail() {
    if (error_.empty()) error_ = fmt::format("table {}: {}", table_, sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  std::string table_;
  sqlite3_stmt* s_ = nullptr;
  std::string error_;
};

// The first error of these statements, "" when none failed.
inline std::string first_error(std::initializer_list<const Statement*> statements) {
  for (const auto* s : statements)
    if (!s->ok()) return s->error();
  return "";
}

}  // namespace mh::history
