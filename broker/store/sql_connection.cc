#include "broker/store/sql_connection.h"

#include <cstdlib>

#include "broker/store/postgres_connection.h"
#include "broker/store/sqlite_connection.h"

namespace skyslurm::store {

std::int64_t SqlRows::Int(std::size_t row, std::size_t col) const {
  return std::strtoll(rows[row][col].c_str(), nullptr, 10);
}

bool IsPostgresUrl(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

Result<std::unique_ptr<SqlConnection>> OpenSqlConnection(const std::string& location) {
  if (IsPostgresUrl(location)) {
    SKY_ASSIGN_OR_RETURN(auto c, PostgresConnection::Open(location));
    return std::unique_ptr<SqlConnection>(std::move(c));
  }
  SKY_ASSIGN_OR_RETURN(auto c, SqliteConnection::Open(location));
  return std::unique_ptr<SqlConnection>(std::move(c));
}

}  // namespace skyslurm::store
