// epsilon, the testbed's Slurm 24.11 cluster, reached only through the
// bastion epsilon-gw, which asks for a one-time code after the key
// (docs/testbed.md): the ready user's jobs go there translated, through the
// session `skyslurm login` opens, and nothing prompts or waits without one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "broker/util/strings.h"
#include "tests/shim/route_fixture.h"

namespace skyslurm::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
namespace fs = std::filesystem;

const std::string kSkyslurm = std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm";

const char kH200Job[] =
    "#!/bin/bash\n"
    "#SBATCH --gres=gpu:h200:2\n"
    "#SBATCH -t 10\n"
    "module load cuda/12.6 || exit 3\n"
    "echo \"$SLURM_CLUSTER_NAME $SLURM_JOB_PARTITION gpus=$SLURM_GPUS_ON_NODE "
    "cuda=$CUDA_VERSION\"\n"
    "echo \"task=$SKYPILOT_TASK_ID nodes=$SKYPILOT_NUM_NODES rank=$SKYPILOT_NODE_RANK "
    "gpus=$SKYPILOT_NUM_GPUS_PER_NODE\"\n";

class EpsilonTest : public RouteTest {
 protected:
  void SetUp() override {
    RouteTest::SetUp();
    if (HasFatalFailure()) return;
    if (tb_.env.count("SLURM_CONF_EPSILON") == 0) {
      GTEST_SKIP() << "the testbed was brought up without epsilon (SKYSLURM_TESTBED_EPSILON=0)";
    }
  }
  void TearDown() override {
    if (!home_.empty()) Typed({kSkyslurm, "logout", "epsilon"});
    RouteTest::TearDown();
  }
  CommandOutput Login(const std::string& code) {
    Command c{.argv = {kSkyslurm, "login", "epsilon"}, .stdin_data = code};
    c.env_set = {{"HOME", home_}, {"SLURM_CONF", tb_.SlurmConf("alpha")}};
    c.env_unset = {"SKYSLURM_CONFIG", "SKYSLURM_SITE_CONFIG", "SKYSLURM_CLUSTERS_FILE",
                   "XDG_CONFIG_HOME", "XDG_STATE_HOME",       "XDG_RUNTIME_DIR"};
    c.cwd = tmp_.path();
    c.timeout = std::chrono::seconds(60);
    return Exec(c);
  }
  std::string Session() const { return home_ + "/.local/state/skyslurm/run/sessions/epsilon.sock"; }
};

// Without a session, a job only epsilon can run is refused at once with
// what to do; nothing prompts (stdin is not read) and nothing waits on the
// bastion; check says which cluster needs a login.
TEST_F(EpsilonTest, WithoutALoginItIsRuledOutSayingSoAndNothingPrompts) {
  const auto start = std::chrono::steady_clock::now();
  CommandOutput out = Typed({"sbatch", "--sky-any-cluster", Script("h200.sh", kH200Job)});
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(out.exit_code, 0) << out.out;
  EXPECT_THAT(out.err, HasSubstr("epsilon needs a one-time code: run skyslurm login epsilon"));
  EXPECT_LT(took, 60.0);  // a bound on a hang, not a speed claim
  CommandOutput explained = Typed({kSkyslurm, "explain", "h200.sh"});
  EXPECT_THAT(explained.out,
              MatchesRegex("(.|\n)*  epsilon +unreachable +- +epsilon needs a one-time code: run "
                           "skyslurm login epsilon\n(.|\n)*"));
  CommandOutput check = Typed({kSkyslurm, "check"});
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_THAT(check.out,
              MatchesRegex("(.|\n)*\nepsilon +needs login +ssh skyuser1@10\\.77\\.6\\.2:[0-9]+ "
                           "via epsilon-gw +epsilon needs a one-time code: run skyslurm "
                           "login epsilon\n(.|\n)*"));
  // A job another cluster can take is not held back by epsilon.
  CommandOutput elsewhere = Typed({"sbatch", "--sky-any-cluster", "--parsable", "-t", "1", "-o",
                                   "/dev/null", "--wrap", "true"});
  EXPECT_EQ(elsewhere.exit_code, 0) << elsewhere.err;
  Submitted(elsewhere);
}

