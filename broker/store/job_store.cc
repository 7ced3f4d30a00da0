#include "broker/store/job_store.h"

#include "broker/util/trace.h"

#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <filesystem>
#include <set>

namespace skyslurm::store {
namespace {

// Each schema version is the SQL that takes the previous one to it.
const char* const kMigrations[] = {
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
// One migration for each version: a migration added without its version
// (or the reverse) is a build error, not a column missing at run time.
static_assert(std::size(kMigrations) == kSchemaVersion);

// One prepared statement, finalized on scope exit.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) : db_(db) {
    rc_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr);
  }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& Bind(const std::string& v) {
    if (ok())
      rc_ = sqlite3_bind_text(stmt_, ++n_, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& Bind(std::int64_t v) {
    if (ok()) rc_ = sqlite3_bind_int64(stmt_, ++n_, v);
    return *this;
  }
  // SQLITE_ROW: a row is there; SQLITE_DONE: no more.
  int Step() {
    if (!ok()) return rc_;
    return rc_ = sqlite3_step(stmt_);
  }
  std::string Text(int col) const {
    const auto* p = sqlite3_column_text(stmt_, col);
    return p == nullptr ? std::string()
                        : std::string(reinterpret_cast<const char*>(p),
                                      static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
  }
  std::int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  bool ok() const { return rc_ == SQLITE_OK || rc_ == SQLITE_ROW || rc_ == SQLITE_DONE; }
  Status Error(std::string_view what) const {
    return InternalError(fmt::format("state database: {}: {}", what, sqlite3_errmsg(db_)));
  }
  // Runs a statement that returns no rows.
  Status Run(std::string_view what) { return Step() == SQLITE_DONE ? OkStatus() : Error(what); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  int rc_ = SQLITE_OK;
  int n_ = 0;
};

constexpr const char* kJobColumns =
    "sky_id, owner, state, reason, cluster, native_id, input_json, managed, retry_on_failure, "
    "restarts, moves, created, updated, submitted, expected_start, started, ended, exit_code, "
    "model_start, parent, indices, global_id, name";
// The same without the job's input (its script, environment): a listing of
// many jobs that only shows them.
constexpr const char* kBriefJobColumns =
    "sky_id, owner, state, reason, cluster, native_id, '', managed, retry_on_failure, "
    "restarts, moves, created, updated, submitted, expected_start, started, ended, exit_code, "
    "model_start, parent, indices, global_id, name";

SkyJob JobFromRow(const Stmt& s) {
  SkyJob j;
  int c = 0;
  j.sky_id = s.Text(c++);
  j.owner = s.Text(c++);
  j.state = s.Text(c++);
  j.reason = s.Text(c++);
  j.cluster = s.Text(c++);
  j.native_id = s.Text(c++);
  j.input_json = s.Text(c++);
  j.managed = s.Int(c++) != 0;
  j.retry_on_failure = static_cast<int>(s.Int(c++));
  j.restarts = static_cast<int>(s.Int(c++));
  j.moves = static_cast<int>(s.Int(c++));
  j.created = s.Int(c++);
  j.updated = s.Int(c++);
  j.submitted = s.Int(c++);
  j.expected_start = s.Int(c++);
  j.started = s.Int(c++);
  j.ended = s.Int(c++);
  j.exit_code = static_cast<int>(s.Int(c++));
  j.model_start = s.Int(c++);
  j.parent = s.Text(c++);
  j.indices = s.Text(c++);
  j.global_id = static_cast<std::uint64_t>(s.Int(c++));
  j.name = s.Text(c++);
  return j;
}

void BindJob(Stmt& s, const SkyJob& j) {
  s.Bind(j.sky_id)
      .Bind(j.owner)
      .Bind(j.state)
      .Bind(j.reason)
      .Bind(j.cluster)
      .Bind(j.native_id)
      .Bind(j.input_json)
      .Bind(std::int64_t{j.managed})
      .Bind(std::int64_t{j.retry_on_failure})
      .Bind(std::int64_t{j.restarts})
      .Bind(std::int64_t{j.moves})
      .Bind(j.created)
      .Bind(j.updated)
      .Bind(j.submitted)
      .Bind(j.expected_start)
      .Bind(j.started)
      .Bind(j.ended)
      .Bind(std::int64_t{j.exit_code})
      .Bind(j.model_start)
      .Bind(j.parent)
      .Bind(j.indices)
      .Bind(static_cast<std::int64_t>(j.global_id))
      .Bind(j.name);
}

}  // namespace

bool IsFinalState(const std::string& state) {
  static const std::set<std::string> live = {"SUBMITTING", "PENDING", "RUNNING", "MIGRATING",
                                             "RECOVERING", "UNKNOWN", "SPREAD"};
  return !live.contains(state);
}

Result<std::unique_ptr<JobStore>> JobStore::Open(const std::string& path) {
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
  std::unique_ptr<JobStore> store(new JobStore(db));
  sqlite3_busy_timeout(db, 5000);
  // WAL: readers never block the writer; NORMAL: a commit is durable against
  // a crash of the daemon (the case that matters here), and the WAL is synced
  // at checkpoints.
  SKY_RETURN_IF_ERROR(store->Exec("PRAGMA journal_mode=WAL"));
  SKY_RETURN_IF_ERROR(store->Exec("PRAGMA synchronous=NORMAL"));
  SKY_RETURN_IF_ERROR(store->Exec("PRAGMA foreign_keys=ON"));
  SKY_RETURN_IF_ERROR(store->Migrate().WithContext(path));
  return store;
}

JobStore::~JobStore() { sqlite3_close(db_); }

Status JobStore::Exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string why = err != nullptr ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    return InternalError(fmt::format("state database: {}", why));
  }
  return OkStatus();
}

Status JobStore::Migrate() {
  std::lock_guard lock(mu_);
  int version = 0;
  {
    Stmt s(db_, "PRAGMA user_version");
    if (s.Step() != SQLITE_ROW) return s.Error("reading the schema version");
    version = static_cast<int>(s.Int(0));
  }
  if (version > kSchemaVersion) {
    return FailedPreconditionError(fmt::format(
        "the state database has schema version {}, newer than this skyslurmd's {}; run the newer "
        "skyslurmd",
        version, kSchemaVersion));
  }
  for (int v = version; v < kSchemaVersion; ++v) {
    Status migrated = Apply([&] {
      SKY_RETURN_IF_ERROR(Exec(kMigrations[v]));
      return Exec(fmt::format("PRAGMA user_version={}", v + 1).c_str());
    });
    if (!migrated.ok()) return migrated;
  }
  schema_version_ = kSchemaVersion;
  return OkStatus();
}

Status JobStore::Apply(const std::function<Status()>& body) {
  std::lock_guard lock(mu_);
  if (depth_ > 0) {  // already inside a transaction: part of it
    return body();
  }
  trace::Span span("state write (SQLite transaction)", trace::Cost::kStoreWrite);
  SKY_RETURN_IF_ERROR(Exec("BEGIN IMMEDIATE"));
  Status st = InternalError("state database: a change was interrupted");
  {
    // Whatever leaves the body (an exception too), the transaction ends here.
    struct Depth {
      int& d;
      explicit Depth(int& depth) : d(depth) { ++d; }
      ~Depth() { --d; }
    } depth(depth_);
    try {
      st = body();
    } catch (...) {
      (void)Exec("ROLLBACK");
      throw;
    }
  }
  if (!st.ok()) {
    (void)Exec("ROLLBACK");
    return st;
  }
  if (Status c = Exec("COMMIT"); !c.ok()) {
    (void)Exec("ROLLBACK");
    return c;
  }
  return OkStatus();
}

Status JobStore::Insert(const SkyJob& job) {
  return Apply([&] {
    Stmt s(db_, fmt::format(
                    "INSERT INTO jobs ({}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    kJobColumns)
                    .c_str());
    BindJob(s, job);
    if (s.Step() == SQLITE_CONSTRAINT) {
      return AlreadyExistsError(fmt::format("sky job {} exists", job.sky_id));
    }
    return s.ok() ? OkStatus() : s.Error("adding a job");
  });
}

Status JobStore::Update(const SkyJob& job) {
  return Apply([&] {
    Stmt s(
        db_,
        "UPDATE jobs SET sky_id=?, owner=?, state=?, reason=?, cluster=?, native_id=?, "
        "input_json=?, managed=?, retry_on_failure=?, restarts=?, moves=?, created=?, "
        "updated=?, submitted=?, expected_start=?, started=?, ended=?, exit_code=?, model_start=?, "
        "parent=?, indices=?, global_id=CASE global_id WHEN 0 THEN ? ELSE global_id END, name=? "
        "WHERE sky_id=?");
    BindJob(s, job);
    s.Bind(job.sky_id);
    SKY_RETURN_IF_ERROR(s.Run("updating a job"));
    if (sqlite3_changes(db_) == 0) return NotFoundError(fmt::format("no sky job {}", job.sky_id));
    return OkStatus();
  });
}

Result<SkyJob> JobStore::Get(const std::string& sky_id) {
  std::lock_guard lock(mu_);
  Stmt s(db_, fmt::format("SELECT {} FROM jobs WHERE sky_id=?", kJobColumns).c_str());
  s.Bind(sky_id);
  const int rc = s.Step();
  if (rc == SQLITE_ROW) return JobFromRow(s);
  if (rc == SQLITE_DONE) return NotFoundError(fmt::format("no sky job {}", sky_id));
  return s.Error("reading a job");
}

Result<std::vector<SkyJob>> JobStore::List(bool live_only, bool brief) {
  std::lock_guard lock(mu_);
  Stmt s(db_, fmt::format("SELECT {} FROM jobs{} ORDER BY created DESC, sky_id DESC",
                          brief ? kBriefJobColumns : kJobColumns,
                          live_only ? " WHERE state IN ('SUBMITTING','PENDING','RUNNING',"
                                      "'MIGRATING','RECOVERING','UNKNOWN','SPREAD')"
                                    : "")
                  .c_str());
  std::vector<SkyJob> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back(JobFromRow(s));
  if (rc != SQLITE_DONE) return s.Error("listing jobs");
  return out;
}

Result<SkyJob> JobStore::GetByGlobalId(std::uint64_t global_id) {
  std::lock_guard lock(mu_);
  // The whole of a spread array before its parts (they share its id), the
  // newest first should two ever share one (a renamed cluster's index).
  Stmt s(db_, fmt::format("SELECT {} FROM jobs WHERE global_id=? ORDER BY parent != '', rowid DESC "
                          "LIMIT 1",
                          kJobColumns)
                  .c_str());
  s.Bind(static_cast<std::int64_t>(global_id));
  const int rc = s.Step();
  if (rc == SQLITE_ROW) return JobFromRow(s);
  if (rc == SQLITE_DONE) return NotFoundError(fmt::format("no sky job has the id {}", global_id));
  return s.Error("reading a job");
}

Result<std::vector<SkyJob>> JobStore::Parts(const std::string& parent) {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         fmt::format("SELECT {} FROM jobs WHERE parent=? ORDER BY rowid", kJobColumns).c_str());
  s.Bind(parent);
  std::vector<SkyJob> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back(JobFromRow(s));
  if (rc != SQLITE_DONE) return s.Error("listing an array's parts");
  return out;
}

Result<std::vector<SkyJob>> JobStore::PlacedSince(std::time_t since, int limit) {
  std::lock_guard lock(mu_);
  Stmt s(db_, fmt::format("SELECT {} FROM jobs WHERE submitted >= ? AND expected_start > 0 AND "
                          "(started > 0 OR state = 'PENDING') ORDER BY submitted DESC LIMIT ?",
                          kJobColumns)
                  .c_str());
  s.Bind(static_cast<std::int64_t>(since)).Bind(static_cast<std::int64_t>(limit));
  std::vector<SkyJob> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) out.push_back(JobFromRow(s));
  if (rc != SQLITE_DONE) return s.Error("listing placed jobs");
  return out;
}

