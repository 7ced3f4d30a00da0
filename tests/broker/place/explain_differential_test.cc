// explain's verdicts against the clusters' own: for every script, each
// cluster `skyslurm explain` calls able to run it must be one whose own
// `sbatch --test-only` takes the job as translated for it (in one of the
// partitions translation found fitting), and whose `srun --help` lists every
// plugin option the script's own steps use. Run over generated scripts
// (tests/support/job_scripts.h: hetjob layouts, plugin options in steps,
// pyxis forms, mixed CPU and memory options) and the project's own
// fixtures (tests/data/scripts). CI runs a sample; more with
// SKYSLURM_EXPLAIN_DIFFERENTIAL_PER_KIND=N (and _SEED).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "broker/backend/slurm/slurm_translator.h"
#include "broker/cluster/description.h"
#include "broker/job/option_table.h"
#include "broker/job/request.h"
#include "broker/util/strings.h"
#include "tests/support/job_scripts.h"
#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

// "Can run it: alpha, gamma. Cannot: beta." -> {alpha, gamma}.
std::vector<std::string> CanRunIt(const std::string& out) {
  const auto at = out.rfind("\nCan run it: ");
  if (at == std::string::npos) return {};
  const auto start = at + 13;
  const std::string list = out.substr(start, out.find(". Cannot:", start) - start);
  if (list == "none") return {};
  std::vector<std::string> names;
  for (auto& n : SplitList(list)) names.push_back(std::string(Trim(n)));
  return names;
}

class ExplainDifferentialTest : public TestbedTest {
 protected:
  void SetUp() override {
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    std::ofstream(tmp_.File("skyslurm.yaml")) << LocalClustersConfig(tb_);
    gamma_settings_.modules.renames["cuda"] = "CUDA";
    for (const char* c : kClusters) {
      LocalCommandRunner runner;
      auto d = cluster::Describe(
          {c,
           &runner,
           {{"SLURM_CONF", tb_.SlurmConf(c)}, {"MODULEPATH", tb_.dir + "/modules/" + c}}});
      ASSERT_TRUE(d.ok()) << d.status().message();
      live_[c] = *d;
      srun_options_[c] = StepOptionsOf(c);
    }
  }

  std::set<std::string> StepOptionsOf(const std::string& cluster) {
    CommandOutput help = RunOn(tb_, cluster, {"srun", "--help"});
    std::set<std::string> names;
    for (const auto& o : job::ParseSpankOptionsFromHelp(help.out + help.err)) names.insert(o.name);
    return names;
  }

  // Why `cluster`'s own commands would not run the script ("" when they
  // would): its sbatch --test-only refuses every fitting partition, or its
  // srun lacks a step's plugin option.
  std::string Refusal(const std::string& cluster, const std::string& name,
                      const std::string& text) {
    job::RequestInput in;
    in.args = {name};
    in.script_text = text;
    auto request = job::ParseRequest(in);
    if (!request.ok()) return "skyslurm cannot parse it: " + request.status().message();
    for (const auto& o : request->step_plugin_options) {
      if (!srun_options_[cluster].contains(o.name)) {
        return fmt::format("line {}: {}'s srun does not list --{}", o.line, cluster, o.name);
      }
    }
    catalog::AcceleratorCatalog catalog;
    const config::ClusterSettings& settings =
        cluster == "gamma" ? gamma_settings_ : plain_settings_;
    translate::TranslateContext ctx{"alpha", &catalog, &settings, "", &live_["alpha"].modules};
    translate::Translation t = translate::TranslateForSlurm(*request, live_[cluster], ctx);
    if (!t.ok()) return "its translation refuses it: " + Join(t.reasons, "; ");
    std::vector<std::string> partitions = {""};
    partitions.insert(partitions.end(), t.job->fitting_partitions.begin(),
                      t.job->fitting_partitions.end());
    std::string said;
    for (const std::string& p : partitions) {
      ctx.partition = p;
      translate::Translation each = translate::TranslateForSlurm(*request, live_[cluster], ctx);
      if (!each.ok()) continue;
      Command test;
      test.argv = {"sbatch", "--test-only"};
      test.argv.insert(test.argv.end(), each.job->args.begin(), each.job->args.end());
      test.stdin_data = each.job->script;
      test.env_set = {{"SLURM_CONF", tb_.SlurmConf(cluster)}};
      test.cwd = tmp_.path();
      CommandOutput out = Exec(test);
      if (out.success()) return "";
      said = Trim(out.err + out.out);
    }
    return fmt::format("its sbatch --test-only refuses it: {}", said);
  }

  static std::string Join(const std::vector<std::string>& v, std::string_view sep) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : std::string(sep)) + x;
    return out;
  }

  struct Tally {
    int scripts = 0, can = 0, cannot = 0;
  };

  // explain on the script, then each cluster it calls able asked itself.
  void Check(const std::string& kind, const std::string& name, const std::string& text) {
    std::ofstream(tmp_.File(name)) << text;
    CommandOutput out = Exec(ExplainCommand(tmp_.File("skyslurm.yaml"), tmp_.path(), {name}));
    Tally& t = tally_[kind];
    ++t.scripts;
    if (out.exit_code == 2) {
      divergences_.push_back(fmt::format("{}: explain refused the script: {}", name, out.err));
      return;
    }
    const std::vector<std::string> can = CanRunIt(out.out);
    EXPECT_EQ(out.exit_code, can.empty() ? 1 : 0) << name << "\n" << out.out;
    t.can += static_cast<int>(can.size());
    t.cannot += static_cast<int>(std::size(kClusters) - can.size());
    for (const std::string& cluster : can) {
      const std::string why = Refusal(cluster, name, text);
      if (!why.empty()) {
        divergences_.push_back(
            fmt::format("{}: explain says {} can run it, but {}\n{}", name, cluster, why, text));
      }
    }
  }

  TempDir tmp_;
  std::map<std::string, cluster::Description> live_;
  std::map<std::string, std::set<std::string>> srun_options_;
  config::ClusterSettings plain_settings_, gamma_settings_;
  std::map<std::string, Tally> tally_;
  std::vector<std::string> divergences_;
};

TEST_F(ExplainDifferentialTest, EveryClusterExplainCallsAbleTakesTheJobItself) {
  const auto seed = static_cast<std::uint32_t>(EnvInt("SKYSLURM_EXPLAIN_DIFFERENTIAL_SEED", 5));
  const int per_kind = EnvInt("SKYSLURM_EXPLAIN_DIFFERENTIAL_PER_KIND", 25);
  for (const JobScript& s : GenerateJobScripts(seed, per_kind)) Check(s.kind, s.name, s.text);
  for (const auto& entry : std::filesystem::directory_iterator(std::string(SKYSLURM_SOURCE_DIR) +
                                                               "/tests/data/scripts")) {
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    Check("fixture", entry.path().filename().string(), text);
  }
  std::string table =
      "| kind | scripts | verdicts 'can' | verdicts 'cannot' |\n|---|---|---|---|\n";
  for (const auto& [kind, t] : tally_) {
    table += fmt::format("| {} | {} | {} | {} |\n", kind, t.scripts, t.can, t.cannot);
    // Neither verdict may be missing: a check that only ever sees one
    // cannot fail where it matters.
    if (kind != "fixture") {
      EXPECT_GT(t.can, 0) << kind;
      EXPECT_GT(t.cannot, 0) << kind;
    }
  }
  std::printf("seed %u, %d per kind\n%s", seed, per_kind, table.c_str());
  EXPECT_TRUE(divergences_.empty()) << Join(divergences_, "\n");
}

}  // namespace
}  // namespace skyslurm::testing
