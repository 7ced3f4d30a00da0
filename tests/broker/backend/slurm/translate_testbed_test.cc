// Translation against the real clusters: their live descriptions match the
// fixtures the unit tests use, and a job written for one cluster, once
// translated, really runs on each of the others with the GPUs and modules
// it asked for.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "broker/backend/slurm/slurm_translator.h"
#include "broker/cluster/description.h"
#include "broker/job/request.h"
#include "broker/util/strings.h"
#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

class TranslateTestbedTest : public TestbedTest {
 protected:
  cluster::Description Live(const std::string& name) {
    LocalCommandRunner runner;
    auto d = cluster::Describe(
        {name,
         &runner,
         {{"SLURM_CONF", tb_.SlurmConf(name)}, {"MODULEPATH", tb_.dir + "/modules/" + name}}});
    EXPECT_TRUE(d.ok()) << d.status().message();
    return d.ok() ? *d : cluster::Description{};
  }

  // Translates `script` (written for alpha) for `target`, submits the result
  // there and returns the job's output.
  std::string TranslateAndRun(const std::string& target, const std::string& script,
                              const config::ClusterSettings& settings = {}) {
    job::RequestInput in;
    in.args = {"job.sh"};
    in.script_text = script;
    auto request = job::ParseRequest(in);
    EXPECT_TRUE(request.ok()) << request.status().message();
    if (!request.ok()) return "";
    cluster::Description d = Live(target);
    catalog::AcceleratorCatalog catalog;
    const cluster::Description home = Live("alpha");  // what the script was written against
    translate::Translation t = translate::TranslateForSlurm(
        *request, d, {"alpha", &catalog, &settings, "", &home.modules});
    EXPECT_TRUE(t.ok()) << ::testing::PrintToString(t.reasons);
    if (!t.ok()) return "";
    const std::string out = tmp_.File(target + ".out");
    Command sbatch;
    sbatch.argv = {"sbatch", "--parsable", "-o", out, "--chdir", tmp_.path()};
    sbatch.argv.insert(sbatch.argv.end(), t.job->args.begin(), t.job->args.end());
    sbatch.stdin_data = t.job->script;
    sbatch.env_set = {{"SLURM_CONF", tb_.SlurmConf(target)}};
    CommandOutput submitted = Exec(sbatch);
    EXPECT_TRUE(submitted.success()) << submitted.err << "\n" << t.job->script;
    const std::string id = submitted.out.substr(0, submitted.out.find('\n'));
    EXPECT_EQ(WaitForJobEnd(tb_, target, id), "COMPLETED");
    return ReadFileWhenReady(out);
  }

  TempDir tmp_;
};

TEST_F(TranslateTestbedTest, LiveDescriptionsMatchTheFixtures) {
  for (const char* name : kClusters) {
    const std::string fixture =
        ReadFile(std::string(SKYSLURM_SOURCE_DIR) + "/tests/data/clusters/" + name + ".yaml");
    EXPECT_EQ(cluster::DescriptionToYaml(Live(name)), fixture)
        << name << ": the testbed changed; regenerate tests/data/clusters with skyslurm describe";
  }
}

const char kWrittenForAlpha[] =
    "#!/bin/bash\n"
    "#SBATCH --partition=gpu\n"
    "#SBATCH --gres=gpu:h100:2\n"
    "#SBATCH --time=10\n"
    "#SBATCH --sky-any-cluster\n"
    "module load cuda/12.1 || exit 3\n"
    "echo \"partition=$SLURM_JOB_PARTITION cluster=$SLURM_CLUSTER_NAME\"\n"
    "echo \"gpus=$SLURM_GPUS_ON_NODE cuda=$CUDA_VERSION\"\n";

TEST_F(TranslateTestbedTest, AlphaJobRunsOnAlphaAsWritten) {
  EXPECT_EQ(TranslateAndRun("alpha", kWrittenForAlpha),
            "partition=gpu cluster=alpha\ngpus=2 cuda=12.1\n");
}

TEST_F(TranslateTestbedTest, AlphaJobRunsOnBetaTranslated) {
  EXPECT_EQ(TranslateAndRun("beta", kWrittenForAlpha),
            "partition=h100-cluster cluster=beta\ngpus=2 cuda=12.4\n");
}

TEST_F(TranslateTestbedTest, A100JobRunsOnGammaWithRenamedModule) {
  config::ClusterSettings gamma;
  gamma.modules.renames["cuda"] = "CUDA";
  const std::string script =
      "#!/bin/bash\n#SBATCH --gpus-per-node=a100:2\n#SBATCH -t 5\n"
      "module load cuda/12.1 || exit 3\n"
      "echo \"cluster=$SLURM_CLUSTER_NAME gpus=$SLURM_GPUS_ON_NODE cuda=$CUDA_VERSION\"\n";
  EXPECT_EQ(TranslateAndRun("gamma", script, gamma), "cluster=gamma gpus=2 cuda=12.2\n");
}

