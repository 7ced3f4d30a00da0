#include "broker/store/job_store.h"

#include <fmt/format.h>

#include <set>

#include "broker/store/schema.h"
#include "broker/util/trace.h"

namespace skyslurm::store {
namespace {

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
constexpr const char* kLiveStates =
    "('SUBMITTING','PENDING','RUNNING','MIGRATING','RECOVERING','UNKNOWN','SPREAD')";
constexpr const char* kCopyColumns =
    "sky_id, cluster, native_id, partition, args, script, state, submitted, workdir, source, "
    "sent_ns";

SkyJob JobFromRow(const SqlRows& r, std::size_t i) {
  SkyJob j;
  std::size_t c = 0;
  j.sky_id = r.Text(i, c++);
  j.owner = r.Text(i, c++);
  j.state = r.Text(i, c++);
  j.reason = r.Text(i, c++);
  j.cluster = r.Text(i, c++);
  j.native_id = r.Text(i, c++);
  j.input_json = r.Text(i, c++);
  j.managed = r.Int(i, c++) != 0;
  j.retry_on_failure = static_cast<int>(r.Int(i, c++));
  j.restarts = static_cast<int>(r.Int(i, c++));
  j.moves = static_cast<int>(r.Int(i, c++));
  j.created = r.Int(i, c++);
  j.updated = r.Int(i, c++);
  j.submitted = r.Int(i, c++);
  j.expected_start = r.Int(i, c++);
  j.started = r.Int(i, c++);
  j.ended = r.Int(i, c++);
  j.exit_code = static_cast<int>(r.Int(i, c++));
  j.model_start = r.Int(i, c++);
  j.parent = r.Text(i, c++);
  j.indices = r.Text(i, c++);
  j.global_id = static_cast<std::uint64_t>(r.Int(i, c++));
  j.name = r.Text(i, c++);
  return j;
}

std::vector<SkyJob> JobsFromRows(const SqlRows& r) {
  std::vector<SkyJob> out;
  out.reserve(r.size());
  for (std::size_t i = 0; i < r.size(); ++i) out.push_back(JobFromRow(r, i));
  return out;
}

std::vector<SqlValue> JobValues(const SkyJob& j) {
  return {j.sky_id,
          j.owner,
          j.state,
          j.reason,
          j.cluster,
          j.native_id,
          j.input_json,
          std::int64_t{j.managed},
          std::int64_t{j.retry_on_failure},
          std::int64_t{j.restarts},
          std::int64_t{j.moves},
          std::int64_t{j.created},
          std::int64_t{j.updated},
          std::int64_t{j.submitted},
          std::int64_t{j.expected_start},
          std::int64_t{j.started},
          std::int64_t{j.ended},
          std::int64_t{j.exit_code},
          std::int64_t{j.model_start},
          j.parent,
          j.indices,
          static_cast<std::int64_t>(j.global_id),
          j.name};
}

}  // namespace

bool IsFinalState(const std::string& state) {
  static const std::set<std::string> live = {"SUBMITTING", "PENDING", "RUNNING", "MIGRATING",
                                             "RECOVERING", "UNKNOWN", "SPREAD"};
  return !live.contains(state);
}

Result<std::unique_ptr<JobStore>> JobStore::Open(const std::string& location) {
  SKY_ASSIGN_OR_RETURN(std::unique_ptr<SqlConnection> db, OpenSqlConnection(location));
  std::unique_ptr<JobStore> store(new JobStore(std::move(db)));
  auto found = MigrateSchema(*store->db_);
  if (!found.ok()) return found.status().WithContext(store->db_->where());
  store->schema_version_ = kSchemaVersion;
  return store;
}

JobStore::JobStore(std::unique_ptr<SqlConnection> db) : db_(std::move(db)) {}

JobStore::~JobStore() = default;

std::string_view JobStore::engine() const { return db_->engine(); }

Result<SqlRows> JobStore::Read(std::string_view sql, const std::vector<SqlValue>& params,
                               std::string_view what) {
  std::lock_guard lock(mu_);
  auto rows = Timed(sql, params);
  if (!rows.ok()) {
    NoteFailure(rows.status());
    return rows.status().WithContext(what);
  }
  return rows;
}

Result<SqlRows> JobStore::Timed(std::string_view sql, const std::vector<SqlValue>& params) {
  const auto start = std::chrono::steady_clock::now();
  auto rows = db_->Query(sql, params);
  latency_.Observe(std::chrono::steady_clock::now() - start);
  return rows;
}

void JobStore::NoteFailure(const Status& failed) {
  if (depth_ > 0 && !failed_in_transaction_) failed_in_transaction_ = failed;
}

Status JobStore::Apply(const std::function<Status()>& body) {
  std::lock_guard lock(mu_);
  if (depth_ > 0) {  // already inside a transaction: part of it
    return body();
  }
  trace::Span span(fmt::format("state write ({} transaction)", db_->engine()),
                   trace::Cost::kStoreWrite);
  SKY_RETURN_IF_ERROR(db_->Begin());
  failed_in_transaction_.reset();
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
      (void)db_->Rollback();
      throw;
    }
  }
  // A statement that failed inside the body fails the whole, even when the
  // body went on without it: PostgreSQL has aborted the transaction by
  // then, and SQLite is held to the same.
  if (st.ok() && failed_in_transaction_) {
    st = InternalError(fmt::format("state database: a change inside the transaction failed: {}",
                                   failed_in_transaction_->message()));
  }
  failed_in_transaction_.reset();
  if (!st.ok()) {
    (void)db_->Rollback();
    return st;
  }
  if (Status c = db_->Commit(); !c.ok()) {
    (void)db_->Rollback();
    return c;
  }
  return OkStatus();
}

