// The store's tests. Those of StoreEngineTest run against each engine:
// SQLite here (job_store_test, a unit test), PostgreSQL in
// job_store_postgres_test, the same file built against the testbed's server
// (an integration test: each test in a database of its own, dropped after).
#include "broker/store/job_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include "broker/store/postgres_connection.h"
#ifdef SKYSLURM_STORE_TEST_POSTGRES
#include "tests/support/testbed.h"
#endif

namespace skyslurm::store {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A sky job of alice's, made at `created`.
SkyJob Job(const std::string& id, std::time_t created) {
  SkyJob j;
  j.sky_id = id;
  j.owner = "alice";
  j.input_json = R"({"tool":"sbatch"})";
  j.created = j.updated = created;
  return j;
}

class JobStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("skyslurm-store-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    path_ = (dir_ / "state" / "skyslurmd.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
  std::string path_;
};

// A store of the engine the test is instantiated for, made empty for it.
class StoreEngineTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    if (GetParam() == "SQLite") {
      dir_ = fs::temp_directory_path() / ("skyslurm-store-" + std::to_string(::getpid()) + "-" +
                                          test.substr(test.find('/') + 1));
      fs::remove_all(dir_);
      location_ = (dir_ / "state" / "skyslurmd.db").string();
      return;
    }
#ifdef SKYSLURM_STORE_TEST_POSTGRES
    auto tb = skyslurm::testing::LoadTestbed();
    ASSERT_TRUE(tb.ok()) << tb.status().message();
    admin_url_ = tb->env["SKYSLURM_POSTGRES_URL"];
    ASSERT_FALSE(admin_url_.empty())
        << "the testbed runs no PostgreSQL (SKYSLURM_TESTBED_POSTGRES=0?)";
    auto admin = PostgresConnection::Open(admin_url_);
    ASSERT_TRUE(admin.ok()) << admin.status().message();
    static std::atomic<int> n{0};
    database_ = "skytest_" + std::to_string(::getpid()) + "_" + std::to_string(n++);
    ASSERT_TRUE((*admin)->ExecScript("DROP DATABASE IF EXISTS " + database_).ok());
    Status made = (*admin)->ExecScript("CREATE DATABASE " + database_);
    ASSERT_TRUE(made.ok()) << made.message();
    // The same server and credentials, the test's own database.
    location_ = admin_url_;
    const auto slash = location_.find("/postgres");
    ASSERT_NE(slash, std::string::npos) << location_;
    location_.replace(slash, std::string("/postgres").size(), "/" + database_);
#else
    FAIL() << "no engine " << GetParam() << " in this build";
#endif
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
    if (!database_.empty()) {
      auto admin = PostgresConnection::Open(admin_url_);
      if (admin.ok()) (void)(*admin)->ExecScript("DROP DATABASE " + database_ + " WITH (FORCE)");
    }
  }
  Result<std::unique_ptr<JobStore>> Open() { return JobStore::Open(location_); }

  fs::path dir_;
  std::string admin_url_;
  std::string database_;
  std::string location_;
};

#ifdef SKYSLURM_STORE_TEST_POSTGRES
INSTANTIATE_TEST_SUITE_P(Engine, StoreEngineTest, ::testing::Values("PostgreSQL"),
                         [](const auto& engine) { return engine.param; });
#else
INSTANTIATE_TEST_SUITE_P(Engine, StoreEngineTest, ::testing::Values("SQLite"),
                         [](const auto& engine) { return engine.param; });
#endif

