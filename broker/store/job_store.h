// skyslurmd's durable state: every sky job, every Slurm job made for it
// (its copies, with the script as translated for that cluster), the history
// of its placement with reasons, and the intents written before every
// remote action. A user's own daemon keeps it in SQLite (WAL mode, one file
// under the user's state dir), a site's daemons in PostgreSQL (one database
// for every replica): one store, its SQL written once over a connection of
// either engine (sql_connection.h); the schema is versioned and migrated
// forward on open (schema.h).
//
// Thread-safe: one connection behind a mutex. Every method is one
// transaction; Apply() groups several changes into one.
#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "broker/store/schema.h"
#include "broker/store/sql_connection.h"
#include "broker/util/latency_histogram.h"
#include "broker/util/status.h"

namespace skyslurm::store {

struct SkyJob {
  std::string sky_id;
  std::string owner;
  // SUBMITTING (recorded, not yet on a cluster), PENDING, RUNNING, MIGRATING,
  // RECOVERING (a managed job being restarted), UNKNOWN (its cluster does not
  // answer), SPREAD (an array whose parts run on several clusters: each
  // part is a sky job of its own), then a final one: COMPLETED, FAILED, CANCELLED, TIMEOUT,
  // NODE_FAIL, PREEMPTED, OUT_OF_MEMORY, BOOT_FAIL, DEADLINE, REFUSED (no
  // cluster could run it), GONE (left its cluster's queue unseen).
  std::string state = "SUBMITTING";
  std::string reason;
  std::string cluster;     // where its live copy is ("" before the first)
  std::string native_id;   // that copy's Slurm job id
  std::string input_json;  // the job as the user gave it (daemon/job_input.h)
  bool managed = false;
  int retry_on_failure = 0;  // user-code failures to retry (--sky-retry-on-failure)
  int restarts = 0;          // managed restarts and retries so far
  int moves = 0;             // pending migrations and re-placements so far
  std::time_t created = 0;
  std::time_t updated = 0;
  std::time_t submitted = 0;       // when the live copy was submitted
  std::time_t expected_start = 0;  // the estimate it was placed with
  // That estimate before calibration (estimates: calibrated); 0: none, or
  // the same.
  std::time_t model_start = 0;
  std::time_t started = 0;
  std::time_t ended = 0;
  int exit_code = 0;  // Slurm's wait status of the last copy
  // An array spread over clusters (state SPREAD while any part lives) has a
  // part per cluster: a sky job of its own whose `parent` is the whole's id
  // and whose `indices` are the array's indices it runs ("0-15,48-63").
  std::string parent;
  std::string indices;
  // The id the user was given (job/global_id.h): its first copy's cluster
  // index and id there, kept through moves; the parts of a spread array
  // share the whole's. 0: none yet (or that copy's id does not fit).
  std::uint64_t global_id = 0;
  // Its name as Slurm gives it (--job-name, else the script's file name,
  // "wrap", "sbatch"); "" for jobs recorded before the name was kept.
  std::string name;
};

// Whether a sky job's state is final.
bool IsFinalState(const std::string& state);

// A Slurm job made for a sky job.
struct Copy {
  std::string sky_id;
  std::string cluster;
  std::string native_id;
  std::string partition;
  std::string args;    // the translated options, one per line
  std::string script;  // the script as submitted there
  std::string state;   // as last seen: PENDING, RUNNING, ..., STALE (cluster lost), CANCELLED
  std::time_t submitted = 0;
  // The folder it runs in there, copied from `source` here ("" = none: the
  // cluster's default, or the submit folder of a job kept home).
  std::string workdir;
  std::string source;
  // When sending `source` there began (ns since the epoch, the real clock;
  // 0: not known, a copy adopted after a crash). Files there newer than it
  // are the job's: what comes back when the job ends.
  std::int64_t sent_ns = 0;
};

// One line of a sky job's history: placed, submitted, moved, restarted,
// cancelled, stale copy cancelled..., with the reason.
struct Event {
  std::int64_t seq = 0;
  std::string sky_id;
  std::time_t time = 0;
  std::string kind;
  std::string cluster;
  std::string native_id;
  std::string detail;
};

// Written before a remote action, ended after its result is recorded: after
// a crash, an open intent says what may or may not have happened remotely.
struct Intent {
  std::int64_t id = 0;
  std::string sky_id;
  std::string action;  // "submit", "cancel"
  std::string cluster;
  std::string native_id;  // cancel: the copy
  std::time_t created = 0;
};

// One look at a cluster's GPUs (every partition's, each GPU once).
struct GpuSample {
  std::string cluster;
  std::time_t time = 0;
  std::int64_t total = 0;
  std::int64_t free = 0;     // usable now, not held by running jobs
  std::int64_t pending = 0;  // asked for by pending jobs
};

class JobStore {
 public:
  // Opens the database `location` names (OpenSqlConnection: a
  // postgresql:// URL, else a SQLite file, made with its folder, mode
  // 0700) and migrates its schema.
  static Result<std::unique_ptr<JobStore>> Open(const std::string& location);
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  int schema_version() const { return schema_version_; }
  // "SQLite" or "PostgreSQL".
  std::string_view engine() const;

  // Adds a new sky job; AlreadyExists when the id is taken.
  Status Insert(const SkyJob& job);
  Status Update(const SkyJob& job);
  Result<SkyJob> Get(const std::string& sky_id);
  // All sky jobs, newest first; only the live (not final) ones on request.
  // `brief`: without their input (input_json left empty).
  Result<std::vector<SkyJob>> List(bool live_only, bool brief = false);
  // The job the user knows by this global id (NotFound: none).
  Result<SkyJob> GetByGlobalId(std::uint64_t global_id);
  // The parts of a spread array, in the order they were made.
  Result<std::vector<SkyJob>> Parts(const std::string& parent);
  // The sky jobs placed (their live copy submitted) at `since` or later with
  // a start estimate that started or still pend, latest placed first,
  // `limit` at most.
  Result<std::vector<SkyJob>> PlacedSince(std::time_t since, int limit);

