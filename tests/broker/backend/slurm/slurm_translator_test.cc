// Translation against descriptions of the testbed's three clusters
// (tests/data/clusters, written by `skyslurm describe`; a testbed test
// checks they still match the real clusters).
#include "broker/backend/slurm/slurm_translator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "broker/job/request.h"

namespace skyslurm::translate {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

const std::string kData = std::string(SKYSLURM_SOURCE_DIR) + "/tests/data/";

cluster::Description Cluster(const std::string& name) {
  auto d = cluster::ReadDescriptionFile(kData + "clusters/" + name + ".yaml");
  EXPECT_TRUE(d.ok()) << d.status().message();
  return *d;
}

job::Request Parse(std::vector<std::string> args, std::string script,
                   std::map<std::string, std::string> env = {}) {
  job::RequestInput in;
  in.args = std::move(args);
  in.script_text = std::move(script);
  in.env = std::move(env);
  in.spank_options = {{"container-image", job::Arg::kRequired}};
  auto r = job::ParseRequest(in);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return *r;
}

class TranslatorTest : public ::testing::Test {
 protected:
  Translation To(const std::string& cluster, const job::Request& r,
                 const config::ClusterSettings& settings = {}) {
    description_ = Cluster(cluster);
    settings_ = settings;
    return TranslateForSlurm(r, description_, {"alpha", &catalog_, &settings_, "", &home_modules_});
  }
  catalog::AcceleratorCatalog catalog_;
  const std::vector<std::string> home_modules_ = Cluster("alpha").modules;
  cluster::Description description_;
  config::ClusterSettings settings_;
};

const char kJob[] =
    "#!/bin/bash\n"
    "#SBATCH --job-name=train\n"
    "#SBATCH --partition=gpu\n"
    "#SBATCH --gres=gpu:h100:4 --time=2:00:00\n"
    "#SBATCH --sky-any-cluster\n"
    "\n"
    "module load cuda/12.1\n"
    "srun python train.py   # uses 4 GPUs\n";

TEST_F(TranslatorTest, HomeRunsItAsWrittenBarTheSkyLine) {
  auto t = To("alpha", Parse({"job.sh"}, kJob));
  ASSERT_TRUE(t.ok()) << testing::PrintToString(t.reasons);
  EXPECT_THAT(t.job->changes, IsEmpty());
  EXPECT_EQ(t.job->partition_note, "gpu (as asked)");
  // Only the --sky-* line is commented out; no header, nothing else touched.
  std::string expected = kJob;
  expected.replace(expected.find("#SBATCH --sky-any-cluster"), 1, "##");
  EXPECT_EQ(t.job->script, expected);
}

TEST_F(TranslatorTest, H100JobOnBeta) {
  auto t = To("beta", Parse({"job.sh"}, kJob));
  ASSERT_TRUE(t.ok()) << testing::PrintToString(t.reasons);
  const std::string& s = t.job->script;
  EXPECT_THAT(s, HasSubstr("\n##SBATCH --gres=gpu:h100:4 --time=2:00:00\n"
                           "#SBATCH --gres=gpu:nvidia_h100_80gb_hbm3:4 --time=2:00:00\n"));
  EXPECT_THAT(s, HasSubstr("\n##SBATCH --partition=gpu\n#SBATCH --partition=h100-cluster\n"));
  EXPECT_THAT(s, HasSubstr("\nmodule load cuda/12.4\n"));
  EXPECT_THAT(s, HasSubstr("\n##SBATCH --sky-any-cluster\n"));
  EXPECT_THAT(s, Not(HasSubstr("\n#SBATCH --sky")));
  // The header right after the shebang says what changed and why.
  EXPECT_TRUE(
      s.starts_with("#!/bin/bash\n# skyslurm: translated for cluster beta (written for alpha)\n"));
  EXPECT_THAT(s, HasSubstr("# skyslurm: job.sh:4: --gres=gpu:h100:4 -> "
                           "--gres=gpu:nvidia_h100_80gb_hbm3:4 (beta spells H100 "
                           "'nvidia_h100_80gb_hbm3')\n"));
  EXPECT_THAT(s, HasSubstr("module cuda/12.1 -> cuda/12.4 (nearest newer 12.x)"));
  // Everything else is byte-identical.
  EXPECT_THAT(s, HasSubstr("#SBATCH --job-name=train\n"));
  EXPECT_TRUE(s.ends_with("\nsrun python train.py   # uses 4 GPUs\n"));
  EXPECT_THAT(t.job->partitions, ElementsAre("h100-cluster"));
  EXPECT_EQ(t.job->changes.size(), 3u);
}

TEST_F(TranslatorTest, TranslatedScriptReadsBackAsTheBetaRequest) {
  auto t = To("beta", Parse({"job.sh"}, kJob));
  ASSERT_TRUE(t.ok());
  job::Request again = Parse(t.job->args, t.job->script);
  ASSERT_EQ(again.gpus.size(), 1u);
  EXPECT_EQ(again.gpus[0].type, "nvidia_h100_80gb_hbm3");
  EXPECT_EQ(again.gpus[0].count, 4);
  EXPECT_THAT(again.partitions, ElementsAre("h100-cluster"));
  EXPECT_EQ(again.time_limit->minutes, 120);
  EXPECT_FALSE(again.sky.wanted());
  EXPECT_EQ(again.modules[0].word, "cuda/12.4");
}

TEST_F(TranslatorTest, GammaHasNoH100) {
  auto t = To("gamma", Parse({"job.sh"}, kJob));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.reasons, ElementsAre("gamma has no H100 GPUs (it has A100 (up to 8 per node))",
                                     "module cuda/12.1 (job.sh:7): no counterpart (no module of "
                                     "that name) on gamma"));
}