#ifndef SKYSLURM_STORE_TEST_POSTGRES
// SQLite's own: the file, its mode, its migrations from the first schema.
TEST_F(JobStoreTest, CreatesAPrivateWalDatabaseAtTheCurrentSchema) {
  auto store = JobStore::Open(path_);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ((*store)->schema_version(), kSchemaVersion);
  struct stat st {};
  ASSERT_EQ(::stat((dir_ / "state").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0077, 0u);
  EXPECT_TRUE(fs::exists(path_ + "-wal"));
}
#endif

TEST_P(StoreEngineTest, JobsSurviveReopening) {
  {
    auto store = Open();
    ASSERT_TRUE(store.ok());
    SkyJob j = Job("sky-1", 100);
    j.managed = true;
    ASSERT_TRUE((*store)->Insert(j).ok());
    EXPECT_EQ((*store)->Insert(j).code(), StatusCode::kAlreadyExists);
    j.state = "PENDING";
    j.cluster = "beta";
    j.native_id = "42";
    j.restarts = 2;
    ASSERT_TRUE((*store)->Update(j).ok());
    ASSERT_TRUE((*store)->Insert(Job("sky-2", 200)).ok());
  }
  auto store = Open();
  ASSERT_TRUE(store.ok());
  auto j = (*store)->Get("sky-1");
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->state, "PENDING");
  EXPECT_EQ(j->cluster, "beta");
  EXPECT_EQ(j->native_id, "42");
  EXPECT_TRUE(j->managed);
  EXPECT_EQ(j->restarts, 2);
  EXPECT_EQ((*store)->Get("sky-3").status().code(), StatusCode::kNotFound);
  auto all = (*store)->List(false);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].sky_id, "sky-2");  // newest first
  auto live = (*store)->List(true);
  ASSERT_EQ(live->size(), 2u);  // SUBMITTING and PENDING are live
  SkyJob done = *j;
  done.state = "COMPLETED";
  ASSERT_TRUE((*store)->Update(done).ok());
  EXPECT_EQ((*store)->List(true)->size(), 1u);
}

TEST_P(StoreEngineTest, AJobIsFoundByItsGlobalIdTheWholeOfAnArrayBeforeItsParts) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  SkyJob whole = Job("sky-w", 100);
  whole.global_id = 805306445;
  SkyJob part = Job("sky-w-beta", 101);
  part.parent = "sky-w";
  part.global_id = 805306445;
  ASSERT_TRUE((*store)->Insert(part).ok());  // parts may be recorded first
  ASSERT_TRUE((*store)->Insert(whole).ok());
  ASSERT_TRUE((*store)->Insert(Job("sky-other", 102)).ok());
  auto found = (*store)->GetByGlobalId(805306445);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->sky_id, "sky-w");
  EXPECT_EQ(found->global_id, 805306445u);
  EXPECT_EQ((*store)->GetByGlobalId(805306446).status().code(), StatusCode::kNotFound);
}

TEST_P(StoreEngineTest, PlacedSinceListsTheJobsPlacedWithAnEstimateThatStartedOrWait) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  auto add = [&](const std::string& id, std::time_t submitted, std::time_t expected,
                 std::time_t started, const std::string& state) {
    SkyJob j = Job(id, 100);
    j.state = state;
    j.submitted = submitted;
    j.expected_start = expected;
    j.model_start = expected * 2;
    j.started = started;
    ASSERT_TRUE((*store)->Insert(j).ok());
  };
  add("sky-1", 100, 150, 160, "COMPLETED");
  add("sky-2", 250, 300, 310, "RUNNING");
  add("sky-3", 260, 0, 400, "COMPLETED");  // placed without an estimate
  add("sky-4", 270, 500, 0, "CANCELLED");  // ended without a start (a move)
  add("sky-5", 50, 90, 95, "COMPLETED");   // before `since`
  add("sky-6", 350, 400, 0, "PENDING");    // still waits
  auto placed = (*store)->PlacedSince(100, 2);
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  ASSERT_EQ(placed->size(), 2u);
  EXPECT_EQ((*placed)[0].sky_id, "sky-6");
  EXPECT_EQ((*placed)[1].sky_id, "sky-2");
  EXPECT_EQ((*placed)[1].model_start, 600);
  EXPECT_EQ((*store)->PlacedSince(100, 10)->size(), 3u);
}

