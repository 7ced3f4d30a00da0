// The backend seam's contract (docs/architecture.md): a kind of backend the
// project does not have is added as a new kind is, by its own code (here,
// in this test: a backend, its translator, its capabilities), one row in the
// factory table (RegisterBackendKind) and its name among the
// configuration's kinds (which the registration adds), with no change
// anywhere else; then skyslurmd's own lifecycle drives it through
// placement, submission, a move and a cancel, and parses the job once over
// its whole life.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include "broker/backend/factory/factory.h"
#include "broker/config/settings.h"
#include "broker/daemon/jobs/job_manager.h"
#include "broker/place/workspace.h"
#include "broker/store/job_store.h"
#include "broker/util/trace.h"

namespace skyslurm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// One cluster of the kind: its queue in memory, two nodes of 8 GPUs, and
// the start its scheduler gives the next job (0: now).
struct MemoryCluster {
  std::mutex mu;
  std::time_t start = 0;
  std::vector<backend::JobInfo> jobs;
};

std::map<std::string, std::shared_ptr<MemoryCluster>>& Clusters() {
  static auto* clusters = new std::map<std::string, std::shared_ptr<MemoryCluster>>;
  return *clusters;
}

// The job in the kind's own terms.
struct MemoryJob : translate::NativeJob {
  std::int64_t gpus = 0;
  std::string Key() const override { return std::to_string(gpus); }
  std::string Summary() const override { return std::to_string(gpus) + " GPU(s) in memory"; }
};

class MemoryTranslator : public backend::JobTranslator {
 public:
  translate::Translation Translate(const job::Request& request, const cluster::Description& target,
                                   const translate::TranslateContext&) const override {
    translate::Translation out;
    out.cluster = target.name;
    if (request.tool != job::Tool::kSbatch) {
      out.reasons.push_back("a batch job only");
      return out;
    }
    translate::TranslatedJob job;
    job.cluster = target.name;
    job.fitting_partitions = {"main"};
    job.script = request.script;
    auto native = std::make_shared<MemoryJob>();
    native->gpus = request.gpu_demand.total;
    job.queued.phase = cluster::JobPhase::kPending;
    job.queued.partition = "main";
    job.queued.gpus_per_node = request.gpu_demand.per_node;
    job.native = native;
    out.job = std::move(job);
    return out;
  }
};

backend::Capabilities MemoryCapabilities() {
  backend::Capabilities c;
  c.kind = "memory";
  c.own_job_ids = false;  // numbered by skyslurmd
  c.estimates = backend::Capabilities::Estimates::kOwnView;
  c.billing = false;
  c.arrays = false;
  c.client_commands = false;
  c.skypilot_cloud = "";
  return c;
}

class MemoryBackend : public backend::Backend {
 public:
  MemoryBackend(std::string name, std::shared_ptr<MemoryCluster> c)
      : name_(std::move(name)), c_(std::move(c)) {}
  const std::string& name() const override { return name_; }
  backend::Capabilities capabilities() const override { return MemoryCapabilities(); }
  translate::Translation Translate(const job::Request& r, const cluster::Description& d,
                                   const translate::TranslateContext& ctx) const override {
    return MemoryTranslator().Translate(r, d, ctx);
  }
  Result<cluster::Inventory> Probe(std::chrono::milliseconds) override {
    cluster::Inventory inv;
    cluster::Description& d = inv.description;
    d.name = name_;
    cluster::Partition p;
    p.name = "main";
    p.is_default = true;
    for (const char* n : {"n1", "n2"}) {
      const std::string node = name_ + "-" + n;
      p.nodes.push_back(node);
      d.nodes.push_back({node, 64, 512000, {{"gpu", "", 8}}, {}, {"main"}, "idle"});
    }
    d.partitions.push_back(p);
    d.BuildIndex();
    inv.probed_at = std::time(nullptr);
    return inv;
  }
  Result<backend::StartEstimate> EstimateStart(const translate::TranslatedJob&,
                                               std::chrono::milliseconds) override {
    std::lock_guard lock(c_->mu);
    backend::StartEstimate e;
    e.start = c_->start;
    e.partition = "main";
    e.basis = "memory";
    e.counts_work_ahead = true;
    return e;
  }
  Result<backend::JobKey> Submit(const backend::SubmitSpec& spec,
                                 std::chrono::milliseconds) override {
    std::lock_guard lock(c_->mu);
    backend::JobInfo j;
    j.key = {name_, spec.native_id};
    j.sky_id = spec.sky_id;
    j.phase = cluster::JobPhase::kPending;
    j.state = "WAITING";
    j.reason = "memory";
    j.submit_time = std::time(nullptr);
    c_->jobs.push_back(j);
    return j.key;
  }
  Result<std::vector<backend::JobInfo>> Queue(std::chrono::milliseconds) override {
    std::lock_guard lock(c_->mu);
    return c_->jobs;
  }
  Status Cancel(const std::string& id, bool only_if_pending, std::chrono::milliseconds) override {
    std::lock_guard lock(c_->mu);
    for (auto& j : c_->jobs) {
      if (j.key.job_id != id) continue;
      if (only_if_pending && j.phase != cluster::JobPhase::kPending) return OkStatus();
      j.phase = cluster::JobPhase::kCancelled;
      j.state = "GONE";
    }
    return OkStatus();
  }
  Result<std::string> Output(const std::string&, std::chrono::milliseconds) override {
    return std::string();
  }

