// Issue 15's proofs on the testbed's cloud, delta (its nodes booted on
// demand by Slurm's power saving and the testbed's provider, every power-up
// in its ledger): when a job goes there, what it costs, the budget that
// refuses it, and a managed job restarted after its spot node is taken back.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <json/json.h>

#include <cstdio>
#include <map>
#include <regex>
#include <thread>

#include "broker/cloud/ledger.h"
#include "broker/place/placement.h"
#include "broker/util/strings.h"
#include "tests/shim/route_fixture.h"

namespace skyslurm::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

Json::Value ParseJson(const std::string& text) {
  Json::Value v;
  Json::CharReaderBuilder b;
  std::string errors;
  std::unique_ptr<Json::CharReader> reader(b.newCharReader());
  EXPECT_TRUE(reader->parse(text.data(), text.data() + text.size(), &v, &errors)) << errors << text;
  return v;
}

class CloudOverflowTest : public RouteTest {
 protected:
  const std::string skyslurm = std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm";
  std::string settings() const { return home_ + "/.config/skyslurm/skyslurm.yaml"; }
  int Boot() { return std::stoi(ReadFile(tb_.Path("cloud/boot"))); }
  // One of alpha's 8-H100 nodes taken for 10 minutes (cancelled after the
  // test); waits until it runs when `wait`. Its id, or "" when sbatch failed.
  std::string FillAlphaNode(bool wait) {
    const std::string id =
        Submit(tb_, "alpha",
               {"-N1", "--gres=gpu:h100:8", "-t", "10", "-o", "/dev/null", "--wrap", "sleep 600"});
    if (id.empty()) return id;
    cleanup_.emplace_back("alpha", id);
    for (int k = 0; wait && k < 150 && JobState(tb_, "alpha", id) != "RUNNING"; ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return id;
  }
  // Waits (a boot, SuspendTime and a minute at most) until one of delta's
  // partitions has all its nodes powered down, so a job there needs a boot:
  // the test before may have left a node up for its idle tail.
  void WaitUntilAPartitionOfDeltaIsPoweredDown() {
    const int suspend = std::stoi(ReadFile(tb_.Path("cloud/suspend")));
    for (int i = 0; i < (Boot() + suspend + 60) * 2; ++i) {
      // One line a node and partition: "spot idle~".
      std::map<std::string, bool> down;
      for (const std::string& line :
           SplitList(RunOn(tb_, "delta", {"sinfo", "-h", "-N", "-o", "%P %t"}).out, '\n')) {
        const std::vector<std::string> f = SplitList(line, ' ');
        if (f.size() != 2) continue;
        const std::string partition = f[0].back() == '*' ? f[0].substr(0, f[0].size() - 1) : f[0];
        auto at = down.emplace(partition, true).first;
        at->second = at->second && f[1] == "idle~";
      }
      for (const auto& [partition, all] : down) {
        if (all) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    ADD_FAILURE() << "no partition of delta powered down: "
                  << RunOn(tb_, "delta", {"sinfo", "-N"}).out;
  }
};

// Issue 15: alpha's H100s are busy for ten more minutes, and only delta, the
// cloud, has 8 H100s per node besides. Under overflow.after's default (15
// min) the job waits for alpha and explain says why; when the user says 5
// min it goes to delta (in a tie of its partitions' boots, spot, the
// cheaper), whose provider boots exactly the one node it needs, runs it
// after the boot, and powers the node down after SuspendTime; its cost, in
// skyslurm status and skyslurm cost, is what the ledger billed.
TEST_F(CloudOverflowTest, AlphaFreeInTenMinutesTheJobWaitsForItUnlessOverflowAfterIsShorter) {
  for (int i = 0; i < 2; ++i) ASSERT_FALSE(FillAlphaNode(true).empty());
  const std::string job =
      Script("big.sh",
             "#!/bin/bash\n#SBATCH -N1\n#SBATCH --gres=gpu:h100:8\n#SBATCH -t 5\n"
             "echo \"$SLURM_CLUSTER_NAME $SLURM_JOB_PARTITION $SLURMD_NODENAME\"\n");
  CommandOutput waits = Typed({skyslurm, "explain", job});
  EXPECT_EQ(waits.exit_code, 0) << waits.err;
  EXPECT_THAT(waits.out, MatchesRegex("(.|\n)*  delta/cloud +held back +in [0-9]+ s .* an elastic "
                                      "cluster is used only when no other starts the job within "
                                      "overflow.after \\(15 min\\); alpha starts it in (9|10) "
                                      "min\n(.|\n)*"));
  EXPECT_THAT(waits.out, HasSubstr("a node's boot first"));
  EXPECT_THAT(waits.out, MatchesRegex("(.|\n)*cost: \\$[0-9]+\\.[0-9]{2} for its time limit, whole "
                                      "nodes \\(its GPUs fill them\\), boot and idle tail "
                                      "included\n(.|\n)*"));
  EXPECT_THAT(waits.out, HasSubstr("  => alpha/gpu: "));

  // The user waits 5 minutes at most: the cloud it is.
  const std::string settings = home_ + "/.config/skyslurm/skyslurm.yaml";
  WriteFile(settings, ReadFile(settings) + "overflow: { after: 5m }\n");
  const std::string ledger = tb_.Path("cloud/ledger.csv");
  auto read_ledger = [&] {
    auto rows = cloud::ParseLedger(ReadFile(ledger), ledger);
    EXPECT_TRUE(rows.ok()) << rows.status().message();
    return rows.ok() ? *rows : std::vector<cloud::PowerUp>{};
  };
  const std::size_t rows_before = read_ledger().size();
  const std::time_t submitted = std::time(nullptr);
  CommandOutput out = Typed({"sbatch", "--sky-any-cluster", job});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  auto [cluster, id] = Submitted(out);
  ASSERT_EQ(cluster, "delta") << out.out << out.err;
  const int boot = std::stoi(ReadFile(tb_.Path("cloud/boot")));
  const int suspend = std::stoi(ReadFile(tb_.Path("cloud/suspend")));
  EXPECT_EQ(WaitForJobEnd(tb_, "delta", id, std::chrono::seconds(boot + 90)), "COMPLETED");
  // Either partition: their boots measured from this testbed's ledger may
  // differ; in a tie spot, the cheaper, wins (CI's fresh ledger).
  const std::string ran = ReadOnCluster(tb_, "delta", "slurm-" + id + ".out");
  std::smatch where;
  ASSERT_TRUE(std::regex_match(ran, where, std::regex("delta (cloud|spot) (delta-n[1-4])\n")))
      << ran;
  // The provider was asked for one node, which booted before the job ran.
  std::vector<cloud::PowerUp> rows = read_ledger();
  ASSERT_EQ(rows.size(), rows_before + 1) << ReadFile(ledger);
  const cloud::PowerUp node = rows.back();
  EXPECT_EQ(node.node, where[2].str());
  EXPECT_EQ(node.partition, where[1].str());
  EXPECT_GE(node.requested, submitted - 1);
  EXPECT_GE(node.ready - node.requested, boot);
  // Powered down after SuspendTime idle (Slurm looks every few seconds).
  for (int i = 0; i < (suspend + 60) * 2 && rows.back().down == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    rows = read_ledger();
  }
  EXPECT_NE(rows.back().down, 0) << "not powered down: " << ReadFile(ledger);
  EXPECT_THAT(RunOn(tb_, "delta", {"sinfo", "-h", "-N", "-n", node.node, "-o", "%t"}).out,
              MatchesRegex("idle[~%]\n"));

  // Its cost is what the ledger billed: the node's power-up, boot and idle
  // tail included, all this job's, 8 H100s at the partition's price.
  const cloud::PowerUp billed = rows.back();
  const double expected = static_cast<double>(billed.down - billed.requested) * 8 *
                          (where[1] == "spot" ? 1.5 : 4.0) / 3600;
  CommandOutput status = Typed({skyslurm, "status", "--json", "delta:" + id});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const Json::Value job_cost = ParseJson(status.out)["cost"];
  EXPECT_NEAR(job_cost["amount"].asDouble(), expected, 1e-9) << status.out;
  EXPECT_EQ(job_cost["error"].asString(), "");
  status = Typed({skyslurm, "status", "delta:" + id});
  EXPECT_THAT(status.out, HasSubstr(fmt::format("  cost so far: {0} (delta:{1} {0})\n",
                                                place::FormatCost(expected, "$"), id)));
  // skyslurm cost counts it, in delta's bill and the user's share.
  const std::string since = fmt::format("{}s", std::time(nullptr) - submitted + 5);
  CommandOutput cost = Typed({skyslurm, "cost", "--since", since, "--json"});
  ASSERT_EQ(cost.exit_code, 0) << cost.err;
  const Json::Value bill = ParseJson(cost.out)["clusters"][0];
  EXPECT_EQ(bill["cluster"].asString(), "delta");
  EXPECT_NEAR(bill["jobs"][id].asDouble(), expected, 1e-9) << cost.out;
  EXPECT_NEAR(bill["users"]["skyuser1"].asDouble(), bill["yours"].asDouble(), 1e-9);
  EXPECT_GE(bill["yours"].asDouble(), expected - 1e-9);
  cost = Typed({skyslurm, "cost", "--since", since});
  EXPECT_THAT(cost.out, MatchesRegex("Billed by elastic clusters since .* UTC:\n"
                                     "CLUSTER +NODE-HOURS +GPU-HOURS +COST +YOURS +UNUSED\n"
                                     "delta +[0-9.]+ +[0-9.]+ +\\$[0-9.]+ +\\$[0-9.]+ +\\$[0-9.]+\n"
                                     "total +\\$[0-9.]+ +\\$[0-9.]+\n"));
}

// A budget below the job's cost: refused with the budget, what was spent
// of it and what the job would cost; nothing submitted, nothing booted.
TEST_F(CloudOverflowTest, AJobOverBudgetIsRefusedWithTheFiguresAndNothingIsSubmitted) {
  WriteFile(settings(), ReadFile(settings()) + "budget: { user: { day: 5 } }\n");
  CommandOutput spent = Typed({skyslurm, "cost", "--since", "today", "--json"});
  ASSERT_EQ(spent.exit_code, 0) << spent.out << spent.err;
  const double before = ParseJson(spent.out)["yours"].asDouble();
  const std::string ledger = ReadFile(tb_.Path("cloud/ledger.csv"));
  const std::string queue_before = RunOn(tb_, "delta", {"squeue", "-h", "-a", "-o", "%i"}).out;

  // 8 H100s for an hour at spot's $1.50: $12 and more.
  CommandOutput out = Typed({"sbatch", "--sky-any-cluster=delta", "-N1", "--gres=gpu:h100:8", "-t",
                             "60", "-J", "overbudget", "--wrap", "sleep 1"});
  EXPECT_EQ(out.exit_code, 1) << out.out;
  EXPECT_EQ(out.out, "");
  // Both partitions are over it (spot's $1.50 and cloud's $4.00 an H100
  // hour); the refusal names the cheaper, spot, unless Slurm cannot estimate
  // it at this moment (then the node states say why).
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      out.err, m,
      std::regex("no cluster can run this job within your budget (.|\n)*\n  delta/(spot|cloud): "
                 "over budget: would cost \\$([0-9]+\\.[0-9]{2}) for its time limit: over your "
                 "daily budget \\(\\$5\\.00, \\$([0-9]+\\.[0-9]{2}) spent\\)\n")))
      << out.err << RunOn(tb_, "delta", {"scontrol", "-o", "show", "node"}).out;
  EXPECT_GE(std::stod(m[3]), m[2] == "spot" ? 12.0 : 32.0);  // 8 H100s for 1 h
  EXPECT_NEAR(std::stod(m[4]), before, 0.02);                // a node still up bills on
  if (m[2] != "spot") {  // seen once in CI: told, for the next look
    std::printf("spot was not estimated:\n%s%s", out.err.c_str(),
                RunOn(tb_, "delta", {"scontrol", "-o", "show", "node"}).out.c_str());
  }
  EXPECT_EQ(ReadFile(tb_.Path("cloud/ledger.csv")), ledger);
  EXPECT_EQ(RunOn(tb_, "delta", {"squeue", "-h", "-a", "-o", "%i"}).out, queue_before);
  EXPECT_EQ(RunOn(tb_, "delta", {"squeue", "-h", "-a", "-n", "overbudget"}).out, "");

  // explain says the same, with every candidate's cost.
  CommandOutput why = Typed({skyslurm, "explain", "--sky-any-cluster=delta", "-N1",
                             "--gres=gpu:h100:8", "-t", "60", "--wrap", "sleep 1"});
  EXPECT_THAT(why.out, HasSubstr("over budget"));
  EXPECT_THAT(why.out, HasSubstr("over your daily budget ($5.00, $"));
}

// A node already up with GPUs to spare: a job beside the one there starts
// without a boot and is priced at its own GPUs' share (the node is billed
// anyway), while the powered-down partition still counts a boot and whole
// nodes.
TEST_F(CloudOverflowTest, AJobBesideAnotherOnANodeAlreadyUpStartsWithoutABootForItsShare) {
  const std::string first = Submit(tb_, "delta",
                                   {"-p", "spot", "-N1", "--gres=gpu:h100:4", "-t", "5", "-o",
                                    "/dev/null", "--wrap", "sleep 300"});
  ASSERT_FALSE(first.empty());
  cleanup_.emplace_back("delta", first);
  for (int i = 0; i < (Boot() + 60) * 2 && JobState(tb_, "delta", first) != "RUNNING"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_EQ(JobState(tb_, "delta", first), "RUNNING");
  CommandOutput why = Typed({skyslurm, "explain", "--sky-any-cluster=delta", "-N1",
                             "--gres=gpu:h100:4", "-t", "10", "--wrap", "sleep 1"});
  ASSERT_EQ(why.exit_code, 0) << why.err;
  // spot: 4 H100s for 10 min at $1.50; cloud: a boot, 8 H100s, boot and tail.
  // Slurm's answer is a second or two after the plan's now when the machine
  // is slow (seen after a long benchmark).
  EXPECT_THAT(why.out,
              MatchesRegex("(.|\n)*  delta/spot +chosen +(now|in [1-5] s) (.|\n)*estimate: sbatch "
                           "--test-only, beside jobs on a node already up \\(billed "
                           "anyway\\)\n +cost: \\$1\\.00 for its time limit, its GPUs' "
                           "share of a node others keep up(; it adds \\$[0-9.]+ to the "
                           "bill: its node up [0-9]+ (s|min) past the jobs there)?\n(.|\n)*"))
      << why.out;
  // Billed its share (the rest of the node is the partition's), but
  // booting the node adds it whole to the bill until other jobs come.
  EXPECT_THAT(why.out, MatchesRegex("(.|\n)*  delta/cloud (.|\n)*a node's boot first(.|\n)*"
                                    "its GPUs' share of the nodes \\(the rest is the partition's "
                                    "to share\\), boot and idle tail included; booting them adds "
                                    "\\$[0-9.]+ to the bill: the nodes whole until other jobs "
                                    "come\n(.|\n)*"))
      << why.out;
}

// A burst: alpha's H100s busy and an 8-GPU job waiting there. A 1-GPU job
// that would boot a delta node is priced at its GPUs' share of the node's
// time, boot and idle tail included, because the work waiting fills the rest
// (before, the first job to boot a node paid for all of it, so under
// overflow.worth no job ever started a burst, and every later one had a
// node to share). What overflow.worth weighs is more: booting the node
// causes its boot and idle tail, whole.
TEST_F(CloudOverflowTest, InABurstTheJobThatBootsANodeIsPricedAtItsShare) {
  for (int i = 0; i < 2; ++i) ASSERT_FALSE(FillAlphaNode(true).empty());
  ASSERT_FALSE(FillAlphaNode(false).empty());  // the third waits
  WaitUntilAPartitionOfDeltaIsPoweredDown();
  CommandOutput why = Typed({skyslurm, "explain", "--sky-any-cluster=alpha,delta", "-N1",
                             "--gres=gpu:h100:1", "-t", "10", "--wrap", "sleep 1"});
  ASSERT_EQ(why.exit_code, 0) << why.err;
  // The partition that boots (spot, unless the test before left a spot node
  // up for its idle tail: then cloud): less than a dollar, when the whole
  // node for the limit, boot and tail would be $2 and more.
  EXPECT_THAT(why.out,
              MatchesRegex("(.|\n)*estimate: sbatch --test-only, a node's boot first "
                           "[^\n]*\n +cost: \\$0\\.[0-9]{2} for its time limit, its "
                           "GPUs' share of the booted node time, boot and idle tail "
                           "included: 8 GPU\\(s\\) waiting on alpha fill the rest; booting "
                           "them adds \\$[0-9.]+ to the bill: their boot and idle tail whole, "
                           "and its GPUs for its run\n(.|\n)*"))
      << why.out;
  // Weighed against the wait (overflow.worth), the node is opened for the
  // work waiting on alpha that fills it: what the 7 GPUs just ahead gain
  // (alpha starts them minutes later) is taken off what the boot adds.
  WriteFile(settings(), ReadFile(settings()) + "overflow: { worth: 40 }\n");
  why = Typed({skyslurm, "explain", "--sky-any-cluster=alpha,delta", "-N1", "--gres=gpu:h100:1",
               "-t", "10", "--wrap", "sleep 1"});
  ASSERT_EQ(why.exit_code, 0) << why.err;
  EXPECT_THAT(why.out,
              MatchesRegex("(.|\n)*booting them adds \\$[0-9.]+ to the bill: their boot and idle "
                           "tail whole, and its GPUs for its run; weighed at \\$[0-9.]+ \\(its "
                           "share\\): less what the 7 GPU\\(s\\) waiting just ahead of it on "
                           "alpha that fill the rest gain \\(about [0-9]+ (s|min) sooner each, "
                           "worth \\$[0-9.]+ at overflow.worth over \\$[0-9.]+ for their "
                           "runs\\)\n(.|\n)*"))
      << why.out;
}

// A managed job on a spot node the provider takes back (NODE_FAIL): skyslurmd
// restarts it, on an on-demand node this time.
TEST_F(CloudOverflowTest, AManagedJobOnAReclaimedSpotNodeRestartsOnDemand) {
  CommandOutput out =
      Typed({"sbatch", "--sky-any-cluster=delta", "--sky-managed", "-N1", "--gres=gpu:h100:8", "-t",
             "10", "-o", "/dev/null", "--wrap", "sleep 611"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  auto [cluster, id] = Submitted(out);
  ASSERT_EQ(cluster, "delta") << out.out;
  CommandOutput status = Typed({skyslurm, "status", "--json", "delta:" + id});
  const Json::Value first = ParseJson(status.out);
  const std::string sky_id = first["job"]["sky_id"].asString();
  // Both partitions boot alike: spot, the cheaper, wins the tie.
  ASSERT_EQ(first["copies"][0]["partition"].asString(), "spot") << status.out;
  for (int i = 0; i < (Boot() + 90) * 2 && JobState(tb_, "delta", id) != "RUNNING"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_EQ(JobState(tb_, "delta", id), "RUNNING");
  const std::string node = Trim(RunOn(tb_, "delta", {"squeue", "-h", "-j", id, "-o", "%N"}).out);
  ASSERT_THAT(node, MatchesRegex("delta-n[34]"));

  CommandOutput reclaim =
      Exec({.argv = {std::string(SKYSLURM_SOURCE_DIR) + "/scripts/testbed/reclaim", node},
            .timeout = std::chrono::seconds(60)});
  ASSERT_EQ(reclaim.exit_code, 0) << reclaim.out << reclaim.err;
  // The VM took its processes with it (regression: the job's slurmstepd and
  // its sleep outlived the killed slurmd, and a later test saw them). Those
  // of this job only: the restarted copy's own `sleep 611` may already run
  // on an on-demand node by now (regression: counted as the old one's once
  // jobs no longer waited for a login shell before launching).
  EXPECT_EQ(Exec({.argv = {"sh", "-c",
                           "for p in $(pgrep -x -f 'sleep 611'); do tr '\\0' '\\n' "
                           "<\"/proc/$p/environ\" | grep -qx \"SLURM_JOB_ID=$1\" && echo $p; "
                           "done | wc -l",
                           "sh", id}})
                .out,
            "0\n");
  // And the node is powered-down capacity again, as Slurm schedules it
  // (regression: a RESUME left it NOT_RESPONDING, waiting for a registration
  // a powered-down node never sends; a restarted slurmctld never used it).
  EXPECT_THAT(RunOn(tb_, "delta", {"scontrol", "show", "node", node}).out,
              HasSubstr("State=IDLE+CLOUD+POWERED_DOWN "));

  Json::Value now;
  for (int i = 0; i < (Boot() + 120) * 2; ++i) {
    now = ParseJson(Typed({skyslurm, "status", "--json", sky_id}).out);
    if (now["job"]["restarts"].asInt() == 1 && now["job"]["state"].asString() == "RUNNING") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  const Json::Value& job = now["job"];
  ASSERT_EQ(job["restarts"].asInt(), 1) << now.toStyledString();
  EXPECT_EQ(job["state"].asString(), "RUNNING") << now.toStyledString();
  EXPECT_EQ(job["cluster"].asString(), "delta");
  cleanup_.emplace_back("delta", job["native_id"].asString());
  const Json::Value& copies = now["copies"];
  ASSERT_EQ(copies.size(), 2u) << now.toStyledString();
  EXPECT_EQ(copies[1]["partition"].asString(), "cloud") << now.toStyledString();
  EXPECT_THAT(Typed({skyslurm, "status", sky_id}).out,
              HasSubstr("NODE_FAIL on delta:" + id + ": restart 1 of at most"));
  EXPECT_THAT(
      RunOn(tb_, "delta", {"squeue", "-h", "-j", job["native_id"].asString(), "-o", "%P %N"}).out,
      MatchesRegex("cloud delta-n[12]\n"));
}

}  // namespace
}  // namespace skyslurm::testing
