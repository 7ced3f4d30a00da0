// skyslurmd's decisions about one tracked job, as a pure function: what the
// daemon saw of the job's cluster and its live copy in; what to do, with the
// reason, out. No I/O and no clock (docs/failover.md).
#pragma once

#include <ctime>
#include <optional>
#include <string>

#include "broker/backend/backend.h"
#include "broker/config/settings.h"
#include "broker/store/job_store.h"

namespace skyslurm::daemon {

struct Observation {
  std::time_t now = 0;
  // When the job's cluster last answered (0: never yet), and when the queue
  // below was read.
  std::time_t cluster_answered = 0;
  bool answered_now = false;
  std::time_t queue_read = 0;
  // The job's live copy in that queue; nullopt when it is not there.
  std::optional<backend::JobInfo> copy;
};

enum class Action {
  kNone,       // nothing to do now
  kRecord,     // record the new state (and reason)
  kWeighMove,  // pending long enough: ask the clusters whether another starts it sooner
  kReplace,    // its cluster is dead: place the pending job again elsewhere
  kRestart,    // managed: submit again (node failure, preemption, retry on failure)
  kFinish,     // record the final state
};

struct Decision {
  Action action = Action::kNone;
  std::string state;  // the job's state to record
  std::string reason;
};

Decision Decide(const store::SkyJob& job, const Observation& seen,
                const config::FailoverSettings& policy);

// A move pays when the other cluster starts the job at least `gain` seconds
// before the job's own cluster would.
bool MovePays(std::time_t here, std::time_t there, int gain);

}  // namespace skyslurm::daemon
