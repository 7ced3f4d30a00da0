#include "broker/job/directives.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::job {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(DirectivesTest, ReadsUntilTheFirstCommand) {
  const std::string script =
      "#!/bin/bash\n"
      "#SBATCH -N 2\n"
      "\n"
      "# a comment\n"
      "   # an indented comment\n"
      "#SBATCH --gres=gpu:h100:8   # trailing comment\n"
      "echo start\n"
      "#SBATCH --time=5\n";
  auto scan = ScanDirectives(script, "job.sh");
  ASSERT_TRUE(scan.ok()) << scan.status().message();
  ASSERT_EQ(scan->directives.size(), 2u);
  EXPECT_EQ(scan->directives[0].line, 2);
  EXPECT_THAT(scan->directives[0].words, ElementsAre("-N", "2"));
  EXPECT_EQ(scan->directives[1].line, 6);
  EXPECT_THAT(scan->directives[1].words, ElementsAre("--gres=gpu:h100:8"));
  EXPECT_EQ(scan->body_start_line, 7);
}

TEST(DirectivesTest, OnlyColumnZeroCounts) {
  auto scan = ScanDirectives("#!/bin/sh\n  #SBATCH -N 4\n#SBATCH -n 1\n", "j");
  ASSERT_TRUE(scan.ok());
  ASSERT_EQ(scan->directives.size(), 1u);
  EXPECT_THAT(scan->directives[0].words, ElementsAre("-n", "1"));
  EXPECT_EQ(scan->body_start_line, 4);
}

TEST(DirectivesTest, QuotesEscapesAndComments) {
  auto scan = ScanDirectives(
      "#!/bin/sh\n"
      "#SBATCH --job-name=\"my job\" --comment='a # b' -o out\\ x\n"
      "#SBATCH --constraint=\"a100|h100\"#no space before the comment\n",
      "j");
  ASSERT_TRUE(scan.ok()) << scan.status().message();
  // As in sbatch, an escaped blank still ends the word (the backslash goes).
  EXPECT_THAT(scan->directives[0].words,
              ElementsAre("--job-name=my job", "--comment=a # b", "-o", "out", "x"));
  EXPECT_THAT(scan->directives[1].words, ElementsAre("--constraint=a100|h100"));
}

TEST(DirectivesTest, AnUnquotedHashCutsAPyxisImageAsInSbatch) {
  auto scan = ScanDirectives(
      "#!/bin/sh\n#SBATCH --container-image=nvcr.io#nvidia/pytorch:24.01-py3\n"
      "#SBATCH --container-image=\"nvcr.io#nvidia/pytorch:24.01-py3\"\n",
      "j");
  ASSERT_TRUE(scan.ok());
  EXPECT_THAT(scan->directives[0].words, ElementsAre("--container-image=nvcr.io"));
  EXPECT_THAT(scan->directives[1].words,
              ElementsAre("--container-image=nvcr.io#nvidia/pytorch:24.01-py3"));
}

TEST(DirectivesTest, AnEmptyWordEndsTheLineAsInSbatch) {
  auto scan = ScanDirectives("#!/bin/sh\n#SBATCH -N 1 \"\" -n 4\n", "j");
  ASSERT_TRUE(scan.ok());
  EXPECT_THAT(scan->directives[0].words, ElementsAre("-N", "1"));
}

TEST(DirectivesTest, DeprecatedSlurmMagicWarns) {
  auto scan = ScanDirectives("#!/bin/sh\n#SLURM -N 1\n#SLURM -n 2\n", "j");
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan->directives.size(), 2u);
  ASSERT_EQ(scan->warnings.size(), 1u);
  EXPECT_EQ(scan->directives[0].magic, "#SLURM");
}

TEST(DirectivesTest, HetjobComponents) {
  auto scan = ScanDirectives("#!/bin/sh\n#SBATCH -N 1\n#SBATCH hetjob\n#SBATCH -N 2\n", "j");
  ASSERT_TRUE(scan.ok());
  EXPECT_TRUE(scan->hetjob);
  EXPECT_TRUE(scan->directives[1].het_separator);
  EXPECT_THAT(scan->directives[1].words, IsEmpty());
  auto pack = ScanDirectives("#!/bin/sh\n#SBATCH packjob -N 2\n", "j");
  ASSERT_TRUE(pack.ok());
  EXPECT_TRUE(pack->hetjob);
  EXPECT_THAT(pack->directives[0].words, ElementsAre("-N", "2"));
}

TEST(DirectivesTest, ErrorsNameFileAndLine) {
  auto unmatched = ScanDirectives("#!/bin/sh\n\n#SBATCH -J \"oops\n", "train.sh");
  ASSERT_FALSE(unmatched.ok());
  EXPECT_EQ(unmatched.status().message(),
            "train.sh:3: unmatched '\"' in '-J \"oops'");
  auto colon = ScanDirectives("#!/bin/sh\n#SBATCH : -N 1\n", "t.sh");
  ASSERT_FALSE(colon.ok());
  EXPECT_EQ(colon.status().message(), "t.sh:2: unexpected ':' in ': -N 1'");
}

TEST(DirectivesTest, ScriptWithoutCommands) {
  auto scan = ScanDirectives("#!/bin/sh\n#SBATCH -N 1", "j");
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan->body_start_line, 3);
  EXPECT_THAT(scan->directives[0].words, ElementsAre("-N", "1"));
}

}  // namespace
}  // namespace skyslurm::job
