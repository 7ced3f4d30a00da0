// `sbatch --sky-any-cluster job.sh` end to end, typed as a new user would:
// the testbed's ready user (HOME=$TB/home: ~/.slurm/config, known_hosts,
// skyslurm.yaml naming alpha home) with the shim first on PATH.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "broker/util/strings.h"
#include "tests/shim/route_fixture.h"

namespace skyslurm::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

const char kH100Job[] =
    "#!/bin/bash\n"
    "#SBATCH --gres=gpu:h100:2\n"
    "#SBATCH -p gpu\n"
    "#SBATCH -t 10\n"
    "module load cuda/12.1 || exit 3\n"
    "echo \"$SLURM_CLUSTER_NAME $SLURM_JOB_PARTITION gpus=$SLURM_GPUS_ON_NODE "
    "cuda=$CUDA_VERSION\"\n"
    "echo \"task=$SKYPILOT_TASK_ID nodes=$SKYPILOT_NUM_NODES rank=$SKYPILOT_NODE_RANK "
    "gpus=$SKYPILOT_NUM_GPUS_PER_NODE\"\n";

TEST_F(RouteTest, AllFreeTheJobStaysHomeAndSaysSoInSlurmsWords) {
  CommandOutput out = Typed({"sbatch", "--sky-any-cluster", Script("job.sh", kH100Job)});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  auto [cluster, id] = Submitted(out);
  EXPECT_EQ(cluster, "alpha");
  const std::string text = Output(cluster, id, tmp_.path());
  EXPECT_THAT(text,
              MatchesRegex("alpha gpu gpus=2 cuda=12.1\ntask=sky-[0-9]{8}-[0-9]{6}-[0-9a-f]{12} "
                           "nodes=1 rank=0 gpus=2\n"));
  // The decision is in the audit log, with the job's sky id.
  const std::size_t at = text.find("task=") + 5;
  const std::string task = text.substr(at, text.find(' ', at) - at);
  EXPECT_THAT(ReadFile(home_ + "/.local/state/skyslurm/decisions.log"),
              HasSubstr("sky_id=" + task + " job=job.sh chosen=alpha/gpu"));
}

TEST_F(RouteTest, AlphaFullTheJobLandsOnBetaTranslated) {
  FillAlpha();
  CommandOutput out =
      Typed({"sbatch", "--sky-any-cluster", "--parsable", Script("job.sh", kH100Job)});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  ASSERT_EQ(RoutedTo(out).first, "beta") << out.out;  // "<global id>\n": one cluster's form
  const std::string id = RoutedTo(out).second;
  cleanup_.emplace_back("beta", id);
  const std::string text = Output("beta", id, "/home/skyuser1");
  EXPECT_THAT(text,
              MatchesRegex("beta h100-cluster gpus=2 cuda=12.4\ntask=sky-[^ ]+ nodes=1 rank=0 "
                           "gpus=2\n"));
  // The job beta ran is the translated one.
  const std::string shown = RunOn(tb_, "beta", {"scontrol", "show", "job", id}).out;
  EXPECT_THAT(shown, HasSubstr("TresPerNode=gres:gpu:nvidia_h100_80gb_hbm3:2"));
  EXPECT_THAT(shown, HasSubstr("Comment=skyslurm:sky-"));
}

