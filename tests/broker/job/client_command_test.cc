#include "broker/job/client_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm {
namespace {

using ::testing::ElementsAre;

ClientCommand Parse(ClientTool tool, std::vector<std::string> args) {
  auto c = ParseClientCommand(tool, args);
  EXPECT_TRUE(c.has_value());
  return c.value_or(ClientCommand{});
}

TEST(ClientCommandTest, SqueueJobListsInEverySpelling) {
  EXPECT_THAT(Parse(ClientTool::kSqueue, {"-j", "805306445"}).ids, ElementsAre("805306445"));
  EXPECT_THAT(Parse(ClientTool::kSqueue, {"-j805306445,12"}).ids, ElementsAre("805306445", "12"));
  EXPECT_THAT(Parse(ClientTool::kSqueue, {"--jobs=1_[2-3],4"}).ids, ElementsAre("1_[2-3]", "4"));
  EXPECT_THAT(Parse(ClientTool::kSqueue, {"--jobs", "7", "-h"}).ids, ElementsAre("7"));
  // -o's value is not a job list, even when it holds digits.
  const ClientCommand c =
      Parse(ClientTool::kSqueue, {"-h", "-o", "%.18i %T", "-t", "all", "-j", "9"});
  EXPECT_THAT(c.ids, ElementsAre("9"));
  EXPECT_EQ(c.format, "%.18i %T");
  EXPECT_TRUE(c.noheader);
  EXPECT_THAT(c.format_words, ElementsAre(1u, 2u));
  ASSERT_EQ(c.id_words.size(), 1u);
  EXPECT_EQ(c.id_words[0].index, 6u);
  EXPECT_EQ(c.id_words[0].option, 5u);
  // -j with no list (squeue's optional argument): a listing.
  EXPECT_TRUE(Parse(ClientTool::kSqueue, {"-j", "-u", "me"}).ids.empty());
  EXPECT_TRUE(Parse(ClientTool::kSqueue, {"-M", "all"}).clusters);
  EXPECT_TRUE(Parse(ClientTool::kSqueue, {"--json"}).structured);
  EXPECT_TRUE(Parse(ClientTool::kSqueue, {"--json"}).json);
  EXPECT_FALSE(Parse(ClientTool::kSqueue, {"--yaml"}).json);
  const ClientCommand fields = Parse(ClientTool::kSqueue, {"-h", "-O", "jobid,state", "-j", "5"});
  EXPECT_TRUE(fields.field_format);
  EXPECT_EQ(fields.field_format_spec, "jobid,state");
  EXPECT_THAT(fields.format_words, ElementsAre(1u, 2u));
  const ClientCommand joined = Parse(ClientTool::kSqueue, {"--Format=JobID:.12", "-Ostate"});
  EXPECT_EQ(joined.field_format_spec, "state");  // the last one, as squeue reads them
  EXPECT_THAT(joined.format_words, ElementsAre(0u, 1u));
}

// --yaml's words are asked as --json of each cluster; -l's are dropped
// for sacct -M's fields.
TEST(ClientCommandTest, YamlAndLongWordsAreFound) {
  EXPECT_THAT(Parse(ClientTool::kSqueue, {"-u", "me", "--yaml"}).yaml_words, ElementsAre(2u));
  EXPECT_TRUE(Parse(ClientTool::kSqueue, {"--json"}).yaml_words.empty());
  EXPECT_THAT(Parse(ClientTool::kSacct, {"-X", "-l"}).long_words, ElementsAre(1u));
  EXPECT_THAT(Parse(ClientTool::kSacct, {"--long"}).long_words, ElementsAre(0u));
  const ClientCommand bundled = Parse(ClientTool::kSacct, {"-n", "-Xl"});
  EXPECT_TRUE(bundled.long_format);
  EXPECT_THAT(bundled.long_words, ElementsAre(1u));
  EXPECT_TRUE(Parse(ClientTool::kSqueue, {"-ol"}).long_words.empty());  // -o's value
}

TEST(ClientCommandTest, WhichMultiClusterFormsTheRealCommandRunsAsTyped) {
  auto as_typed = [](ClientTool tool, std::vector<std::string> args) {
    return ClustersAsTyped(Parse(tool, std::move(args)));
  };
  EXPECT_FALSE(as_typed(ClientTool::kSqueue, {"-u", "me"}));  // no -M at all
  EXPECT_FALSE(as_typed(ClientTool::kSqueue, {"-M", "all"}));
  EXPECT_FALSE(as_typed(ClientTool::kSqueue, {"-M", "all", "-l"}));
  EXPECT_FALSE(as_typed(ClientTool::kSqueue, {"--clusters=alpha,beta", "-s"}));
  EXPECT_TRUE(as_typed(ClientTool::kSqueue, {"-M", "all", "-j", "5"}));
  EXPECT_TRUE(as_typed(ClientTool::kSqueue, {"-M", "all", "--yaml"}));
  EXPECT_FALSE(as_typed(ClientTool::kSacct, {"-L", "-X"}));
  EXPECT_FALSE(as_typed(ClientTool::kSacct, {"-M", "all", "-l"}));
  EXPECT_FALSE(as_typed(ClientTool::kSacct, {"-M", "all", "-lX"}));
  EXPECT_TRUE(as_typed(ClientTool::kSacct, {"-L", "-l", "-o", "JobID"}));  // sacct refuses it
  EXPECT_TRUE(as_typed(ClientTool::kScontrol, {"-M", "beta", "show", "job"}));
}

TEST(ClientCommandTest, SacctAsSnakemakeCallsIt) {
  const ClientCommand c =
      Parse(ClientTool::kSacct, {"-P", "-n", "--format=JobIdRaw,State", "-j", "805306445"});
  EXPECT_THAT(c.ids, ElementsAre("805306445"));
  EXPECT_TRUE(c.parsable);
  EXPECT_TRUE(c.noheader);
  EXPECT_EQ(c.format, "JobIdRaw,State");
  EXPECT_THAT(c.noheader_words, ElementsAre(1u));
  EXPECT_TRUE(Parse(ClientTool::kSacct, {"-S", "2026-12-01", "-X"}).window);
  EXPECT_TRUE(Parse(ClientTool::kSacct, {"-L"}).clusters);
  // sacct's -h is its help, not a header switch.
  EXPECT_FALSE(Parse(ClientTool::kSacct, {"-h"}).noheader);
  EXPECT_TRUE(Parse(ClientTool::kSacct, {"-h"}).about);
  EXPECT_TRUE(Parse(ClientTool::kSacct, {"--helpformat"}).about);
  EXPECT_TRUE(Parse(ClientTool::kSqueue, {"--version"}).about);
  EXPECT_TRUE(Parse(ClientTool::kScontrol, {"-V"}).about);
  EXPECT_FALSE(Parse(ClientTool::kSqueue, {"-h"}).about);
}

TEST(ClientCommandTest, ScancelAndScontrolWords) {
  EXPECT_THAT(Parse(ClientTool::kScancel, {"805306445", "12_3", "-s", "USR1"}).ids,
              ElementsAre("805306445", "12_3"));  // USR1 is -s's value
  const ClientCommand show = Parse(ClientTool::kScontrol, {"show", "jobid", "-dd", "805306445"});
  EXPECT_EQ(show.verb, "show");
  EXPECT_EQ(show.object, "jobid");
  EXPECT_THAT(show.ids, ElementsAre("805306445"));
  EXPECT_THAT(Parse(ClientTool::kScontrol, {"-o", "show", "job", "5"}).ids, ElementsAre("5"));
  EXPECT_THAT(Parse(ClientTool::kScontrol, {"hold", "805306445", "7"}).ids,
              ElementsAre("805306445", "7"));
  const ClientCommand update =
      Parse(ClientTool::kScontrol, {"update", "JobId=805306445", "TimeLimit=10"});
  EXPECT_THAT(update.ids, ElementsAre("805306445"));
  ASSERT_EQ(update.id_words.size(), 1u);
  EXPECT_EQ(update.id_words[0].prefix, 6u);
  EXPECT_TRUE(Parse(ClientTool::kScontrol, {"show", "partition"}).ids.empty());
}

TEST(ClientCommandTest, AMissingValueIsTheRealCommandsToReport) {
  EXPECT_FALSE(ParseClientCommand(ClientTool::kSacct, {"-j"}).has_value());
  EXPECT_FALSE(ParseClientCommand(ClientTool::kScancel, {"-s"}).has_value());
}

TEST(ClientCommandTest, JobListsSplitOutsideBrackets) {
  EXPECT_THAT(SplitJobList("1,2_[3,5-6],7"), ElementsAre("1", "2_[3,5-6]", "7"));
  EXPECT_TRUE(SplitJobList("").empty());
}

}  // namespace
}  // namespace skyslurm