TEST_F(TranslateTestbedTest, BetaSpellingRunsOnAlpha) {
  const std::string script =
      "#!/bin/bash\n#SBATCH -p h100-cluster\n#SBATCH --gres=gpu:nvidia_h100_80gb_hbm3:1\n"
      "#SBATCH -t 5\nmodule load cuda/12.4 || exit 3\n"
      "echo \"partition=$SLURM_JOB_PARTITION gpus=$SLURM_GPUS_ON_NODE cuda=$CUDA_VERSION\"\n";
  EXPECT_EQ(TranslateAndRun("alpha", script), "partition=gpu gpus=1 cuda=12.4\n");
}

// --- skyslurm explain, the command, against the live clusters ---

class ExplainCommandTest : public TranslateTestbedTest {
 protected:
  void SetUp() override {
    TranslateTestbedTest::SetUp();
    std::ofstream(tmp_.File("skyslurm.yaml")) << LocalClustersConfig(tb_);
  }
  CommandOutput Explain(std::vector<std::string> args, std::optional<std::string> stdin_data = {}) {
    Command c = ExplainCommand(tmp_.File("skyslurm.yaml"), tmp_.path(), args);
    c.stdin_data = stdin_data.value_or("");
    return Exec(c);
  }
};

TEST_F(ExplainCommandTest, ShowsEveryClusterWithItsVerdict) {
  std::ofstream(tmp_.File("job.sh")) << kWrittenForAlpha;
  CommandOutput out = Explain({"-N", "1", "job.sh"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.out, HasSubstr("Request (job.sh, as sbatch reads it)"));
  EXPECT_THAT(out.out, HasSubstr("alpha (home): can run it, translated"));
  EXPECT_THAT(out.out, HasSubstr("beta: can run it, translated\n  partition: h100-cluster"));
  EXPECT_THAT(out.out, HasSubstr("+#SBATCH --gres=gpu:nvidia_h100_80gb_hbm3:2\n"));
  EXPECT_THAT(out.out, HasSubstr("module cuda/12.1 -> cuda/12.4 (nearest newer 12.x)"));
  EXPECT_THAT(out.out, HasSubstr("gamma: cannot run it\n  - gamma has no H100 GPUs"));
  EXPECT_THAT(out.out, HasSubstr("Can run it: alpha, beta. Cannot: gamma."));
}

TEST_F(ExplainCommandTest, ScriptOnStdinAndOfflineDescriptions) {
  const std::string fixtures = std::string(SKYSLURM_SOURCE_DIR) + "/tests/data/clusters/";
  CommandOutput out = Explain({"--describe-from=" + fixtures + "alpha.yaml", "--describe-from",
                               fixtures + "gamma.yaml", "--gres=gpu:a100:2"},
                              "#!/bin/sh\nmodule load cuda/12.1\n");
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.out, HasSubstr("Request ((stdin), as sbatch reads it)"));
  EXPECT_THAT(out.out, HasSubstr("alpha (home): cannot run it"));
  EXPECT_THAT(out.out, HasSubstr("gamma: can run it, translated"));
  EXPECT_THAT(out.out, Not(HasSubstr("beta")));
}

TEST_F(ExplainCommandTest, NoClusterCanRunItExitsOne) {
  CommandOutput out = Explain({"--gres=gpu:b200:1", "--wrap", "true"});
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_THAT(out.out, HasSubstr("Can run it: none."));
}

TEST_F(ExplainCommandTest, AClusterWhoseOwnSbatchRefusesTheJobCannotRunIt) {
  // No node of any cluster has 100 CPUs: every translation passes (skyslurm
  // does not read --mincpus), but each cluster's own sbatch --test-only
  // says no. The cluster sections, the chosen line, the summary and the
  // exit status all say the same.
  CommandOutput out = Explain({"--mincpus=100", "--wrap", "true"});
  EXPECT_EQ(out.exit_code, 1) << out.out;
  EXPECT_THAT(out.out, HasSubstr("alpha (home): cannot run it\n  - gpu: alpha: sbatch --test-only "
                                 "refused the job: "));
  EXPECT_THAT(out.out, HasSubstr("beta: cannot run it\n"));
  EXPECT_THAT(out.out, Not(HasSubstr("can run it")));
  EXPECT_THAT(out.out, HasSubstr("  => no cluster can run the job\n"));
  EXPECT_THAT(out.out, HasSubstr("Can run it: none. Cannot: alpha, beta, gamma."));
}

