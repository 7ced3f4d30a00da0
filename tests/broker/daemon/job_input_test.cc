#include "broker/daemon/job_input.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <json/json.h>

namespace skyslurm::daemon {
namespace {

TEST(JobInputTest, RoundTripsThroughTheStoredText) {
  JobInput in;
  in.args = {"--sky-managed", "-N", "2", "job.sh", "a b"};
  in.script = "#!/bin/sh\necho \"\xc3\xa9\"\n";
  in.env = {{"SBATCH_PARTITION", "gpu"}, {"X", "1=2"}};
  in.cwd = "/home/alice/run";
  auto back = JobInputFromText(JobInputText(in));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->tool, "sbatch");
  EXPECT_EQ(back->args, in.args);
  EXPECT_EQ(back->script, in.script);
  EXPECT_EQ(back->env, in.env);
  EXPECT_EQ(back->cwd, in.cwd);
  EXPECT_EQ(back->ToRequestInput().script_text, in.script);
  // Whether sbatch printed to a terminal: unknown in what earlier versions kept.
  EXPECT_FALSE(back->at_terminal.has_value());
  in.at_terminal = false;
  back = JobInputFromText(JobInputText(in));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->at_terminal, std::optional<bool>(false));
}

TEST(JobInputTest, ErrorsNameTheField) {
  EXPECT_EQ(JobInputFromText("{").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(JobInputFromText(R"({"tool":"sbatch","args":[1],"cwd":"/"})").status().message(),
            "job input: 'args' must be a list of strings");
  EXPECT_EQ(JobInputFromText(R"({"tool":"qsub","args":[],"cwd":"/"})").status().message(),
            "job input: unknown tool 'qsub'");
  EXPECT_EQ(JobInputFromText(R"({"tool":"sbatch","args":[]})").status().message(),
            "job input: 'cwd' must be a string");
  EXPECT_EQ(JobInputFromText(R"({"tool":"sbatch","args":[],"cwd":"/","at_terminal":"yes"})")
                .status()
                .message(),
            "job input: 'at_terminal' must be true or false");
}

}  // namespace
}  // namespace skyslurm::daemon
