// The state database's schema and its migrations, for each engine. The
// schema version is one number for both: version N means the same tables
// and columns in SQLite and in PostgreSQL. SQLite files have come through
// every version since the first; a PostgreSQL database starts at version 8
// (where the site daemon began) and follows from there, and from 8 on each
// migration is one SQL text for both.
#pragma once

#include "broker/store/sql_connection.h"
#include "broker/util/status.h"

namespace skyslurm::store {

// The schema version this build writes; older databases are migrated on
// open, newer ones refused.
inline constexpr int kSchemaVersion = 10;

// Takes the database to kSchemaVersion in one transaction, under the
// migration lock (replicas starting together migrate once); refuses a
// database newer than this build. The version found, for messages.
Result<int> MigrateSchema(SqlConnection& db);

}  // namespace skyslurm::store