Status JobStore::Write(std::string_view sql, const std::vector<SqlValue>& params,
                       std::string_view what, std::int64_t* changes) {
  return Apply([&]() -> Status {
    auto rows = Timed(sql, params);
    if (!rows.ok()) {
      NoteFailure(rows.status());
      return rows.status().WithContext(what);
    }
    if (changes != nullptr) *changes = rows->changes;
    return OkStatus();
  });
}

Status JobStore::Insert(const SkyJob& job) {
  // ON CONFLICT DO NOTHING rather than a broken constraint: in PostgreSQL an
  // error ends the whole transaction this insert may be part of.
  std::int64_t added = 0;
  std::vector<SqlValue> values = JobValues(job);
  // A replica's new job is its own to drive from the start: no other
  // replica can take it between its insert and its first lease.
  const std::string placeholders = "?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?";
  std::string sql;
  if (replica_.empty()) {
    sql = fmt::format("INSERT INTO jobs ({}) VALUES ({}) ON CONFLICT DO NOTHING", kJobColumns,
                      placeholders);
  } else {
    sql = fmt::format(
        "INSERT INTO jobs ({}, lease_owner, lease_until) VALUES ({}, ?, {} + ?) ON CONFLICT DO "
        "NOTHING",
        kJobColumns, placeholders, db_->NowMs());
    values.emplace_back(replica_);
    values.emplace_back(std::int64_t{lease_.count()});
  }
  SKY_RETURN_IF_ERROR(Write(sql, values, "adding a job", &added));
  if (added == 0) return AlreadyExistsError(fmt::format("sky job {} exists", job.sky_id));
  return OkStatus();
}

Status JobStore::Update(const SkyJob& job) {
  std::vector<SqlValue> values = JobValues(job);
  values.emplace_back(job.sky_id);
  std::int64_t changed = 0;
  SKY_RETURN_IF_ERROR(
      Write("UPDATE jobs SET sky_id=?, owner=?, state=?, reason=?, cluster=?, native_id=?, "
            "input_json=?, managed=?, retry_on_failure=?, restarts=?, moves=?, created=?, "
            "updated=?, submitted=?, expected_start=?, started=?, ended=?, exit_code=?, "
            "model_start=?, parent=?, indices=?, "
            "global_id=CASE global_id WHEN 0 THEN ? ELSE global_id END, name=? WHERE sky_id=?",
            values, "updating a job", &changed));
  if (changed == 0) return NotFoundError(fmt::format("no sky job {}", job.sky_id));
  return OkStatus();
}

