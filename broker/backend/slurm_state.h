// Slurm's job states, in one table: what each means for skyslurm. The
// backend, the failover policy, the shim's --wait and the daemon all ask
// here, so that a state (REQUEUE_HOLD, say) means the same everywhere.
#pragma once

#include <string_view>

namespace skyslurm::backend {

enum class SlurmPhase {
  kPending,    // waiting to start (PENDING, REQUEUED, REQUEUE_FED)
  kHeld,       // waiting, held until someone releases it (REQUEUE_HOLD,
               // SPECIAL_EXIT, RESV_DEL_HOLD): never moved by skyslurm
  kRunning,    // has nodes (RUNNING, CONFIGURING, SUSPENDED, RESIZING, SIGNALING, STOPPED)
  kEnding,     // ran and is finishing (COMPLETING, STAGE_OUT)
  kCompleted,  // final: exit code 0
  kFailed,     // final: the job's own failure (FAILED, OUT_OF_MEMORY)
  kCancelled,  // final: CANCELLED, or REVOKED (a federation sibling ran it)
  kTimeout,    // final: TIMEOUT, DEADLINE
  kNodeFail,   // final: NODE_FAIL
  kPreempted,  // final: PREEMPTED
  kBootFail,   // final: BOOT_FAIL
  kUnknown,    // a word this table does not know: treated as live, never as ended
};

// The phase of a state as squeue/sacct print it ("PENDING", "REQUEUE_HOLD");
// a trailing "+" (sacct's "CANCELLED+") or " by <uid>" is ignored.
SlurmPhase PhaseOf(std::string_view state);

// Not ended yet: pending, held, running, ending or unknown.
bool IsLive(SlurmPhase phase);
bool IsFinal(SlurmPhase phase);
// Waiting for nodes (pending or held).
bool IsWaiting(SlurmPhase phase);
// Has (or had until a moment ago) nodes: running or ending.
bool HasNodes(SlurmPhase phase);
// Final through the infrastructure's fault, not the job's: node failure,
// preemption, boot failure. A managed job is restarted after these.
bool IsInfrastructureFailure(SlurmPhase phase);

// The same, for a state word.
inline bool IsLiveState(std::string_view s) { return IsLive(PhaseOf(s)); }
inline bool IsFinalState(std::string_view s) { return IsFinal(PhaseOf(s)); }
inline bool IsWaitingState(std::string_view s) { return IsWaiting(PhaseOf(s)); }

}  // namespace skyslurm::backend
