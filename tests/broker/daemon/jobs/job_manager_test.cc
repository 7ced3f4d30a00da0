// JobManager's protocol against in-memory clusters (a faithful fake of the
// backend's contract: scancel refuses an ended job, a dead cluster answers
// nothing) and a real SQLite store, with its own clock: the cases the real
// testbed cannot stage on demand. Each is a regression test of a review
// finding (see docs/failover.md).
#include "broker/backend/slurm/slurm_translator.h"
#include "broker/daemon/jobs/job_manager.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <mutex>

#include "broker/backend/backend.h"
#include "broker/backend/slurm/slurm_state.h"
#include "broker/cluster/description.h"
#include "broker/daemon/api/api_server.h"

namespace skyslurm::daemon {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kData = std::string(SKYSLURM_SOURCE_DIR) + "/tests/data/clusters/";

class FakeCluster final : public backend::Backend {
 public:
  FakeCluster(std::string name, cluster::Description d)
      : name_(std::move(name)), d_(std::move(d)) {}
  const std::string& name() const override { return name_; }
  backend::Capabilities capabilities() const override { return {"slurm", {}}; }
  translate::Translation Translate(const job::Request& request, const cluster::Description& target,
                                   const translate::TranslateContext& context) const override {
    return translate::TranslateForSlurm(request, target, context);
  }
  Result<cluster::Inventory> Probe(std::chrono::milliseconds) override {
    std::lock_guard lock(mu_);
    if (down) return UnavailableError(name_ + ": Unable to contact slurm controller");
    return cluster::Inventory{d_, queued, std::time(nullptr)};
  }
  Result<backend::StartEstimate> EstimateStart(const translate::TranslatedJob& job,
                                               std::chrono::milliseconds) override {
    std::lock_guard lock(mu_);
    if (down) return UnavailableError(name_ + ": down");
    ++estimates;
    if (refuse_estimate) return UnavailableError(name_ + ": sbatch --test-only refused the job");
    const std::string partition =
        job.partitions.empty() ? d_.partitions.front().name : job.partitions[0];
    return backend::StartEstimate{std::time(nullptr) + start_in, partition, "n1", "test"};
  }
  Result<backend::JobKey> Submit(const backend::SubmitSpec& spec,
                                 std::chrono::milliseconds) override {
    std::lock_guard lock(mu_);
    if (down) return UnavailableError(name_ + ": down");
    if (refuse) return UnavailableError(name_ + ": sbatch failed (exit 1): Invalid account");
    if (lose_answers) {
      // Sent, and on its way while the wait for it times out: the job shows
      // in the queue only when the test says it landed.
      backend::JobInfo j;
      j.key = {name_, std::to_string(next_id++)};
      j.sky_id = spec.sky_id;
      j.state = "PENDING";
      j.user = "alice";
      late.push_back(j);
      ++submissions;
      return DeadlineExceededError(name_ + ": no answer from sbatch within the timeout");
    }
    if (!spec.first_attempt) {
      for (const auto& j : jobs) {
        if (j.sky_id == spec.sky_id && backend::IsLive(backend::SlurmPhaseOf(j.state)))
          return j.key;
      }
    }
    backend::JobInfo j;
    j.key = {name_, std::to_string(next_id++)};
    j.sky_id = spec.sky_id;
    j.state = "PENDING";
    j.user = "alice";
    j.submit_time = std::time(nullptr);
    jobs.push_back(j);
    ++submissions;
    last_args = spec.job.args;
    last_script = spec.job.script;
    return j.key;
  }
  backend::EstimatedSubmission EstimateThenSubmit(const backend::SubmitSpec& spec,
                                                  std::chrono::milliseconds timeout) override {
    {
      std::lock_guard lock(mu_);
      ++estimates_with_submissions;
    }
    return Backend::EstimateThenSubmit(spec, timeout);
  }
  Result<std::vector<backend::JobInfo>> Queue(std::chrono::milliseconds) override {
    std::lock_guard lock(mu_);
    if (down) return UnavailableError(name_ + ": down");
    if (slow_reads) return DeadlineExceededError(name_ + ": squeue: no answer within the timeout");
    std::vector<backend::JobInfo> out = jobs;
    for (auto& j : out) j.phase = backend::SlurmPhaseOf(j.state);
    return out;
  }
  Status Cancel(const std::string& id, bool only_if_pending, std::chrono::milliseconds) override {
    std::lock_guard lock(mu_);
    if (down) return UnavailableError(name_ + ": down");
    for (auto& j : jobs) {
      if (j.key.job_id != id) continue;
      if (!backend::IsLive(backend::SlurmPhaseOf(j.state))) {
        return UnavailableError("scancel: error: Kill job error on job id " + id +
                                ": Job/step already completing or completed");
      }
      if (only_if_pending && j.state != "PENDING") return OkStatus();
      j.state = "CANCELLED";
      if (silent_after_cancel) slow_reads = true;
      return OkStatus();
    }
    return UnavailableError("scancel: error: Invalid job id specified");
  }
  Result<std::string> Output(const std::string&, std::chrono::milliseconds) override {
    return std::string("out\n");
  }