  Status AddCopy(const Copy& copy);
  Status SetCopyState(const std::string& cluster, const std::string& native_id,
                      const std::string& state);
  Result<std::vector<Copy>> Copies(const std::string& sky_id);
  // Every copy in `state` (STALE: left on a cluster that stopped answering).
  Result<std::vector<Copy>> CopiesInState(const std::string& state);

  Status AddEvent(const Event& event);
  Result<std::vector<Event>> Events(const std::string& sky_id);

  // GPU samples (the dashboard's charts): added in one transaction, those
  // older than `keep_after` forgotten in it; read since a time, by cluster
  // then time.
  Status AddGpuSamples(const std::vector<GpuSample>& samples, std::time_t keep_after);
  Result<std::vector<GpuSample>> GpuSamplesSince(std::time_t since);

  Result<std::int64_t> BeginIntent(const Intent& intent);
  Status EndIntent(std::int64_t id);
  // Rewrites an open intent's native_id with what it has done so far (a move
  // of tasks: which of them it cancelled), for whoever settles it later.
  Status NoteIntent(std::int64_t id, const std::string& native_id);
  Result<std::vector<Intent>> OpenIntents();
  bool HasOpenIntent(const std::string& sky_id);

  // Leases: a site's replicas share one database, and a live job is driven
  // by one replica at a time, the one holding its lease; a lease not
  // renewed lapses, and another replica takes the job over. Times are the
  // database's clock (SqlConnection::NowMs), never a replica's.
  //
  // Takes or renews the lease of `sky_id` for `owner` for `duration`: true
  // when `owner` holds it after the call (it was free, lapsed or its own),
  // false when another replica holds it; NotFound when there is no such job.
  Result<bool> TakeLease(const std::string& sky_id, const std::string& owner,
                         std::chrono::milliseconds duration);
  // Renews every lease `owner` still holds (a lapsed one taken over by
  // another is not); how many.
  Result<std::int64_t> RenewLeases(const std::string& owner, std::chrono::milliseconds duration);
  // Takes for `owner` up to `limit` live jobs whose lease is free or
  // lapsed, oldest first: their ids. Two replicas asking at once never get
  // the same job (each skips what the other is taking).
  Result<std::vector<std::string>> TakeFreeLeases(const std::string& owner,
                                                  std::chrono::milliseconds duration, int limit);
  // This store is a replica's, `replica` its name: every job it inserts is
  // leased to it for `lease` from the start, and every intent it begins
  // (but a cancel, the user's wish whoever records it) requires its lease
  // held then: FailedPrecondition when it is not (a replica stalled past
  // its lease starts nothing more). Call once, before use.
  void DriveAs(std::string replica, std::chrono::milliseconds lease);
  // The live jobs whose lease `owner` holds now.
  Result<std::vector<std::string>> LeasedBy(const std::string& owner);
  // Gives the lease of `sky_id` back, if `owner` holds it.
  Status ReleaseLease(const std::string& sky_id, const std::string& owner);
  // Who holds the lease of `sky_id` now ("" when none holds it: free or lapsed).
  Result<std::string> LeaseHolder(const std::string& sky_id);

  // How many sky jobs there are by state and cluster ("" before a first
  // copy), and how many events of each kind were ever recorded (/metrics).
  Result<std::map<std::pair<std::string, std::string>, std::int64_t>> JobCounts();
  Result<std::map<std::string, std::int64_t>> EventCounts();
  // Each statement's round trip to the database, since the open.
  const LatencyHistogram& latency() const { return latency_; }

  // A site's MUNGE credentials, by a digest of each: records one as taken
  // until `expires` (seconds since the epoch), and forgets those expired.
  // AlreadyExists when a replica took it before: a replay.
  Status TakeCredential(const std::string& digest, std::time_t expires);

  // Runs `body` in one transaction: all of its changes land, or none. A
  // statement that fails inside it fails the whole, even when `body` goes
  // on without it (as PostgreSQL would).
  Status Apply(const std::function<Status()>& body);

  // The highest numeric native id of any copy on `cluster` (0: none): the
  // numbers skyslurmd gives a cluster without ids of its own never repeat.
  Result<std::int64_t> HighestNativeId(const std::string& cluster);

 private:
  explicit JobStore(std::unique_ptr<SqlConnection> db);
  // One statement that reads, and one that writes (in a transaction of its
  // own, or of the Apply() it runs in); `what` names it in errors.
  Result<SqlRows> Read(std::string_view sql, const std::vector<SqlValue>& params,
                       std::string_view what);
  Status Write(std::string_view sql, const std::vector<SqlValue>& params, std::string_view what,
               std::int64_t* changes = nullptr);
  // One statement, its time observed (latency()).
  Result<SqlRows> Timed(std::string_view sql, const std::vector<SqlValue>& params);
  Result<std::vector<Copy>> CopiesWhere(const char* column, const std::string& value);
  // A statement failed inside a transaction: the transaction fails with it.
  void NoteFailure(const Status& failed);

  std::unique_ptr<SqlConnection> db_;
  int schema_version_ = 0;
  LatencyHistogram latency_;
  std::string replica_;  // DriveAs: "" for a user's own daemon
  std::chrono::milliseconds lease_{0};
  std::recursive_mutex mu_;
  int depth_ = 0;                                // nested Apply()
  std::optional<Status> failed_in_transaction_;  // the first statement that failed in it
};

}  // namespace skyslurm::store