Status JobStore::AddCopy(const Copy& c) {
  return Apply([&] {
    Stmt s(db_,
           "INSERT OR REPLACE INTO copies (sky_id, cluster, native_id, partition, args, script, "
           "state, submitted, workdir, source, sent_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?)");
    s.Bind(c.sky_id)
        .Bind(c.cluster)
        .Bind(c.native_id)
        .Bind(c.partition)
        .Bind(c.args)
        .Bind(c.script)
        .Bind(c.state)
        .Bind(c.submitted)
        .Bind(c.workdir)
        .Bind(c.source)
        .Bind(c.sent_ns);
    return s.Run("adding a copy");
  });
}

Result<std::int64_t> JobStore::HighestNativeId(const std::string& cluster) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT COALESCE(MAX(CAST(native_id AS INTEGER)), 0) FROM copies WHERE cluster=?");
  s.Bind(cluster);
  if (s.Step() != SQLITE_ROW) return s.Error("reading the highest job number");
  return s.Int(0);
}

Status JobStore::SetCopyState(const std::string& cluster, const std::string& native_id,
                              const std::string& state) {
  return Apply([&] {
    Stmt s(db_, "UPDATE copies SET state=? WHERE cluster=? AND native_id=?");
    s.Bind(state).Bind(cluster).Bind(native_id);
    return s.Run("updating a copy");
  });
}