TEST_F(ExplainCommandTest, AHeterogeneousJobIsJudgedComponentByComponent) {
  // Component 1 asks for A100s: only gamma has them; the reasons elsewhere
  // name that component, and gamma's own sbatch --test-only takes the job.
  std::ofstream(tmp_.File("het.sh")) << "#!/bin/sh\n#SBATCH -t 10 -N 1 -n 1\n#SBATCH hetjob\n"
                                        "#SBATCH -N 1 --gres=gpu:a100:2\nsrun true\n";
  CommandOutput out = Explain({"het.sh"});
  EXPECT_EQ(out.exit_code, 0) << out.out << out.err;
  EXPECT_THAT(out.out, HasSubstr("  a heterogeneous job of 2 components, which start together\n"));
  EXPECT_THAT(out.out, HasSubstr("alpha (home): cannot run it\n  - hetjob component 1: alpha has "
                                 "no A100 GPUs"));
  EXPECT_THAT(out.out, HasSubstr("gamma: can run it, translated\n"));
  EXPECT_THAT(out.out, HasSubstr("+#SBATCH -N 1 --gres=gpu:A100:2\n"));
  EXPECT_THAT(out.out, HasSubstr("  => gamma"));
  EXPECT_THAT(out.out, HasSubstr("Can run it: gamma. Cannot: alpha, beta."));
  // No cluster fits component 1's 40 nodes: none is said to run it.
  std::ofstream(tmp_.File("big.sh")) << "#!/bin/sh\n#SBATCH -N 1\n#SBATCH hetjob\n#SBATCH -N 40\n"
                                        "srun true\n";
  CommandOutput big = Explain({"big.sh"});
  EXPECT_EQ(big.exit_code, 1) << big.out;
  EXPECT_THAT(big.out, HasSubstr("hetjob component 1: no partition of alpha can run it"));
  EXPECT_THAT(big.out, HasSubstr("Can run it: none."));
}

TEST_F(ExplainCommandTest, AStepWithAPluginsOptionRulesOutAClusterWhoseSrunLacksIt) {
  // Only gamma loads a plugin with --container-image (the testbed's
  // container_options.so): the step would fail at once anywhere else, and
  // does, as each cluster's own srun shows.
  const std::string script =
      "#!/bin/sh\n#SBATCH -t 5\nsrun --container-image=nvcr.io#nvidia/pytorch:24.01-py3 "
      "echo step-ran\n";
  std::ofstream(tmp_.File("step.sh")) << script;
  CommandOutput out = Explain({"step.sh"});
  EXPECT_EQ(out.exit_code, 0) << out.out << out.err;
  EXPECT_THAT(out.out, HasSubstr("alpha (home): cannot run it\n  - step.sh:3: the script's step "
                                 "'srun --container-image' would fail at once on alpha"));
  EXPECT_THAT(out.out, HasSubstr("beta: cannot run it\n  - step.sh:3: the script's step"));
  EXPECT_THAT(out.out, HasSubstr("gamma: can run it"));
  EXPECT_THAT(out.out, HasSubstr("Can run it: gamma. Cannot: alpha, beta."));
  // The verdicts are the clusters' own: the step runs on gamma, fails on alpha.
  for (const auto& [cluster, ends] : {std::pair{"gamma", "COMPLETED"}, {"alpha", "FAILED"}}) {
    Command sbatch;
    sbatch.argv = {"sbatch",  "--parsable", "-o", tmp_.File(std::string(cluster) + ".out"),
                   "--chdir", tmp_.path()};
    sbatch.stdin_data = script;
    sbatch.env_set = {{"SLURM_CONF", tb_.SlurmConf(cluster)}};
    CommandOutput submitted = Exec(sbatch);
    ASSERT_TRUE(submitted.success()) << submitted.err;
    EXPECT_EQ(WaitForJobEnd(tb_, cluster, Trim(submitted.out)), ends) << cluster;
  }
  EXPECT_THAT(ReadFileWhenReady(tmp_.File("alpha.out")), HasSubstr("unrecognized option"));
}

TEST_F(ExplainCommandTest, MemZeroIsAllOfEachNodesMemory) {
  CommandOutput out = Explain({"--mem=0", "--wrap", "true"});
  EXPECT_EQ(out.exit_code, 0) << out.err;
  EXPECT_THAT(out.out, HasSubstr("  memory         all of each node's memory (0)"));
  EXPECT_THAT(out.out, Not(HasSubstr("0 MB per node")));
}

TEST_F(ExplainCommandTest, BadInputExitsTwoNamingTheLine) {
  std::ofstream(tmp_.File("bad.sh"))
      << "#!/bin/sh\n#SBATCH -N 1\n#SBATCH --gres=gpu:h100:x\ntrue\n";
  CommandOutput out = Explain({"bad.sh"});
  EXPECT_EQ(out.exit_code, 2);
  EXPECT_EQ(
      out.err,
      "skyslurm explain: bad.sh:3: --gres: invalid GRES 'gpu:h100:x' ('x' is not a count; "
      "Slurm reads name[:type][:count]: \"Invalid generic resource (gres) specification\")\n");
  EXPECT_EQ(Explain({"missing.sh"}).exit_code, 2);
  EXPECT_EQ(Explain({"--time", "abc", "--wrap", "true"}).exit_code, 2);
}

}  // namespace
}  // namespace skyslurm::testing