TEST_P(StoreEngineTest, IntentsStayOpenUntilEnded) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Insert(Job("sky-1", 1)).ok());
  auto a = (*store)->BeginIntent({0, "sky-1", "submit", "beta", "", 5});
  auto b = (*store)->BeginIntent({0, "sky-1", "cancel", "alpha", "7", 6});
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*store)->EndIntent(*a).ok());
  auto open = (*store)->OpenIntents();
  ASSERT_TRUE(open.ok());
  ASSERT_EQ(open->size(), 1u);
  EXPECT_EQ((*open)[0].action, "cancel");
  EXPECT_EQ((*open)[0].native_id, "7");
  // Its progress noted: read back by whoever settles it; an ended one stays as it ended.
  ASSERT_TRUE((*store)->NoteIntent(*b, "7 cancelled").ok());
  ASSERT_TRUE((*store)->NoteIntent(*a, "9").ok());
  open = (*store)->OpenIntents();
  ASSERT_TRUE(open.ok() && open->size() == 1u);
  EXPECT_EQ((*open)[0].native_id, "7 cancelled");
}

TEST_P(StoreEngineTest, ApplyIsAllOrNothing) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Insert(Job("sky-1", 1)).ok());
  Status st = (*store)->Apply([&] {
    SKY_RETURN_IF_ERROR((*store)->AddEvent({0, "sky-1", 2, "placed", "beta", "", "earliest"}));
    SKY_RETURN_IF_ERROR(
        (*store)->AddCopy({"sky-1", "beta", "42", "debug", "-N1", "#!/bin/sh", "PENDING", 2}));
    return (*store)->Insert(Job("sky-1", 1));  // fails: the whole change goes
  });
  EXPECT_EQ(st.code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE((*store)->Events("sky-1")->empty());
  EXPECT_TRUE((*store)->Copies("sky-1")->empty());
  ASSERT_TRUE((*store)->AddEvent({0, "sky-1", 2, "placed", "beta", "", "earliest"}).ok());
  ASSERT_TRUE((*store)->AddEvent({0, "sky-1", 3, "submitted", "beta", "42", ""}).ok());
  ASSERT_TRUE(
      (*store)->AddCopy({"sky-1", "beta", "42", "debug", "-N1", "#!/bin/sh", "PENDING", 2}).ok());
  ASSERT_TRUE((*store)->SetCopyState("beta", "42", "CANCELLED").ok());
  std::vector<std::string> kinds;
  auto events = (*store)->Events("sky-1");
  ASSERT_TRUE(events.ok());
  for (const auto& e : *events) kinds.push_back(e.kind);
  EXPECT_THAT(kinds, ElementsAre("placed", "submitted"));
  EXPECT_EQ((*(*store)->Copies("sky-1"))[0].state, "CANCELLED");
}

#ifndef SKYSLURM_STORE_TEST_POSTGRES
TEST_F(JobStoreTest, RefusesANewerSchema) {
  { ASSERT_TRUE(JobStore::Open(path_).ok()); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  auto store = JobStore::Open(path_);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(),
              HasSubstr("schema version 99, newer than this skyslurmd's " +
                        std::to_string(kSchemaVersion)));
}

