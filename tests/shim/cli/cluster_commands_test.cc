// `skyslurm check`, `gpus` and `explain` (with placement), as a user runs
// them: alpha home, beta and gamma over SSH from the testbed's slurm-config.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <json/json.h>

#include <fstream>
#include <sstream>

#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

class ClusterCommandsTest : public TestbedTest {
 protected:
  void SetUp() override {
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    std::ofstream(tmp_.File("skyslurm.yaml"))
        << "home: alpha\nclusters:\n  alpha:\n    modulepath: " << tb_.dir
        << "/modules/alpha\n  gamma:\n    modules: {cuda: CUDA}\n";
  }

  CommandOutput Skyslurm(std::vector<std::string> args, std::string clusters_file = "") {
    Command c;
    c.argv = {std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm"};
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    c.env_set = {{"SKYSLURM_CONFIG", tmp_.File("skyslurm.yaml")},
                 {"SKYSLURM_SITE_CONFIG", "/nonexistent"},
                 {"SKYSLURM_CLUSTERS_FILE",
                  clusters_file.empty() ? tb_.Path("slurm-config") : clusters_file},
                 {"SLURM_CONF", tb_.SlurmConf("alpha")},
                 {"HOME", tmp_.path()},
                 {"XDG_STATE_HOME", tmp_.File("state")}};
    c.cwd = tmp_.path();
    c.timeout = std::chrono::seconds(60);
    return Exec(c);
  }

  TempDir tmp_;
};

// An address as a regular expression matches it.
std::string Escaped(const std::string& address) {
  std::string out;
  for (char c : address) {
    if (c == '.') out += '\\';
    out += c;
  }
  return out;
}

TEST_F(ClusterCommandsTest, CheckSaysEveryClusterAnswers) {
  CommandOutput out = Skyslurm({"check"});
  EXPECT_EQ(out.exit_code, 0) << out.out << out.err;
  EXPECT_THAT(
      out.out,
      MatchesRegex("CLUSTER +STATUS +ACCESS +DETAIL\n"
                   "alpha +ok +local +slurm-wlm 22\\.05\\.8; 2 partitions, 3/3 nodes usable\n"
                   "beta +ok +ssh skyuser1@" +
                   Escaped(tb_.LoginHost("beta")) +
                   ":[0-9]+ +slurm-wlm 22\\.05\\.8; 2 partitions, 2/2 nodes usable\n"
                   "gamma +ok +ssh skyuser1@" +
                   Escaped(tb_.LoginHost("gamma")) +
                   ":[0-9]+ +slurm-wlm 22\\.05\\.8; 1 partitions, 3/3 nodes usable\n"
                   // The cloud: its nodes powered down (or some up, for a job).
                   "delta +ok +ssh skyuser1@127\\.0\\.0\\.1:[0-9]+ +slurm-wlm "
                   "22\\.05\\.8; 2 partitions, [0-4]/4 nodes usable(, [1-4] boot on "
                   "demand)?\n"));
}

TEST_F(ClusterCommandsTest, CheckNamesWhatIsWrongAndHowToFixIt) {
  // A clusters file where gamma's known key is another one, beta's port is
  // closed and an unknown host name.
  std::string config = ReadFile(tb_.Path("slurm-config"));
  const std::string beta_port = tb_.env.at("SKYSLURM_LOGIN_PORT_BETA");
  config.replace(config.find("Port " + beta_port), 5 + beta_port.size(), "Port 1");
  config += "\nHost epsilon\n    HostName epsilon.invalid\n    User skyuser1\n";
  std::ofstream(tmp_.File("clusters")) << config;
  CommandOutput out = Skyslurm({"check"}, tmp_.File("clusters"));
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_THAT(out.out, HasSubstr("alpha      ok"));
  EXPECT_THAT(out.out,
              MatchesRegex("(.|\n)*beta +unreachable +ssh [^ ]+ +beta: the login node "
                           "\\[" +
                           Escaped(tb_.LoginHost("beta")) + "\\]:1 refused the connection(.|\n)*"));
  EXPECT_THAT(out.out,
              HasSubstr("epsilon: cannot resolve the login node's name 'epsilon.invalid'"));
  EXPECT_THAT(out.out, HasSubstr("gamma      ok"));
}

TEST_F(ClusterCommandsTest, GpusTableAndJson) {
  CommandOutput table = Skyslurm({"gpus"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(
      table.out,
      MatchesRegex(
          "CLUSTER +PARTITION +GPU +TYPE +TOTAL +FREE +PENDING +SLURM\n"
          "alpha +gpu +H100 +h100 +16 +[0-9]+ +[0-9]+ +22\\.05\\.8\n"
          "beta +h100-cluster +H100 +nvidia_h100_80gb_hbm3 +8 +[0-9]+ +[0-9]+ +22\\.05\\.8\n"
          "beta +debug +H100 +nvidia_h100_80gb_hbm3 +8 +[0-9]+ +[0-9]+ +22\\.05\\.8\n"
          "gamma +batch +A100 +A100 +24 +[0-9]+ +[0-9]+ +22\\.05\\.8\n"
          "delta +cloud +H100 +h100 +16 +[0-9]+ +[0-9]+ +22\\.05\\.8\n"
          "delta +spot +H100 +h100 +16 +[0-9]+ +[0-9]+ +22\\.05\\.8\n"
          // The cloud's capacity: up, can boot, its boot.
          "\nELASTIC +PARTITION +UP +CAN BOOT +BOOT +PRICE +BOOT FROM\n"
          "delta +cloud +[0-9]+ +[0-9]+ +300 s +- +assumed: no ledger and no "
          "boot_time for this cluster\n"
          "delta +spot +[0-9]+ +[0-9]+ +300 s +- +assumed: no ledger and no "
          "boot_time for this cluster\n"));
  CommandOutput json = Skyslurm({"gpus", "--json"});
  Json::Value root;
  std::istringstream in(json.out);
  ASSERT_TRUE(Json::parseFromStream(Json::CharReaderBuilder(), in, &root, nullptr)) << json.out;
  ASSERT_EQ(root["gpus"].size(), 6u);
  EXPECT_EQ(root["gpus"][3]["cluster"].asString(), "gamma");
  EXPECT_EQ(root["gpus"][3]["canonical"].asString(), "A100");
  EXPECT_EQ(root["gpus"][3]["total"].asInt(), 24);
  EXPECT_EQ(root["gpus"][3]["slurm_release"].asString(), "22.05.8");
  EXPECT_FALSE(root["gpus"][3]["elastic"].asBool());
  EXPECT_EQ(root["gpus"][4]["cluster"].asString(), "delta");
  EXPECT_TRUE(root["gpus"][4]["elastic"].asBool());
  EXPECT_EQ(root["gpus"][4]["total"].asInt(), 16);
  EXPECT_LE(root["gpus"][4]["can_boot"].asInt() + root["gpus"][4]["free"].asInt(), 16);
  EXPECT_EQ(root["gpus"][4]["boot_seconds"].asInt(), 300);
  EXPECT_TRUE(root["unreachable"].empty());
}

TEST_F(ClusterCommandsTest, ExplainShowsThePlacementAndLogsIt) {
  std::ofstream(tmp_.File("job.sh"))
      << "#!/bin/bash\n#SBATCH --gres=gpu:a100:2\n#SBATCH -t 10\nmodule load cuda/12.1\nhostname\n";
  CommandOutput out = Skyslurm({"explain", "job.sh"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.out, HasSubstr("\nPlacement\n"));
  EXPECT_THAT(out.out, MatchesRegex("(.|\n)*  gamma/batch +chosen +(now|in [0-9]+ s)(.|\n)*"));
  EXPECT_THAT(out.out,
              MatchesRegex("(.|\n)*  alpha +cannot run it +- +alpha has no A100 GPUs(.|\n)*"));
  EXPECT_THAT(out.out, HasSubstr("  => gamma/batch: the earliest start"));
  const std::string log = ReadFile(tmp_.File("state/skyslurm/decisions.log"));
  EXPECT_THAT(log,
              MatchesRegex("[0-9T:-]+Z user=[^ ]+ sky_id=explain job=job.sh chosen=gamma/batch "
                           "candidates=alpha:cannot run it,beta:cannot run it,gamma/batch:chosen@"
                           "[0-9T:-]+Z,delta:cannot run it took_ms=[0-9]+\n"));
}

TEST_F(ClusterCommandsTest, ExplainRestrictedBySkyAnyClusterList) {
  std::ofstream(tmp_.File("job.sh")) << "#!/bin/bash\n#SBATCH --sky-any-cluster=beta\nhostname\n";
  CommandOutput out = Skyslurm({"explain", "--gres=gpu:h100:1", "-t", "5", "job.sh"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.out,
              HasSubstr("alpha (home): not considered\n  - not in --sky-any-cluster=beta"));
  EXPECT_THAT(out.out, HasSubstr("  => beta/h100-cluster"));
}

// Regression (issue 11): working scripts from public repositories that
// explain refused: "--mem=24gb", a GPU type alone, and modules that the home
// cluster does not have either (kept as written, with a note).
TEST_F(ClusterCommandsTest, ExplainAcceptsWhatSbatchAccepts) {
  std::ofstream(tmp_.File("job.sh"))
      << "#!/bin/bash\n#SBATCH --mem=24gb\n#SBATCH --gpus-per-node=h100\n#SBATCH -t 5\n"
         "module load python\nmodule load anaconda/2023-Mar/3\npython -V\n";
  CommandOutput out = Skyslurm({"explain", "job.sh"});
  EXPECT_EQ(out.exit_code, 0) << out.out << out.err;
  EXPECT_THAT(out.out, HasSubstr("alpha (home): can run it"));
  EXPECT_THAT(out.out, HasSubstr("note: job.sh:5: module python: alpha (home) does not list it, so "
                                 "it is left as written, as sbatch submits it"));
  EXPECT_THAT(out.out, HasSubstr("note: job.sh:5: module python: alpha (home) has no module python "
                                 "either, so it is left as written"));
  EXPECT_THAT(out.out, HasSubstr("note: job.sh:6: module anaconda/2023-Mar/3: alpha (home) has no "
                                 "module anaconda/2023-Mar/3 either"));
  EXPECT_THAT(out.out, ::testing::Not(HasSubstr("no counterpart")));
}

// Regression (issue 11): "-w somenode" printed "no cluster can run the job"
// and then "Can run it: alpha, beta, gamma".
TEST_F(ClusterCommandsTest, ExplainsSummaryAgreesWithThePlacement) {
  std::ofstream(tmp_.File("job.sh"))
      << "#!/bin/bash\n#SBATCH -w somenode\n#SBATCH -t 5\nhostname\n";
  CommandOutput out = Skyslurm({"explain", "job.sh"});
  EXPECT_EQ(out.exit_code, 1) << out.out;
  EXPECT_THAT(out.out, HasSubstr("  => no cluster can run the job"));
  EXPECT_THAT(out.out, HasSubstr("Can run it: none. Cannot: alpha, beta, gamma, delta."));
  EXPECT_THAT(out.out, HasSubstr("alpha has no node somenode"));
}

// Regression (issue 11): an option of a SPANK plugin the home does not load
// (pyxis' --container-image; on the testbed only gamma has a plugin for it)
// is refused where sbatch refuses it and travels where sbatch lists it.
TEST_F(ClusterCommandsTest, APluginOptionGoesWhereSbatchRecognisesIt) {
  std::ofstream(tmp_.File("job.sh"))
      << "#!/bin/bash\n#SBATCH --container-image ghcr.io#nvidia/pytorch:24.01\n#SBATCH -t 5\n"
         "hostname\n";
  CommandOutput out = Skyslurm({"explain", "job.sh"});
  EXPECT_EQ(out.exit_code, 0) << out.out << out.err;
  EXPECT_THAT(out.out, HasSubstr("job.sh:2: sbatch on alpha does not recognise --container-image"));
  EXPECT_THAT(out.out, HasSubstr("job.sh:2: sbatch on beta does not recognise --container-image"));
  EXPECT_THAT(out.out, HasSubstr("gamma: can run it"));
  EXPECT_THAT(out.out, HasSubstr("  => gamma/batch"));
  EXPECT_THAT(out.out, HasSubstr("Can run it: gamma. Cannot: alpha, beta, delta."));
}

}  // namespace
}  // namespace skyslurm::testing
