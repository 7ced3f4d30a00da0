// The estimate-then-submit script, run by a real sh with stand-ins for the
// two sbatch runs: each gets its own script and environment, and the
// output splits back into the two answers.
#include "broker/backend/slurm/estimate_then_submit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::backend {
namespace {

using ::testing::HasSubstr;

CommandOutput RunLine(const std::string& test_only, const std::string& submit,
                      const std::string& marker, const std::string& probe_script,
                      const std::string& job_script) {
  LocalCommandRunner runner;
  auto out = runner.Run({.argv = {"sh", "-s"},
                         .stdin_data = EstimateThenSubmitScript({.test_only_line = test_only,
                                                                 .probe_script = probe_script,
                                                                 .submit_line = submit,
                                                                 .job_script = job_script},
                                                                marker),
                         .timeout = std::chrono::seconds(10)});
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? *out : CommandOutput{};
}

TEST(EstimateThenSubmitTest, EachCommandReadsItsOwnScriptAndTheAnswersSplit) {
  const std::string marker = NewEstimateMarker();
  EXPECT_THAT(marker, ::testing::MatchesRegex("skyslurm-estimate-[0-9a-f]{16}"));
  const CommandOutput both =
      RunLine("export TZ=UTC; echo \"estimating $(wc -c) bytes tz=$TZ\" >&2; exec true",
              "echo \"42;gamma tz=${TZ-unset}\"; tail -n1; echo warned >&2; exit 0", marker,
              "#!/bin/sh\nprobe\n", "#!/bin/sh\nthe job's last line\n");
  ASSERT_TRUE(both.success()) << both.err;
  auto split = SplitEstimateThenSubmit(both, marker);
  ASSERT_TRUE(split.ok()) << split.status().message();
  EXPECT_EQ(split->first.exit_code, 0);
  EXPECT_EQ(split->first.out, "estimating 16 bytes tz=UTC\n");
  EXPECT_EQ(split->second.out, "42;gamma tz=unset\nthe job's last line\n");
  EXPECT_EQ(split->second.err, "warned\n");
  EXPECT_TRUE(split->second.success());
}

TEST(EstimateThenSubmitTest, ARefusedEstimateAndARefusedSubmissionKeepTheirStatuses) {
  const std::string marker = NewEstimateMarker();
  const CommandOutput both =
      RunLine("echo 'sbatch: error: invalid partition' >&2; exit 1",
              "echo 'sbatch: error: Batch job submission failed' >&2; exit 1", marker, "", "x");
  auto split = SplitEstimateThenSubmit(both, marker);
  ASSERT_TRUE(split.ok()) << split.status().message();
  EXPECT_EQ(split->first.exit_code, 1);
  EXPECT_EQ(split->first.out, "sbatch: error: invalid partition\n");
  EXPECT_EQ(split->second.out, "");
  EXPECT_EQ(split->second.exit_code, 1);
  EXPECT_THAT(split->second.err, HasSubstr("Batch job submission failed"));
}

TEST(EstimateThenSubmitTest, WithoutTheMarkerNothingWasSubmitted) {
  CommandOutput cut;
  cut.exit_code = 255;
  cut.out = "sbatch: Job 3 to start at 2026-12-01T10:00:00";
  cut.err = "connection closed";
  auto split = SplitEstimateThenSubmit(cut, "skyslurm-estimate-0123456789abcdef");
  ASSERT_FALSE(split.ok());
  EXPECT_THAT(split.status().message(),
              HasSubstr("the estimate did not finish (exit status 255): connection closed"));
  // A marker line cut before its status is no marker.
  cut.out += "\nskyslurm-estimate-0123456789abcdef 0";
  EXPECT_FALSE(SplitEstimateThenSubmit(cut, "skyslurm-estimate-0123456789abcdef").ok());
}

}  // namespace
}  // namespace skyslurm::backend