// A database of the first schema (slurm_id) is migrated in place: its jobs,
// copies, events and open intents keep their cluster ids as native_id.
TEST_F(JobStoreTest, MigratesTheFirstSchemaKeepingEveryId) {
  fs::create_directories(dir_ / "state");
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  const char* v1 = R"sql(
CREATE TABLE jobs (sky_id TEXT PRIMARY KEY, owner TEXT NOT NULL, state TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '', cluster TEXT NOT NULL DEFAULT '',
  slurm_id TEXT NOT NULL DEFAULT '', input_json TEXT NOT NULL,
  managed INTEGER NOT NULL DEFAULT 0, retry_on_failure INTEGER NOT NULL DEFAULT 0,
  restarts INTEGER NOT NULL DEFAULT 0, moves INTEGER NOT NULL DEFAULT 0,
  created INTEGER NOT NULL, updated INTEGER NOT NULL, submitted INTEGER NOT NULL DEFAULT 0,
  expected_start INTEGER NOT NULL DEFAULT 0, started INTEGER NOT NULL DEFAULT 0,
  ended INTEGER NOT NULL DEFAULT 0, exit_code INTEGER NOT NULL DEFAULT 0);
CREATE INDEX jobs_state ON jobs(state);
CREATE TABLE copies (sky_id TEXT NOT NULL REFERENCES jobs(sky_id), cluster TEXT NOT NULL,
  slurm_id TEXT NOT NULL, partition TEXT NOT NULL DEFAULT '', args TEXT NOT NULL DEFAULT '',
  script TEXT NOT NULL DEFAULT '', state TEXT NOT NULL DEFAULT '', submitted INTEGER NOT NULL,
  PRIMARY KEY (cluster, slurm_id));
CREATE INDEX copies_sky ON copies(sky_id);
CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, sky_id TEXT NOT NULL,
  time INTEGER NOT NULL, kind TEXT NOT NULL, cluster TEXT NOT NULL DEFAULT '',
  slurm_id TEXT NOT NULL DEFAULT '', detail TEXT NOT NULL DEFAULT '');
CREATE INDEX events_sky ON events(sky_id);
CREATE TABLE intents (id INTEGER PRIMARY KEY AUTOINCREMENT, sky_id TEXT NOT NULL,
  action TEXT NOT NULL, cluster TEXT NOT NULL DEFAULT '', slurm_id TEXT NOT NULL DEFAULT '',
  created INTEGER NOT NULL, done INTEGER NOT NULL DEFAULT 0);
CREATE INDEX intents_open ON intents(done);
INSERT INTO jobs (sky_id, owner, state, cluster, slurm_id, input_json, created, updated)
  VALUES ('sky-1', 'alice', 'PENDING', 'beta', '1219', '{}', 100, 100);
INSERT INTO copies (sky_id, cluster, slurm_id, submitted) VALUES ('sky-1', 'beta', '1219', 100);
INSERT INTO events (sky_id, time, kind, cluster, slurm_id) VALUES ('sky-1', 100, 'submitted', 'beta', '1219');
INSERT INTO intents (sky_id, action, cluster, slurm_id, created) VALUES ('sky-1', 'move', 'beta', '1219', 100);
PRAGMA user_version=1;
)sql";
  ASSERT_EQ(sqlite3_exec(db, v1, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);

  auto store = JobStore::Open(path_);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ((*store)->schema_version(), kSchemaVersion);
  auto job = (*store)->Get("sky-1");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->native_id, "1219");
  EXPECT_EQ(job->model_start, 0);  // 4: placed before calibration
  EXPECT_EQ(job->parent, "");      // 5: not a part of a spread array
  EXPECT_EQ(job->global_id, 0u);   // 6: given no global id (it had none)
  EXPECT_EQ(job->indices, "");
  // A spread array's parts, in the order they were made.
  store::SkyJob part = *job;
  for (const char* id : {"sky-1-2", "sky-1-1"}) {
    part.sky_id = id;
    part.parent = "sky-1";
    part.indices = id == std::string("sky-1-2") ? "8-15" : "0-7";
    ASSERT_TRUE((*store)->Insert(part).ok());
  }
  auto parts = (*store)->Parts("sky-1");
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].sky_id, "sky-1-2");
  EXPECT_EQ((*parts)[0].indices, "8-15");
  EXPECT_EQ((*parts)[1].parent, "sky-1");
  auto copies = (*store)->Copies("sky-1");
  ASSERT_TRUE(copies.ok());
  ASSERT_EQ(copies->size(), 1u);
  EXPECT_EQ((*copies)[0].native_id, "1219");
  // Version 3: a copy's folder, none for the copies made before.
  EXPECT_EQ((*copies)[0].workdir, "");
  EXPECT_EQ((*copies)[0].source, "");
  // Version 7: when its folder began to be sent, unknown for those before.
  EXPECT_EQ((*copies)[0].sent_ns, 0);
  ASSERT_TRUE(
      (*store)
          ->AddCopy({"sky-1", "gamma", "7", "", "", "", "PENDING", 200, "/gpfs/scratch/alice/proj",
                     "/home/alice/proj", 1'764'980'000'123'456'789})
          .ok());
  copies = (*store)->Copies("sky-1");
  ASSERT_EQ(copies->size(), 2u);
  EXPECT_EQ((*copies)[1].workdir, "/gpfs/scratch/alice/proj");
  EXPECT_EQ((*copies)[1].source, "/home/alice/proj");
  EXPECT_EQ((*copies)[1].sent_ns, 1'764'980'000'123'456'789);
  auto events = (*store)->Events("sky-1");
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].native_id, "1219");
  auto intents = (*store)->OpenIntents();
  ASSERT_TRUE(intents.ok());
  ASSERT_EQ(intents->size(), 1u);
  EXPECT_EQ((*intents)[0].native_id, "1219");
}

