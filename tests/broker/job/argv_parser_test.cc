#include "broker/job/argv_parser.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace skyslurm::job {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The parsed options point into the table: it must outlive them.
const OptionTable& TableFor(Tool tool) {
  static std::map<Tool, OptionTable> tables;
  auto it = tables.find(tool);
  if (it == tables.end()) {
    it = tables.emplace(tool, OptionTable(tool)).first;
    it->second.AddSpankOption("container-image", Arg::kRequired);
  }
  return it->second;
}

Result<ParsedArgs> Parse(std::vector<std::string> args, Tool tool = Tool::kSbatch,
                         OperandPolicy policy = OperandPolicy::kStopAtFirst) {
  return ParseArgs(TableFor(tool), args, policy, "command line");
}

std::vector<std::string> Names(const ParsedArgs& p) {
  std::vector<std::string> names;
  for (const auto& o : p.options) names.push_back(o.name + "=" + o.value.value_or("<none>"));
  return names;
}

TEST(ArgvParserTest, EveryWayOfWritingAValue) {
  auto p = Parse({"--nodes=2", "--ntasks", "8", "-c4", "-t", "1:00:00", "--part=gpu", "job.sh",
                  "--nodes=9"});
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_THAT(Names(*p), ElementsAre("nodes=2", "ntasks=8", "cpus-per-task=4", "time=1:00:00",
                                     "partition=gpu"));
  // Options end at the script: what follows belongs to it.
  EXPECT_THAT(p->operands, ElementsAre("job.sh", "--nodes=9"));
}

TEST(ArgvParserTest, WordsAreKeptVerbatim) {
  auto p = Parse({"-N", "2", "--part=gpu", "-HQ", "job.sh"});
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(p->options[0].words, ElementsAre("-N", "2"));
  EXPECT_THAT(p->options[1].words, ElementsAre("--part=gpu"));
  EXPECT_EQ(p->options[1].name, "partition");
  EXPECT_THAT(p->options[2].words, ElementsAre("-HQ"));
  EXPECT_TRUE(p->options[2].bundled);
  EXPECT_EQ(p->options[3].name, "quiet");
}

TEST(ArgvParserTest, BundledShortOptionsEndAtOneTakingAValue) {
  auto p = Parse({"-HN2", "-vvv", "job.sh"});
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(Names(*p), ElementsAre("hold=<none>", "nodes=2", "verbose=<none>",
                                     "verbose=<none>", "verbose=<none>"));
  auto q = Parse({"-HN", "3", "job.sh"});
  ASSERT_TRUE(q.ok());
  EXPECT_THAT(Names(*q), ElementsAre("hold=<none>", "nodes=3"));
  EXPECT_THAT(q->operands, ElementsAre("job.sh"));
}

TEST(ArgvParserTest, OptionalArgumentsOnlyWhenAttached) {
  auto p = Parse({"--nice", "--exclusive=user", "-k", "job.sh"});
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(Names(*p), ElementsAre("nice=<none>", "exclusive=user", "no-kill=<none>"));
  EXPECT_THAT(p->operands, ElementsAre("job.sh"));
  auto q = Parse({"--sky-any-cluster", "beta", "x.sh"});
  ASSERT_TRUE(q.ok());
  EXPECT_THAT(q->operands, ElementsAre("beta", "x.sh"));
}

TEST(ArgvParserTest, DoubleDashEndsOptions) {
  auto p = Parse({"-N1", "--", "-x.sh", "arg"});
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(p->operands, ElementsAre("-x.sh", "arg"));
}

TEST(ArgvParserTest, HetjobSeparator) {
  auto p = Parse({"-N1", ":", "-N2", "job.sh"});
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->het_separator);
  EXPECT_THAT(p->operands, ElementsAre("job.sh"));
}

TEST(ArgvParserTest, SpankOptionsTakeTheirArguments) {
  auto p = Parse({"--container-image", "nvcr.io/nvidia/pytorch:24.01", "job.sh"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->options[0].spec->id, Opt::kSpank);
  EXPECT_EQ(*p->options[0].value, "nvcr.io/nvidia/pytorch:24.01");
  EXPECT_THAT(p->operands, ElementsAre("job.sh"));
}

TEST(ArgvParserTest, UnknownLongOptionsAreKeptWithAWarning) {
  auto p = Parse({"--site-flag", "--site-opt=x", "job.sh"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->options[0].spec, nullptr);
  EXPECT_EQ(p->options[0].name, "site-flag");
  EXPECT_EQ(*p->options[1].value, "x");
  EXPECT_THAT(p->options[1].words, ElementsAre("--site-opt=x"));
  ASSERT_EQ(p->warnings.size(), 2u);
  EXPECT_THAT(p->warnings[0], HasSubstr("option '--site-flag' is none of Slurm's"));
}

// Regression (issue 11): "#SBATCH --container-image ghcr.io#..." of a plugin
// this site does not load was refused as "'ghcr.io#...' is not an option".
// A directive has no operands: the word after an unknown option is its value.
TEST(ArgvParserTest, AnUnknownOptionInADirectiveTakesTheNextWord) {
  auto p = Parse({"--container-image", "ghcr.io#nvidia/pytorch", "-N", "1"}, Tool::kSbatch,
                 OperandPolicy::kReject);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->options[0].name, "container-image");
  EXPECT_EQ(*p->options[0].value, "ghcr.io#nvidia/pytorch");
  EXPECT_THAT(p->options[0].words, ElementsAre("--container-image", "ghcr.io#nvidia/pytorch"));
  EXPECT_EQ(p->options[1].name, "nodes");
  auto flag = Parse({"--site-flag", "-N", "1"}, Tool::kSbatch, OperandPolicy::kReject);
  ASSERT_TRUE(flag.ok());
  EXPECT_FALSE(flag->options[0].value.has_value());
}

TEST(ArgvParserTest, ErrorsSayWhatGetoptSays) {
  EXPECT_EQ(Parse({"--nodes"}).status().message(),
            "command line: option '--nodes' requires an argument");
  EXPECT_EQ(Parse({"-N"}).status().message(),
            "command line: option requires an argument -- 'N'");
  EXPECT_EQ(Parse({"--hold=yes", "x.sh"}).status().message(),
            "command line: option '--hold' doesn't allow an argument");
  EXPECT_EQ(Parse({"-Z", "x.sh"}).status().message(), "command line: invalid option -- 'Z'");
  EXPECT_THAT(std::string(Parse({"--ntasks-per=2", "x.sh"}).status().message()),
              HasSubstr("option '--ntasks-per' is ambiguous; possibilities:"));
}

TEST(ArgvParserTest, DirectivesMayNotHoldOperands) {
  auto p = Parse({"-N", "2", "oops"}, Tool::kSbatch, OperandPolicy::kReject);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "command line: invalid directive: 'oops' is not an option");
}

TEST(ArgvParserTest, SrunStopsAtTheCommand) {
  auto p = Parse({"-N2", "--wait", "30", "python", "-N", "x"}, Tool::kSrun);
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(Names(*p), ElementsAre("nodes=2", "wait=30"));
  EXPECT_THAT(p->operands, ElementsAre("python", "-N", "x"));
}

}  // namespace
}  // namespace skyslurm::job