Result<SkyJob> JobStore::Get(const std::string& sky_id) {
  SKY_ASSIGN_OR_RETURN(
      SqlRows r, Read(fmt::format("SELECT {} FROM jobs WHERE sky_id=?", kJobColumns), {sky_id},
                      "reading a job"));
  if (r.empty()) return NotFoundError(fmt::format("no sky job {}", sky_id));
  return JobFromRow(r, 0);
}

Result<std::vector<SkyJob>> JobStore::List(bool live_only, bool brief) {
  SKY_ASSIGN_OR_RETURN(
      SqlRows r,
      Read(fmt::format("SELECT {} FROM jobs{} ORDER BY created DESC, sky_id DESC",
                       brief ? kBriefJobColumns : kJobColumns,
                       live_only ? fmt::format(" WHERE state IN {}", kLiveStates) : std::string()),
           {}, "listing jobs"));
  return JobsFromRows(r);
}

Result<SkyJob> JobStore::GetByGlobalId(std::uint64_t global_id) {
  // The whole of a spread array before its parts (they share its id), the
  // newest first should two ever share one (a renamed cluster's index).
  SKY_ASSIGN_OR_RETURN(
      SqlRows r, Read(fmt::format("SELECT {} FROM jobs WHERE global_id=? ORDER BY parent != '', "
                                  "{} DESC LIMIT 1",
                                  kJobColumns, db_->InsertionOrder()),
                      {static_cast<std::int64_t>(global_id)}, "reading a job"));
  if (r.empty()) return NotFoundError(fmt::format("no sky job has the id {}", global_id));
  return JobFromRow(r, 0);
}

Result<std::vector<SkyJob>> JobStore::Parts(const std::string& parent) {
  SKY_ASSIGN_OR_RETURN(SqlRows r, Read(fmt::format("SELECT {} FROM jobs WHERE parent=? ORDER BY {}",
                                                   kJobColumns, db_->InsertionOrder()),
                                       {parent}, "listing an array's parts"));
  return JobsFromRows(r);
}

Result<std::vector<SkyJob>> JobStore::PlacedSince(std::time_t since, int limit) {
  SKY_ASSIGN_OR_RETURN(
      SqlRows r,
      Read(fmt::format("SELECT {} FROM jobs WHERE submitted >= ? AND expected_start > 0 AND "
                       "(started > 0 OR state = 'PENDING') ORDER BY submitted DESC LIMIT ?",
                       kJobColumns),
           {static_cast<std::int64_t>(since), static_cast<std::int64_t>(limit)},
           "listing placed jobs"));
  return JobsFromRows(r);
}

Status JobStore::AddCopy(const Copy& c) {
  // A copy made again (the same cluster and id: a retried submission found
  // its job) replaces what was recorded of it.
  return Write(fmt::format("INSERT INTO copies ({}) VALUES (?,?,?,?,?,?,?,?,?,?,?) "
                           "ON CONFLICT (cluster, native_id) DO UPDATE SET "
                           "sky_id=excluded.sky_id, partition=excluded.partition, "
                           "args=excluded.args, script=excluded.script, state=excluded.state, "
                           "submitted=excluded.submitted, workdir=excluded.workdir, "
                           "source=excluded.source, sent_ns=excluded.sent_ns",
                           kCopyColumns),
               {c.sky_id, c.cluster, c.native_id, c.partition, c.args, c.script, c.state,
                std::int64_t{c.submitted}, c.workdir, c.source, c.sent_ns},
               "adding a copy");
}

Result<std::int64_t> JobStore::HighestNativeId(const std::string& cluster) {
  SKY_ASSIGN_OR_RETURN(SqlRows r,
                       Read(fmt::format("SELECT COALESCE(MAX({}), 0) FROM copies WHERE cluster=?",
                                        db_->LeadingNumber("native_id")),
                            {cluster}, "reading the highest job number"));
  return r.empty() ? 0 : r.Int(0, 0);
}

Status JobStore::SetCopyState(const std::string& cluster, const std::string& native_id,
                              const std::string& state) {
  return Write("UPDATE copies SET state=? WHERE cluster=? AND native_id=?",
               {state, cluster, native_id}, "updating a copy");
}

Result<std::vector<Copy>> JobStore::Copies(const std::string& sky_id) {
  return CopiesWhere("sky_id", sky_id);
}