TEST_F(TranslatorTest, A100JobOnGammaWithModuleRename) {
  config::ClusterSettings gamma;
  gamma.modules.renames["cuda"] = "CUDA";
  auto t = To("gamma",
              Parse({"--gpus-per-node=a100:2", "job.sh"},
                    "#!/bin/bash\n#SBATCH -t 30\nmodule load cuda/12.1\nnvidia-smi\n"),
              gamma);
  ASSERT_TRUE(t.ok()) << testing::PrintToString(t.reasons);
  EXPECT_THAT(t.job->args, ElementsAre("--gpus-per-node=A100:2"));
  EXPECT_THAT(t.job->script, HasSubstr("\nmodule load CUDA/12.2\n"));
  EXPECT_EQ(t.job->partition_note, "batch (the default)");
}

TEST_F(TranslatorTest, TooManyGpusPerNode) {
  auto t = To("beta", Parse({"--gres=gpu:h100:8", "job.sh"}, "#!/bin/sh\ntrue\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.reasons[0], HasSubstr("h100-cluster: needs 8 nvidia_h100_80gb_hbm3 GPUs per node "
                                      "but its nodes have at most 4 (--gres)"));
}

TEST_F(TranslatorTest, TimeAboveEveryMaxTime) {
  auto t = To("beta", Parse({"-t", "2-00:00:00", "job.sh"}, "#!/bin/sh\ntrue\n"));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.reasons[0],
            "no partition of beta can run it (h100-cluster: time limit 2-00:00:00 exceeds MaxTime "
            "1-00:00:00 (--time); debug: time limit 2-00:00:00 exceeds MaxTime 30:00 (--time))");
}

TEST_F(TranslatorTest, EveryReasonAPartitionHasIsSaidAtOnce) {
  // Fixing the time limit alone would not do: the GPUs per node, the
  // memory, the feature and the node count fail too, and each is said,
  // naming its option, before the user submits again.
  auto t = To("beta", Parse({"-t", "2-00:00:00", "--nodes=3", "--gres=gpu:h100:8", "--mem=600G",
                             "-C", "ib", "job.sh"},
                            "#!/bin/sh\ntrue\n"));
  ASSERT_FALSE(t.ok());
  ASSERT_EQ(t.reasons.size(), 1u);
  const std::string& why = t.reasons[0];
  const std::string h100 = why.substr(0, why.find("; debug:"));
  EXPECT_THAT(h100, HasSubstr("time limit 2-00:00:00 exceeds MaxTime 1-00:00:00 (--time)"));
  EXPECT_THAT(h100, HasSubstr("needs 8 nvidia_h100_80gb_hbm3 GPUs per node but its nodes have at "
                              "most 4 (--gres)"));
  EXPECT_THAT(h100, HasSubstr("needs 614400 MB of memory per node but its nodes have at most "
                              "512000 (--mem)"));
  EXPECT_THAT(h100, HasSubstr("no node has the features ib (--constraint)"));
  EXPECT_THAT(h100, HasSubstr("needs 3 nodes but it has 2 (--nodes)"));
  EXPECT_THAT(why, HasSubstr("; debug: time limit 2-00:00:00 exceeds MaxTime 30:00 (--time), "));
}

TEST_F(TranslatorTest, DefaultPartitionThatCannotRunItIsReplaced) {
  // alpha's default partition (gpu) has no node with the feature "cpu"; its
  // cpu partition has one: the partition is added, with the reason.
  auto t = To("alpha", Parse({"-C", "cpu", "job.sh"}, "#!/bin/sh\ntrue\n"));
  ASSERT_TRUE(t.ok()) << testing::PrintToString(t.reasons);
  EXPECT_THAT(t.job->partitions, ElementsAre("cpu"));
  EXPECT_EQ(t.job->partition_note,
            "cpu (chosen: the default partition gpu cannot run it (no node has the features cpu "
            "(--constraint)))");
  EXPECT_THAT(t.job->script, HasSubstr("#!/bin/sh\n# skyslurm: translated for cluster alpha\n"));
  EXPECT_THAT(t.job->script, HasSubstr("\n#SBATCH --partition=cpu\n"));
  // Regression: a --wrap job has no script for the #SBATCH line; the
  // partition goes on its command line (it ran in the default partition).
  auto wrap = To("alpha", Parse({"-C", "cpu", "--wrap", "true"}, ""));
  ASSERT_TRUE(wrap.ok()) << testing::PrintToString(wrap.reasons);
  EXPECT_THAT(wrap.job->args, ElementsAre("-C", "cpu", "--wrap", "true", "--partition=cpu"));
  // A default that fits is left alone: nothing added.
  auto b = To("beta", Parse({"-t", "20", "job.sh"}, "#!/bin/sh\ntrue\n"));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b.job->partition_note, "h100-cluster (the default)");
  EXPECT_EQ(b.job->script, "#!/bin/sh\ntrue\n");
  // Three nodes: no partition of alpha has them.
  EXPECT_FALSE(To("alpha", Parse({"-N", "3", "job.sh"}, "#!/bin/sh\ntrue\n")).ok());
}

