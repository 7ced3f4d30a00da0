#include "broker/store/schema.h"

#include <fmt/format.h>

#include <iterator>

namespace skyslurm::store {
namespace {

// Each schema version is the SQL that takes the previous one to it.
const char* const kSqliteMigrations[] = {
    // 1: the first schema.
    R"sql(
CREATE TABLE jobs (
  sky_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  cluster TEXT NOT NULL DEFAULT '',
  slurm_id TEXT NOT NULL DEFAULT '',
  input_json TEXT NOT NULL,
  managed INTEGER NOT NULL DEFAULT 0,
  retry_on_failure INTEGER NOT NULL DEFAULT 0,
  restarts INTEGER NOT NULL DEFAULT 0,
  moves INTEGER NOT NULL DEFAULT 0,
  created INTEGER NOT NULL,
  updated INTEGER NOT NULL,
  submitted INTEGER NOT NULL DEFAULT 0,
  expected_start INTEGER NOT NULL DEFAULT 0,
  started INTEGER NOT NULL DEFAULT 0,
  ended INTEGER NOT NULL DEFAULT 0,
  exit_code INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX jobs_state ON jobs(state);
CREATE TABLE copies (
  sky_id TEXT NOT NULL REFERENCES jobs(sky_id),
  cluster TEXT NOT NULL,
  slurm_id TEXT NOT NULL,
  partition TEXT NOT NULL DEFAULT '',
  args TEXT NOT NULL DEFAULT '',
  script TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT '',
  submitted INTEGER NOT NULL,
  PRIMARY KEY (cluster, slurm_id)
);
CREATE INDEX copies_sky ON copies(sky_id);
CREATE TABLE events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  sky_id TEXT NOT NULL,
  time INTEGER NOT NULL,
  kind TEXT NOT NULL,
  cluster TEXT NOT NULL DEFAULT '',
  slurm_id TEXT NOT NULL DEFAULT '',
  detail TEXT NOT NULL DEFAULT ''
);
CREATE INDEX events_sky ON events(sky_id);
CREATE TABLE intents (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  sky_id TEXT NOT NULL,
  action TEXT NOT NULL,
  cluster TEXT NOT NULL DEFAULT '',
  slurm_id TEXT NOT NULL DEFAULT '',
  created INTEGER NOT NULL,
  done INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX intents_open ON intents(done);
)sql",
    // 2: a cluster's own job id is not always Slurm's (Kubernetes' jobs
    // get one from skyslurmd): slurm_id becomes native_id.
    R"sql(
ALTER TABLE jobs RENAME COLUMN slurm_id TO native_id;
ALTER TABLE copies RENAME COLUMN slurm_id TO native_id;
ALTER TABLE events RENAME COLUMN slurm_id TO native_id;
ALTER TABLE intents RENAME COLUMN slurm_id TO native_id;
)sql",
    // 3: a copy runs in a folder copied from the user's (sync/workdir_plan.h).
    R"sql(
ALTER TABLE copies ADD COLUMN workdir TEXT NOT NULL DEFAULT '';
ALTER TABLE copies ADD COLUMN source TEXT NOT NULL DEFAULT '';
)sql",
    // 4: the start the model gave before calibration (estimates: calibrated
    // learns from it, not from its own scaled answers).
    R"sql(
ALTER TABLE jobs ADD COLUMN model_start INTEGER NOT NULL DEFAULT 0;
)sql",
    // 5: an array spread over clusters is one sky job with a part per
    // cluster: each part a sky job of its own, naming the whole and its
    // indices.
    R"sql(
ALTER TABLE jobs ADD COLUMN parent TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN indices TEXT NOT NULL DEFAULT '';
CREATE INDEX jobs_parent ON jobs(parent);
)sql",
    // 6: a routed job's id on every cluster (job/global_id.h), kept from its
    // first copy through its moves.
    R"sql(