Result<std::vector<Copy>> JobStore::Copies(const std::string& sky_id) {
  return CopiesWhere("sky_id", sky_id);
}

Result<std::vector<Copy>> JobStore::CopiesInState(const std::string& state) {
  return CopiesWhere("state", state);
}

Result<std::vector<Copy>> JobStore::CopiesWhere(const char* column, const std::string& value) {
  std::lock_guard lock(mu_);
  Stmt s(db_, fmt::format("SELECT sky_id, cluster, native_id, partition, args, script, state, "
                          "submitted, workdir, source, sent_ns FROM copies WHERE {}=? "
                          "ORDER BY submitted, rowid",
                          column)
                  .c_str());
  s.Bind(value);
  std::vector<Copy> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    out.push_back({s.Text(0), s.Text(1), s.Text(2), s.Text(3), s.Text(4), s.Text(5), s.Text(6),
                   s.Int(7), s.Text(8), s.Text(9), s.Int(10)});
  }
  if (rc != SQLITE_DONE) return s.Error("listing copies");
  return out;
}

Status JobStore::AddEvent(const Event& e) {
  return Apply([&] {
    Stmt s(
        db_,
        "INSERT INTO events (sky_id, time, kind, cluster, native_id, detail) VALUES (?,?,?,?,?,?)");
    s.Bind(e.sky_id).Bind(e.time).Bind(e.kind).Bind(e.cluster).Bind(e.native_id).Bind(e.detail);
    return s.Run("adding an event");
  });
}