TEST_F(TranslatorTest, HiddenPartitionsOnlyWhenNamed) {
  // gamma's 'urgent' (Hidden=YES, the preemptor over batch's nodes) is never
  // chosen for a job that does not name it.
  auto any = To("gamma", Parse({"job.sh"}, "#!/bin/sh\ntrue\n"));
  ASSERT_TRUE(any.ok());
  EXPECT_THAT(any.job->fitting_partitions, ElementsAre("batch"));
  auto named = To("gamma", Parse({"-p", "urgent", "job.sh"}, "#!/bin/sh\ntrue\n"));
  ASSERT_TRUE(named.ok()) << testing::PrintToString(named.reasons);
  EXPECT_THAT(named.job->fitting_partitions, ElementsAre("urgent"));
  EXPECT_EQ(named.job->partition_note, "urgent (as asked)");
}

TEST_F(TranslatorTest, PartitionMapFromTheConfiguration) {
  config::ClusterSettings beta;
  beta.partitions["gpu"] = "debug";
  auto t = To("beta", Parse({"-p", "gpu", "-t", "10", "job.sh"}, "#!/bin/sh\ntrue\n"), beta);
  ASSERT_TRUE(t.ok());
  EXPECT_THAT(t.job->args, ElementsAre("--partition=debug", "-t", "10"));
  EXPECT_EQ(t.job->partition_note, "debug (partition gpu is debug on beta (configuration))");
  // The mapped partition must fit too: 2 hours is too long for debug.
  auto chosen = To("beta", Parse({"-p", "gpu", "-t", "120", "job.sh"}, "#!/bin/sh\ntrue\n"), beta);
  ASSERT_TRUE(chosen.ok());
  EXPECT_THAT(chosen.job->partitions, ElementsAre("h100-cluster"));
  EXPECT_THAT(chosen.job->partition_note, HasSubstr("the configured gpu -> debug cannot run it"));
}

TEST_F(TranslatorTest, AccountsAndQosMappedNeverInvented) {
  config::ClusterSettings beta;
  beta.accounts["proj-a"] = "beta-proj-a";
  beta.qos["normal"] = "standard";
  auto t = To("beta", Parse({"-A", "proj-a", "--qos=normal", "job.sh"}, "#!/bin/sh\ntrue\n"), beta);
  ASSERT_TRUE(t.ok());
  EXPECT_THAT(t.job->args, ElementsAre("--account=beta-proj-a", "--qos=standard"));
  auto none = To("beta", Parse({"job.sh"}, "#!/bin/sh\ntrue\n"), beta);
  EXPECT_THAT(none.job->args, IsEmpty());
  auto unmapped = To("beta", Parse({"-A", "proj-b", "job.sh"}, "#!/bin/sh\ntrue\n"), beta);
  EXPECT_THAT(unmapped.job->args, ElementsAre("-A", "proj-b"));
}

TEST_F(TranslatorTest, AccountNotAllowedByThePartition) {
  cluster::Description d = Cluster("beta");
  for (auto& p : d.partitions) p.allow_accounts = {"physics"};
  config::ClusterSettings none;
  auto t = TranslateForSlurm(Parse({"-A", "chemistry", "job.sh"}, "#!/bin/sh\ntrue\n"), d,
                             {"alpha", &catalog_, &none});
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.reasons[0], HasSubstr("account chemistry is not allowed here"));
}

TEST_F(TranslatorTest, EnvironmentOptionsTravelAsArguments) {
  auto t = To("beta", Parse({"-t", "15", "job.sh"}, "#!/bin/sh\ntrue\n",
                            {{"SBATCH_GRES", "gpu:h100:2"}, {"SBATCH_JOB_NAME", "x y"}}));
  ASSERT_TRUE(t.ok());
  EXPECT_THAT(t.job->args,
              ElementsAre("--gres=gpu:nvidia_h100_80gb_hbm3:2", "--job-name=x y", "-t", "15"));
}

TEST_F(TranslatorTest, SkyOptionsAreRemovedEverywhere) {
  auto t = To("beta", Parse({"--sky-any-cluster=beta", "-HQ", "job.sh"},
                            "#!/bin/sh\n#SBATCH -N 1 --sky-managed\ntrue\n", {}));
  ASSERT_TRUE(t.ok());
  EXPECT_THAT(t.job->args, ElementsAre("-HQ"));
  EXPECT_THAT(t.job->script, HasSubstr("##SBATCH -N 1 --sky-managed\n#SBATCH -N 1\n"));
}

TEST_F(TranslatorTest, BundledOptionsAreSplitOnlyWhenOneChanges) {
  auto t = To("beta", Parse({"-HG", "h100:1", "job.sh"}, "#!/bin/sh\ntrue\n"));
  ASSERT_TRUE(t.ok());
  EXPECT_THAT(t.job->args, ElementsAre("--hold", "--gpus=nvidia_h100_80gb_hbm3:1"));
}

