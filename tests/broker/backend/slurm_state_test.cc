#include "broker/backend/slurm_state.h"

#include <gtest/gtest.h>

namespace skyslurm::backend {
namespace {

TEST(SlurmStateTest, OneMeaningPerState) {
  EXPECT_EQ(PhaseOf("PENDING"), SlurmPhase::kPending);
  EXPECT_EQ(PhaseOf("REQUEUED"), SlurmPhase::kPending);
  EXPECT_EQ(PhaseOf("REQUEUE_HOLD"), SlurmPhase::kHeld);
  EXPECT_EQ(PhaseOf("RUNNING"), SlurmPhase::kRunning);
  EXPECT_EQ(PhaseOf("COMPLETING"), SlurmPhase::kEnding);
  EXPECT_EQ(PhaseOf("COMPLETED"), SlurmPhase::kCompleted);
  EXPECT_EQ(PhaseOf("CANCELLED by 1000"), SlurmPhase::kCancelled);
  EXPECT_EQ(PhaseOf("CANCELLED+"), SlurmPhase::kCancelled);
  EXPECT_EQ(PhaseOf("OUT_OF_MEMORY"), SlurmPhase::kFailed);
  EXPECT_EQ(PhaseOf("DEADLINE"), SlurmPhase::kTimeout);
  EXPECT_EQ(PhaseOf("whatever"), SlurmPhase::kUnknown);
}

// Regression (issue 11): REQUEUE_HOLD was live for the backend and final
// for the failover policy.
TEST(SlurmStateTest, HeldAndUnknownAreLive) {
  for (const char* s : {"PENDING", "REQUEUE_HOLD", "REQUEUE_FED", "SUSPENDED", "COMPLETING",
                        "STAGE_OUT", "whatever"}) {
    EXPECT_TRUE(IsLiveState(s)) << s;
    EXPECT_FALSE(IsFinalState(s)) << s;
  }
  for (const char* s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
                        "BOOT_FAIL", "OUT_OF_MEMORY", "DEADLINE", "REVOKED"}) {
    EXPECT_TRUE(IsFinalState(s)) << s;
  }
  EXPECT_TRUE(IsWaitingState("REQUEUE_HOLD"));
  EXPECT_FALSE(IsWaitingState("RUNNING"));
  EXPECT_TRUE(IsInfrastructureFailure(PhaseOf("NODE_FAIL")));
  EXPECT_FALSE(IsInfrastructureFailure(PhaseOf("FAILED")));
}

}  // namespace
}  // namespace skyslurm::backend