Result<std::vector<Event>> JobStore::Events(const std::string& sky_id) {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "SELECT seq, sky_id, time, kind, cluster, native_id, detail FROM events WHERE sky_id=? "
         "ORDER BY seq");
  s.Bind(sky_id);
  std::vector<Event> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    out.push_back({s.Int(0), s.Text(1), s.Int(2), s.Text(3), s.Text(4), s.Text(5), s.Text(6)});
  }
  if (rc != SQLITE_DONE) return s.Error("listing events");
  return out;
}

Status JobStore::AddGpuSamples(const std::vector<GpuSample>& samples, std::time_t keep_after) {
  return Apply([&] {
    for (const GpuSample& g : samples) {
      Stmt s(db_,
             "INSERT OR REPLACE INTO gpu_samples (cluster, time, total, free, pending) VALUES "
             "(?,?,?,?,?)");
      s.Bind(g.cluster).Bind(g.time).Bind(g.total).Bind(g.free).Bind(g.pending);
      SKY_RETURN_IF_ERROR(s.Run("adding a GPU sample"));
    }
    Stmt old(db_, "DELETE FROM gpu_samples WHERE time < ?");
    old.Bind(keep_after);
    return old.Run("forgetting old GPU samples");
  });
}

Result<std::vector<GpuSample>> JobStore::GpuSamplesSince(std::time_t since) {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "SELECT cluster, time, total, free, pending FROM gpu_samples WHERE time >= ? "
         "ORDER BY cluster, time");
  s.Bind(since);
  std::vector<GpuSample> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    out.push_back({s.Text(0), s.Int(1), s.Int(2), s.Int(3), s.Int(4)});
  }
  if (rc != SQLITE_DONE) return s.Error("reading GPU samples");
  return out;
}

Result<std::int64_t> JobStore::BeginIntent(const Intent& i) {
  std::lock_guard lock(mu_);
  SKY_RETURN_IF_ERROR(Apply([&] {
    Stmt s(db_,
           "INSERT INTO intents (sky_id, action, cluster, native_id, created) VALUES (?,?,?,?,?)");
    s.Bind(i.sky_id).Bind(i.action).Bind(i.cluster).Bind(i.native_id).Bind(i.created);
    return s.Run("writing an intent");
  }));
  return sqlite3_last_insert_rowid(db_);
}

Status JobStore::EndIntent(std::int64_t id) {
  return Apply([&] {
    Stmt s(db_, "UPDATE intents SET done=1 WHERE id=?");
    s.Bind(id);
    return s.Run("ending an intent");
  });
}

Status JobStore::NoteIntent(std::int64_t id, const std::string& native_id) {
  return Apply([&] {
    Stmt s(db_, "UPDATE intents SET native_id=? WHERE id=? AND done=0");
    s.Bind(native_id).Bind(id);
    return s.Run("noting an intent's progress");
  });
}

Result<std::vector<Intent>> JobStore::OpenIntents() {
  std::lock_guard lock(mu_);
  Stmt s(db_,
         "SELECT id, sky_id, action, cluster, native_id, created FROM intents WHERE done=0 ORDER BY "
         "id");
  std::vector<Intent> out;
  int rc;
  while ((rc = s.Step()) == SQLITE_ROW) {
    out.push_back({s.Int(0), s.Text(1), s.Text(2), s.Text(3), s.Text(4), s.Int(5)});
  }
  if (rc != SQLITE_DONE) return s.Error("listing intents");
  return out;
}

bool JobStore::HasOpenIntent(const std::string& sky_id) {
  std::lock_guard lock(mu_);
  Stmt s(db_, "SELECT 1 FROM intents WHERE done=0 AND sky_id=? LIMIT 1");
  s.Bind(sky_id);
  return s.Step() == SQLITE_ROW;
}

}  // namespace skyslurm::store