Result<std::vector<Copy>> JobStore::CopiesInState(const std::string& state) {
  return CopiesWhere("state", state);
}

Result<std::vector<Copy>> JobStore::CopiesWhere(const char* column, const std::string& value) {
  SKY_ASSIGN_OR_RETURN(SqlRows r,
                       Read(fmt::format("SELECT {} FROM copies WHERE {}=? ORDER BY submitted, {}",
                                        kCopyColumns, column, db_->InsertionOrder()),
                            {value}, "listing copies"));
  std::vector<Copy> out;
  for (std::size_t i = 0; i < r.size(); ++i) {
    out.push_back({r.Text(i, 0), r.Text(i, 1), r.Text(i, 2), r.Text(i, 3), r.Text(i, 4),
                   r.Text(i, 5), r.Text(i, 6), r.Int(i, 7), r.Text(i, 8), r.Text(i, 9),
                   r.Int(i, 10)});
  }
  return out;
}

Status JobStore::AddEvent(const Event& e) {
  return Write(
      "INSERT INTO events (sky_id, time, kind, cluster, native_id, detail) VALUES (?,?,?,?,?,?)",
      {e.sky_id, std::int64_t{e.time}, e.kind, e.cluster, e.native_id, e.detail},
      "adding an event");
}

Result<std::vector<Event>> JobStore::Events(const std::string& sky_id) {
  SKY_ASSIGN_OR_RETURN(
      SqlRows r,
      Read("SELECT seq, sky_id, time, kind, cluster, native_id, detail FROM events WHERE "
           "sky_id=? ORDER BY seq",
           {sky_id}, "listing events"));
  std::vector<Event> out;
  for (std::size_t i = 0; i < r.size(); ++i) {
    out.push_back({r.Int(i, 0), r.Text(i, 1), r.Int(i, 2), r.Text(i, 3), r.Text(i, 4), r.Text(i, 5),
                   r.Text(i, 6)});
  }
  return out;
}

Status JobStore::AddGpuSamples(const std::vector<GpuSample>& samples, std::time_t keep_after) {
  return Apply([&] {
    for (const GpuSample& g : samples) {
      SKY_RETURN_IF_ERROR(Write(
          "INSERT INTO gpu_samples (cluster, time, total, free, pending) VALUES (?,?,?,?,?) "
          "ON CONFLICT (cluster, time) DO UPDATE SET total=excluded.total, free=excluded.free, "
          "pending=excluded.pending",
          {g.cluster, std::int64_t{g.time}, g.total, g.free, g.pending}, "adding a GPU sample"));
    }
    return Write("DELETE FROM gpu_samples WHERE time < ?", {std::int64_t{keep_after}},
                 "forgetting old GPU samples");
  });
}

Result<std::vector<GpuSample>> JobStore::GpuSamplesSince(std::time_t since) {
  SKY_ASSIGN_OR_RETURN(SqlRows r,
                       Read("SELECT cluster, time, total, free, pending FROM gpu_samples WHERE "
                            "time >= ? ORDER BY cluster, time",
                            {std::int64_t{since}}, "reading GPU samples"));
  std::vector<GpuSample> out;
  for (std::size_t i = 0; i < r.size(); ++i) {
    out.push_back({r.Text(i, 0), r.Int(i, 1), r.Int(i, 2), r.Int(i, 3), r.Int(i, 4)});
  }
  return out;
}

Result<std::int64_t> JobStore::BeginIntent(const Intent& i) {
  std::int64_t id = 0;
  // A replica acts on a job only while it holds its lease (the fence: one
  // that lost it, stalled past its lease, starts nothing more). A cancel is
  // the user's wish, recorded by whichever replica took the request and
  // carried out by the job's holder.
  const bool fenced = !replica_.empty() && i.action != "cancel";
  std::vector<SqlValue> values = {i.sky_id, i.action, i.cluster, i.native_id,
                                  std::int64_t{i.created}};
  std::string sql =
      "INSERT INTO intents (sky_id, action, cluster, native_id, created) VALUES (?,?,?,?,?) "
      "RETURNING id";
  if (fenced) {
    sql = fmt::format(
        "INSERT INTO intents (sky_id, action, cluster, native_id, created) SELECT ?,?,?,?,? "
        "WHERE EXISTS (SELECT 1 FROM jobs WHERE sky_id=? AND lease_owner=? AND lease_until >= "
        "{}) RETURNING id",
        db_->NowMs());
    values.emplace_back(i.sky_id);
    values.emplace_back(replica_);
  }
  SKY_RETURN_IF_ERROR(Apply([&]() -> Status {
    auto r = db_->Query(sql, values);
    if (!r.ok()) {
      NoteFailure(r.status());
      return r.status().WithContext("writing an intent");
    }
    if (r->empty() && fenced) {
      return FailedPreconditionError(
          fmt::format("{}: this replica ({}) no longer holds its lease", i.sky_id, replica_));
    }
    if (r->empty()) return InternalError("state database: writing an intent gave no id");
    id = r->Int(0, 0);
    return OkStatus();
  }));
  return id;
}