// A heterogeneous job goes whole to the one cluster where every component
// fits: component 1's A100s are gamma's only, so the job runs there, each
// component with what it asked for, and squeue, sacct and logs answer for
// it by its global id.
TEST_F(RouteTest, AHeterogeneousJobRunsWholeWhereEveryComponentFits) {
  CommandOutput out = Typed({"sbatch", "--sky-any-cluster", "--parsable",
                             Script("het.sh",
                                    "#!/bin/bash\n"
                                    "#SBATCH --job-name=het --time=10:00\n"
                                    "#SBATCH --nodes=1 --ntasks=1\n"
                                    "#SBATCH hetjob\n"
                                    "#SBATCH --nodes=1 --gres=gpu:a100:2\n"
                                    "#SBATCH hetjob\n"
                                    "#SBATCH --nodes=1 --ntasks=2\n"
                                    "srun --het-group=1 bash -c 'echo gpus=$CUDA_VISIBLE_DEVICES'\n"
                                    "srun --het-group=2 bash -c 'echo tasks=$SLURM_NTASKS'\n")});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  const auto [cluster, id] = Submitted(out);
  ASSERT_EQ(cluster, "gamma") << out.out << out.err;
  const std::string global = out.out.substr(0, out.out.find('\n'));
  EXPECT_EQ(Output("gamma", id, ""), "gpus=0,1\ntasks=2\ntasks=2\n");
  // slurmdbd records the components a moment after the job ends.
  CommandOutput acct;
  for (int i = 0; i < 100; ++i) {
    acct = Typed({"sacct", "-j", global, "-X", "-n", "-P", "-o", "JobID,AllocTRES"});
    if (acct.out.find(global + "+2|") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(acct.exit_code, 0) << acct.err;
  EXPECT_THAT(acct.out, HasSubstr(global + "+0|"));
  EXPECT_THAT(acct.out,
              ::testing::MatchesRegex("(.|\n)*" + global + "\\+1\\|[^\n]*gres/gpu=2(.|\n)*"));
  EXPECT_THAT(acct.out, HasSubstr(global + "+2|"));
}

// Managed, the same job is followed by the id sbatch printed: squeue lists
// a heterogeneous job as "N+0", "N+1"..., and none of those is another copy
// of it (regression: skyslurmd kept "N+0" as "the copy that started first").
TEST_F(RouteTest, AManagedHeterogeneousJobIsFollowedAsOneJob) {
  CommandOutput out = Typed({"sbatch", "--sky-managed", "--sky-any-cluster", "--parsable",
                             Script("het.sh",
                                    "#!/bin/bash\n"
                                    "#SBATCH --time=10:00 -N 1\n"
                                    "#SBATCH hetjob\n"
                                    "#SBATCH -N 1 --gres=gpu:a100:1\n"
                                    "sleep 3\n")});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  const std::string global = out.out.substr(0, out.out.find('\n'));
  const auto [cluster, id] = ClusterJobOf(global);
  ASSERT_EQ(cluster, "gamma");
  cleanup_.emplace_back(cluster, id);
  EXPECT_EQ(WaitForJobEnd(tb_, "gamma", id), "COMPLETED");
  CommandOutput status;
  for (int i = 0; i < 100; ++i) {
    status = Typed({std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm", "status", global});
    if (status.out.find("COMPLETED") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_THAT(status.out, HasSubstr("COMPLETED on gamma:" + id + "\n")) << status.out;
  EXPECT_THAT(status.out, ::testing::Not(HasSubstr("+0"))) << status.out;
}

// pyxis' enroot form (REGISTRY#IMAGE) reaches kappa as the reference a
// pod pulls: the pod runs (with the '#' it failed ErrImagePull).
TEST_F(RouteTest, APyxisImageRunsOnKubernetesAsTheRegistryNamesIt) {
  CommandOutput out = Typed({"sbatch", "--sky-infra=kappa", "--parsable",
                             Script("pyxis.sh",
                                    "#!/bin/sh\n#SBATCH --gres=gpu:h100:1 -t 5\n"
                                    "#SBATCH --container-image nvcr.io\\#nvidia/pytorch:24.01-py3\n"
                                    "echo pyxis-ran\n")});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  ASSERT_EQ(RoutedTo(out).first, "kappa") << out.out;
  const std::string id = RoutedTo(out).second;
  cleanup_.emplace_back("kappa", id);
  std::string log;
  for (int i = 0; i < 150 && log.find("pyxis-ran") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    log = Typed({std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm", "logs", "kappa:" + id}).out;
  }
  EXPECT_THAT(log, HasSubstr("pyxis-ran"));
  CommandOutput image =
      Exec({.argv = {"kubectl", "--kubeconfig=" + tb_.Path("kubeconfig"),
                     "--cache-dir=" + tmp_.File("kubectl-cache"), "get", "jobs", "skyslurm-" + id,
                     "-o", "jsonpath={.spec.template.spec.containers[0].image}"}});
  EXPECT_EQ(image.out, "nvcr.io/nvidia/pytorch:24.01-py3") << image.err;
}

// The form of the submit line is each command's own: a daemon started by
// a command with SKYSLURM_SUBMIT_OUTPUT=multi-cluster prints the next
// command's job in that command's form (regression: it printed "N;cluster"
// to every later client).
TEST_F(RouteTest, TheSubmitLinesFormIsTheSubmittingCommandsOwn) {
  const std::string job = Script("job.sh", "#!/bin/sh\n#SBATCH -t 1\ntrue\n");
  CommandOutput first = Typed({"sbatch", "--sky-any-cluster", "--parsable", job},
                              {{"SKYSLURM_SUBMIT_OUTPUT", "multi-cluster"}});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  Submitted(first);
  EXPECT_THAT(first.out, ::testing::MatchesRegex("[0-9]+;alpha\n"));
  CommandOutput second = Typed({"sbatch", "--sky-any-cluster", "--parsable", job});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  Submitted(second);
  EXPECT_THAT(second.out, ::testing::MatchesRegex("[0-9]+\n"));
}

TEST_F(RouteTest, WithoutParsableThePeerIsNamedAndWhatDoesNotTravelIsSaid) {
  FillAlpha();
  CommandOutput out = Typed({"sbatch", "--sky-any-cluster", Script("job.sh", kH100Job)});
  EXPECT_EQ(Submitted(out).first, "beta");
  EXPECT_THAT(out.err, HasSubstr("sbatch: skyslurm: job.sh goes to cluster beta"));
  EXPECT_THAT(out.err, HasSubstr("holds your home or a whole root, so nothing is copied"));
}

TEST_F(RouteTest, ADirectiveInTheScriptOrTheEnvironmentAsksForRoutingToo) {
  const std::string a100 =
      "#!/bin/bash\n#SBATCH --sky-any-cluster\n#SBATCH --gpus-per-node=a100:1 -t 5\nhostname\n";
  CommandOutput directive = Typed({"sbatch", Script("a100.sh", a100)});
  EXPECT_EQ(Submitted(directive).first, "gamma") << directive.err;
  CommandOutput env = Typed({"sbatch", "--gpus-per-node=a100:1", "-t", "5", "--wrap", "hostname"},
                            {{"SKYSLURM_ANY_CLUSTER", "1"}});
  EXPECT_EQ(Submitted(env).first, "gamma") << env.err;
}

TEST_F(RouteTest, TheRealSbatchHandsTheJobToTheShimThroughThePlugin) {
  const std::string a100 =
      "#!/bin/bash\n#SBATCH --sky-any-cluster\n#SBATCH --gpus-per-node=a100:1 -t 5\nhostname\n";
  CommandOutput out = Typed({"/usr/bin/sbatch", Script("a100.sh", a100)}, {}, /*shim_first=*/false);
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(Submitted(out).first, "gamma");
}

// skyslurm cannot decide (here: a broken configuration): the job goes to the
// home cluster as written, with a warning, through the real sbatch, and the
// real sbatch's plugin does not hand it back although the script still says
// --sky-any-cluster (that once looped). Words after the script stay.
TEST_F(RouteTest, WhenSkyslurmCannotDecideTheJobGoesHomeAsWritten) {
  std::ofstream(home_ + "/.config/skyslurm/skyslurm.yaml", std::ios::app) << "colour: blue\n";
  const std::string job =
      Script("home.sh", "#!/bin/bash\n#SBATCH --sky-any-cluster\n#SBATCH -t 5\necho \"args=$*\"\n");
  CommandOutput out =
      Typed({"sbatch", "--sky-infra", "beta", "-o", tmp_.File("home.out"), job, "--sky-x", "y"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.err, HasSubstr("sbatch: skyslurm: warning: "));
  EXPECT_THAT(out.err, HasSubstr("unknown key 'colour'"));
  EXPECT_THAT(out.err, HasSubstr("submitting on this cluster instead"));
  std::smatch m;
  ASSERT_TRUE(std::regex_match(out.out, m, std::regex("Submitted batch job ([0-9]+)\n")))
      << out.out;
  const std::string id = m[1];
  cleanup_.emplace_back("alpha", id);
  EXPECT_EQ(WaitForJobEnd(tb_, "alpha", id), "COMPLETED");
  EXPECT_EQ(ReadFileWhenReady(tmp_.File("home.out")), "args=--sky-x y\n");
}

// A job the shim handed to skyslurmd (its request sent, the answer lost)
// is never placed a second time by the shim when the daemon then does not
// answer: the daemon may have it. Regression: the shim placed it itself,
// "once and not tracked", under a new sky id: two jobs of one.
TEST_F(RouteTest, AJobHandedToADaemonThatStopsAnsweringIsNotPlacedAgain) {
  const std::string sky_id = "sky-20261202-000000-abc123";
  CommandOutput out = Typed({"sbatch", "--sky-any-cluster", "-J", "skyhanded", "-t", "1", "-o",
                             "/dev/null", "--wrap", "true"},
                            {{"SKYSLURM_SKY_ID", sky_id}, {"SKYSLURMD", "/bin/false"}});
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_EQ(out.out, "");
  EXPECT_THAT(out.err, HasSubstr("sbatch: error: skyslurm: the job was handed to skyslurmd as " +
                                 sky_id + " and skyslurmd (/bin/false) did not start"));
  EXPECT_THAT(out.err, HasSubstr("`skyslurm status " + sky_id + "` tells"));
  for (const char* c : {"alpha", "beta", "gamma"}) {
    EXPECT_EQ(Trim(RunOn(tb_, c, {"squeue", "-h", "-n", "skyhanded", "-o", "%i"}).out), "") << c;
  }
}

// A job is read once on its way, whichever door it comes through: skyslurm
// __route (the first, which starts skyslurmd) reads it once and hands its
// words to skyslurmd; the shim hands them over unread (the second); either
// way skyslurmd parses them once to answer, place and submit it. The
// parses are counted in the trace (SKYSLURM_TRACE), each side's on its line.
TEST_F(RouteTest, ARoutedJobIsParsedOnceOnItsWay) {
  for (int i = 0; i < 2; ++i) {
    CommandOutput out = Typed({"sbatch", "--sky-any-cluster", "-J", "parsed-once", "-t", "1", "-o",
                               "/dev/null", "--wrap", "true"},
                              {{"SKYSLURM_TRACE", "1"}});
    EXPECT_EQ(out.exit_code, 0) << out.err;
    Submitted(out);
    EXPECT_THAT(out.err, MatchesRegex("(.|\n)*  = skyslurmd: [^\n]*, 1 parse of a job\n(.|\n)*"))
        << i;
    if (i == 0) {
      EXPECT_THAT(out.err, MatchesRegex("(.|\n)*  = skyslurm: [^\n]*, 1 parse of a job\n(.|\n)*"));
    }
  }
}

// The job's own --export is kept, merged with skyslurm's variables, and a
// name without a value takes it from where the user submits, on a peer too
// (before, skyslurm's --export=ALL,... replaced the user's).
TEST_F(RouteTest, TheJobsExportIsKeptAndItsValuesTravel) {
  const std::string job = Script("export.sh",
                                 "#!/bin/bash\n#SBATCH -t 5\necho \"BAR=$BAR BAZ=$BAZ QUX=$QUX "
                                 "task=${SKYPILOT_TASK_ID:+set}\"\n");
  for (const char* cluster : {"beta", "alpha"}) {
    SCOPED_TRACE(cluster);
    const std::string out_file =
        std::string(cluster) == "alpha" ? tmp_.File("export.out") : "export.out";
    CommandOutput out = Typed({"sbatch", std::string("--sky-infra=") + cluster,
                               "--export=BAR,BAZ=1", "-o", out_file, job},
                              {{"BAR", "a b,c"}, {"QUX", "not exported"}});
    auto [where, id] = Submitted(out);
    ASSERT_EQ(where, cluster) << out.err;
    EXPECT_EQ(WaitForJobEnd(tb_, cluster, id), "COMPLETED");
    if (std::string(cluster) == "alpha") {
      EXPECT_EQ(ReadFileWhenReady(out_file), "BAR=a b,c BAZ=1 QUX= task=set\n");
    } else {
      EXPECT_EQ(ReadOnCluster(tb_, cluster, out_file), "BAR=a b,c BAZ=1 QUX= task=set\n");
      (void)SshAsUser(tb_, cluster, "rm -f " + out_file);
    }
  }
}

// Regression (issue 16): skyslurm's own values went in an --export list
// (ALL,SKYPILOT_TASK_ID=...), and sbatch takes any list for a request of the
// user's login environment (SLURM_GET_USER_ENV=1): slurmd ran `su -` for each
// job and array task before launching it, seconds each. A job without an
// --export of its own is sent with bare ALL, as the user's own sbatch sends
// it (SLURM_EXPORT_ENV unset, as then), and still gets skyslurm's values,
// locally and over SSH.
TEST_F(RouteTest, AJobWithoutAnExportListIsNotGivenTheLoginEnvironment) {
  const std::string job = Script("plain.sh",
                                 "#!/bin/bash\n#SBATCH -t 5\necho \"get=${SLURM_GET_USER_ENV:-no} "
                                 "export=${SLURM_EXPORT_ENV:-unset} task=${SKYPILOT_TASK_ID:+set} "
                                 "on=$SKYSLURM_CLUSTER\"\n");
  for (const char* cluster : {"beta", "alpha"}) {
    SCOPED_TRACE(cluster);
    const std::string out_file =
        std::string(cluster) == "alpha" ? tmp_.File("plain.out") : "plain.out";
    CommandOutput out =
        Typed({"sbatch", std::string("--sky-infra=") + cluster, "-o", out_file, job});
    auto [where, id] = Submitted(out);
    ASSERT_EQ(where, cluster) << out.err;
    EXPECT_EQ(WaitForJobEnd(tb_, cluster, id), "COMPLETED");
    const std::string want = "get=no export=unset task=set on=" + std::string(cluster) + "\n";
    if (std::string(cluster) == "alpha") {
      EXPECT_EQ(ReadFileWhenReady(out_file), want);
    } else {
      EXPECT_EQ(ReadOnCluster(tb_, cluster, out_file), want);
      (void)SshAsUser(tb_, cluster, "rm -f " + out_file);
    }
  }
}

TEST_F(RouteTest, SkyInfraPinsACluster) {
  CommandOutput out = Typed({"sbatch", "--sky-infra=beta", Script("job.sh", kH100Job)});
  EXPECT_EQ(Submitted(out).first, "beta") << out.err;
  CommandOutput none = Typed({"sbatch", "--sky-infra=nowhere", Script("job2.sh", kH100Job)});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_EQ(none.err, "sbatch: error: skyslurm: --sky-infra=nowhere: no such cluster\n");
}

TEST_F(RouteTest, SkyExplainSubmitsNothing) {
  const std::string before = RunOn(tb_, "alpha", {"squeue", "-h", "-t", "all", "-o", "%i"}).out;
  CommandOutput out = Typed({"sbatch", "--sky-explain", Script("job.sh", kH100Job)});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.out, HasSubstr("\nPlacement\n"));
  EXPECT_THAT(out.out, HasSubstr("  => alpha/gpu"));
  CommandOutput impossible =
      Typed({"sbatch", "--sky-explain", "--gres=gpu:b200:1", "--wrap", "true"});
  EXPECT_EQ(impossible.exit_code, 1);
  EXPECT_EQ(RunOn(tb_, "alpha", {"squeue", "-h", "-t", "all", "-o", "%i"}).out, before);
}

// A path under a named root of alpha's filesystems is spelled as beta spells
// that root (the ready user's paths: docs/testbed.md): the log lands under
// beta's scratch, and explain says so.
TEST_F(RouteTest, AnOutputPathUnderAlphasScratchLandsUnderBetasScratch) {
  ASSERT_TRUE(SshAsUser(tb_, "beta", "mkdir -p /lustre/scratch/skyuser1/logs").success());
  const std::string job =
      Script("logs.sh",
             "#!/bin/bash\n#SBATCH -o /scratch/skyuser1/logs/%j.out\n#SBATCH -t 5\n"
             "echo on=$SKYSLURM_TESTBED_CLUSTER scratch=$SCRATCH data=$DATA\n");
  CommandOutput explained = Typed({"sbatch", "--sky-explain", "--sky-infra=beta", job});
  EXPECT_EQ(explained.exit_code, 0) << explained.err;
  EXPECT_THAT(explained.out,
              HasSubstr("  paths: home /home/skyuser1, scratch /lustre/scratch/skyuser1\n"));
  EXPECT_THAT(explained.out,
              HasSubstr("logs.sh:2: --output=/scratch/skyuser1/logs/%j.out -> "
                        "--output=/lustre/scratch/skyuser1/logs/%j.out (alpha's scratch root "
                        "/scratch/skyuser1 is /lustre/scratch/skyuser1 on beta)\n"));
  CommandOutput out =
      Typed({"sbatch", "--sky-infra=beta", "--export=ALL,DATA=/scratch/skyuser1/data", job});
  auto [where, id] = Submitted(out);
  ASSERT_EQ(where, "beta") << out.err;
  EXPECT_EQ(WaitForJobEnd(tb_, "beta", id), "COMPLETED");
  EXPECT_EQ(ReadOnCluster(tb_, "beta", "/lustre/scratch/skyuser1/logs/" + id + ".out"),
            "on=beta scratch=/lustre/scratch/skyuser1 data=/lustre/scratch/skyuser1/data\n");
  (void)SshAsUser(tb_, "beta", "rm -f /lustre/scratch/skyuser1/logs/" + id + ".out");
}

TEST_F(RouteTest, ErrorsAreSbatchsOwnShape) {
  CommandOutput bad =
      Typed({"sbatch", "--sky-any-cluster",
             Script("bad.sh", "#!/bin/sh\n#SBATCH -N 1\n#SBATCH --gres=gpu:h100:x\ntrue\n")});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.err,
            "sbatch: error: bad.sh:3: --gres: invalid GRES 'gpu:h100:x' ('x' is not a count; Slurm "
            "reads name[:type][:count]: \"Invalid generic resource (gres) specification\")\n");
  EXPECT_EQ(bad.out, "");
  CommandOutput nowhere =
      Typed({"sbatch", "--sky-any-cluster", "--gres=gpu:b200:1", "--wrap", "true"});
  EXPECT_EQ(nowhere.exit_code, 1);
  EXPECT_THAT(nowhere.err, HasSubstr("sbatch: error: skyslurm: no cluster can run this job"));
  EXPECT_THAT(nowhere.err, HasSubstr("gamma: cannot run it: gamma has no B200 GPUs"));
  // An array index no cluster takes (the testbed's MaxArraySize is 10001):
  // refused before any cluster is asked to submit it, naming the option.
  CommandOutput big = Typed(
      {"sbatch", "--sky-any-cluster", "--array=0,5000,10001", "-o", "/dev/null", "--wrap", "true"});
  EXPECT_EQ(big.exit_code, 1);
  EXPECT_THAT(big.err, HasSubstr("sbatch: error: skyslurm: no cluster can run this job"));
  for (const char* cluster : {"alpha", "beta", "gamma"}) {
    EXPECT_THAT(big.err, HasSubstr(fmt::format("{}: cannot run it: --array=0,5000,10001 (command "
                                               "line): index 10001 is at or above {}'s "
                                               "MaxArraySize (10001)",
                                               cluster, cluster)))
        << big.err;
  }
  EXPECT_EQ(big.out, "");
}

TEST_F(RouteTest, QuietPrintsNothingAndWaitReturnsTheJobsExitStatus) {
  CommandOutput quiet = Typed({"sbatch", "--sky-any-cluster", "-Q", "--wrap", "true"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.out, "");
  CommandOutput wait =
      Typed({"sbatch", "--sky-any-cluster", "--wait", "-o", "/dev/null", "--wrap", "exit 3"});
  EXPECT_EQ(wait.exit_code, 3) << wait.err;
  // Any cluster: right after the quiet job, alpha's own --test-only answers
  // "in 5 minutes" until its next scheduling pass (a Slurm 22.05 quirk).
  EXPECT_THAT(wait.out, MatchesRegex("Submitted batch job [0-9]+\n"));
  EXPECT_THAT(RoutedTo(wait).first, MatchesRegex("alpha|beta|gamma"));
}

TEST_F(RouteTest, ATwoNodeJobOnAPeerSeesItsRankOnEveryNodeAndStep) {
  const std::string job =
      "#!/bin/bash\n"
      "#SBATCH -N 2\n"
      "#SBATCH --gpus-per-node=h100:4\n"
      "#SBATCH -t 5\n"
      "echo \"batch rank=$SKYPILOT_NODE_RANK nodes=$SKYPILOT_NUM_NODES "
      "gpus=$SKYPILOT_NUM_GPUS_PER_NODE\"\n"
      "srun -l bash -c 'echo \"rank=$SKYPILOT_NODE_RANK nodeid=$SLURM_NODEID "
      "nodes=$SKYPILOT_NUM_NODES gpus=$SKYPILOT_NUM_GPUS_PER_NODE "
      "ips=$(printf %s \"$SKYPILOT_NODE_IPS\" | tr \"\\n\" ,) task=$SKYPILOT_TASK_ID\"' | sort\n";
  CommandOutput out = Typed({"sbatch", "--sky-any-cluster=beta", Script("two.sh", job)});
  auto [cluster, id] = Submitted(out);
  ASSERT_EQ(cluster, "beta") << out.err;
  const std::string text = Output(cluster, id, "/home/skyuser1");
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      text, m,
      std::regex(
          "batch rank=0 nodes=2 gpus=4\n"
          "0: rank=0 nodeid=0 nodes=2 gpus=4 ips=127.0.0.1,127.0.0.1 task=(sky-[0-9a-f-]+)\n"
          "1: rank=1 nodeid=1 nodes=2 gpus=4 ips=127.0.0.1,127.0.0.1 task=(sky-[0-9a-f-]+)\n")))
      << text;
  EXPECT_EQ(m[1], m[2]);  // one task id on every node, the routed job's sky id
  EXPECT_THAT(RunOn(tb_, "beta", {"scontrol", "show", "job", id}).out,
              HasSubstr("Comment=skyslurm:" + m[1].str()));
}

// Issue 13: alpha's and beta's H100s full (gamma has none): the demo's
// 2-node H100 job, unchanged, lands on kappa, the Kubernetes cluster, with
// every pod's rank, the same addresses and the sky id; kubectl sees it, and
// skyslurm cancel deletes it with its pods.
TEST_F(RouteTest, AlphaAndBetaFullTheMainH100JobLandsOnKappa) {
  FillAlpha();
  for (int i = 0; i < 2; ++i) {
    const std::string id = Submit(tb_, "beta",
                                  {"-N1", "--gres=gpu:nvidia_h100_80gb_hbm3:4", "-t", "20", "-o",
                                   "/dev/null", "--wrap", "sleep 600"});
    ASSERT_FALSE(id.empty());
    cleanup_.emplace_back("beta", id);
    for (int k = 0; k < 150 && JobState(tb_, "beta", id) != "RUNNING"; ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  const std::string job =
      "#!/bin/bash\n"
      "#SBATCH --job-name=train\n"
      "#SBATCH -p gpu\n"
      "#SBATCH -N 2\n"
      "#SBATCH --gres=gpu:h100:2\n"
      "#SBATCH -t 10\n"
      "module load cuda/12.1\n"
      "srun bash -c 'echo \"rank=$SKYPILOT_NODE_RANK nodes=$SKYPILOT_NUM_NODES "
      "ips=$(printf %s \"$SKYPILOT_NODE_IPS\" | tr \"\\n\" ,) task=$SKYPILOT_TASK_ID\"'\n"
      "sleep 2\n";
  CommandOutput out = Typed({"sbatch", "--sky-any-cluster", "--parsable", Script("train.sh", job)});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  ASSERT_EQ(RoutedTo(out).first, "kappa") << out.out;  // "<global id>\n": one cluster's form
  const std::string id = RoutedTo(out).second;
  cleanup_.emplace_back("kappa", id);
  const std::string kubectl_args =
      "--kubeconfig=" + tb_.Path("kubeconfig") + " --cache-dir=" + tmp_.File("kubectl-cache");
  CommandOutput listed = Exec(
      {.argv = {"sh", "-c",
                "kubectl " + kubectl_args + " get jobs -l skyslurm.io/job-id=" + id + " -o name"}});
  EXPECT_EQ(listed.out, "job.batch/skyslurm-" + id + "\n") << listed.err;
  std::string log;
  for (int i = 0; i < 100 && log.find("==> rank 1") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    log = Typed({std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm", "logs", "kappa:" + id}).out;
  }
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      log, m,
      std::regex("rank=0 nodes=2 ips=(127\\.0\\.[0-9]+\\.[0-9]+,127\\.0\\.[0-9]+\\.[0-9]+) "
                 "task=(sky-[0-9a-f-]+)\n")))
      << log;
  EXPECT_THAT(log, HasSubstr("rank=1 nodes=2 ips=" + m[1].str() + " task=" + m[2].str()));
  EXPECT_NE(m[1].str().substr(0, m[1].str().find(',')),
            m[1].str().substr(m[1].str().find(',') + 1));

  // Cancelled through skyslurm: the Job and its pods go.
  CommandOutput again =
      Typed({"sbatch", "--sky-any-cluster", "--parsable",
             Script("long.sh",
                    "#!/bin/bash\n#SBATCH -N 2\n#SBATCH --gres=gpu:h100:2\n#SBATCH -t 10\n"
                    "module load cuda/12.1\nsleep 300\n")});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  ASSERT_EQ(RoutedTo(again).first, "kappa") << again.out;  // "<global id>\n": one cluster's form
  const std::string long_id = RoutedTo(again).second;
  cleanup_.emplace_back("kappa", long_id);  // if an assertion below stops the test
  EXPECT_EQ(
      Typed({std::string(SKYSLURM_BINARY_DIR) + "/shim/skyslurm", "cancel", "kappa:" + long_id})
          .exit_code,
      0);
  std::string left = "?";
  for (int i = 0; i < 50 && !left.empty(); ++i) {
    left = Exec({.argv = {"sh", "-c",
                          "kubectl " + kubectl_args +
                              " get jobs,pods -l skyslurm.io/job-id=" + long_id + " -o name"}})
               .out;
    if (!left.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(left, "");
}

TEST_F(RouteTest, SallocOnAPeerRunsThereThroughSsh) {
  CommandOutput out =
      Typed({"salloc", "--sky-any-cluster=beta", "--gres=gpu:h100:1", "-t", "5", "srun", "sh", "-c",
             "echo $SLURM_CLUSTER_NAME $SLURM_GPUS_ON_NODE $SKYPILOT_TASK_ID"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.out, MatchesRegex("beta 1 sky-[0-9]{8}-[0-9]{6}-[0-9a-f]{12}\n"));
  EXPECT_THAT(out.err, HasSubstr("salloc: skyslurm: running on cluster beta"));
  EXPECT_THAT(out.err, HasSubstr("salloc: Granted job allocation"));
  CommandOutput quiet = Typed({"salloc", "--sky-any-cluster=beta", "-Q", "-t", "5", "true"});
  EXPECT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
}

// Regression (issue 11): salloc/srun to a peer rebuilt OpenSSH's options by
// hand and dropped the user's own. Now `ssh -F ~/.slurm/config beta` reads the
// file: a ControlMaster setting there (which only OpenSSH acts on) shows it.
TEST_F(RouteTest, SallocOnAPeerHonoursTheUsersSshSettings) {
  const std::string config = home_ + "/.slurm/config";
  const std::string socket = tmp_.File("cm-beta");
  std::string text = ReadFile(config);
  text =
      "Host beta\n  ControlMaster auto\n  ControlPath " + socket + "\n  ControlPersist 30\n" + text;
  WriteFile(config, text);
  CommandOutput out = Typed({"salloc", "--sky-any-cluster=beta", "-Q", "-t", "5", "true"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_TRUE(std::filesystem::exists(socket)) << "no ControlMaster socket: ~/.slurm/config unread";
  Exec({.argv = {"ssh", "-F", config, "-O", "exit", "-o", "ControlPath=" + socket, "beta"}});
}

// A terminal, as a user has one: tmux runs a shell with the shim first on
// PATH; salloc lands the user's shell in an allocation on beta, and leaving
// it gives the allocation back.
class InteractiveTest : public RouteTest {
 protected:
  void TearDown() override {
    Exec({.argv = {"tmux", "-L", socket_, "kill-server"}});
    RouteTest::TearDown();
  }
  void Keys(const std::string& line) {
    ASSERT_TRUE(
        Exec({.argv = {"tmux", "-L", socket_, "send-keys", "-t", "t", line, "Enter"}}).success());
  }
  // The screen once it shows `text` (or after the timeout, for the failure message).
  std::string ScreenWith(const std::string& text,
                         std::chrono::seconds timeout = std::chrono::seconds(60)) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string screen;
    while (std::chrono::steady_clock::now() < deadline) {
      screen = Exec({.argv = {"tmux", "-L", socket_, "capture-pane", "-p", "-J", "-S", "-100", "-t",
                              "t"}})
                   .out;
      if (screen.find(text) != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return screen;
  }
  const std::string socket_ = "skyslurm-test-" + std::to_string(getpid());
};

TEST_F(InteractiveTest, SallocOnAPeerLandsTheShellInTheAllocation) {
  const std::string path = std::getenv("PATH");
  ASSERT_TRUE(Exec({.argv = {"tmux",
                             "-L",
                             socket_,
                             "new-session",
                             "-d",
                             "-s",
                             "t",
                             "-x",
                             "200",
                             "-y",
                             "50",
                             "-c",
                             tmp_.path(),
                             "env",
                             "-u",
                             "SKYSLURM_CONFIG",
                             "HOME=" + home_,
                             "SLURM_CONF=" + tb_.SlurmConf("alpha"),
                             "PATH=" + kShimBin + ":" + path,
                             "PS1=local$ ",
                             "bash",
                             "--norc",
                             "--noprofile"}})
                  .success());
  ASSERT_THAT(ScreenWith("local$"), HasSubstr("local$"));
  Keys("salloc --sky-any-cluster=beta -N1 --gres=gpu:h100:1 -t 5");
  std::string screen = ScreenWith("Granted job allocation");
  ASSERT_THAT(screen, HasSubstr("salloc: skyslurm: running on cluster beta"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(screen, m, std::regex("Granted job allocation ([0-9]+)")))
      << screen;
  const std::string id = m[1];
  cleanup_.emplace_back("beta", id);
  Keys("echo \"in=$SLURM_CLUSTER_NAME:$SLURM_JOB_ID:$SKYPILOT_TASK_ID:$(id -un)\"");
  screen = ScreenWith("in=beta:");
  EXPECT_THAT(screen, MatchesRegex("(.|\n)*in=beta:" + id +
                                   ":sky-[0-9]{8}-[0-9]{6}-[0-9a-f]{12}:skyuser1\n(.|\n)*"));
  EXPECT_EQ(JobState(tb_, "beta", id), "RUNNING");
  Keys("exit");
  screen = ScreenWith("Relinquishing job allocation " + id);
  EXPECT_THAT(screen, HasSubstr("Relinquishing job allocation " + id)) << screen;
  EXPECT_THAT(screen, ::testing::Not(HasSubstr("Connection to")));
  for (int k = 0; k < 100 && JobState(tb_, "beta", id) == "RUNNING"; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(JobState(tb_, "beta", id), "RUNNING");
}

TEST_F(RouteTest, SrunInsideAnAllocationIsNeverRouted) {
  CommandOutput out = Typed(
      {"salloc", "-N1", "-Q", "srun", "--sky-any-cluster=beta", "printenv", "SLURM_CLUSTER_NAME"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_EQ(out.out, "alpha\n");
}

}  // namespace
}  // namespace skyslurm::testing