#endif

// The dashboard's rows: a job's name kept, a listing without inputs.
TEST_P(StoreEngineTest, ABriefListingHasTheNameAndNoInput) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  SkyJob j = Job("sky-1", 100);
  j.name = "train";
  ASSERT_TRUE((*store)->Insert(j).ok());
  j.name = "train-2";  // scontrol update of the name
  ASSERT_TRUE((*store)->Update(j).ok());
  auto brief = (*store)->List(false, /*brief=*/true);
  ASSERT_TRUE(brief.ok());
  ASSERT_EQ(brief->size(), 1u);
  EXPECT_EQ((*brief)[0].name, "train-2");
  EXPECT_EQ((*brief)[0].input_json, "");
  EXPECT_EQ((*store)->Get("sky-1")->input_json, j.input_json);
}

// GPU samples for the charts: kept by cluster and time, the old forgotten.
TEST_P(StoreEngineTest, GpuSamplesAreKeptForABoundedTime) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->AddGpuSamples({{"alpha", 100, 16, 8, 0}, {"beta", 100, 8, 8, 4}}, 0).ok());
  ASSERT_TRUE((*store)->AddGpuSamples({{"alpha", 200, 16, 0, 8}}, 150).ok());
  auto all = (*store)->GpuSamplesSince(0);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);  // those before 150 forgotten
  EXPECT_EQ((*all)[0].cluster, "alpha");
  EXPECT_EQ((*all)[0].free, 0);
  EXPECT_EQ((*all)[0].pending, 8);
  EXPECT_TRUE((*store)->GpuSamplesSince(201)->empty());
}

// What the engines spell differently: the order parts were made in, and
// the highest number among a cluster's ids ("30_4": an array task's).
TEST_P(StoreEngineTest, PartsKeepTheirOrderAndTheHighestIdIsANumber) {
  auto store = Open();
  ASSERT_TRUE(store.ok()) << store.status().message();
  ASSERT_TRUE((*store)->Insert(Job("sky-1", 1)).ok());
  for (const char* id : {"sky-1-c", "sky-1-a", "sky-1-b"}) {
    SkyJob part = Job(id, 2);
    part.parent = "sky-1";
    ASSERT_TRUE((*store)->Insert(part).ok());
  }
  auto parts = (*store)->Parts("sky-1");
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  ASSERT_EQ(parts->size(), 3u);
  EXPECT_EQ((*parts)[0].sky_id, "sky-1-c");
  EXPECT_EQ((*parts)[2].sky_id, "sky-1-b");
  for (const char* native : {"12", "9", "30_4", "7"}) {
    ASSERT_TRUE((*store)->AddCopy({"sky-1", "beta", native, "", "", "", "PENDING", 3}).ok());
  }
  ASSERT_TRUE((*store)->AddCopy({"sky-1", "gamma", "99", "", "", "", "PENDING", 3}).ok());
  auto highest = (*store)->HighestNativeId("beta");
  ASSERT_TRUE(highest.ok()) << highest.status().message();
  EXPECT_EQ(*highest, 30);
  EXPECT_EQ(*(*store)->HighestNativeId("delta"), 0);
  // A copy recorded again (a retried submission found it) is replaced.
  ASSERT_TRUE((*store)->AddCopy({"sky-1", "beta", "9", "gpu", "", "", "RUNNING", 4}).ok());
  auto copies = (*store)->Copies("sky-1");
  ASSERT_TRUE(copies.ok());
  EXPECT_EQ(copies->size(), 5u);
  for (const Copy& c : *copies) {
    if (c.native_id == "9") {
      EXPECT_EQ(c.partition + " " + c.state, "gpu RUNNING");
    }
  }
}