Status JobStore::EndIntent(std::int64_t id) {
  return Write("UPDATE intents SET done=1 WHERE id=?", {id}, "ending an intent");
}

Status JobStore::NoteIntent(std::int64_t id, const std::string& native_id) {
  return Write("UPDATE intents SET native_id=? WHERE id=? AND done=0", {native_id, id},
               "noting an intent's progress");
}

Result<std::vector<Intent>> JobStore::OpenIntents() {
  SKY_ASSIGN_OR_RETURN(SqlRows r, Read("SELECT id, sky_id, action, cluster, native_id, created "
                                       "FROM intents WHERE done=0 ORDER BY id",
                                       {}, "listing intents"));
  std::vector<Intent> out;
  for (std::size_t i = 0; i < r.size(); ++i) {
    out.push_back(
        {r.Int(i, 0), r.Text(i, 1), r.Text(i, 2), r.Text(i, 3), r.Text(i, 4), r.Int(i, 5)});
  }
  return out;
}

void JobStore::DriveAs(std::string replica, std::chrono::milliseconds lease) {
  std::lock_guard lock(mu_);
  replica_ = std::move(replica);
  lease_ = lease;
}

Result<std::vector<std::string>> JobStore::LeasedBy(const std::string& owner) {
  SKY_ASSIGN_OR_RETURN(
      SqlRows r, Read(fmt::format("SELECT sky_id FROM jobs WHERE lease_owner=? AND lease_until >= "
                                  "{} AND state IN {}",
                                  db_->NowMs(), kLiveStates),
                      {owner}, "reading leases"));
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < r.size(); ++i) ids.push_back(r.Text(i, 0));
  return ids;
}

Result<std::map<std::pair<std::string, std::string>, std::int64_t>> JobStore::JobCounts() {
  SKY_ASSIGN_OR_RETURN(SqlRows r,
                       Read("SELECT state, cluster, COUNT(*) FROM jobs GROUP BY state, cluster", {},
                            "counting jobs"));
  std::map<std::pair<std::string, std::string>, std::int64_t> counts;
  for (std::size_t i = 0; i < r.size(); ++i) counts[{r.Text(i, 0), r.Text(i, 1)}] = r.Int(i, 2);
  return counts;
}

Result<std::map<std::string, std::int64_t>> JobStore::EventCounts() {
  SKY_ASSIGN_OR_RETURN(
      SqlRows r, Read("SELECT kind, COUNT(*) FROM events GROUP BY kind", {}, "counting events"));
  std::map<std::string, std::int64_t> counts;
  for (std::size_t i = 0; i < r.size(); ++i) counts[r.Text(i, 0)] = r.Int(i, 1);
  return counts;
}

Status JobStore::TakeCredential(const std::string& digest, std::time_t expires) {
  std::int64_t taken = 0;
  return Apply([&]() -> Status {
    // Expired ones are forgotten by whoever takes the next (an index walk).
    SKY_RETURN_IF_ERROR(
        Write(fmt::format("DELETE FROM seen_credentials WHERE expires < {} / 1000", db_->NowMs()),
              {}, "forgetting expired credentials"));
    SKY_RETURN_IF_ERROR(
        Write("INSERT INTO seen_credentials (digest, expires) VALUES (?, ?) "
              "ON CONFLICT DO NOTHING",
              {digest, std::int64_t{expires}}, "taking a credential", &taken));
    if (taken == 0) return AlreadyExistsError("this credential was used before (a replay)");
    return OkStatus();
  });
}