  // The test's hands.
  void Set(const std::string& id, const std::string& state) {
    std::lock_guard lock(mu_);
    for (auto& j : jobs) {
      if (j.key.job_id == id) j.state = state;
    }
  }
  std::string StateOf(const std::string& id) {
    std::lock_guard lock(mu_);
    for (const auto& j : jobs) {
      if (j.key.job_id == id) return j.state;
    }
    return "";
  }
  // The submissions whose answers were lost reach the queue (or never do).
  void Land() {
    std::lock_guard lock(mu_);
    for (auto& j : late) jobs.push_back(std::move(j));
    late.clear();
  }
  void NeverLand() {
    std::lock_guard lock(mu_);
    late.clear();
  }
  void Add(backend::JobInfo j) {
    std::lock_guard lock(mu_);
    jobs.push_back(std::move(j));
  }
  int LiveWithTag(const std::string& sky_id) {
    std::lock_guard lock(mu_);
    int n = 0;
    for (const auto& j : jobs)
      n += j.sky_id == sky_id && backend::IsLive(backend::SlurmPhaseOf(j.state)) ? 1 : 0;
    return n;
  }
  // slow_reads: a controller busy with a burst; its queue reads time out,
  // its submissions are answered.
  // silent_after_cancel: its queue reads time out once a cancel went through.
  bool down = false, refuse = false, refuse_estimate = false, lose_answers = false,
       slow_reads = false, silent_after_cancel = false;
  std::time_t start_in = 0;
  int submissions = 0, estimates = 0, estimates_with_submissions = 0;
  std::vector<cluster::QueuedJob> queued;  // what a probe sees (squeue)
  std::vector<std::string> last_args;      // the last job sent: its options and script
  std::string last_script;

 private:
  std::mutex mu_;
  std::string name_;
  cluster::Description d_;
  std::vector<backend::JobInfo> jobs, late;
  int next_id = 100;
};

class JobManagerTest : public ::testing::Test {
 public:
  static JobInput Input() {
    JobInput in;
    in.args = {"job.sh"};
    in.script = "#!/bin/sh\n#SBATCH --gres=gpu:h100:1 -t 5\ntrue\n";
    in.cwd = "/home/alice";
    return in;
  }

 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("skyslurm-manager-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    for (const char* name : {"alpha", "beta"}) {
      auto d = cluster::ReadDescriptionFile(kData + name + std::string(".yaml"));
      ASSERT_TRUE(d.ok()) << d.status().message();
      clusters_.push_back(std::make_unique<FakeCluster>(name, *d));
    }
    ws_.config.paths.user = "alice";
    ws_.config.paths.state_dir = (dir_ / "state").string();
    ws_.config.settings.home = "alpha";
    ws_.config.settings.failover.cluster_dead_after = 20;
    ws_.config.settings.failover.migrate_after = 100000;  // no moves here
    for (const char* name : {"alpha", "beta"}) {
      ws_.config.settings.clusters[name].description = kData + name + ".yaml";
    }
    auto registry = cluster::ClusterRegistry::FromConfig(ws_.config, ws_.env);
    ASSERT_TRUE(registry.ok()) << registry.status().message();
    ws_.registry = *registry;
    for (auto& c : clusters_) {
      place::ClusterHandle h;
      h.name = c->name();
      h.home = h.name == "alpha";
      h.settings = ws_.config.settings.For(h.name);
      h.backend = c.get();
      h.translator =
          std::shared_ptr<const backend::JobTranslator>(std::shared_ptr<void>(), c.get());
      ws_.handles.push_back(h);
    }
    auto store = store::JobStore::Open((dir_ / "state" / "skyslurmd.db").string());
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    Restart();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A new manager on the same store and clusters: the daemon after a crash.
  void Restart() {
    ManagerOptions options;
    options.clock = [this] { return now_; };
    manager_ = std::make_unique<JobManager>(*store_, ws_, options);
  }
  FakeCluster& Cluster(const std::string& name) {
    return name == "alpha" ? *clusters_[0] : *clusters_[1];
  }

  store::SkyJob Get(const std::string& id) {
    auto j = store_->Get(id);
    EXPECT_TRUE(j.ok());
    return j.ok() ? *j : store::SkyJob{};
  }
  bool HasEvent(const std::string& id, const std::string& kind) {
    for (const auto& e : manager_->History(id)) {
      if (e.kind == kind) return true;
    }
    return false;
  }

