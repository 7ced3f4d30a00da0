#include "broker/store/postgres_connection.h"

#include <fmt/format.h>
#include <libpq-fe.h>

#include <cstdlib>
#include <memory>

namespace skyslurm::store {
namespace {

// The advisory lock replicas take to migrate the schema one at a time
// ("skyslurm" in ASCII).
constexpr std::int64_t kMigrationLock = 0x736b79736c75726d;

struct ResultFree {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, ResultFree>;

// libpq's messages end with a newline.
std::string Trimmed(const char* message) {
  std::string m = message == nullptr ? "" : message;
  while (!m.empty() && (m.back() == '\n' || m.back() == ' ')) m.pop_back();
  return m;
}

void IgnoreNotice(void*, const char*) {}

}  // namespace

std::string NumberPlaceholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  char quote = 0;  // inside '...' or "..."
  int n = 0;
  for (char c : sql) {
    if (quote != 0) {
      if (c == quote) quote = 0;  // a doubled quote reopens at once: same result
      out += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      out += c;
    } else if (c == '?') {
      out += '$';
      out += std::to_string(++n);
    } else {
      out += c;
    }
  }
  return out;
}

Result<std::string> PostgresWhere(std::string_view url) {
  // libpq reads the URL (percent-encoding, a password holding '/'); its
  // own message on a malformed one may quote the password, so it is not
  // passed on.
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(std::string(url).c_str(), &error);
  if (error != nullptr) PQfreemem(error);
  if (options == nullptr) {
    return InvalidArgumentError(
        "the state database's URL is malformed (postgresql://[user[:password]@]host[:port]/"
        "database[?options])");
  }
  std::string host;
  std::string port;
  std::string database;
  for (const PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr) continue;
    const std::string_view key = o->keyword;
    if (key == "host" || (key == "hostaddr" && host.empty())) host = o->val;
    if (key == "port") port = o->val;
    if (key == "dbname") database = o->val;
  }
  PQconninfoFree(options);
  // A password holding an unencoded '/' reads as host:port/database: the
  // URL is wrong, and naming its parts would show the password.
  const bool port_ok = port.find_first_not_of("0123456789,") == std::string::npos;
  if (!port_ok || database.find('@') != std::string::npos) {
    return InvalidArgumentError(
        "the state database's URL is malformed: in its password, write '/' as %2F and '@' as %40");
  }
  return fmt::format("{}{}{}/{}", host.empty() ? "(local socket)" : host, port.empty() ? "" : ":",
                     port, database);
}

Result<std::unique_ptr<PostgresConnection>> PostgresConnection::Open(const std::string& url) {
  SKY_ASSIGN_OR_RETURN(std::string where, PostgresWhere(url));
  pg_conn* conn = PQconnectdb(url.c_str());
  if (conn == nullptr) return UnavailableError("PostgreSQL: out of memory");
  std::unique_ptr<PostgresConnection> c(new PostgresConnection(conn, url, std::move(where)));
  if (PQstatus(conn) != CONNECTION_OK) {
    return UnavailableError(fmt::format("cannot reach the state database {}: {}", c->where_,
                                        Trimmed(PQerrorMessage(conn))));
  }
  PQsetNoticeProcessor(conn, IgnoreNotice, nullptr);  // "already exists, skipping"
  return c;
}

PostgresConnection::~PostgresConnection() { PQfinish(conn_); }

Status PostgresConnection::Reconnect() {
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    return UnavailableError(fmt::format("the state database {} does not answer: {}", where_,
                                        Trimmed(PQerrorMessage(conn_))));
  }
  PQsetNoticeProcessor(conn_, IgnoreNotice, nullptr);
  return OkStatus();
}

Status PostgresConnection::ExecScript(std::string_view sql) { return Query(sql, {}).status(); }

