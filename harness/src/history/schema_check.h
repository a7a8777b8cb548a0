// Whether a history store's schema is the one its version says: its tables
// with their columns and its indexes compared with those of a reference made
// in memory from the same DDL, and no trigger or view at all (SQL a store's
// author could make SQLite run). Main thread only, as the store.
#pragma once

#include <string>
#include <vector>

struct sqlite3;

namespace mh::history {

// "" when the database `schema` ("main", or an attached one's name) of `db`
// holds exactly the tables (each column's name, declared type, NOT NULL and
// primary key) and indexes that an empty database holds after running `ddl`
// in turn, and no trigger or view; otherwise the first difference, as in
// "table runs lacks column cpu_model", "no table run_samples", "it holds the
// trigger t (a store holds no triggers or views)".
std::string schema_difference(sqlite3* db, const std::string& schema, const std::vector<const char*>& ddl);

}  // namespace mh::history
