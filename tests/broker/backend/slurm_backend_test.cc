#include "broker/backend/slurm_local.h"

#include <gtest/gtest.h>

namespace skyslurm::backend {
namespace {

// The job just sent, as the next decisions see it before squeue lists it.
// Regression (issue 16): a --wrap job was read with a script operand, which
// sbatch refuses beside --wrap, so it was shown as nothing.
TEST(SlurmBackendTest, AJobJustSentIsShownAsSqueueWillListIt) {
  SlurmLocalBackend alpha("alpha", "", "");
  SubmitSpec spec;
  spec.sky_id = "sky-20261204-120000-abcdef";
  spec.job.args = {"--gpus=2", "-t", "5", "-J", "sweep", "--wrap", "sleep 60"};
  auto wrapped = alpha.AsQueued(spec, {"alpha", "41"});
  ASSERT_TRUE(wrapped.has_value());
  EXPECT_EQ(wrapped->job_id, "41");
  EXPECT_EQ(wrapped->state, "PENDING");
  EXPECT_EQ(wrapped->gpus_per_job, 2);
  EXPECT_EQ(wrapped->time_limit_minutes, 5);
  EXPECT_EQ(wrapped->partition, "");  // the default: the view knows which
  EXPECT_NE(wrapped->comment.find(spec.sky_id), std::string::npos);

  spec.job.args = {"-p", "gpu", "--hold"};
  spec.job.script = "#!/bin/sh\n#SBATCH --gpus-per-node=4\n#SBATCH -N 2\nsrun true\n";
  auto scripted = alpha.AsQueued(spec, {"alpha", "42"});
  ASSERT_TRUE(scripted.has_value());
  EXPECT_EQ(scripted->partition, "gpu");
  EXPECT_EQ(scripted->reason, "JobHeldUser");
  EXPECT_EQ(scripted->nodes, 2);
  EXPECT_EQ(scripted->gpus_per_node, 4);
  EXPECT_EQ(scripted->tasks, 1);

  // A part of a spread array pends as its tasks (regression: counted as
  // one, the next part placed after a crash saw its cluster empty).
  spec.job.args = {"--gpus=1", "--array=16-23,40", "--wrap", "sleep 2"};
  spec.job.script.clear();
  auto array = alpha.AsQueued(spec, {"alpha", "43"});
  ASSERT_TRUE(array.has_value());
  EXPECT_EQ(array->tasks, 9);
}

}  // namespace
}  // namespace skyslurm::backend