TEST_F(TranslatorTest, JobsThatCannotMove) {
  auto dep = To("beta", Parse({"--dependency=afterok:42", "job.sh"}, "#!/bin/sh\ntrue\n"));
  ASSERT_FALSE(dep.ok());
  EXPECT_EQ(dep.reasons[0], "--dependency=afterok:42 names job ids, which exist only on alpha");
  EXPECT_TRUE(To("alpha", Parse({"--dependency=afterok:42", "job.sh"}, "#!/bin/sh\ntrue\n")).ok());
  EXPECT_TRUE(To("beta", Parse({"--dependency=singleton", "job.sh"}, "#!/bin/sh\ntrue\n")).ok());
  // Slurm's own multi-cluster routing is refused at home too: alpha's
  // sbatch would send it to a cluster it shares no slurmdbd with.
  auto m = To("beta", Parse({"-M", "beta", "job.sh"}, "#!/bin/sh\ntrue\n"));
  EXPECT_FALSE(m.ok());
  auto home = To("alpha", Parse({"job.sh"}, "#!/bin/sh\n#SBATCH --clusters=beta\ntrue\n"));
  ASSERT_FALSE(home.ok());
  EXPECT_THAT(home.reasons[0], HasSubstr("--clusters=beta (job.sh:2) is Slurm's own"));
  // Naming the home itself, it goes nowhere else: no reason there.
  EXPECT_TRUE(To("alpha", Parse({"-M", "alpha", "job.sh"}, "#!/bin/sh\ntrue\n")).ok());
}

const char kHetJob[] =
    "#!/bin/bash\n"
    "#SBATCH --job-name=het --time=30:00\n"
    "#SBATCH --nodes=1 --ntasks=1\n"
    "#SBATCH hetjob\n"
    "#SBATCH --nodes=1 --gres=gpu:a100:2\n"
    "#SBATCH hetjob\n"
    "#SBATCH --nodes=1 --ntasks=2\n"
    "srun --het-group=0 hostname : --het-group=1 hostname\n";

TEST_F(TranslatorTest, AHeterogeneousJobGoesWhereEveryComponentFits) {
  // Component 1's A100s: alpha and beta have none, and say which component.
  auto alpha = To("alpha", Parse({"job.sh"}, kHetJob));
  ASSERT_FALSE(alpha.ok());
  EXPECT_THAT(alpha.reasons, ElementsAre("hetjob component 1: alpha has no A100 GPUs (it has h100 "
                                         "(up to 8 per node))"));
  auto beta = To("beta", Parse({"job.sh"}, kHetJob));
  ASSERT_FALSE(beta.ok());
  EXPECT_THAT(beta.reasons[0], HasSubstr("hetjob component 1: beta has no A100 GPUs"));
  // gamma: each component translated in its own lines, the job whole.
  auto gamma = To("gamma", Parse({"job.sh"}, kHetJob));
  ASSERT_TRUE(gamma.ok()) << testing::PrintToString(gamma.reasons);
  EXPECT_TRUE(gamma.job->heterogeneous);
  EXPECT_THAT(gamma.job->script,
              HasSubstr("#SBATCH hetjob\n##SBATCH --nodes=1 --gres=gpu:a100:2\n"
                        "#SBATCH --nodes=1 --gres=gpu:A100:2\n#SBATCH hetjob\n"));
  EXPECT_EQ(gamma.job->partition_note,
            "batch (the default); component 1: batch (the default); component 2: batch (the "
            "default)");
  EXPECT_THAT(gamma.job->fitting_partitions, IsEmpty());  // placed as a whole
}

TEST_F(TranslatorTest, AHeterogeneousComponentsPartitionGoesInItsOwnLines) {
  // alpha's default partition (gpu) has no node with the feature cpu: the
  // partition chosen for component 1 follows its hetjob line, component
  // 0's stays the default; a reason names the component that cannot fit.
  auto t = To("alpha", Parse({"job.sh"},
                             "#!/bin/sh\n#SBATCH -N1 --gres=gpu:h100:1\n"
                             "#SBATCH hetjob -C cpu\ntrue\n"));
  ASSERT_TRUE(t.ok()) << testing::PrintToString(t.reasons);
  EXPECT_THAT(t.job->script, HasSubstr("\n#SBATCH hetjob -C cpu\n#SBATCH --partition=cpu\ntrue\n"));
  EXPECT_THAT(t.job->partitions, IsEmpty());
  EXPECT_THAT(t.job->partition_note, HasSubstr("gpu (the default); component 1: cpu (chosen: "));
  auto none = To("alpha", Parse({"job.sh"},
                                "#!/bin/sh\n#SBATCH -N1\n#SBATCH hetjob\n"
                                "#SBATCH -N 4 -t 2-00:00:00\ntrue\n"));
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(none.reasons[0], HasSubstr("hetjob component 1: no partition of alpha can run it "
                                         "(gpu: time limit 2-00:00:00 exceeds MaxTime"));
  // Written with ':' on the command line, the components would reach
  // sbatch as one job (its options are rebuilt without the ':' words):
  // refused everywhere, saying how to write it.
  auto cli = To("alpha", Parse({"-N1", ":", "-C", "cpu", "job.sh"}, "#!/bin/sh\ntrue\n"));
  ASSERT_FALSE(cli.ok());
  EXPECT_THAT(cli.reasons[0], HasSubstr("written with ':' on the command line"));
  // Without ':', the command line is every component's, as sbatch reads
  // it again for each: -p cpu places component 1 too.
  auto everyone = To("alpha", Parse({"-p", "cpu", "job.sh"},
                                    "#!/bin/sh\n#SBATCH -N1\n#SBATCH hetjob\n#SBATCH -N1\ntrue\n"));
  ASSERT_TRUE(everyone.ok()) << testing::PrintToString(everyone.reasons);
  EXPECT_EQ(everyone.job->partition_note, "cpu (as asked); component 1: cpu (as asked)");
  EXPECT_THAT(everyone.job->args, ElementsAre("-p", "cpu"));
  // The environment's partition is every component's too: changed once.
  auto env =
      To("beta", Parse({"job.sh"}, "#!/bin/sh\n#SBATCH -N1\n#SBATCH hetjob\n#SBATCH -N1\ntrue\n",
                       {{"SBATCH_PARTITION", "gpu"}}));
  ASSERT_TRUE(env.ok()) << testing::PrintToString(env.reasons);
  int changes = 0;
  for (const auto& c : env.job->changes) changes += c.where == "SBATCH_PARTITION" ? 1 : 0;
  EXPECT_EQ(changes, 1);
  EXPECT_THAT(env.job->args, ElementsAre("--partition=h100-cluster"));
}

