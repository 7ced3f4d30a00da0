#include "broker/store/sqlite_connection.h"

#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>

namespace skyslurm::store {
namespace {

// One prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql) {
    rc_ = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  int rc() const { return rc_; }
  sqlite3_stmt* get() const { return stmt_; }

 private:
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
};

}  // namespace

Result<std::unique_ptr<SqliteConnection>> SqliteConnection::Open(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path dir = fs::path(path).parent_path();
  if (!dir.empty()) {
    fs::create_directories(dir, ec);
    ::chmod(dir.c_str(), 0700);
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK) {
    std::string why = db != nullptr ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return UnavailableError(fmt::format("cannot open the state database {}: {}", path, why));
  }
  ::chmod(path.c_str(), 0600);
  std::unique_ptr<SqliteConnection> c(new SqliteConnection(db, path));
  sqlite3_busy_timeout(db, 5000);
  // WAL: readers never block the writer; NORMAL: a commit is durable against
  // a crash of the daemon (the case that matters here), and the WAL is synced
  // at checkpoints.
  SKY_RETURN_IF_ERROR(c->ExecScript("PRAGMA journal_mode=WAL"));
  SKY_RETURN_IF_ERROR(c->ExecScript("PRAGMA synchronous=NORMAL"));
  SKY_RETURN_IF_ERROR(c->ExecScript("PRAGMA foreign_keys=ON"));
  return c;
}

SqliteConnection::~SqliteConnection() { sqlite3_close(db_); }

Status SqliteConnection::Error(std::string_view what) const {
  return InternalError(fmt::format("state database: {}: {}", what, sqlite3_errmsg(db_)));
}

Status SqliteConnection::ExecScript(std::string_view sql) {
  char* err = nullptr;
  const std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string why = err != nullptr ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    return InternalError(fmt::format("state database: {}", why));
  }
  return OkStatus();
}

Result<SqlRows> SqliteConnection::Query(std::string_view sql, const std::vector<SqlValue>& params) {
  Statement s(db_, sql);
  if (s.rc() != SQLITE_OK) return Error("preparing a statement");
  int n = 0;
  for (const SqlValue& p : params) {
    int rc;
    if (const auto* i = std::get_if<std::int64_t>(&p)) {
      rc = sqlite3_bind_int64(s.get(), ++n, *i);
    } else {
      const std::string& t = std::get<std::string>(p);
      rc = sqlite3_bind_text(s.get(), ++n, t.data(), static_cast<int>(t.size()), SQLITE_TRANSIENT);
    }
    if (rc != SQLITE_OK) return Error("binding a value");
  }
  SqlRows out;
  const int columns = sqlite3_column_count(s.get());
  int rc;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    std::vector<std::string>& row = out.rows.emplace_back();
    row.reserve(static_cast<std::size_t>(columns));
    for (int c = 0; c < columns; ++c) {
      const auto* p = sqlite3_column_text(s.get(), c);
      row.emplace_back(
          p == nullptr ? std::string()
                       : std::string(reinterpret_cast<const char*>(p),
                                     static_cast<std::size_t>(sqlite3_column_bytes(s.get(), c))));
    }
  }
  // A key taken is AlreadyExists (as PostgreSQL's unique_violation); any
  // other broken constraint (a copy of no job) is a bug of ours.
  const int extended = sqlite3_extended_errcode(db_);
  if (extended == SQLITE_CONSTRAINT_PRIMARYKEY || extended == SQLITE_CONSTRAINT_UNIQUE) {
    return AlreadyExistsError(fmt::format("state database: {}", sqlite3_errmsg(db_)));
  }
  if (rc != SQLITE_DONE) return Error("running a statement");
  out.changes = sqlite3_changes(db_);
  return out;
}

Result<int> SqliteConnection::SchemaVersion() {
  SKY_ASSIGN_OR_RETURN(SqlRows r, Query("PRAGMA user_version", {}));
  if (r.empty()) return InternalError("state database: no schema version");
  return static_cast<int>(r.Int(0, 0));
}

Status SqliteConnection::SetSchemaVersion(int version) {
  return ExecScript(fmt::format("PRAGMA user_version={}", version));
}

std::string SqliteConnection::LeadingNumber(std::string_view column) const {
  // SQLite's CAST reads the leading digits of a text ("23_5" -> 23).
  return fmt::format("CAST({} AS INTEGER)", column);
}

}  // namespace skyslurm::store
