// The state database in a SQLite file (a user's own daemon): WAL mode, one
// connection, busy waits up to 5 s for another process's write.
#pragma once

#include <memory>
#include <string>

#include "broker/store/sql_connection.h"

struct sqlite3;

namespace skyslurm::store {

class SqliteConnection final : public SqlConnection {
 public:
  // Opens (creating it and its folder, modes 0600 and 0700) the file at `path`.
  static Result<std::unique_ptr<SqliteConnection>> Open(const std::string& path);
  ~SqliteConnection() override;
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  std::string_view engine() const override { return "SQLite"; }
  std::string where() const override { return path_; }
  Status ExecScript(std::string_view sql) override;
  Result<SqlRows> Query(std::string_view sql, const std::vector<SqlValue>& params) override;
  Status Begin() override { return ExecScript("BEGIN IMMEDIATE"); }
  Status Commit() override { return ExecScript("COMMIT"); }
  Status Rollback() override { return ExecScript("ROLLBACK"); }
  Result<int> SchemaVersion() override;
  Status SetSchemaVersion(int version) override;
  // One process writes at a time already (BEGIN IMMEDIATE).
  Status LockForMigration() override { return OkStatus(); }
  std::string_view InsertionOrder() const override { return "rowid"; }
  std::string LeadingNumber(std::string_view column) const override;
  std::string_view NowMs() const override {
    return "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";
  }
  std::string_view SkipLockedRows() const override { return ""; }

 private:
  SqliteConnection(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status Error(std::string_view what) const;

  sqlite3* db_;
  std::string path_;
};

}  // namespace skyslurm::store