  fs::path dir_;
  std::time_t now_ = 1'800'000'000;
  std::vector<std::unique_ptr<FakeCluster>> clusters_;
  place::Workspace ws_;
  std::unique_ptr<store::JobStore> store_;
  std::unique_ptr<JobManager> manager_;
};

TEST_F(JobManagerTest, ARetriedSubmissionIsTheSameJob) {
  auto first = manager_->Submit({"sky-20260101-000000-000001", Input(), true});
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->job.cluster, "alpha");  // the home cluster wins the tie
  EXPECT_TRUE(first->home);
  auto again = manager_->Submit({"sky-20260101-000000-000001", Input(), true});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->job.native_id, first->job.native_id);
  EXPECT_EQ(Cluster("alpha").submissions, 1);
  EXPECT_TRUE(store_->OpenIntents()->empty());
}

// --dependency naming a sky job: held back by skyslurmd (no slurmctld knows
// the id) until the job ends as asked, then sent with the rest of the
// dependency only; unknown ids refused, never-satisfied ones reported.
TEST_F(JobManagerTest, AJobDependingOnASkyJobWaitsForItThenGoesWithoutItsId) {
  const std::string first = "sky-20260101-000000-000051";
  auto a = manager_->Submit({first, Input(), false});
  ASSERT_TRUE(a.ok()) << a.status().message();
  FakeCluster& ran = Cluster(a->job.cluster);
  auto with = [](std::string directive) {
    JobInput in = Input();
    in.script = "#!/bin/sh\n#SBATCH --gres=gpu:h100:1 -t 5\n#SBATCH " + directive + "\ntrue\n";
    return in;
  };
  const int sent = Cluster("alpha").submissions + Cluster("beta").submissions;

  const std::string next = "sky-20260101-000000-000052";
  auto b = manager_->Submit({next, with("--dependency=afterok:" + first), false});
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(Get(next).state, "PENDING");
  EXPECT_EQ(Get(next).cluster, "");
  EXPECT_EQ(Get(next).reason, "Dependency: waits for afterok:" + first + " (PENDING)");
  EXPECT_TRUE(HasEvent(next, "dependency"));
  EXPECT_EQ(Cluster("alpha").submissions + Cluster("beta").submissions, sent);

  auto unknown = manager_->Submit({"sky-20260101-000000-000053",
                                   with("--dependency=afterok:sky-20260101-000000-0000ff"), false});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "job.sh:3: --dependency=afterok:sky-20260101-000000-0000ff: skyslurm knows no job "
            "sky-20260101-000000-0000ff (skyslurm queue lists yours)");
  EXPECT_FALSE(store_->Get("sky-20260101-000000-000053").ok());
  auto bad = manager_->Submit(
      {"sky-20260101-000000-000054", with("--dependency=aftercorr:" + first), false});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("job.sh:3: --dependency item"));

  now_ += 5;
  manager_->Tick();
  EXPECT_EQ(Get(next).cluster, "");  // still waiting
  ran.Set(a->job.native_id, "COMPLETED");
  for (int i = 0; i < 2 && Get(next).cluster.empty(); ++i) {
    now_ += 5;
    manager_->Tick();
  }
  EXPECT_EQ(Get(first).state, "COMPLETED");
  const store::SkyJob released = Get(next);
  ASSERT_FALSE(released.cluster.empty());
  FakeCluster& got = Cluster(released.cluster);
  EXPECT_EQ(got.last_script.find("\n#SBATCH --dependency"), std::string::npos) << got.last_script;
  for (const auto& arg : got.last_args) EXPECT_THAT(arg, ::testing::Not(HasSubstr("depend")));

  // Answered already at submission: sent at once. afternotok of a job that
  // completed: never; with --kill-on-invalid-dep=yes, cancelled as Slurm does.
  auto c = manager_->Submit(
      {"sky-20260101-000000-000055", with("--dependency=afterany:" + first), false});
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->job.native_id.empty());
  auto never = manager_->Submit(
      {"sky-20260101-000000-000056", with("--dependency=afternotok:" + first), false});
  ASSERT_TRUE(never.ok());
  EXPECT_EQ(Get("sky-20260101-000000-000056").reason,
            "DependencyNeverSatisfied: afternotok:" + first + " ended COMPLETED");
  auto killed = manager_->Submit(
      {"sky-20260101-000000-000057",
       with("--dependency=afternotok:" + first + " --kill-on-invalid-dep=yes"), false});
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(Get("sky-20260101-000000-000057").state, "CANCELLED");
  // The one that waits can be cancelled: it has no copy anywhere.
  EXPECT_TRUE(manager_->Cancel("sky-20260101-000000-000056").ok());
  EXPECT_EQ(Get("sky-20260101-000000-000056").state, "CANCELLED");
}

