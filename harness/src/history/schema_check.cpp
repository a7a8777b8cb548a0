// Comparing a store's schema with its version's (see schema_check.h).
#include "history/schema_check.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <map>
#include <set>

#include "history/statement.h"

namespace mh::history {

namespace {

struct DbColumn {
  std::string type;
  int64_t not_null = 0, primary_key = 0;
  bool operator==(const DbColumn&) const = default;
};

// What a schema holds, as the comparison sees it.
struct Shape {
  std::map<std::string, std::map<std::string, DbColumn>> tables;
  std::set<std::string> indexes;
  std::vector<std::pair<std::string, std::string>> code;  // (type, name): triggers and views
};

// `schema` is a name of the code's ("main", "other"), never the user's.
std::string read_shape(sqlite3* db, const std::string& schema, Shape& out) {
  Statement objects(db, fmt::format("SELECT type, name FROM \"{}\".sqlite_master ORDER BY name", schema));
  while (objects.row()) {
    const std::string type = objects.column_text(0), name = objects.column_text(1);
    if (type == "table" && name.rfind("sqlite_stat", 0) != 0) out.tables[name];  // ANALYZE's statistics are no code
    else if (type == "index") out.indexes.insert(name);
    else if (type != "table") out.code.emplace_back(type, name);
  }
  if (!objects.ok()) return objects.error();
  Statement columns(db, "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1, ?2)");
  for (auto& [table, cols] : out.tables) {
    columns.text(1, table);
    columns.text(2, schema);
    while (columns.row())
      cols[columns.column_text(0)] = {columns.column_text(1), columns.column_integer(2).value_or(0),
                                      columns.column_integer(3).value_or(0)};
    columns.reset();
    if (!columns.ok()) return columns.error();
  }
  return "";
}

std::string column_text(const DbColumn& c) {
  return fmt::format("'{}'{}{}", c.type, c.not_null ? " NOT NULL" : "",
                     c.primary_key ? fmt::format(" (primary key part {})", c.primary_key) : "");
}

std::string table_difference(const std::string& table, const std::map<std::string, DbColumn>& want,
                             const std::map<std::string, DbColumn>& have) {
  for (const auto& [name, c] : want) {
    const auto it = have.find(name);
    if (it == have.end()) return fmt::format("table {} lacks column {}", table, name);
    if (!(it->second == c))
      return fmt::format("column {}.{} is {}, not {}", table, name, column_text(it->second), column_text(c));
  }
  for (const auto& [name, c] : have)
    if (!want.contains(name)) return fmt::format("table {} has a column {} it should not have", table, name);
  return "";
}

std::string shape_difference(const Shape& want, const Shape& have) {
  if (!have.code.empty())
    return fmt::format("it holds the {} {} (a store holds no triggers or views)", have.code[0].first,
                       have.code[0].second);
  for (const auto& [table, columns] : want.tables) {
    const auto it = have.tables.find(table);
    if (it == have.tables.end()) return "no table " + table;
    if (auto d = table_difference(table, columns, it->second); !d.empty()) return d;
  }
  for (const auto& [table, columns] : have.tables)
    if (!want.tables.contains(table)) return "it holds a table " + table + " a store does not have";
  for (const auto& index : want.indexes)
    if (!have.indexes.contains(index)) return "no index " + index;
  for (const auto& index : have.indexes)
    if (!want.indexes.contains(index)) return "it holds an index " + index + " a store does not have";
  return "";
}

}  // namespace

std::string schema_difference(sqlite3* db, const std::string& schema, const std::vector<const char*>& ddl) {
  sqlite3* reference = nullptr;
  Shape want, have;
  std::string error;
  if (sqlite3_open_v2(":memory:", &reference, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK)
    error = fmt::format("cannot make the reference schema: {}", sqlite3_errmsg(reference));
  for (size_t i = 0; i < ddl.size() && error.empty(); ++i)
    if (sqlite3_exec(reference, ddl[i], nullptr, nullptr, nullptr) != SQLITE_OK)
      error = fmt::format("cannot make the reference schema: {}", sqlite3_errmsg(reference));
  if (error.empty()) error = read_shape(reference, "main", want);
  sqlite3_close(reference);
  if (!error.empty()) return error;
  if (auto e = read_shape(db, schema, have); !e.empty()) return "its schema cannot be read: " + e;
  return shape_difference(want, have);
}

}  // namespace mh::history
