// The state database in PostgreSQL (a site's daemons: every replica a
// connection to one database). Connects with libpq from a postgresql://
// URL (a password in it, or in ~/.pgpass, PGPASSWORD and the rest of
// libpq's environment); reconnects once when the server went away between
// transactions (a restarted server), never inside one.
#pragma once

#include <memory>
#include <string>

#include "broker/store/sql_connection.h"

struct pg_conn;

namespace skyslurm::store {

class PostgresConnection final : public SqlConnection {
 public:
  static Result<std::unique_ptr<PostgresConnection>> Open(const std::string& url);
  ~PostgresConnection() override;
  PostgresConnection(const PostgresConnection&) = delete;
  PostgresConnection& operator=(const PostgresConnection&) = delete;

  std::string_view engine() const override { return "PostgreSQL"; }
  std::string where() const override { return where_; }
  Status ExecScript(std::string_view sql) override;
  Result<SqlRows> Query(std::string_view sql, const std::vector<SqlValue>& params) override;
  Status Begin() override;
  Status Commit() override;
  Status Rollback() override;
  Result<int> SchemaVersion() override;
  Status SetSchemaVersion(int version) override;
  Status LockForMigration() override;
  std::string_view InsertionOrder() const override { return "seq"; }
  std::string LeadingNumber(std::string_view column) const override;
  std::string_view NowMs() const override {
    return "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)";
  }
  std::string_view SkipLockedRows() const override { return " FOR UPDATE SKIP LOCKED"; }

 private:
  PostgresConnection(pg_conn* conn, std::string url, std::string where)
      : conn_(conn), url_(std::move(url)), where_(std::move(where)) {}
  // Outside a transaction, a connection found broken is made again once.
  Status Reconnect();

  pg_conn* conn_;
  std::string url_;
  std::string where_;
  bool in_transaction_ = false;
  bool failed_ = false;  // a statement of the open transaction failed
};

// `sql` with its `?` placeholders numbered as PostgreSQL's ($1, $2, ...);
// a `?` inside a quoted literal or identifier is left alone.
std::string NumberPlaceholders(std::string_view sql);

// "host:port/database" of a postgresql:// URL, never its user or password
// (libpq reads it); InvalidArgument, quoting none of it, when malformed.
Result<std::string> PostgresWhere(std::string_view url);

}  // namespace skyslurm::store
