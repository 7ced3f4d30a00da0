// Slurm's job states, in one table: the phase (cluster/job_phase.h) each one is, so
// that a state (REQUEUE_HOLD, say) means the same everywhere. Only the
// Slurm backend and Slurm's own queue parsing read Slurm's words.
#pragma once

#include <string_view>

#include "broker/backend/backend.h"

namespace skyslurm::backend {

// The phase of a state as squeue/sacct print it ("PENDING", "REQUEUE_HOLD");
// a trailing "+" (sacct's "CANCELLED+") or " by <uid>" is ignored. Pending:
// PENDING, REQUEUED, REQUEUE_FED; held: REQUEUE_HOLD, SPECIAL_EXIT,
// RESV_DEL_HOLD; running: RUNNING, CONFIGURING, SUSPENDED, RESIZING,
// SIGNALING, STOPPED; ending: COMPLETING, STAGE_OUT; failed: FAILED,
// OUT_OF_MEMORY; cancelled: CANCELLED, REVOKED (a federation sibling ran
// it); timeout: TIMEOUT, DEADLINE.
cluster::JobPhase SlurmPhaseOf(std::string_view state);

}  // namespace skyslurm::backend