TEST_F(JobManagerTest, AJobOnlyOneClusterCanRunIsEstimatedWithItsSubmission) {
  Cluster("beta").start_in = 600;
  JobInput in = Input();
  in.args = {"--sky-infra=beta", "-p", "h100-cluster", "job.sh"};
  auto placed = manager_->Submit({"sky-20260101-000000-000011", in, false});
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  EXPECT_EQ(Cluster("beta").estimates_with_submissions, 1);
  EXPECT_EQ(Cluster("beta").estimates, 1);  // the one inside it: none asked before
  EXPECT_EQ(Cluster("beta").submissions, 1);
  const store::SkyJob job = Get("sky-20260101-000000-000011");
  EXPECT_EQ(job.cluster, "beta");
  EXPECT_GE(job.expected_start, std::time(nullptr) + 590);
  EXPECT_THAT(job.reason, HasSubstr("in 10 min"));

  // Two candidates and more: each estimated first, to choose.
  auto chosen = manager_->Submit({"sky-20260101-000000-000012", Input(), false});
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  EXPECT_EQ(Cluster("alpha").estimates_with_submissions, 0);
  EXPECT_EQ(Cluster("beta").estimates_with_submissions, 1);  // still only the first job's
}

// A move whose gain is inside the tie tolerance: beta starts the job 40 s
// before alpha, so it is moved; placed again among all clusters, alpha (the
// home cluster) would win the tie and take back the job it just cancelled
// there, its place in alpha's queue lost (seen on the cloud benchmark).
TEST_F(JobManagerTest, AMoveDoesNotLandBackOnTheClusterItLeft) {
  ws_.config.settings.failover.migrate_after = 10;
  ws_.config.settings.failover.migrate_gain = 20;
  Restart();
  const std::string id = "sky-20260101-000000-000021";
  auto placed = manager_->Submit({id, Input(), false});
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  ASSERT_EQ(placed->job.cluster, "alpha");
  const std::string on_alpha = placed->job.native_id;
  Cluster("alpha").start_in = 40;
  now_ += 60;
  manager_->Tick();
  const store::SkyJob job = Get(id);
  EXPECT_EQ(job.cluster, "beta");
  EXPECT_EQ(job.moves, 1);
  EXPECT_TRUE(HasEvent(id, "moved"));
  EXPECT_EQ(Cluster("alpha").StateOf(on_alpha), "CANCELLED");
  EXPECT_EQ(Cluster("alpha").submissions, 1);
  EXPECT_EQ(Cluster("beta").LiveWithTag(id), 1);
  EXPECT_TRUE(store_->OpenIntents()->empty());
}

// A move weighs the job's own place in its cluster's queue, not a new job's
// (behind the whole queue and itself): alpha's 16 GPUs are all held for 10
// min, the job (1 GPU, 5 min) is first in line, 40 like it behind. A new job
// would start there in 20 min (the third round of 16), beta starts it in
// 400 s; the job itself starts on alpha in 10 min, 200 s later than beta:
// less than migrate_gain, it stays.
TEST_F(JobManagerTest, AMoveWeighsTheJobsOwnPlaceInItsClustersQueue) {
  ws_.config.settings.failover.migrate_after = 10;
  ws_.config.settings.failover.migrate_gain = 300;
  Restart();
  // The queue's times and the clusters' answers are the real clock's.
  now_ = std::time(nullptr);
  const std::string id = "sky-20260101-000000-000031";
  auto placed = manager_->Submit({id, Input(), false});
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  ASSERT_EQ(placed->job.cluster, "alpha");
  const std::time_t t = std::time(nullptr);
  auto job = [&](std::string job_id, std::string state, std::int64_t gpus, std::int64_t minutes) {
    cluster::QueuedJob j;
    j.job_id = std::move(job_id);
    j.state = std::move(state);
    j.phase = backend::SlurmPhaseOf(j.state);
    j.partition = "gpu";
    j.gpu_type = "h100";
    j.gpus_per_node = gpus;
    j.time_limit_minutes = minutes;
    j.user = "bob";
    return j;
  };
  FakeCluster& alpha = Cluster("alpha");
  for (const char* node : {"alpha-n1", "alpha-n2"}) {
    alpha.queued.push_back(job("1", "RUNNING", 8, 11));
    alpha.queued.back().nodelist = node;
    alpha.queued.back().start_time = t - 60;
    alpha.queued.back().end_time = t + 600;
  }
  alpha.queued.push_back(job(placed->job.native_id, "PENDING", 1, 5));
  alpha.queued.back().submit_time = t - 30;
  for (int i = 0; i < 40; ++i) {
    alpha.queued.push_back(job(std::to_string(200 + i), "PENDING", 1, 5));
    alpha.queued.back().submit_time = t - 20 + i;
  }
  alpha.start_in = 6 * 3600;  // sbatch --test-only: a new job's start
  Cluster("beta").start_in = 400;
  for (int i = 0; i < 2; ++i) {  // the first look records it pending, the next weighs it
    now_ += 60;
    manager_->Tick();
  }
  EXPECT_EQ(Get(id).cluster, "alpha");
  EXPECT_FALSE(HasEvent(id, "moved"));
  EXPECT_EQ(Cluster("beta").submissions, 0);
  // The same queue, the job now last in line: 20 min there, beta 13 min
  // sooner, and it moves.
  alpha.queued[2].submit_time = t + 100;
  now_ += 60;
  manager_->Tick();
  EXPECT_EQ(Get(id).cluster, "beta");
  EXPECT_TRUE(HasEvent(id, "moved"));
}

