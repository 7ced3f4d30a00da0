#include "broker/job/option_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace skyslurm::job {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(OptionTableTest, ExactLongNames) {
  OptionTable sbatch(Tool::kSbatch);
  ASSERT_NE(sbatch.Find("gres"), nullptr);
  EXPECT_EQ(sbatch.Find("gres")->arg, Arg::kRequired);
  EXPECT_EQ(sbatch.Find("gres")->id, Opt::kGres);
  EXPECT_EQ(sbatch.Find("wrap")->id, Opt::kWrap);
  EXPECT_EQ(sbatch.Find("nice")->arg, Arg::kOptional);
  EXPECT_EQ(sbatch.Find("hold")->arg, Arg::kNone);
  EXPECT_EQ(sbatch.Find("no-such-option"), nullptr);
}

TEST(OptionTableTest, EachToolHasItsOwnOptions) {
  EXPECT_NE(OptionTable(Tool::kSbatch).Find("array"), nullptr);
  EXPECT_EQ(OptionTable(Tool::kSrun).Find("array"), nullptr);
  EXPECT_EQ(OptionTable(Tool::kSbatch).Find("pty"), nullptr);
  EXPECT_NE(OptionTable(Tool::kSrun).Find("pty"), nullptr);
  EXPECT_NE(OptionTable(Tool::kSalloc).Find("no-shell"), nullptr);
  // --wait is a flag for sbatch (-W) and takes seconds for srun.
  EXPECT_EQ(OptionTable(Tool::kSbatch).Find("wait")->arg, Arg::kNone);
  EXPECT_EQ(OptionTable(Tool::kSrun).Find("wait")->arg, Arg::kRequired);
  // -K is --kill-command for salloc and --kill-on-bad-exit for srun.
  EXPECT_EQ(OptionTable(Tool::kSalloc).FindShort('K')->name, "kill-command");
  EXPECT_EQ(OptionTable(Tool::kSrun).FindShort('K')->name, "kill-on-bad-exit");
  EXPECT_EQ(OptionTable(Tool::kSbatch).FindShort('K'), nullptr);
}

TEST(OptionTableTest, ShortOptions) {
  OptionTable sbatch(Tool::kSbatch);
  EXPECT_EQ(sbatch.FindShort('N')->name, "nodes");
  EXPECT_EQ(sbatch.FindShort('G')->name, "gpus");
  EXPECT_EQ(sbatch.FindShort('k')->arg, Arg::kOptional);
  EXPECT_EQ(sbatch.FindShort('Z'), nullptr);
  EXPECT_EQ(sbatch.FindShort(0), nullptr);
}

TEST(OptionTableTest, UnambiguousPrefixesMatchAsGetoptLongDoes) {
  OptionTable sbatch(Tool::kSbatch);
  EXPECT_EQ(sbatch.FindLong("part").spec->name, "partition");
  EXPECT_EQ(sbatch.FindLong("gpus").spec->name, "gpus");  // exact beats prefix
  EXPECT_EQ(sbatch.FindLong("mem").spec->name, "mem");
  auto ambiguous = sbatch.FindLong("ntasks-per");
  EXPECT_EQ(ambiguous.spec, nullptr);
  EXPECT_GE(ambiguous.ambiguous.size(), 3u);
  EXPECT_EQ(sbatch.FindLong("zzz").spec, nullptr);
  EXPECT_THAT(sbatch.FindLong("zzz").ambiguous, IsEmpty());
}

TEST(OptionTableTest, AliasesOfOneOptionAreNotAmbiguous) {
  OptionTable srun(Tool::kSrun);
  // cpu-bind and cpu_bind are one option, so "cpu" is ambiguous only with
  // cpus-per-task/cpus-per-gpu/cpu-freq; "cpu-b" names cpu-bind.
  EXPECT_EQ(srun.FindLong("cpu-b").spec->name, "cpu-bind");
}

TEST(OptionTableTest, SkyOptionsAreKnownToEveryTool) {
  for (Tool tool : {Tool::kSbatch, Tool::kSalloc, Tool::kSrun}) {
    OptionTable table(tool);
    EXPECT_EQ(table.Find("sky-any-cluster")->arg, Arg::kOptional);
    EXPECT_EQ(table.Find("sky-infra")->id, Opt::kSkyInfra);
  }
}

TEST(OptionTableTest, SpankOptionsJoinTheTable) {
  OptionTable sbatch(Tool::kSbatch);
  sbatch.AddSpankOption("container-image", Arg::kRequired);
  sbatch.AddSpankOption("sky-any-cluster", Arg::kRequired);  // already ours: kept
  ASSERT_NE(sbatch.Find("container-image"), nullptr);
  EXPECT_EQ(sbatch.Find("container-image")->id, Opt::kSpank);
  EXPECT_EQ(sbatch.Find("sky-any-cluster")->arg, Arg::kOptional);
}

TEST(OptionTableTest, EveryEnvironmentVariableNamesAnOptionOfItsTool) {
  for (const auto& env : EnvOptions()) {
    for (Tool tool : {Tool::kSbatch, Tool::kSalloc, Tool::kSrun}) {
      if ((env.tools & static_cast<ToolMask>(tool)) == 0) continue;
      EXPECT_NE(OptionTable(tool).Find(env.option), nullptr)
          << env.variable << " -> " << env.option << " for " << ToolName(tool);
    }
  }
}

TEST(OptionTableTest, NamesAreUniquePerToolExceptAliases) {
  for (Tool tool : {Tool::kSbatch, Tool::kSalloc, Tool::kSrun}) {
    std::set<std::string_view> names;
    std::set<char> shorts;
    const OptionTable table(tool);
    for (const OptionSpec* spec : table.options()) {
      EXPECT_TRUE(names.insert(spec->name).second) << spec->name;
      if (spec->short_name != 0) {
        EXPECT_TRUE(shorts.insert(spec->short_name).second) << spec->short_name;
      }
    }
  }
}

TEST(SpankHelpTest, ReadsThePluginSection) {
  const std::string help =
      "Usage: sbatch [OPTIONS(0)...] [ : [OPTIONS(N)...]] script(0) [args(0)...]\n\n"
      "Options provided by plugins:\n\n"
      "      --sky-any-cluster=[clusters]\n"
      "                              skyslurm: run the job anywhere\n"
      "      --sky-explain           skyslurm: explain\n"
      "      --container-image=[USER@][REGISTRY#]IMAGE[:TAG]|PATH\n"
      "                              [pyxis] the image to use\n"
      "      --container-writable    [pyxis] make the container filesystem writable\n\n"
      "GPU scheduling options:\n"
      "      --cpus-per-gpu=n        number of CPUs required per allocated GPU\n";
  auto options = ParseSpankOptionsFromHelp(help);
  ASSERT_EQ(options.size(), 4u);
  EXPECT_EQ(options[0].name, "sky-any-cluster");
  EXPECT_EQ(options[0].arg, Arg::kRequired);  // the table's own entry (optional) wins
  EXPECT_EQ(options[1].name, "sky-explain");
  EXPECT_EQ(options[1].arg, Arg::kNone);
  EXPECT_EQ(options[2].name, "container-image");
  EXPECT_EQ(options[2].arg, Arg::kRequired);
  EXPECT_EQ(options[3].name, "container-writable");
  EXPECT_THAT(ParseSpankOptionsFromHelp("no plugins here"), IsEmpty());
}

}  // namespace
}  // namespace skyslurm::job