// Once skyslurmd answered the sky jobs a dependency named, every occurrence
// is sent as what is left, or left out: an earlier one must not become the
// one sbatch reads.
TEST_F(TranslatorTest, AResolvedDependencySendsWhatIsLeftInEveryForm) {
  const std::string sky = "sky-20261205-101500-a1b2c3";
  job::Request r = Parse({"--dependency=afterok:" + sky, "job.sh"},
                         "#!/bin/sh\n#SBATCH --dependency=afterany:" + sky + " -N 1\ntrue\n",
                         {{"SBATCH_DEPENDENCY", "singleton"}});
  r.dependency_resolved = true;
  r.dependency.reset();  // nothing left
  auto gone = To("beta", r);
  ASSERT_TRUE(gone.ok()) << testing::PrintToString(gone.reasons);
  EXPECT_THAT(gone.job->args, IsEmpty());
  EXPECT_THAT(gone.job->script,
              HasSubstr("##SBATCH --dependency=afterany:" + sky + " -N 1\n#SBATCH -N 1\ntrue\n"));
  // Slurm's own ids left: they keep the job home, where they are sent.
  r.dependency = "afterok:42";
  EXPECT_FALSE(To("beta", r).ok());
  auto home = To("alpha", r);
  ASSERT_TRUE(home.ok());
  EXPECT_THAT(home.job->args, ElementsAre("--dependency=afterok:42"));
  EXPECT_THAT(home.job->script, HasSubstr("#SBATCH -N 1\n"));
  EXPECT_THAT(home.job->script, Not(HasSubstr("\n#SBATCH --dependency")));
}

TEST_F(TranslatorTest, JobsThatMoveWithACaveat) {
  auto t = To("beta", Parse({"--array=1-4", "--wait", "--hold", "--export=PATH,FOO", "job.sh"},
                            "#!/bin/sh\ntrue\n"));
  ASSERT_TRUE(t.ok());
  EXPECT_THAT(t.job->caveats,
              ElementsAre("--wait: waiting for the job on beta",
                          "--hold: the job is held on beta; release it there (skyslurm or scontrol "
                          "release)",
                          "--export=PATH,FOO: the variables named travel with their values from "
                          "where you submit"));
}

// An index at or above a cluster's MaxArraySize: its slurmctld would refuse
// the array ("Invalid job array specification"); said here with the index,
// the limit, and where the option came from.
TEST_F(TranslatorTest, AnArrayIndexAtOrAboveTheClustersMaxArraySizeCannotRunThere) {
  cluster::Description beta = Cluster("beta");
  beta.max_array_size = 1001;
  const TranslateContext ctx{"alpha", &catalog_, &settings_, "", &home_modules_};
  Translation t = TranslateForSlurm(
      Parse({"job.sh"}, "#!/bin/sh\n#SBATCH --array=0-1000:500,1001%4\ntrue\n"), beta, ctx);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.reasons[0],
            "--array=0-1000:500,1001%4 (job.sh:2): index 1001 is at or above beta's MaxArraySize "
            "(1001)");
  EXPECT_TRUE(
      TranslateForSlurm(Parse({"--array=0-1000", "job.sh"}, "#!/bin/sh\ntrue\n"), beta, ctx).ok());
  // The home cluster's limit holds as well.
  cluster::Description alpha = Cluster("alpha");
  alpha.max_array_size = 10;
  EXPECT_FALSE(
      TranslateForSlurm(Parse({"-a", "10", "job.sh"}, "#!/bin/sh\ntrue\n"), alpha, ctx).ok());
  // Not known (a description file without it): left to slurmctld.
  beta.max_array_size.reset();
  EXPECT_TRUE(
      TranslateForSlurm(Parse({"--array=5000", "job.sh"}, "#!/bin/sh\ntrue\n"), beta, ctx).ok());
}

