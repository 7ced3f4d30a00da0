#include "broker/backend/slurm/slurm_state.h"

#include <gtest/gtest.h>

namespace skyslurm::backend {
namespace {

TEST(SlurmStateTest, OneMeaningPerState) {
  EXPECT_EQ(SlurmPhaseOf("PENDING"), JobPhase::kPending);
  EXPECT_EQ(SlurmPhaseOf("REQUEUED"), JobPhase::kPending);
  EXPECT_EQ(SlurmPhaseOf("REQUEUE_HOLD"), JobPhase::kHeld);
  EXPECT_EQ(SlurmPhaseOf("RUNNING"), JobPhase::kRunning);
  EXPECT_EQ(SlurmPhaseOf("COMPLETING"), JobPhase::kEnding);
  EXPECT_EQ(SlurmPhaseOf("COMPLETED"), JobPhase::kCompleted);
  EXPECT_EQ(SlurmPhaseOf("CANCELLED by 1000"), JobPhase::kCancelled);
  EXPECT_EQ(SlurmPhaseOf("CANCELLED+"), JobPhase::kCancelled);
  EXPECT_EQ(SlurmPhaseOf("OUT_OF_MEMORY"), JobPhase::kFailed);
  EXPECT_EQ(SlurmPhaseOf("DEADLINE"), JobPhase::kTimeout);
  EXPECT_EQ(SlurmPhaseOf("whatever"), JobPhase::kUnknown);
}

// Regression (issue 11): REQUEUE_HOLD was live for the backend and final
// for the failover policy.
TEST(SlurmStateTest, HeldAndUnknownAreLive) {
  for (const char* s : {"PENDING", "REQUEUE_HOLD", "REQUEUE_FED", "SUSPENDED", "COMPLETING",
                        "STAGE_OUT", "whatever"}) {
    EXPECT_TRUE(IsLive(SlurmPhaseOf(s))) << s;
    EXPECT_FALSE(IsFinal(SlurmPhaseOf(s))) << s;
  }
  for (const char* s : {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
                        "BOOT_FAIL", "OUT_OF_MEMORY", "DEADLINE", "REVOKED"}) {
    EXPECT_TRUE(IsFinal(SlurmPhaseOf(s))) << s;
  }
  EXPECT_TRUE(IsWaiting(SlurmPhaseOf("REQUEUE_HOLD")));
  EXPECT_FALSE(IsWaiting(SlurmPhaseOf("RUNNING")));
  EXPECT_TRUE(IsInfrastructureFailure(SlurmPhaseOf("NODE_FAIL")));
  EXPECT_FALSE(IsInfrastructureFailure(SlurmPhaseOf("FAILED")));
}

// The phase's word is what a sky job's end is recorded as: Slurm's own
// spelling where Slurm has one, whatever the backend's native word was.
TEST(SlurmStateTest, PhaseNamesAreSlurmsWords) {
  for (const char* s : {"PENDING", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT",
                        "NODE_FAIL", "PREEMPTED", "BOOT_FAIL"}) {
    EXPECT_EQ(PhaseName(SlurmPhaseOf(s)), s);
  }
  EXPECT_EQ(PhaseName(SlurmPhaseOf("OUT_OF_MEMORY")), "FAILED");
  EXPECT_EQ(PhaseName(SlurmPhaseOf("DEADLINE")), "TIMEOUT");
  EXPECT_EQ(PhaseName(SlurmPhaseOf("REVOKED")), "CANCELLED");
  EXPECT_EQ(PhaseName(SlurmPhaseOf("gibberish")), "UNKNOWN");
}

}  // namespace
}  // namespace skyslurm::backend