ALTER TABLE jobs ADD COLUMN global_id INTEGER NOT NULL DEFAULT 0;
CREATE INDEX jobs_global ON jobs(global_id);
)sql",
    // 7: when a copy's folder began to be sent: what the job wrote there is
    // what is newer (a job's folder coming back, daemon/folder_copy.cc).
    R"sql(
ALTER TABLE copies ADD COLUMN sent_ns INTEGER NOT NULL DEFAULT 0;
)sql",
    // 8: each cluster's GPUs busy and free over time, sampled by skyslurmd
    // (the dashboard's charts), kept for a bounded time; a job's name as
    // Slurm gives it (the dashboard's table lists ended jobs without
    // reading each one's input).
    R"sql(
CREATE TABLE gpu_samples (
  cluster TEXT NOT NULL,
  time INTEGER NOT NULL,
  total INTEGER NOT NULL,
  free INTEGER NOT NULL,
  pending INTEGER NOT NULL,
  PRIMARY KEY (cluster, time)
);
CREATE INDEX gpu_samples_time ON gpu_samples(time);
ALTER TABLE jobs ADD COLUMN name TEXT NOT NULL DEFAULT '';
)sql",
};
// One migration for each version up to 8 (kLaterMigrations after): a
// migration added without its version (or the reverse) is a build error,
// not a column missing at run time.
static_assert(std::size(kSqliteMigrations) == 8);

// PostgreSQL's schema at version 8, whole: what SQLite's migrations 1 to
// 8 made, with PostgreSQL's types (BIGINT for times and ids) and a serial
// `seq` where SQLite orders by rowid.
constexpr const char* kPostgresVersion8 = R"sql(
CREATE TABLE jobs (
  seq BIGSERIAL UNIQUE,
  sky_id TEXT PRIMARY KEY,
  owner TEXT NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  cluster TEXT NOT NULL DEFAULT '',
  native_id TEXT NOT NULL DEFAULT '',
  input_json TEXT NOT NULL,
  managed BIGINT NOT NULL DEFAULT 0,
  retry_on_failure BIGINT NOT NULL DEFAULT 0,
  restarts BIGINT NOT NULL DEFAULT 0,
  moves BIGINT NOT NULL DEFAULT 0,
  created BIGINT NOT NULL,
  updated BIGINT NOT NULL,
  submitted BIGINT NOT NULL DEFAULT 0,
  expected_start BIGINT NOT NULL DEFAULT 0,
  started BIGINT NOT NULL DEFAULT 0,
  ended BIGINT NOT NULL DEFAULT 0,
  exit_code BIGINT NOT NULL DEFAULT 0,
  model_start BIGINT NOT NULL DEFAULT 0,
  parent TEXT NOT NULL DEFAULT '',
  indices TEXT NOT NULL DEFAULT '',
  global_id BIGINT NOT NULL DEFAULT 0,
  name TEXT NOT NULL DEFAULT ''
);
CREATE INDEX jobs_state ON jobs(state);
CREATE INDEX jobs_parent ON jobs(parent);
CREATE INDEX jobs_global ON jobs(global_id);
CREATE TABLE copies (
  seq BIGSERIAL UNIQUE,
  sky_id TEXT NOT NULL REFERENCES jobs(sky_id),
  cluster TEXT NOT NULL,
  native_id TEXT NOT NULL,
  partition TEXT NOT NULL DEFAULT '',
  args TEXT NOT NULL DEFAULT '',
  script TEXT NOT NULL DEFAULT '',
  state TEXT NOT NULL DEFAULT '',
  submitted BIGINT NOT NULL,
  workdir TEXT NOT NULL DEFAULT '',
  source TEXT NOT NULL DEFAULT '',
  sent_ns BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (cluster, native_id)
);
CREATE INDEX copies_sky ON copies(sky_id);
CREATE TABLE events (
  seq BIGSERIAL PRIMARY KEY,
  sky_id TEXT NOT NULL,
  time BIGINT NOT NULL,
  kind TEXT NOT NULL,
  cluster TEXT NOT NULL DEFAULT '',
  native_id TEXT NOT NULL DEFAULT '',
  detail TEXT NOT NULL DEFAULT ''
);
CREATE INDEX events_sky ON events(sky_id);
CREATE TABLE intents (
  id BIGSERIAL PRIMARY KEY,
  sky_id TEXT NOT NULL,
  action TEXT NOT NULL,
  cluster TEXT NOT NULL DEFAULT '',
  native_id TEXT NOT NULL DEFAULT '',
  created BIGINT NOT NULL,
  done BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX intents_open ON intents(done);
CREATE TABLE gpu_samples (
  cluster TEXT NOT NULL,
  time BIGINT NOT NULL,
  total BIGINT NOT NULL,
  free BIGINT NOT NULL,
  pending BIGINT NOT NULL,
  PRIMARY KEY (cluster, time)
);
CREATE INDEX gpu_samples_time ON gpu_samples(time);
)sql";
constexpr int kPostgresFirstVersion = 8;

