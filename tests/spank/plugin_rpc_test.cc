// The SPANK plugin runs in every step of every job on every node: it must
// cost slurmctld nothing. On beta, with skyslurmd stopped (its own looks
// are RPCs too), a 2-node job of a batch step and two srun steps is run
// with the plugin listed and without it, routed by skyslurm and submitted
// plainly: slurmctld's counts of the RPCs the plugin used to send
// (REQUEST_JOB_INFO_SINGLE, REQUEST_NODE_INFO: sdiag's per-type table) are
// the same with it as without it. A routed job's SKYPILOT_NODE_IPS are
// still the nodes' addresses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/shim/route_fixture.h"

namespace skyslurm::testing {
namespace {

using ::testing::HasSubstr;

constexpr const char* kTypes[] = {"REQUEST_JOB_INFO_SINGLE", "REQUEST_NODE_INFO"};

// sdiag's count for each RPC type of kTypes, and the per-user table's rows.
struct Counts {
  std::map<std::string, long> by_type;
  std::string users;
};

Counts ReadCounts(const Testbed& tb) {
  const std::string text = RunOn(tb, "beta", {"sdiag"}).out;
  Counts c;
  for (const char* type : kTypes) {
    std::smatch m;
    if (std::regex_search(
            text, m,
            std::regex(std::string("\\n\\s*") + type + "\\s*\\(\\s*[0-9]+\\)\\s*count:([0-9]+)"))) {
      c.by_type[type] = std::stol(m[1]);
    } else {
      c.by_type[type] = 0;  // not sent since the last reset
    }
  }
  const auto at = text.find("statistics by user");
  c.users = at == std::string::npos ? "" : text.substr(at);
  return c;
}

class PluginRpcTest : public RouteTest {
 protected:
  void SetUp() override {
    RouteTest::SetUp();
    if (HasFatalFailure()) return;
    plugstack_ = tb_.Path("clusters/beta/etc/plugstack.conf");
    listed_ = ReadFile(plugstack_);
  }
  void TearDown() override {
    if (!plugstack_.empty()) WriteFile(plugstack_, listed_);
    RouteTest::TearDown();
  }

  // The job's RPCs of kTypes, counted from its release to its end: it was
  // submitted held (by `submit`), skyslurmd is stopped, sdiag is reset.
  std::map<std::string, long> RunAndCount(const std::function<std::string()>& submit,
                                          std::string* id_out) {
    const std::string id = submit();
    *id_out = id;
    if (id.empty()) return {};
    StopUserDaemon(home_);
    RunOn(tb_, "beta", {"sdiag", "--reset"});
    RunOn(tb_, "beta", {"scontrol", "release", id});
    // Its end seen in the whole queue (squeue -j would be an RPC of a type
    // counted here).
    for (int i = 0; i < 600; ++i) {
      const std::string queue =
          RunOn(tb_, "beta", {"squeue", "-h", "-t", "all", "-o", "%i %T"}).out;
      if (queue.find(id + " COMPLETED") != std::string::npos ||
          queue.find(id + " FAILED") != std::string::npos) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    const Counts after = ReadCounts(tb_);
    std::printf("job %s: %s=%ld %s=%ld\n%s", id.c_str(), kTypes[0], after.by_type.at(kTypes[0]),
                kTypes[1], after.by_type.at(kTypes[1]), after.users.c_str());
    return after.by_type;
  }

  std::string plugstack_, listed_;
};

constexpr const char* kJob =
    "#!/bin/bash\n"
    "#SBATCH -N 2\n"
    "#SBATCH -t 5\n"
    "#SBATCH -H\n"
    "srun -l bash -c 'echo \"ips=$(printf %s \"$SKYPILOT_NODE_IPS\" | tr \"\\n\" ,) "
    "task=$SKYPILOT_TASK_ID\"' | sort\n"
    "srun true\n";

TEST_F(PluginRpcTest, ThePluginSendsSlurmctldNothing) {
  const std::string script = Script("rpc.sh", kJob);
  auto routed = [&] {
    CommandOutput out = Typed({"sbatch", "--sky-any-cluster=beta", script});
    auto [cluster, id] = Submitted(out);
    EXPECT_EQ(cluster, "beta") << out.err;
    return id;
  };
  auto plain = [&] {
    // Submitted on beta's login node as its user, skyslurm not involved.
    CommandOutput out = SshAsUser(
        tb_, "beta", "sbatch --parsable -o rpc-%j.out <<'EOF'\n" + std::string(kJob) + "EOF\n");
    const std::string id = out.out.substr(0, out.out.find_first_of(";\n"));
    EXPECT_TRUE(out.success()) << out.err;
    if (!id.empty()) cleanup_.emplace_back("beta", id);
    return id;
  };
  std::string id;
  const auto routed_with = RunAndCount(routed, &id);
  const std::string routed_id = id;
  const auto plain_with = RunAndCount(plain, &id);
  const std::string plain_id = id;
  // The same jobs, the plugin not listed (slurmstepd reads plugstack.conf
  // at every step's start).
  WriteFile(plugstack_, "# skyslurm not listed (PluginRpcTest)\n");
  const auto routed_without = RunAndCount(routed, &id);
  const auto plain_without = RunAndCount(plain, &id);
  WriteFile(plugstack_, listed_);
  EXPECT_EQ(routed_with, routed_without);
  EXPECT_EQ(plain_with, plain_without);

  // The routed job's addresses, from what skyslurm sent with it; the plain
  // job's names, and a task id of its cluster and job id.
  EXPECT_THAT(ReadOnCluster(tb_, "beta", "slurm-" + routed_id + ".out"),
              ::testing::ContainsRegex("0: ips=127.0.0.1,127.0.0.1 task=sky-[0-9]{8}-"));
  EXPECT_THAT(ReadOnCluster(tb_, "beta", "rpc-" + plain_id + ".out"),
              HasSubstr("0: ips=beta-n1,beta-n2 task=sky-beta_" + plain_id + "\n"));
}

}  // namespace
}  // namespace skyslurm::testing