// A job pending on an elastic cluster keeps its place there when a fixed
// cluster comes within overflow.after: the policy holds the elastic cluster
// back from a new job, but the job there is weighed by its own start. Held
// back like a new job, it counted as never starting there and was moved to
// the later fixed start (the benchmark moved jobs off delta, "against in
// 365 d 0 h on delta").
TEST_F(JobManagerTest, AJobPendingOnAnElasticClusterIsNotMovedByTheOverflowPolicy) {
  ws_.config.settings.clusters["beta"].boot_time = 5;  // elastic
  ws_.policy.overflow_after = std::chrono::minutes(15);
  ws_.config.settings.failover.migrate_after = 10;
  ws_.config.settings.failover.migrate_gain = 60;
  for (auto& h : ws_.handles) h.settings = ws_.config.settings.For(h.name);
  Restart();
  now_ = std::time(nullptr);
  Cluster("alpha").start_in = 3600;  // past overflow.after (15 min): beta
  Cluster("beta").start_in = 60;
  const std::string id = "sky-20260101-000000-000032";
  auto placed = manager_->Submit({id, Input(), false});
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  ASSERT_EQ(placed->job.cluster, "beta");
  cluster::QueuedJob pending;
  pending.job_id = placed->job.native_id;
  pending.state = "PENDING";
  pending.phase = cluster::JobPhase::kPending;
  pending.partition = "h100-cluster";
  pending.gpu_type = "nvidia_h100_80gb_hbm3";
  pending.gpus_per_node = 1;
  pending.time_limit_minutes = 5;
  pending.user = "alice";
  pending.submit_time = now_;
  Cluster("beta").queued.push_back(pending);
  // alpha now within overflow.after: a new job would wait for it; this one
  // starts on beta in a minute, and stays.
  Cluster("alpha").start_in = 600;
  for (int i = 0; i < 3; ++i) {
    now_ += 60;
    manager_->Tick();
  }
  EXPECT_EQ(Get(id).cluster, "beta");
  EXPECT_FALSE(HasEvent(id, "moved"));
  EXPECT_EQ(Cluster("alpha").submissions, 0);
}

// estimates: calibrated: beta's estimates lately came true at three times
// their waits, so its 400 s is taken as 20 min and alpha's 10 min wins.
TEST_F(JobManagerTest, CalibratedEstimatesTakeEachClustersWaitsAsTheyLatelyCameTrue) {
  Cluster("alpha").start_in = 600;
  Cluster("beta").start_in = 400;
  for (int i = 0; i < 5; ++i) {
    store::SkyJob past;
    past.sky_id = "sky-20260101-000000-00010" + std::to_string(i);
    past.owner = "alice";
    past.input_json = R"({"tool":"sbatch"})";
    past.state = "COMPLETED";
    past.cluster = "beta";
    past.created = past.updated = past.submitted = now_ - 3600 + i;
    past.expected_start = past.submitted + 100;
    past.started = past.submitted + 300;
    ASSERT_TRUE(store_->Insert(past).ok());
  }
  auto model = manager_->Submit({"sky-20260101-000000-000021", Input(), false});
  ASSERT_TRUE(model.ok()) << model.status().message();
  EXPECT_EQ(model->job.cluster, "beta");  // estimates: model, the default
  ws_.config.settings.calibrate_estimates = true;
  auto calibrated = manager_->Submit({"sky-20260101-000000-000022", Input(), false});
  ASSERT_TRUE(calibrated.ok()) << calibrated.status().message();
  EXPECT_EQ(calibrated->job.cluster, "alpha");
  EXPECT_LT(Get("sky-20260101-000000-000022").expected_start, std::time(nullptr) + 700);
  // Where beta still wins, the job keeps both: the start it was placed with
  // (20 min) and the model's (400 s), which the next calibration learns from.
  Cluster("alpha").start_in = 3600;
  auto later = manager_->Submit({"sky-20260101-000000-000023", Input(), false});
  ASSERT_TRUE(later.ok()) << later.status().message();
  const store::SkyJob on_beta = Get("sky-20260101-000000-000023");
  EXPECT_EQ(on_beta.cluster, "beta");
  EXPECT_NEAR(static_cast<double>(on_beta.expected_start - on_beta.model_start), 800, 10);
  EXPECT_THAT(on_beta.reason, HasSubstr("in 20 min"));
}