Result<SqlRows> PostgresConnection::Query(std::string_view sql,
                                          const std::vector<SqlValue>& params) {
  const std::string text = params.empty() ? std::string(sql) : NumberPlaceholders(sql);
  std::vector<std::string> values;
  values.reserve(params.size());
  for (const SqlValue& p : params) {
    values.push_back(std::holds_alternative<std::int64_t>(p)
                         ? std::to_string(std::get<std::int64_t>(p))
                         : std::get<std::string>(p));
  }
  std::vector<const char*> pointers;
  for (const std::string& v : values) pointers.push_back(v.c_str());
  auto run = [&] {
    // Without parameters, PQexec: a script of several statements.
    return PgResult(params.empty()
                        ? PQexec(conn_, text.c_str())
                        : PQexecParams(conn_, text.c_str(), static_cast<int>(pointers.size()),
                                       nullptr, pointers.data(), nullptr, nullptr, 0));
  };
  // A transaction that failed (a statement refused, the connection lost)
  // runs nothing more until it is rolled back: PostgreSQL would refuse it,
  // or, after a reconnection, run it outside the transaction.
  if (in_transaction_ && failed_) {
    return InternalError("state database: the transaction failed; it must be rolled back");
  }
  PgResult r = run();
  // The server went away between transactions (restarted): once more on
  // a new connection. Inside a transaction its work is lost with the old
  // connection, and the caller hears so. The store writes only inside
  // transactions, so a statement run again here is a read or a BEGIN.
  if (PQstatus(conn_) == CONNECTION_BAD && !in_transaction_) {
    SKY_RETURN_IF_ERROR(Reconnect());
    r = run();
  }
  if (PQstatus(conn_) == CONNECTION_BAD) {
    failed_ = in_transaction_;
    return UnavailableError(
        fmt::format("the state database {} went away: {}", where_, Trimmed(PQerrorMessage(conn_))));
  }
  const ExecStatusType status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    failed_ = in_transaction_;
    const char* state = r ? PQresultErrorField(r.get(), PG_DIAG_SQLSTATE) : nullptr;
    const std::string why = Trimmed(r ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn_));
    if (state != nullptr && std::string_view(state) == "23505") {  // unique_violation
      return AlreadyExistsError(fmt::format("state database: {}", why));
    }
    return InternalError(fmt::format("state database: {}", why));
  }
  SqlRows out;
  const int rows = PQntuples(r.get());
  const int columns = PQnfields(r.get());
  out.rows.reserve(static_cast<std::size_t>(rows));
  for (int i = 0; i < rows; ++i) {
    std::vector<std::string>& row = out.rows.emplace_back();
    row.reserve(static_cast<std::size_t>(columns));
    for (int c = 0; c < columns; ++c) {
      row.emplace_back(PQgetvalue(r.get(), i, c),
                       static_cast<std::size_t>(PQgetlength(r.get(), i, c)));
    }
  }
  const char* changed = PQcmdTuples(r.get());
  out.changes = changed != nullptr ? std::strtoll(changed, nullptr, 10) : 0;
  return out;
}

Status PostgresConnection::Begin() {
  SKY_RETURN_IF_ERROR(ExecScript("BEGIN"));
  in_transaction_ = true;
  failed_ = false;
  return OkStatus();
}

Status PostgresConnection::Commit() {
  // PostgreSQL answers COMMIT of a failed transaction with a rollback
  // that reports success: it is said here instead.
  if (failed_) {
    (void)Rollback();
    return InternalError("state database: the transaction failed and was rolled back");
  }
  Status st = ExecScript("COMMIT");
  in_transaction_ = false;
  failed_ = false;
  return st;
}

Status PostgresConnection::Rollback() {
  failed_ = false;  // ROLLBACK itself is let through
  Status st = PQstatus(conn_) == CONNECTION_BAD ? OkStatus() : ExecScript("ROLLBACK");
  in_transaction_ = false;
  return st;
}

Status PostgresConnection::LockForMigration() {
  return Query(fmt::format("SELECT pg_advisory_xact_lock({})", kMigrationLock), {}).status();
}

Result<int> PostgresConnection::SchemaVersion() {
  // Only read: a database at the current schema needs no right to create
  // tables (PostgreSQL 15 no longer grants it on public by default).
  SKY_ASSIGN_OR_RETURN(SqlRows there,
                       Query("SELECT to_regclass('skyslurm_schema') IS NOT NULL", {}));
  if (there.empty() || there.Text(0, 0) != "t") return 0;
  SKY_ASSIGN_OR_RETURN(SqlRows r,
                       Query("SELECT COALESCE(MAX(version), 0) FROM skyslurm_schema", {}));
  return static_cast<int>(r.Int(0, 0));
}

Status PostgresConnection::SetSchemaVersion(int version) {
  SKY_RETURN_IF_ERROR(
      ExecScript("CREATE TABLE IF NOT EXISTS skyslurm_schema (version INTEGER NOT NULL)"));
  SKY_RETURN_IF_ERROR(ExecScript("DELETE FROM skyslurm_schema"));
  // Numbers are written into the statement: no parameters, no variants
  // (GCC 12 warns, wrongly, of a variant's string in a one-number list).
  return ExecScript(fmt::format("INSERT INTO skyslurm_schema (version) VALUES ({})", version));
}

std::string PostgresConnection::LeadingNumber(std::string_view column) const {
  return fmt::format("CAST(substring({} from '^[0-9]+') AS BIGINT)", column);
}

}  // namespace skyslurm::store