// A wrong code opens nothing (and a first login makes the folders it
// needs); a wrong code at a new login leaves the session that holds as it
// was.
TEST_F(EpsilonTest, AWrongCodeOpensNoSessionAndKeepsTheOneThatHolds) {
  // A first login, before any daemon made the state folder, makes it.
  fs::remove_all(home_ + "/.local/state");
  CommandOutput out = Login("000000\n");
  EXPECT_EQ(out.exit_code, 1) << out.out;
  EXPECT_THAT(out.err, HasSubstr("no session opened"));
  EXPECT_FALSE(fs::exists(Session() + ".until"));
  EXPECT_THAT(Typed({kSkyslurm, "check"}).out, HasSubstr("needs login"));
  ASSERT_EQ(Login(OneTimeCode(tb_)).exit_code, 0);
  out = Login("000000\n");
  EXPECT_EQ(out.exit_code, 1) << out.out;
  EXPECT_THAT(Typed({kSkyslurm, "check"}).out, HasSubstr("via epsilon-gw session until"));
  EXPECT_EQ(Exec({.argv = {"ssh", "-S", Session(), "-O", "check", "epsilon-gw"}}).exit_code, 0);
}

// Logged in (the code on stdin), the job runs on epsilon through the
// bastion: translated (its partition, module cuda/12.6), with the plugin
// built for 24.11 setting SKYPILOT_* beside SLURM_*; squeue, sacct and scontrol answer for it by
// its global id in this machine's 22.05 forms; check and gpus name 24.11.
TEST_F(EpsilonTest, LoggedInTheJobRunsThereThroughTheBastion) {
  CommandOutput login = Login(OneTimeCode(tb_));
  ASSERT_EQ(login.exit_code, 0) << login.err;
  EXPECT_THAT(login.out, MatchesRegex("epsilon: session open until [0-9-]+ [0-9:]+ [A-Z]+ "
                                      "\\(session_lifetime 43200s\\); skyslurm reaches epsilon "
                                      "through it\n"));
  EXPECT_EQ(fs::status(Session()).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);
  CommandOutput out = Typed({"sbatch", "--sky-any-cluster", Script("h200.sh", kH200Job)});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  auto [cluster, id] = Submitted(out);
  ASSERT_EQ(cluster, "epsilon") << out.err;
  const std::string global = Trim(out.out.substr(out.out.rfind(' ') + 1));
  // This folder holds the home here: the job runs in the home there.
  const std::string text = Output("epsilon", id, "/home/skyuser1");
  EXPECT_THAT(text, MatchesRegex(
                        "epsilon accel gpus=2 cuda=12\\.6\ntask=sky-[0-9]{8}-[0-9]{6}-[0-9a-f]{12} "
                        "nodes=1 rank=0 gpus=2\n"));
  EXPECT_THAT(RunOn(tb_, "epsilon", {"scontrol", "show", "job", id}).out,
              HasSubstr("TresPerNode=gres/gpu:h200:2"));
  // The shims say COMPLETING until skyslurmd has seen the end (its poll).
  CommandOutput q;
  for (int i = 0; i < 60; ++i) {
    q = Typed({"squeue", "-t", "all", "-j", global, "-o", "%i %P %T"});
    if (q.out.find("COMPLETING") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  EXPECT_EQ(q.out, "JOBID PARTITION STATE\n" + global + " accel COMPLETED\n") << q.err;
  CommandOutput acct = Typed({"sacct", "-X", "-n", "-j", global, "-o", "JobID,Partition,State"});
  EXPECT_THAT(acct.out, MatchesRegex(" *" + global + " +accel +COMPLETED *\n")) << acct.err;
  EXPECT_THAT(Typed({"scontrol", "show", "job", global}).out, HasSubstr("JobState=COMPLETED"));
  CommandOutput check = Typed({kSkyslurm, "check"});
  EXPECT_THAT(check.out,
              MatchesRegex("(.|\n)*\nepsilon +ok +ssh skyuser1@10\\.77\\.6\\.2:[0-9]+ via "
                           "epsilon-gw +session until [^;]+; slurm-wlm 24\\.11\\.[0-9]+; 2 "
                           "partitions, 2/2 nodes usable\n(.|\n)*"));
  EXPECT_THAT(
      Typed({kSkyslurm, "gpus"}).out,
      MatchesRegex(
          "(.|\n)*\nepsilon +accel +H200 +h200 +16 +[0-9]+ +[0-9]+ +24\\.11\\.[0-9]+\n(.|\n)*"));
  CommandOutput logout = Typed({kSkyslurm, "logout", "epsilon"});
  EXPECT_EQ(logout.out, "epsilon: session closed\n");
  EXPECT_THAT(Typed({kSkyslurm, "check"}).out, HasSubstr("needs login"));
}

// salloc reaches epsilon through the session too (ssh -T, no terminal).
TEST_F(EpsilonTest, SallocRunsThereThroughTheSession) {
  ASSERT_EQ(Login(OneTimeCode(tb_)).exit_code, 0);
  CommandOutput out =
      Typed({"salloc", "--sky-any-cluster", "--gres=gpu:h200:1", "-t", "5", "bash", "-c",
             "echo on $SLURM_CLUSTER_NAME; srun printenv SKYPILOT_NUM_GPUS_PER_NODE"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(out.out, "on epsilon\n1\n") << out.err;
}

// access: rest on epsilon: its slurmrestd (24.11) offers v0.0.40 to
// v0.0.42, none that skyslurm speaks (v0.0.38): check says so, and
// epsilon is ruled out with that reason (explain, the refusal of a job
// only it could run), nothing submitted there by another door.
TEST_F(EpsilonTest, ASlurmrestdOfferingNoKnownApiRulesTheClusterOut) {
  const std::string yaml = home_ + "/.config/skyslurm/skyslurm.yaml";
  std::string text = ReadFile(yaml);
  const std::string marker = "    one_time_code: true\n";
  ASSERT_NE(text.find(marker), std::string::npos) << text;
  text.replace(text.find(marker), marker.size(), marker + "    access: rest\n");
  WriteFile(yaml, text);
  ASSERT_EQ(Login(OneTimeCode(tb_)).exit_code, 0);
  const std::string why =
      "slurmrestd offers OpenAPI v0.0.40, v0.0.41, v0.0.42, none that skyslurm speaks "
      "(v0.0.38): access: rest cannot submit here";
  CommandOutput check = Typed({kSkyslurm, "check"});
  EXPECT_EQ(check.exit_code, 1);
  EXPECT_THAT(check.out, MatchesRegex("(.|\n)*\nepsilon +no known API +rest\\+ssh [^\n]*"
                                      "none that skyslurm speaks \\(v0\\.0\\.38\\): access: "
                                      "rest cannot submit here \\(drop 'access: rest' to reach "
                                      "it with its commands\\)\n(.|\n)*"));
  Script("h200.sh", kH200Job);
  EXPECT_THAT(Typed({kSkyslurm, "explain", "h200.sh"}).out, HasSubstr(why));
  CommandOutput out = Typed({"sbatch", "--sky-any-cluster", "--parsable", "--hold", "h200.sh"});
  EXPECT_NE(out.exit_code, 0) << out.out;
  EXPECT_THAT(out.err, HasSubstr(why));
  EXPECT_EQ(Trim(RunOn(tb_, "epsilon", {"squeue", "-h", "-u", "skyuser1", "-o", "%i"}).out), "");
}

// A session lasts session_lifetime: past it, epsilon is ruled out again
// and the master is closed by the next look.
TEST_F(EpsilonTest, ASessionPastItsLifetimeEndsAndItsMasterCloses) {
  std::ofstream(home_ + "/.config/skyslurm/skyslurm.yaml", std::ios::app)
      << "session_lifetime: 3s\n";
  CommandOutput login = Login(OneTimeCode(tb_));
  ASSERT_EQ(login.exit_code, 0) << login.err;
  EXPECT_THAT(login.out, HasSubstr("(session_lifetime 3s)"));
  std::this_thread::sleep_for(std::chrono::seconds(4));
  CommandOutput explained = Typed({kSkyslurm, "explain", Script("h200.sh", kH200Job)});
  EXPECT_THAT(explained.out,
              HasSubstr("epsilon needs a one-time code: run skyslurm login epsilon"));
  EXPECT_NE(Exec({.argv = {"ssh", "-S", Session(), "-O", "check", "epsilon-gw"}}).exit_code, 0)
      << "the lapsed master still answers";
}

}  // namespace
}  // namespace skyslurm::testing