TEST_F(JobManagerTest, ASoleClustersRefusedEstimateLeavesTheJobSubmittedWithoutAStart) {
  Cluster("beta").refuse_estimate = true;
  JobInput in = Input();
  in.args = {"--sky-infra=beta", "-p", "h100-cluster", "job.sh"};
  auto placed = manager_->Submit({"sky-20260101-000000-000013", in, false});
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  EXPECT_EQ(Cluster("beta").submissions, 1);
  const store::SkyJob job = Get("sky-20260101-000000-000013");
  EXPECT_EQ(job.state, "PENDING");
  EXPECT_EQ(job.expected_start, 0);
  EXPECT_THAT(job.reason, HasSubstr("the only cluster that can run it (no start estimate: "
                                    "beta: sbatch --test-only refused the job)"));
}

TEST_F(JobManagerTest, ARefusedSbatchIsTheJobsAnswerAndStaysOne) {
  Cluster("alpha").refuse = Cluster("beta").refuse = true;
  auto refused = manager_->Submit({"sky-20260101-000000-000002", Input(), false});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);  // 409, not "retry"
  EXPECT_THAT(refused.status().message(), HasSubstr("Invalid account"));
  auto retried = manager_->Submit({"sky-20260101-000000-000002", Input(), false});
  EXPECT_EQ(retried.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Get("sky-20260101-000000-000002").state, "REFUSED");
}

// Puts a job on beta (alpha busier), then silences beta until it is dead:
// the job is placed again on alpha and beta's copy left STALE.
std::string ReplacedFromBeta(JobManagerTest& t, FakeCluster& alpha, FakeCluster& beta,
                             JobManager& manager, std::time_t& now) {
  alpha.start_in = 3600;
  auto placed = manager.Submit({"sky-20260101-000000-000003", JobManagerTest::Input(), false});
  EXPECT_TRUE(placed.ok());
  EXPECT_EQ(placed->job.cluster, "beta");
  manager.Tick();  // beta answered
  beta.down = true;
  now += 5;
  manager.Tick();
  now += 20;
  manager.Tick();  // silent for 20 s: re-placed
  (void)t;
  return placed->job.native_id;
}

TEST_F(JobManagerTest, CancelReachesACopyOnADeadClusterWhenItAnswersAgain) {
  const std::string on_beta =
      ReplacedFromBeta(*this, Cluster("alpha"), Cluster("beta"), *manager_, now_);
  const std::string id = "sky-20260101-000000-000003";
  store::SkyJob job = Get(id);
  ASSERT_EQ(job.cluster, "alpha");
  EXPECT_TRUE(HasEvent(id, "cluster-lost"));
  Status st = manager_->Cancel(id);
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_THAT(st.message(), HasSubstr("are cancelled when those clusters answer again"));
  EXPECT_EQ(Get(id).state, "CANCELLED");
  EXPECT_EQ(Cluster("alpha").LiveWithTag(id), 0);
  EXPECT_EQ(Cluster("beta").StateOf(on_beta), "PENDING");  // unreachable, untouched
  Cluster("beta").down = false;
  now_ += 5;
  manager_->Tick();
  EXPECT_EQ(Cluster("beta").StateOf(on_beta), "CANCELLED");
  EXPECT_TRUE(store_->OpenIntents()->empty());
}

TEST_F(JobManagerTest, AStaleCopyOfAJobThatEndedElsewhereIsCancelledOnReturn) {
  const std::string on_beta =
      ReplacedFromBeta(*this, Cluster("alpha"), Cluster("beta"), *manager_, now_);
  const std::string id = "sky-20260101-000000-000003";
  Cluster("alpha").Set(Get(id).native_id, "COMPLETED");
  now_ += 5;
  manager_->Tick();
  EXPECT_EQ(Get(id).state, "COMPLETED");
  Cluster("beta").down = false;  // comes back with the old pending copy
  now_ += 5;
  manager_->Tick();
  EXPECT_EQ(Cluster("beta").StateOf(on_beta), "CANCELLED");
  EXPECT_TRUE(HasEvent(id, "duplicate-cancelled"));
}