TEST_F(TranslatorTest, ConstraintFeatureRespelled) {
  cluster::Description d = Cluster("gamma");
  for (auto& n : d.nodes) n.features = {"gpu", "A100"};
  d.BuildIndex();  // the nodes changed
  config::ClusterSettings none;
  auto t =
      TranslateForSlurm(Parse({"-C", "a100", "--gres=gpu:a100:1", "job.sh"}, "#!/bin/sh\ntrue\n"),
                        d, {"alpha", &catalog_, &none});
  ASSERT_TRUE(t.ok()) << testing::PrintToString(t.reasons);
  EXPECT_THAT(t.job->args, ElementsAre("--constraint=A100", "--gres=gpu:A100:1"));
  auto missing = To("beta", Parse({"-C", "ib", "job.sh"}, "#!/bin/sh\ntrue\n"));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.reasons[0], HasSubstr("no node has the features ib"));
}

TEST_F(TranslatorTest, UnknownModulesAreANoteNotAFailure) {
  cluster::Description d = Cluster("beta");
  d.modules_known = false;
  config::ClusterSettings none;
  auto t = TranslateForSlurm(Parse({"job.sh"}, "#!/bin/sh\nmodule load whatever/1\n"), d,
                             {"alpha", &catalog_, &none});
  ASSERT_TRUE(t.ok());
  EXPECT_THAT(t.job->caveats[0], HasSubstr("modules of beta are not known"));
}

TEST_F(TranslatorTest, QuotesWhatNeedsQuotingInRewrittenDirectives) {
  auto t =
      To("beta", Parse({"job.sh"}, "#!/bin/sh\n#SBATCH -J \"my job\" --gres=gpu:h100:1\ntrue\n"));
  ASSERT_TRUE(t.ok());
  EXPECT_THAT(t.job->script,
              HasSubstr("\n#SBATCH -J \"my job\" --gres=gpu:nvidia_h100_80gb_hbm3:1\n"));
  job::Request again = Parse({"job.sh"}, t.job->script);
  EXPECT_EQ(*again.job_name, "my job");
  EXPECT_EQ(QuoteDirectiveWord("a\"b\\c#d"), "\"a\\\"b\\\\c#d\"");
}

TEST_F(TranslatorTest, ContainerOptionsKeptByteForByte) {
  const std::string script =
      "#!/bin/bash\n#SBATCH --container-image=\"nvcr.io#nvidia/pytorch:24.01-py3\"\n"
      "#SBATCH --gpus-per-node=h100:4\nsrun python x.py\n";
  auto t = To("beta", Parse({"job.sh"}, script));
  ASSERT_TRUE(t.ok());
  EXPECT_THAT(t.job->script,
              HasSubstr("\n#SBATCH --container-image=\"nvcr.io#nvidia/pytorch:24.01-py3\"\n"));
  EXPECT_THAT(t.job->script, HasSubstr("\n#SBATCH --gpus-per-node=nvidia_h100_80gb_hbm3:4\n"));
}

// Regression (issue 11): `module load python` and `module load
// anaconda/2023-Mar/3`, which the home does not have either, made every
// cluster, home included, refuse a script the real sbatch submits.
TEST_F(TranslatorTest, AModuleTheHomeLacksTooIsKeptAsWrittenEverywhere) {
  const std::string script =
      "#!/bin/bash\n#SBATCH --gres=gpu:1\nmodule load python\nmodule load anaconda/2023-Mar/3\n"
      "module load cuda/12.1\npython x.py\n";
  for (const char* cluster : {"alpha", "beta"}) {
    auto t = To(cluster, Parse({"job.sh"}, script));
    ASSERT_TRUE(t.ok()) << cluster << ": " << testing::PrintToString(t.reasons);
    EXPECT_THAT(t.job->script,
                HasSubstr("\nmodule load python\nmodule load anaconda/2023-Mar/3\n"));
    EXPECT_THAT(t.job->caveats, Contains(HasSubstr("job.sh:3: module python: ")));
    EXPECT_THAT(t.job->caveats, Contains(HasSubstr("job.sh:4: module anaconda/2023-Mar/3: ")));
  }
  EXPECT_THAT(To("alpha", Parse({"job.sh"}, script)).job->caveats,
              Contains("job.sh:3: module python: alpha (home) does not list it, so it is left as "
                       "written, as sbatch submits it"));
  EXPECT_THAT(To("beta", Parse({"job.sh"}, script)).job->caveats,
              Contains("job.sh:3: module python: alpha (home) has no module python either, so it "
                       "is left as written"));
  // cuda/12.1 is at home: still translated for beta.
  auto beta = To("beta", Parse({"job.sh"}, script));
  EXPECT_THAT(beta.job->script, HasSubstr("\nmodule load cuda/12.4\n"));
}

