// skyslurmd's decisions about one tracked job, as a pure function: what the
// daemon saw of the job's cluster and its live copy in; what to do, with the
// reason, out. No I/O and no clock (docs/failover.md).
#pragma once

#include <ctime>
#include <optional>
#include <string>

#include "broker/backend/backend.h"
#include "broker/config/settings.h"
#include "broker/place/placement.h"
#include "broker/store/job_store.h"

namespace skyslurm::daemon {

struct Observation {
  std::time_t now = 0;
  // When the job's cluster last answered (0: never yet), or, when it does
  // not answer now, since when it has been asked and not answered; and when
  // the queue below was read.
  std::time_t cluster_answered = 0;
  bool answered_now = false;
  // Whether the job waits on a hold (a user's or admin's), as its cluster
  // last showed it or, not seen since its submission, as it was submitted
  // (--hold). Looked for only when the cluster does not answer.
  bool held = false;
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

// Since when a cluster whose reads fail has been silent: since it was last
// heard from (`heard`: a read's answer or a submission's), or since the
// first read that failed since then was started, whichever is later; 0 when
// no read has failed (`failing_since` 0). A daemon that was slow to ask
// (its look busy recording a burst of jobs) does not make a cluster silent:
// only the time it was asked and did not answer does.
std::time_t SilentSince(std::time_t heard, std::time_t failing_since);

// A move pays when the other cluster starts the job at least `gain` seconds
// before the job's own cluster would.
bool MovePays(std::time_t here, std::time_t there, int gain);

// How many moves skyslurmd weighs in one look at the queues (each asks
// every cluster for an estimate): the rest wait for the next look.
inline constexpr int kMoveWeighsPerLook = 20;

// A pending job's weighing, as a pure function: the candidates a plan made
// for it (its own cluster's estimate being its place in the queue there)
// and the placement's verdicts on them in; whether another cluster starts
// it `gain` seconds sooner out. A candidate excluded, or another cluster
// held back or over budget (elastic.h), is not a destination; the job's
// own cluster, even weighed out, keeps its estimate: it was placed there.
struct MoveChoice {
  std::optional<std::size_t> to;  // the candidate to move to; none: it stays
  std::time_t own = 0;            // its start where it pends (not before now)
};
MoveChoice ChooseMove(const std::vector<place::Candidate>& candidates,
                      const place::Decision& decision, const std::string& own_cluster,
                      std::time_t now, int gain);

// Back-pressure (moves_per_cluster): of the times of the moves a cluster
// took, those a minute old or more are forgotten; how many are left.
int MovesInLastMinute(std::vector<std::time_t>& recent, std::time_t now);

}  // namespace skyslurm::daemon
