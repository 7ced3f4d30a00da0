// When the cluster's last look makes "starts now" certain, and every way it
// does not.
#include "broker/place/certain_start.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::place {
namespace {

using ::testing::HasSubstr;

cluster::Inventory Gamma(int idle_nodes) {
  cluster::Inventory inv;
  inv.probed_at = 1000;
  cluster::Description& d = inv.description;
  d.name = "gamma";
  cluster::Partition batch;
  batch.name = "batch";
  batch.is_default = true;
  batch.max_time_minutes = 60;
  for (int i = 1; i <= 3; ++i) {
    cluster::Node n;
    n.name = "gamma-n" + std::to_string(i);
    n.cpus = 32;
    n.memory_mb = 64000;
    n.gres = {{"gpu", "A100", 8}};
    n.partitions = {"batch"};
    n.state = i <= idle_nodes ? "idle" : "mixed";
    if (n.state == "mixed") {
      n.alloc_cpus = 4;
      n.gres_used = {{"gpu", "A100", 2}};
    }
    batch.nodes.push_back(n.name);
    d.nodes.push_back(n);
  }
  d.partitions.push_back(batch);
  return inv;
}

job::Request Parse(const std::string& script, std::vector<std::string> args = {}) {
  job::RequestInput in;
  in.args = std::move(args);
  in.args.push_back("job.sh");
  in.script_text = script;
  auto r = job::ParseRequest(in);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : job::Request{};
}

const catalog::AcceleratorCatalog kCatalog;

TEST(CertainStartTest, EnoughIdleNodesOfItsShapeAndNothingPendingIsNow) {
  auto why = StartsNowForCertain(
      Parse("#!/bin/bash\n#SBATCH --gres=gpu:a100:8\n#SBATCH -N2 -t 30 --mem=32G\nsrun true\n"),
      Gamma(2), "batch", kCatalog, 1004);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "2 idle node(s) of its shape and nothing pending there, 4 s ago: not asked");
}

// Issue 15: an elastic cluster's powered-up idle node says so with a flag;
// a powered-down one must boot first, so never "now" for certain.
TEST(CertainStartTest, APoweredUpCloudNodeIsIdleAPoweredDownOneIsNot) {
  const job::Request job = Parse("#!/bin/bash\n#SBATCH --gres=gpu:a100:8 -t 30\ntrue\n");
  cluster::Inventory up = Gamma(3);
  for (auto& n : up.description.nodes) n.state = "idle+CLOUD";
  EXPECT_TRUE(StartsNowForCertain(job, up, "batch", kCatalog, 1004).has_value());
  cluster::Inventory down = Gamma(3);
  for (auto& n : down.description.nodes) n.state = "idle+CLOUD+POWERED_DOWN";
  EXPECT_FALSE(StartsNowForCertain(job, down, "batch", kCatalog, 1004).has_value());
}

TEST(CertainStartTest, EveryDoubtIsLeftToTheScheduler) {
  const std::string ok = "#!/bin/bash\n#SBATCH --gres=gpu:a100:8 -t 30\ntrue\n";
  ASSERT_TRUE(StartsNowForCertain(Parse(ok), Gamma(1), "batch", kCatalog, 1000));
  struct Case {
    std::string what;
    job::Request request;
    cluster::Inventory inventory;
  };
  std::vector<Case> cases = {
      {"more nodes than are idle", Parse(ok, {"-N", "2"}), Gamma(1)},
      {"no node wholly idle", Parse(ok), Gamma(0)},
      {"more GPUs than a node has", Parse(ok, {"--gres=gpu:a100:9"}), Gamma(3)},
      {"another GPU type", Parse(ok, {"--gres=gpu:h100:1"}), Gamma(3)},
      {"more memory than a node has", Parse(ok, {"--mem=100G"}), Gamma(3)},
      {"more CPUs than a node has", Parse(ok, {"-c", "64"}), Gamma(3)},
      {"past the partition's MaxTime", Parse(ok, {"-t", "120"}), Gamma(3)},
      {"a constraint", Parse(ok, {"--constraint=fast"}), Gamma(3)},
      {"a node list", Parse(ok, {"-w", "gamma-n1"}), Gamma(3)},
      {"an account (its limits are slurmctld's)", Parse(ok, {"-A", "proj"}), Gamma(3)},
      {"a QoS", Parse(ok, {"-q", "high"}), Gamma(3)},
      {"a dependency", Parse(ok, {"-d", "afterok:1"}), Gamma(3)},
      {"an array", Parse(ok, {"--array=0-3"}), Gamma(3)},
      {"exclusive", Parse(ok, {"--exclusive"}), Gamma(3)},
      {"a begin time", Parse(ok, {"--begin=now+1hour"}), Gamma(3)},
      {"GPUs per task", Parse(ok, {"--gpus-per-task=1", "-n", "2"}), Gamma(3)},
  };
  {
    cluster::Inventory busy = Gamma(3);
    cluster::QueuedJob pending;
    pending.state = "PENDING";
    pending.phase = cluster::JobPhase::kPending;
    pending.reason = "Priority";
    pending.partition = "other,batch";
    busy.jobs.push_back(pending);
    cases.push_back({"a job pending there", Parse(ok), busy});
  }
  {
    cluster::Inventory down = Gamma(3);
    down.description.partitions[0].state = "DOWN";
    cases.push_back({"the partition down", Parse(ok), down});
  }
  for (const Case& c : cases) {
    EXPECT_FALSE(StartsNowForCertain(c.request, c.inventory, "batch", kCatalog, 1000)) << c.what;
  }
  EXPECT_FALSE(StartsNowForCertain(Parse(ok), Gamma(3), "nosuch", kCatalog, 1000));
}

TEST(CertainStartTest, AHeldOrWaitingJobIsNotAhead) {
  cluster::Inventory inv = Gamma(1);
  for (const char* reason :
       {"JobHeldUser", "JobHeldAdmin", "Dependency", "BeginTime", "JobArrayTaskLimit"}) {
    cluster::QueuedJob j;
    j.state = "PENDING";
    j.phase = cluster::JobPhase::kPending;
    j.reason = reason;
    j.partition = "batch";
    inv.jobs.push_back(j);
  }
  cluster::QueuedJob running;
  running.state = "RUNNING";
  running.phase = cluster::JobPhase::kRunning;
  running.partition = "batch";
  inv.jobs.push_back(running);
  auto why = StartsNowForCertain(Parse("#!/bin/bash\n#SBATCH --gres=gpu:A100:4\ntrue\n"), inv,
                                 "batch", kCatalog, 1000);
  ASSERT_TRUE(why.has_value());
  EXPECT_THAT(*why, HasSubstr("1 idle node(s)"));
}

}  // namespace
}  // namespace skyslurm::place