// A module the home has and a peer has no counterpart of still rules that
// peer out; with the home's modules unknown (home unreachable), every module
// is taken for one the home has: translated where there is a counterpart.
TEST_F(TranslatorTest, OnlyAModuleTheHomeHasCanRuleAPeerOut) {
  const std::string script = "#!/bin/bash\nmodule load cuda/12.1\ntrue\n";
  auto gamma = To("gamma", Parse({"job.sh"}, script));
  ASSERT_FALSE(gamma.ok());
  EXPECT_THAT(gamma.reasons, ElementsAre(HasSubstr("module cuda/12.1 (job.sh:2): no counterpart")));
  config::ClusterSettings none;
  EXPECT_FALSE(
      TranslateForSlurm(Parse({"job.sh"}, script), Cluster("gamma"), {"alpha", &catalog_, &none})
          .ok());
  // Regression (review): with the home unknown, translation did not happen
  // at all, so a failed-over job met `module load cuda/12.1` where only 12.4 is.
  auto beta =
      TranslateForSlurm(Parse({"job.sh"}, script), Cluster("beta"), {"alpha", &catalog_, &none});
  ASSERT_TRUE(beta.ok());
  EXPECT_THAT(beta.job->script, HasSubstr("\nmodule load cuda/12.4\n"));
}

// Each cluster's sbatch --help says which plugin options it takes.
TEST_F(TranslatorTest, PluginOptionsTravelOnlyWhereSbatchListsThem) {
  const std::string script = "#!/bin/bash\n#SBATCH --container-mounts=/data:/data\ntrue\n";
  cluster::Description d = Cluster("beta");
  d.plugin_options_known = true;
  auto refused = TranslateForSlurm(Parse({"job.sh"}, script), d, {"alpha", &catalog_, &settings_});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.reasons, ElementsAre("job.sh:2: sbatch on beta does not recognise "
                                           "--container-mounts (\"unrecognized option\": no SPANK "
                                           "plugin there registers it)"));
  d.plugin_options = {"container-image", "container-mounts"};
  auto travels = TranslateForSlurm(Parse({"job.sh"}, script), d, {"alpha", &catalog_, &settings_});
  ASSERT_TRUE(travels.ok());
  EXPECT_THAT(travels.job->script, HasSubstr("\n#SBATCH --container-mounts=/data:/data\n"));
  // getopt's unique prefix, as sbatch takes it.
  EXPECT_TRUE(
      TranslateForSlurm(Parse({"job.sh"}, "#!/bin/bash\n#SBATCH --container-m=/d:/d\ntrue\n"), d,
                        {"alpha", &catalog_, &settings_})
          .ok());
  // Another Slurm release's sbatch may know the option itself: a note, no refusal.
  d.plugin_options.clear();
  d.slurm_version = "24.05.1";
  auto newer = TranslateForSlurm(Parse({"job.sh"}, script), d, {"alpha", &catalog_, &settings_});
  ASSERT_TRUE(newer.ok());
  EXPECT_THAT(newer.job->caveats, Contains(HasSubstr("beta runs 24.05.1, whose sbatch decides")));
}

// A step the script starts itself with a plugin's option fails at once
// where srun lacks the option: that cluster is no place for the job.
TEST_F(TranslatorTest, TheScriptsOwnStepsNeedTheirPluginOptionsThere) {
  const std::string script =
      "#!/bin/bash\n#SBATCH -N1\nsrun --container-image=nvcr.io#nvidia/pytorch:24.01-py3 "
      "python train.py\n";
  cluster::Description d = Cluster("beta");
  auto unknown = TranslateForSlurm(Parse({"job.sh"}, script), d, {"alpha", &catalog_, &settings_});
  ASSERT_TRUE(unknown.ok());  // a description file: srun's options are not known
  EXPECT_THAT(unknown.job->caveats, Contains(HasSubstr("job.sh:3: srun --container-image is no "
                                                       "option of Slurm's")));
  d.plugin_options_known = true;
  d.srun_plugin_options_known = true;
  auto refused = TranslateForSlurm(Parse({"job.sh"}, script), d, {"alpha", &catalog_, &settings_});
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.reasons,
              ElementsAre("job.sh:3: the script's step 'srun --container-image' would fail at "
                          "once on beta: its srun does not recognise --container-image (no SPANK "
                          "plugin there registers it)"));
  // Listed by srun only (a plugin that registers it for steps alone).
  d.srun_plugin_options = {"container-image"};
  EXPECT_TRUE(
      TranslateForSlurm(Parse({"job.sh"}, script), d, {"alpha", &catalog_, &settings_}).ok());
  d.srun_plugin_options.clear();
  d.plugin_options = {"container-image", "container-mounts"};
  EXPECT_TRUE(
      TranslateForSlurm(Parse({"job.sh"}, script), d, {"alpha", &catalog_, &settings_}).ok());
}

// Regression (issue 11): -w with a node no cluster has was "can run it"
// everywhere; every cluster now says which node it lacks.
TEST_F(TranslatorTest, NodesNamedByNodelistMustExistThere) {
  for (const char* cluster : {"alpha", "beta", "gamma"}) {
    auto t = To(cluster, Parse({"-w", "somenode", "job.sh"}, "#!/bin/sh\ntrue\n"));
    ASSERT_FALSE(t.ok()) << cluster;
    EXPECT_THAT(t.reasons, Contains(HasSubstr(std::string("--nodelist=somenode: ") + cluster +
                                              " has no node somenode")));
  }
  EXPECT_TRUE(To("alpha", Parse({"-w", "alpha-n[1-2]", "job.sh"}, "#!/bin/sh\ntrue\n")).ok());
  EXPECT_TRUE(To("alpha", Parse({"-w", "./hosts.txt", "job.sh"}, "#!/bin/sh\ntrue\n")).ok());
}