// From version 8 on, one migration for both engines (SQLite reads BIGINT
// as an integer): [i] takes version 8 + i to 9 + i.
const char* const kLaterMigrations[] = {
    // 9: a live job is driven by one replica at a time (a site's daemons
    // share the database): the replica holding its lease, and until when
    // (ms since the epoch, by the database's clock).
    R"sql(
ALTER TABLE jobs ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE jobs ADD COLUMN lease_until BIGINT NOT NULL DEFAULT 0;
)sql",
    // 10: the MUNGE credentials a site's replicas have taken, until they
    // expire: each munged refuses a credential it decoded before, but a
    // replica's munged does not know what another's decoded.
    R"sql(
CREATE TABLE seen_credentials (
  digest TEXT PRIMARY KEY,
  expires BIGINT NOT NULL
);
CREATE INDEX seen_credentials_expires ON seen_credentials(expires);
)sql",
};
static_assert(kPostgresFirstVersion + std::size(kLaterMigrations) == kSchemaVersion);

// The SQL that takes `db` from `version` to the next one.
const char* NextMigration(const SqlConnection& db, int version) {
  if (version >= kPostgresFirstVersion) return kLaterMigrations[version - kPostgresFirstVersion];
  if (db.engine() != "PostgreSQL") return kSqliteMigrations[version];
  return version == 0 ? kPostgresVersion8 : nullptr;
}

Status MigrateInTransaction(SqlConnection& db, int* found) {
  SKY_RETURN_IF_ERROR(db.LockForMigration());
  SKY_ASSIGN_OR_RETURN(int version, db.SchemaVersion());
  *found = version;
  if (version > kSchemaVersion) {
    return FailedPreconditionError(fmt::format(
        "the state database has schema version {}, newer than this skyslurmd's {}; run the newer "
        "skyslurmd",
        version, kSchemaVersion));
  }
  if (version == kSchemaVersion) return OkStatus();
  while (version < kSchemaVersion) {
    const char* sql = NextMigration(db, version);
    if (sql == nullptr) {
      return InternalError(fmt::format("state database: no {} migration from schema version {}",
                                       db.engine(), version));
    }
    SKY_RETURN_IF_ERROR(db.ExecScript(sql));
    version = db.engine() == "PostgreSQL" && version == 0 ? kPostgresFirstVersion : version + 1;
  }
  return db.SetSchemaVersion(version);
}

}  // namespace

Result<int> MigrateSchema(SqlConnection& db) {
  SKY_RETURN_IF_ERROR(db.Begin());
  int found = 0;
  if (Status st = MigrateInTransaction(db, &found); !st.ok()) {
    (void)db.Rollback();
    return st;
  }
  SKY_RETURN_IF_ERROR(db.Commit());
  return found;
}

}  // namespace skyslurm::store