// A move whose cancel went through but whose cluster then did not answer
// (a busy controller in a burst) is settled by the same daemon on a later
// look. Regression: its event said "after a restart of skyslurmd" on the
// cloud benchmark, where the daemon had never restarted.
TEST_F(JobManagerTest, AMoveSettledOnALaterLookDoesNotClaimARestart) {
  ws_.config.settings.failover.migrate_after = 10;
  ws_.config.settings.failover.migrate_gain = 20;
  Restart();
  const std::string id = "sky-20260101-000000-000022";
  auto placed = manager_->Submit({id, Input(), false});
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  ASSERT_EQ(placed->job.cluster, "alpha");
  Cluster("alpha").start_in = 600;
  Cluster("alpha").silent_after_cancel = true;
  now_ += 60;
  manager_->Tick();  // cancelled on alpha; alpha then silent
  ASSERT_EQ(store_->OpenIntents()->size(), 1u);
  Cluster("alpha").silent_after_cancel = Cluster("alpha").slow_reads = false;
  now_ += 5;
  manager_->Tick();
  EXPECT_TRUE(store_->OpenIntents()->empty());
  std::string detail;
  for (const auto& e : manager_->History(id)) {
    if (e.kind == "recovered") detail = e.detail;
  }
  EXPECT_EQ(detail, "the move's cancel was settled once alpha answered");
  EXPECT_EQ(Get(id).cluster, "beta");
  EXPECT_EQ(Cluster("alpha").LiveWithTag(id) + Cluster("beta").LiveWithTag(id), 1);
}

TEST_F(JobManagerTest, ACopyThatEndedBeforeACrashIsAdoptedNotRunAgain) {
  // The daemon wrote the job and its intent, sbatch ran, the job finished,
  // and the daemon died before recording any of it.
  const std::string id = "sky-20260101-000000-000004";
  store::SkyJob job;
  job.sky_id = id;
  job.owner = "alice";
  job.input_json = JobInputText(Input());
  job.created = job.updated = now_;
  ASSERT_TRUE(store_->Insert(job).ok());
  ASSERT_TRUE(store_->BeginIntent({0, id, "submit", "alpha", "", now_}).ok());
  backend::JobInfo done;
  done.key = {"alpha", "77"};
  done.sky_id = id;
  done.state = "COMPLETED";
  done.user = "alice";
  done.submit_time = now_;
  Cluster("alpha").Add(done);
  Restart();
  manager_->Tick();
  EXPECT_EQ(Cluster("alpha").submissions + Cluster("beta").submissions, 0);
  EXPECT_EQ(Get(id).native_id, "77");
  now_ += 10;
  manager_->Tick();
  EXPECT_EQ(Get(id).state, "COMPLETED");
  EXPECT_TRUE(HasEvent(id, "recovered"));
  bool says_restart = false;
  for (const auto& e : manager_->History(id)) {
    says_restart |= e.detail == "found on the cluster after a restart of skyslurmd";
  }
  EXPECT_TRUE(says_restart);
}

// A submission whose answer was lost while its sbatch was still on its way
// (a busy login node or controller): the daemon waits for it to show, never
// submitting again meanwhile, and adopts it when it does. Regression: the
// next look took the intent for never sent and submitted a second job
// (DaemonTest.AThousandSubmissionsFromSixteenShellsAllLandExactlyOnce, under
// the load of a parallel build: 49 jobs queued twice).
TEST_F(JobManagerTest, ASubmissionWhoseAnswerWasLostIsAwaitedNotMadeTwice) {
  const std::string id = "sky-20260101-000000-000009";
  Cluster("alpha").lose_answers = true;
  auto lost = manager_->Submit({id, Input(), false});
  ASSERT_FALSE(lost.ok());
  EXPECT_THAT(lost.status().message(), HasSubstr("skyslurmd finishes the submission"));
  Cluster("alpha").lose_answers = false;
  const int sent = Cluster("alpha").submissions + Cluster("beta").submissions;
  EXPECT_EQ(sent, 1);
  for (int i = 0; i < 3; ++i) {  // looks while it is still on its way
    now_ += 20;
    manager_->Tick();
  }
  EXPECT_EQ(Cluster("alpha").submissions + Cluster("beta").submissions, sent);
  // The client's retry meanwhile is the same job, not a new one.
  auto retried = manager_->Submit({id, Input(), false});
  ASSERT_TRUE(retried.ok()) << retried.status().message();
  EXPECT_EQ(Cluster("alpha").submissions + Cluster("beta").submissions, sent);
  Cluster("alpha").Land();
  now_ += 5;
  manager_->Tick();
  EXPECT_EQ(Cluster("alpha").submissions + Cluster("beta").submissions, sent);
  EXPECT_EQ(Cluster("alpha").LiveWithTag(id) + Cluster("beta").LiveWithTag(id), 1);
  EXPECT_EQ(Get(id).cluster, "alpha");
  EXPECT_EQ(Get(id).native_id, "100");
  EXPECT_TRUE(store_->OpenIntents()->empty());
}

