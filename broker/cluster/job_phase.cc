#include "broker/cluster/job_phase.h"

namespace skyslurm::cluster {

bool IsLive(JobPhase phase) { return !IsFinal(phase); }

bool IsFinal(JobPhase phase) {
  switch (phase) {
    case JobPhase::kPending:
    case JobPhase::kHeld:
    case JobPhase::kRunning:
    case JobPhase::kEnding:
    case JobPhase::kUnknown:
      return false;
    default:
      return true;
  }
}

bool IsWaiting(JobPhase phase) { return phase == JobPhase::kPending || phase == JobPhase::kHeld; }

bool HasNodes(JobPhase phase) { return phase == JobPhase::kRunning || phase == JobPhase::kEnding; }

bool IsInfrastructureFailure(JobPhase phase) {
  return phase == JobPhase::kNodeFail || phase == JobPhase::kPreempted ||
         phase == JobPhase::kBootFail;
}

std::string_view PhaseName(JobPhase phase) {
  switch (phase) {
    case JobPhase::kPending:
      return "PENDING";
    case JobPhase::kHeld:
      return "HELD";
    case JobPhase::kRunning:
      return "RUNNING";
    case JobPhase::kEnding:
      return "ENDING";
    case JobPhase::kCompleted:
      return "COMPLETED";
    case JobPhase::kFailed:
      return "FAILED";
    case JobPhase::kCancelled:
      return "CANCELLED";
    case JobPhase::kTimeout:
      return "TIMEOUT";
    case JobPhase::kNodeFail:
      return "NODE_FAIL";
    case JobPhase::kPreempted:
      return "PREEMPTED";
    case JobPhase::kBootFail:
      return "BOOT_FAIL";
    case JobPhase::kUnknown:
      break;
  }
  return "UNKNOWN";
}

}  // namespace skyslurm::cluster