// A taken key is AlreadyExists in both engines; a copy of no job breaks
// another constraint, which is no "already exists".
TEST_P(StoreEngineTest, ATakenKeyIsAlreadyExistsAndACopyOfNoJobIsNot) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Insert(Job("sky-1", 1)).ok());
  EXPECT_EQ((*store)->Insert(Job("sky-1", 1)).code(), StatusCode::kAlreadyExists);
  Status orphan = (*store)->AddCopy({"sky-none", "beta", "5", "", "", "", "PENDING", 1});
  EXPECT_FALSE(orphan.ok());
  EXPECT_NE(orphan.code(), StatusCode::kAlreadyExists) << orphan.message();
  EXPECT_TRUE((*store)->Copies("sky-none")->empty());
}

// A statement that fails inside a transaction fails the whole, even when
// the body goes on without it: the same in both engines.
TEST_P(StoreEngineTest, AFailedStatementFailsItsTransaction) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Insert(Job("sky-1", 1)).ok());
  Status st = (*store)->Apply([&] {
    (void)(*store)->AddCopy({"sky-none", "beta", "5", "", "", "", "PENDING", 1});  // no such job
    return OkStatus();
  });
  EXPECT_FALSE(st.ok());
  Status after = (*store)->Apply([&] {
    SKY_RETURN_IF_ERROR((*store)->AddEvent({0, "sky-1", 2, "placed", "beta", "", ""}));
    (void)(*store)->AddCopy({"sky-none", "beta", "6", "", "", "", "PENDING", 1});
    return (*store)->AddEvent({0, "sky-1", 3, "submitted", "beta", "6", ""});
  });
  EXPECT_FALSE(after.ok());
  EXPECT_TRUE((*store)->Events("sky-1")->empty());  // nothing of it landed
  // The store goes on: the next transaction is a new one.
  ASSERT_TRUE((*store)->AddEvent({0, "sky-1", 4, "placed", "gamma", "", ""}).ok());
  EXPECT_EQ((*store)->Events("sky-1")->size(), 1u);
}

// Two replicas on one database: a job's lease is held by one at a time,
// renewed while it holds, taken over by the other once it lapses.
TEST_P(StoreEngineTest, ALeaseIsHeldByOneReplicaAndTakenOverOnceItLapses) {
  using std::chrono::milliseconds;
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->Insert(Job("sky-1", 1)).ok());
  ASSERT_TRUE((*a)->Insert(Job("sky-2", 2)).ok());
  SkyJob ended = Job("sky-3", 3);
  ended.state = "COMPLETED";
  ASSERT_TRUE((*a)->Insert(ended).ok());
  EXPECT_TRUE(*(*a)->TakeLease("sky-1", "a", milliseconds(10000)));
  EXPECT_FALSE(*(*b)->TakeLease("sky-1", "b", milliseconds(10000)));
  EXPECT_EQ(*(*b)->LeaseHolder("sky-1"), "a");
  EXPECT_EQ((*b)->TakeLease("sky-9", "b", milliseconds(10000)).status().code(),
            StatusCode::kNotFound);
  // What is free and live: sky-2 (sky-1 is held, sky-3 has ended).
  EXPECT_THAT(*(*b)->TakeFreeLeases("b", milliseconds(10000), 10), ElementsAre("sky-2"));
  EXPECT_TRUE((*b)->TakeFreeLeases("b", milliseconds(10000), 10)->empty());
  // a's lease, short and not renewed, lapses: b takes the job over.
  EXPECT_TRUE(*(*a)->TakeLease("sky-1", "a", milliseconds(200)));
  std::this_thread::sleep_for(milliseconds(400));
  EXPECT_EQ(*(*b)->LeaseHolder("sky-1"), "");
  EXPECT_EQ(*(*a)->RenewLeases("a", milliseconds(10000)), 0);
  EXPECT_THAT(*(*b)->TakeFreeLeases("b", milliseconds(10000), 10), ElementsAre("sky-1"));
  EXPECT_FALSE(*(*a)->TakeLease("sky-1", "a", milliseconds(10000)));
  EXPECT_EQ(*(*b)->RenewLeases("b", milliseconds(10000)), 2);
  // Given back, it is anyone's.
  ASSERT_TRUE((*b)->ReleaseLease("sky-2", "b").ok());
  EXPECT_TRUE(*(*a)->TakeLease("sky-2", "a", milliseconds(10000)));
}