// One that never reached the cluster is submitted again, once the grace
// has passed: a lost answer never leaves a job stranded.
TEST_F(JobManagerTest, AnUnansweredSubmissionThatNeverLandsIsMadeAgainAfterTheGrace) {
  const std::string id = "sky-20260101-000000-000010";
  Cluster("alpha").lose_answers = true;
  ASSERT_FALSE(manager_->Submit({id, Input(), false}).ok());
  Cluster("alpha").lose_answers = false;
  Cluster("alpha").NeverLand();
  now_ += 60;
  manager_->Tick();
  EXPECT_EQ(Cluster("alpha").LiveWithTag(id) + Cluster("beta").LiveWithTag(id), 0);
  now_ += 100;  // past the 120 s grace
  manager_->Tick();
  EXPECT_EQ(Cluster("alpha").LiveWithTag(id) + Cluster("beta").LiveWithTag(id), 1);
  EXPECT_FALSE(Get(id).native_id.empty());
  EXPECT_TRUE(store_->OpenIntents()->empty());
}

TEST_F(JobManagerTest, AClusterSilentSinceTheDaemonStartedIsDeadOnlyAfterTheDelay) {
  Cluster("alpha").start_in = 3600;
  auto placed = manager_->Submit({"sky-20260101-000000-000005", Input(), false});
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  ASSERT_EQ(placed->job.cluster, "beta");
  Cluster("beta").down = true;
  now_ += 100;  // the job's last change is long ago
  Restart();    // a new daemon that never heard from beta
  manager_->Tick();
  EXPECT_EQ(Get("sky-20260101-000000-000005").cluster, "beta");  // not yet
  now_ += 21;
  manager_->Tick();
  EXPECT_EQ(Get("sky-20260101-000000-000005").cluster, "alpha");
}

// A controller busy with a burst of submissions answers them while its
// queue reads time out: busy, not dead, its pending jobs stay. Regression:
// DaemonTest.AThousandSubmissionsFromSixteenShellsAllLandExactlyOnce under
// CI's load (cluster_dead_after 5 s) found jobs submitted in the daemon's
// first seconds queued twice: their cluster's first reads timed out, it
// counted as silent since the daemon started, and they were placed again.
TEST_F(JobManagerTest, AClusterThatAnswersSubmissionsIsNotDeadWhileItsQueueReadsTimeOut) {
  Cluster("alpha").start_in = 3600;  // beta starts them
  Cluster("beta").slow_reads = true;
  const std::string first = "sky-20260101-000000-000021";
  ASSERT_TRUE(manager_->Submit({first, Input(), false}).ok());
  ASSERT_EQ(Get(first).cluster, "beta");
  for (int i = 0; i < 6; ++i) {  // 30 s of reads timing out, a submission each 5 s
    now_ += 5;
    manager_->Tick();
    const std::string id = "sky-20260101-000000-00010" + std::to_string(i);
    auto placed = manager_->Submit({id, Input(), false});
    ASSERT_TRUE(placed.ok()) << placed.status().message();
    EXPECT_EQ(placed->job.cluster, "beta") << "beta was taken for dead at " << (i + 1) * 5 << " s";
  }
  EXPECT_EQ(Get(first).cluster, "beta");
  EXPECT_FALSE(HasEvent(first, "cluster-lost"));
  EXPECT_EQ(Cluster("beta").LiveWithTag(first) + Cluster("alpha").LiveWithTag(first), 1);
  // Silent for cluster_dead_after (20 s): dead, its pending jobs placed again.
  now_ += 21;
  manager_->Tick();
  EXPECT_TRUE(HasEvent(first, "cluster-lost"));
  EXPECT_EQ(Get(first).cluster, "alpha");
}

// Regression (issue 12): Debian's compiled cpp-httplib listens with a
// backlog of 5, so a burst of clients while the accept loop was busy got
// EAGAIN from connect() and submissions failed with "no answer". The socket
// now queues a burst: 64 clients connect while nobody accepts.
TEST_F(JobManagerTest, TheDaemonsSocketQueuesABurstOfClients) {
  ApiServer server(*manager_);
  const std::string path = (dir_ / "s.sock").string();
  ASSERT_TRUE(server.Bind(path).ok());
  std::vector<int> fds;
  int refused = 0;
  for (int i = 0; i < 64; ++i) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
    ASSERT_GE(fd, 0);
    fds.push_back(fd);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) ++refused;
  }
  for (int fd : fds) ::close(fd);
  EXPECT_EQ(refused, 0);
}

}  // namespace
}  // namespace skyslurm::daemon
