// Where a job is in its life, in words every backend shares: Slurm's states
// (slurm_state.h) and Kubernetes' Job and pod conditions both map onto it.
// The daemon, the failover policy and the shim's --wait decide on the phase
// alone; the backend's own word (REQUEUE_HOLD, ImagePullBackOff) is kept
// beside it for display.
#pragma once

#include <string_view>

namespace skyslurm::cluster {

enum class JobPhase {
  kPending,    // waiting to start
  kHeld,       // waiting until someone releases it: never moved by skyslurm
  kRunning,    // has nodes
  kEnding,     // ran and is finishing
  kCompleted,  // final: exit code 0
  kFailed,     // final: the job's own failure
  kCancelled,  // final: cancelled (by a user, an admin, or a sibling that ran)
  kTimeout,    // final: its time limit or deadline passed
  kNodeFail,   // final: a node it ran on was lost
  kPreempted,  // final: preempted (or evicted)
  kBootFail,   // final: its nodes never came up
  kUnknown,    // a state its backend does not know: treated as live, never as ended
};

// Not ended yet: pending, held, running, ending or unknown.
bool IsLive(JobPhase phase);
bool IsFinal(JobPhase phase);
// Waiting for nodes (pending or held).
bool IsWaiting(JobPhase phase);
// Has (or had until a moment ago) nodes: running or ending.
bool HasNodes(JobPhase phase);
// Final through the infrastructure's fault, not the job's: node failure,
// preemption, boot failure. A managed job is restarted after these.
bool IsInfrastructureFailure(JobPhase phase);

// The phase in one upper-case word, as skyslurm records a sky job's end:
// PENDING, HELD, RUNNING, ENDING, COMPLETED, FAILED, CANCELLED, TIMEOUT,
// NODE_FAIL, PREEMPTED, BOOT_FAIL, UNKNOWN (Slurm's spelling where it has one).
std::string_view PhaseName(JobPhase phase);

}  // namespace skyslurm::cluster