 private:
  std::string name_;
  std::shared_ptr<MemoryCluster> c_;
};

backend::BackendKind MemoryKind() {
  return {"memory", MemoryCapabilities(), std::make_shared<const MemoryTranslator>(),
          [](const cluster::ClusterEntry& entry, const config::ClusterSettings&,
             const backend::FactoryOptions&) {
            backend::MadeCluster made;
            auto& c = Clusters()[entry.name];
            if (c == nullptr) c = std::make_shared<MemoryCluster>();
            made.backend = std::make_shared<MemoryBackend>(entry.name, c);
            return made;
          }};
}

constexpr const char* kSettings =
    "home: m1\n"
    "migrate_after: 10\n"
    "migrate_gain: 20\n"
    "clusters:\n"
    "  m1:\n"
    "    kind: memory\n"
    "  m2:\n"
    "    kind: memory\n";

std::size_t Parses(const trace::Trace& t) {
  std::size_t n = 0;
  for (const auto& s : t.spans()) n += s.cost == trace::Cost::kParse ? 1 : 0;
  return n;
}

TEST(NewBackendKindTest, RegisteredThroughTheTableItIsPlacedSubmittedMovedAndCancelled) {
  config::Settings before;
  EXPECT_THAT(config::MergeSettingsYaml(kSettings, "skyslurm.yaml", false, &before).message(),
              HasSubstr("kind must be slurm or kubernetes, not 'memory'"));
  backend::RegisterBackendKind(MemoryKind());

  const fs::path dir =
      fs::temp_directory_path() / ("skyslurm-new-kind-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  config::LoadedConfig loaded;
  ASSERT_TRUE(config::MergeSettingsYaml(kSettings, "skyslurm.yaml", false, &loaded.settings).ok());
  loaded.paths.user = "alice";
  loaded.paths.home = (dir / "home").string();
  loaded.paths.state_dir = (dir / "state").string();
  fs::create_directories(loaded.paths.home);
  auto ws = place::OpenWorkspace(config::Environment(), loaded);
  ASSERT_TRUE(ws.ok()) << ws.status().message();
  ASSERT_EQ(ws->handles.size(), 2u);
  for (const auto& h : ws->handles) {
    EXPECT_EQ(h.caps.kind, "memory");
    ASSERT_NE(h.backend, nullptr) << h.name << ": " << h.unavailable;
  }
  auto store = store::JobStore::Open((dir / "state" / "skyslurmd.db").string());
  ASSERT_TRUE(store.ok()) << store.status().message();
  std::time_t now = std::time(nullptr);
  daemon::ManagerOptions options;
  options.clock = [&now] { return now; };
  daemon::JobManager manager(**store, *ws, options);
  auto traced = std::make_shared<trace::Trace>("test");
  trace::Install install(traced);

  // Placement and submission: m2 starts it 900 s before m1.
  MemoryCluster& m1 = *Clusters()["m1"];
  MemoryCluster& m2 = *Clusters()["m2"];
  m1.start = now + 1000;
  m2.start = now + 100;
  daemon::JobInput input;
  input.args = {"--gpus=4", "job.sh"};
  input.script = "#!/bin/sh\ntrue\n";
  input.cwd = loaded.paths.home;
  const std::string sky_id = NewSkyId(now);
  auto placed = manager.Submit({sky_id, input, false});
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  EXPECT_EQ(placed->job.cluster, "m2");
  EXPECT_EQ(placed->job.native_id, "1");  // a number skyslurmd gave: no ids of its own
  ASSERT_EQ(m2.jobs.size(), 1u);
  EXPECT_EQ(m2.jobs[0].sky_id, sky_id);

  // A move: pending on m2, which now starts it in 5000 s, while m1 starts it now.
  manager.Tick();
  m2.start = now + 5000;
  m1.start = now;
  now += 30;
  manager.Tick();
  auto moved = manager.Find(sky_id);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->cluster, "m1");
  EXPECT_EQ(moved->moves, 1);
  EXPECT_EQ(m2.jobs[0].phase, cluster::JobPhase::kCancelled);
  ASSERT_EQ(m1.jobs.size(), 1u);
  EXPECT_EQ(m1.jobs[0].sky_id, sky_id);

  // Cancel: its copy on m1 goes.
  EXPECT_TRUE(manager.Cancel(sky_id).ok());
  EXPECT_EQ(m1.jobs[0].phase, cluster::JobPhase::kCancelled);
  EXPECT_EQ(manager.Find(sky_id)->state, "CANCELLED");

  // Parsed once in all that.
  EXPECT_EQ(Parses(*traced), 1u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace skyslurm