Result<bool> JobStore::TakeLease(const std::string& sky_id, const std::string& owner,
                                 std::chrono::milliseconds duration) {
  const std::string now(db_->NowMs());
  std::int64_t taken = 0;
  SKY_RETURN_IF_ERROR(Write(fmt::format("UPDATE jobs SET lease_owner=?, lease_until={} + ? WHERE "
                                        "sky_id=? AND (lease_owner=? OR lease_owner='' OR "
                                        "lease_until < {})",
                                        now, now),
                            {owner, std::int64_t{duration.count()}, sky_id, owner},
                            "taking a lease", &taken));
  if (taken > 0) return true;
  SKY_RETURN_IF_ERROR(Get(sky_id).status());  // NotFound, or held by another
  return false;
}

Result<std::int64_t> JobStore::RenewLeases(const std::string& owner,
                                           std::chrono::milliseconds duration) {
  const std::string now(db_->NowMs());
  std::int64_t renewed = 0;
  // Only what still needs its holder: a live job, or one with an open
  // intent (an ended job's cancel left for a silent cluster). An ended,
  // settled job's lease lapses, and any replica may take it to settle what
  // turns up later (a stale copy).
  SKY_RETURN_IF_ERROR(Write(
      fmt::format("UPDATE jobs SET lease_until={} + ? WHERE lease_owner=? AND lease_until >= {} "
                  "AND (state IN {} OR EXISTS (SELECT 1 FROM intents i WHERE i.sky_id = "
                  "jobs.sky_id AND i.done = 0))",
                  now, now, kLiveStates),
      {std::int64_t{duration.count()}, owner}, "renewing leases", &renewed));
  return renewed;
}

Result<std::vector<std::string>> JobStore::TakeFreeLeases(const std::string& owner,
                                                          std::chrono::milliseconds duration,
                                                          int limit) {
  const std::string now(db_->NowMs());
  const std::string free = fmt::format("(lease_owner='' OR lease_until < {})", now);
  std::vector<std::string> ids;
  SKY_RETURN_IF_ERROR(Apply([&]() -> Status {
    // Rows another replica is taking are skipped (SkipLockedRows), and the
    // condition is checked again outside the subquery: a job just taken is
    // never taken twice.
    auto r = db_->Query(
        fmt::format("UPDATE jobs SET lease_owner=?, lease_until={} + ? WHERE sky_id IN (SELECT "
                    "sky_id FROM jobs WHERE state IN {} AND {} ORDER BY created, sky_id LIMIT "
                    "?{}) AND {} RETURNING sky_id",
                    now, kLiveStates, free, db_->SkipLockedRows(), free),
        {owner, std::int64_t{duration.count()}, std::int64_t{limit}});
    if (!r.ok()) {
      NoteFailure(r.status());
      return r.status().WithContext("taking free leases");
    }
    for (std::size_t i = 0; i < r->size(); ++i) ids.push_back(r->Text(i, 0));
    return OkStatus();
  }));
  return ids;
}

Status JobStore::ReleaseLease(const std::string& sky_id, const std::string& owner) {
  return Write("UPDATE jobs SET lease_owner='', lease_until=0 WHERE sky_id=? AND lease_owner=?",
               {sky_id, owner}, "releasing a lease");
}

Result<std::string> JobStore::LeaseHolder(const std::string& sky_id) {
  SKY_ASSIGN_OR_RETURN(
      SqlRows r, Read(fmt::format("SELECT CASE WHEN lease_until >= {} THEN lease_owner ELSE '' "
                                  "END FROM jobs WHERE sky_id=?",
                                  db_->NowMs()),
                      {sky_id}, "reading a lease"));
  if (r.empty()) return NotFoundError(fmt::format("no sky job {}", sky_id));
  return r.Text(0, 0);
}

bool JobStore::HasOpenIntent(const std::string& sky_id) {
  auto r = Read("SELECT 1 FROM intents WHERE done=0 AND sky_id=? LIMIT 1", {sky_id},
                "looking for an intent");
  return r.ok() && !r->empty();
}

}  // namespace skyslurm::store