// A replica's store: its new jobs are its own from the insert on, and it
// begins an intent (but a cancel) only while it holds the job's lease.
TEST_P(StoreEngineTest, AReplicaActsOnlyOnTheJobsItHolds) {
  using std::chrono::milliseconds;
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a.ok() && b.ok());
  (*a)->DriveAs("a", milliseconds(300));
  (*b)->DriveAs("b", milliseconds(10000));
  ASSERT_TRUE((*a)->Insert(Job("sky-1", 1)).ok());
  EXPECT_EQ(*(*b)->LeaseHolder("sky-1"), "a");
  EXPECT_THAT(*(*a)->LeasedBy("a"), ElementsAre("sky-1"));
  EXPECT_TRUE((*b)->TakeFreeLeases("b", milliseconds(10000), 10)->empty());
  EXPECT_TRUE((*a)->BeginIntent({0, "sky-1", "submit", "alpha", "", 1}).ok());
  // b does not hold it: no remote action of b's; the user's cancel is recorded.
  EXPECT_EQ((*b)->BeginIntent({0, "sky-1", "submit", "alpha", "", 1}).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_TRUE((*b)->BeginIntent({0, "sky-1", "cancel", "", "", 1}).ok());
  // a stalls past its lease: b takes the job over, and a starts nothing more.
  std::this_thread::sleep_for(milliseconds(500));
  EXPECT_THAT(*(*b)->TakeFreeLeases("b", milliseconds(10000), 10), ElementsAre("sky-1"));
  EXPECT_EQ((*a)->BeginIntent({0, "sky-1", "move", "beta", "", 1}).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_TRUE((*b)->BeginIntent({0, "sky-1", "move", "beta", "", 1}).ok());
  EXPECT_TRUE((*a)->LeasedBy("a")->empty());
}

// A MUNGE credential is taken once, whichever replica sees it again.
TEST_P(StoreEngineTest, ACredentialIsTakenOnceAcrossReplicas) {
  auto a = Open();
  auto b = Open();
  ASSERT_TRUE(a.ok() && b.ok());
  const std::time_t later = std::time(nullptr) + 600;
  EXPECT_TRUE((*a)->TakeCredential("digest-1", later).ok());
  EXPECT_EQ((*b)->TakeCredential("digest-1", later).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ((*a)->TakeCredential("digest-1", later).code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE((*b)->TakeCredential("digest-2", later).ok());
  // One long expired is forgotten by the next taken.
  EXPECT_TRUE((*a)->TakeCredential("digest-3", std::time(nullptr) - 10).ok());
  EXPECT_TRUE((*b)->TakeCredential("digest-4", later).ok());
  EXPECT_TRUE((*a)->TakeCredential("digest-3", later).ok());
}

// Replicas sweeping for free jobs at once take each job exactly once.
TEST_P(StoreEngineTest, ReplicasTakingFreeJobsAtOnceNeverShareOne) {
  constexpr int kJobs = 120;
  constexpr int kReplicas = 4;
  {
    auto store = Open();
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)
                    ->Apply([&] {
                      for (int i = 0; i < kJobs; ++i) {
                        SKY_RETURN_IF_ERROR((*store)->Insert(Job("sky-" + std::to_string(i), i)));
                      }
                      return OkStatus();
                    })
                    .ok());
  }
  std::vector<std::vector<std::string>> taken(kReplicas);
  std::vector<std::thread> replicas;
  for (int r = 0; r < kReplicas; ++r) {
    replicas.emplace_back([&, r] {
      auto store = Open();
      if (!store.ok()) return;
      for (;;) {
        auto ids =
            (*store)->TakeFreeLeases("r" + std::to_string(r), std::chrono::milliseconds(60000), 7);
        if (!ids.ok() || ids->empty()) return;
        taken[static_cast<std::size_t>(r)].insert(taken[static_cast<std::size_t>(r)].end(),
                                                  ids->begin(), ids->end());
      }
    });
  }
  for (auto& t : replicas) t.join();
  std::set<std::string> all;
  std::size_t total = 0;
  for (const auto& ids : taken) {
    total += ids.size();
    all.insert(ids.begin(), ids.end());
  }
  EXPECT_EQ(total, static_cast<std::size_t>(kJobs));
  EXPECT_EQ(all.size(), static_cast<std::size_t>(kJobs));
}

#ifdef SKYSLURM_STORE_TEST_POSTGRES
// Replicas started together migrate an empty database once, and each
// finds it at the current schema.
TEST_P(StoreEngineTest, ReplicasOpeningTogetherMigrateOnce) {
  std::vector<std::thread> replicas;
  std::vector<Status> opened(4);
  for (std::size_t i = 0; i < opened.size(); ++i) {
    replicas.emplace_back([&, i] {
      auto store = Open();
      opened[i] = store.ok() ? OkStatus() : store.status();
    });
  }
  for (auto& t : replicas) t.join();
  for (const Status& st : opened) EXPECT_TRUE(st.ok()) << st.message();
  auto store = Open();
  ASSERT_TRUE(store.ok());
  EXPECT_EQ((*store)->schema_version(), kSchemaVersion);
  EXPECT_EQ((*store)->engine(), "PostgreSQL");
}

TEST_P(StoreEngineTest, RefusesANewerSchema) {
  { ASSERT_TRUE(Open().ok()); }
  auto db = PostgresConnection::Open(location_);
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->ExecScript("UPDATE skyslurm_schema SET version = 99").ok());
  auto store = Open();
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(),
              HasSubstr("schema version 99, newer than this skyslurmd's " +
                        std::to_string(kSchemaVersion)));
}

// The server restarted under the daemon: its next use reconnects, and
// nothing committed before is lost.
TEST_P(StoreEngineTest, AServerRestartedUnderTheStoreIsReconnectedTo) {
  auto store = Open();
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Insert(Job("sky-1", 1)).ok());
  const std::string script = skyslurm::testing::TestbedScript("postgres");
  ASSERT_EQ(std::system((script + " down >/dev/null && " + script + " up >/dev/null").c_str()), 0);
  auto j = (*store)->Get("sky-1");
  ASSERT_TRUE(j.ok()) << j.status().message();
  EXPECT_EQ(j->owner, "alice");
  ASSERT_TRUE((*store)->Insert(Job("sky-2", 2)).ok());
  EXPECT_EQ((*store)->List(false)->size(), 2u);
}
#endif

TEST(StatesTest, FinalOrLive) {
  EXPECT_FALSE(IsFinalState("PENDING"));
  EXPECT_FALSE(IsFinalState("SPREAD"));
  EXPECT_FALSE(IsFinalState("UNKNOWN"));
  EXPECT_TRUE(IsFinalState("COMPLETED"));
  EXPECT_TRUE(IsFinalState("PREEMPTED"));
}

}  // namespace
}  // namespace skyslurm::store