// Paths under a named root of the home's filesystems, on a peer.
class TranslatorPathsTest : public TranslatorTest {
 protected:
  Translation ToBeta(const job::Request& r, bool rewrite = false) {
    description_ = Cluster("beta");
    TranslateContext ctx{"alpha", &catalog_, &settings_, "", &home_modules_};
    ctx.home_roots = &alpha_;
    ctx.target_roots = &beta_;
    ctx.rewrite_script_paths = rewrite;
    return TranslateForSlurm(r, description_, ctx);
  }
  const PathRoots alpha_ =
      ExpandRoots({{"home", "/home/%u"}, {"scratch", "/scratch/%u"}, {"project", "/proj"}}, "ana");
  const PathRoots beta_ =
      ExpandRoots({{"home", "/home/%u"}, {"scratch", "/lustre/scratch/%u"}}, "ana");
};

const char kPathsJob[] =
    "#!/bin/bash\n"
    "#SBATCH -o /scratch/ana/logs/%j.out\n"
    "#SBATCH --gres=gpu:h100:1\n"
    "cd /scratch/ana/run\n"
    "python3 train.py --data /proj/data/train.txt\n";

TEST_F(TranslatorPathsTest, OptionPathsAreSpelledForThePeerAndSayWhy) {
  auto t = ToBeta(Parse({"--chdir=/scratch/ana/run", "-e", "/opt/logs/err.txt",
                         "--export=ALL,DATA=/scratch/ana/d:/usr/share,N=3", "job.sh"},
                        kPathsJob));
  ASSERT_TRUE(t.ok()) << testing::PrintToString(t.reasons);
  EXPECT_THAT(t.job->args, Contains("--chdir=/lustre/scratch/ana/run"));
  EXPECT_THAT(t.job->args, Contains("--export=ALL,DATA=/lustre/scratch/ana/d:/usr/share,N=3"));
  EXPECT_EQ(t.job->export_env, "ALL,DATA=/lustre/scratch/ana/d:/usr/share,N=3");
  EXPECT_THAT(t.job->script, HasSubstr("\n#SBATCH --output=/lustre/scratch/ana/logs/%j.out\n"));
  bool said = false;
  for (const auto& c : t.job->changes) {
    if (c.what == "--output=/scratch/ana/logs/%j.out -> --output=/lustre/scratch/ana/logs/%j.out") {
      EXPECT_EQ(c.where, "job.sh:2");
      EXPECT_EQ(c.why, "alpha's scratch root /scratch/ana is /lustre/scratch/ana on beta");
      said = true;
    }
  }
  EXPECT_TRUE(said) << testing::PrintToString(t.job->caveats);
  // Outside every root: the user is told, the path kept.
  EXPECT_THAT(t.job->args, Contains("/opt/logs/err.txt"));
  EXPECT_THAT(t.job->caveats,
              Contains(HasSubstr("command line: --error /opt/logs/err.txt is outside every named "
                                 "root of alpha (home /home/ana, project /proj, scratch "
                                 "/scratch/ana): it must exist on beta as written")));
  // The script's own paths: caveats, the script unchanged.
  EXPECT_THAT(t.job->script, HasSubstr("\ncd /scratch/ana/run\n"));
  EXPECT_THAT(t.job->caveats, Contains("job.sh:4: the script names /scratch/ana/run, which is "
                                       "/lustre/scratch/ana/run on beta; it runs as written "
                                       "(paths.rewrite_script: true rewrites it)"));
  EXPECT_THAT(t.job->caveats, Contains(HasSubstr("job.sh:5: the script's path /proj/data/train.txt "
                                                 "lies under alpha's project root, which beta has "
                                                 "none of")));
}

TEST_F(TranslatorPathsTest, TheScriptIsRewrittenWhenAsked) {
  auto t = ToBeta(Parse({"job.sh"}, kPathsJob), true);
  ASSERT_TRUE(t.ok()) << testing::PrintToString(t.reasons);
  EXPECT_THAT(t.job->script, HasSubstr("\ncd /lustre/scratch/ana/run\n"));
  EXPECT_THAT(t.job->script, HasSubstr("--data /proj/data/train.txt\n"));  // no counterpart
  bool said = false;
  for (const auto& c : t.job->changes) {
    said =
        said || (c.where == "job.sh:4" && c.what == "/scratch/ana/run -> /lustre/scratch/ana/run");
  }
  EXPECT_TRUE(said);
}

TEST_F(TranslatorPathsTest, HomeAndClustersWithoutRootsKeepEveryPath) {
  auto home = To("alpha", Parse({"--chdir=/scratch/ana/run", "job.sh"}, kPathsJob));
  ASSERT_TRUE(home.ok());
  EXPECT_THAT(home.job->args, Contains("--chdir=/scratch/ana/run"));
  auto unconfigured = To("beta", Parse({"--chdir=/scratch/ana/run", "job.sh"}, kPathsJob));
  ASSERT_TRUE(unconfigured.ok());
  EXPECT_THAT(unconfigured.job->args, Contains("--chdir=/scratch/ana/run"));
  EXPECT_THAT(unconfigured.job->caveats, Not(Contains(HasSubstr("named root"))));
}

}  // namespace
}  // namespace skyslurm::translate
