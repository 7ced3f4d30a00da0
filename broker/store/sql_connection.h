// One connection to the state database, whichever engine holds it: SQLite
// (a user's own daemon, a file under their state folder) or PostgreSQL (a
// site's daemons, one database for all their replicas). The store's SQL is
// written once, with `?` placeholders, in what both engines read alike
// (SQLite 3.35 or later, PostgreSQL 12 or later: ON CONFLICT, RETURNING);
// the few things they spell differently are asked of the connection.
//
// Not thread-safe: its owner (JobStore) serializes calls.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm::store {

using SqlValue = std::variant<std::int64_t, std::string>;

// What one statement gave: its rows, each value as text (NULL as ""), and
// how many rows it inserted, changed or deleted.
struct SqlRows {
  std::vector<std::vector<std::string>> rows;
  std::int64_t changes = 0;

  bool empty() const { return rows.empty(); }
  std::size_t size() const { return rows.size(); }
  const std::string& Text(std::size_t row, std::size_t col) const { return rows[row][col]; }
  // The value as a number (0 when it is none: NULL, empty, not a number).
  std::int64_t Int(std::size_t row, std::size_t col) const;
};

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;

  // "SQLite" or "PostgreSQL", for messages.
  virtual std::string_view engine() const = 0;
  // Where it is, for messages: the file, or the server and database
  // (never a password).
  virtual std::string where() const = 0;

  // Statements without parameters, one or several (a schema change).
  virtual Status ExecScript(std::string_view sql) = 0;
  // One statement, its `?` placeholders bound to `params` in order.
  // AlreadyExists when it breaks a uniqueness constraint; Unavailable when
  // the server cannot be reached (after one attempt to reconnect outside a
  // transaction).
  virtual Result<SqlRows> Query(std::string_view sql, const std::vector<SqlValue>& params) = 0;

  // A transaction that writes: SQLite takes its write lock at once (BEGIN
  // IMMEDIATE), so two writers never deadlock upgrading a read.
  virtual Status Begin() = 0;
  virtual Status Commit() = 0;
  virtual Status Rollback() = 0;

  // The schema version the database holds (0: empty) and setting it, inside
  // the migration's transaction. A migration holds the database's
  // migration lock (PostgreSQL: an advisory lock) so that replicas starting
  // together migrate once.
  virtual Result<int> SchemaVersion() = 0;
  virtual Status SetSchemaVersion(int version) = 0;
  virtual Status LockForMigration() = 0;

  // What the engines spell differently. The column that orders rows as
  // they were inserted ("rowid" in SQLite, a serial "seq" in PostgreSQL).
  virtual std::string_view InsertionOrder() const = 0;
  // The number a text column starts with ("23_5" -> 23; none -> NULL).
  virtual std::string LeadingNumber(std::string_view column) const = 0;
  // The database's clock, in ms since the epoch, as an SQL expression:
  // leases are timed by it, so replicas on hosts whose clocks differ agree.
  virtual std::string_view NowMs() const = 0;
  // What ends a SELECT whose rows the transaction is about to change, so
  // that writers at once take disjoint rows without waiting on each other
  // (PostgreSQL's FOR UPDATE SKIP LOCKED; nothing in SQLite, whose writers
  // take turns).
  virtual std::string_view SkipLockedRows() const = 0;
};

// Opens the database `location` names: a postgresql:// (or postgres://) URL,
// else a SQLite file (made with its folder, both private to this user).
Result<std::unique_ptr<SqlConnection>> OpenSqlConnection(const std::string& location);

// Whether `location` names a PostgreSQL database.
bool IsPostgresUrl(std::string_view location);

}  // namespace skyslurm::store
