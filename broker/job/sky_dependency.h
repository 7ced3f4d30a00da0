// --dependency naming sky jobs: `sbatch --sky-any-cluster
// --dependency=afterok:sky-20261205-101500-a1b2c3 train.sh` waits for a sky
// job wherever it ran (a spread array: all of its parts). No cluster's
// slurmctld knows sky ids, so skyslurmd holds the job back itself until
// the sky jobs named answer the conditions, and then sends it with what is
// left of the dependency (Slurm's own job ids, `singleton`) for sbatch.
//
// Slurm's grammar (sbatch(1)): items `type:id[:id...]` joined by ',' (all
// must be satisfied) or '?' (any one); `after:id+minutes`; a bare id means
// afterany. Sky ids work with after, afterany, afterok and afternotok.
// Pure: the store's view of each sky job named is passed in.
#pragma once

#include <ctime>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/job/request.h"
#include "broker/util/status.h"

namespace skyslurm::job {

struct SkyCondition {
  std::string type;  // after, afterany, afterok, afternotok
  std::string sky_id;
  int minutes = 0;  // after:ID+minutes: that long after it started
};

struct SkyDependency {
  std::vector<SkyCondition> conditions;  // empty: the dependency names no sky job
  bool any = false;                      // joined by '?': one satisfied is enough
  // The dependency without its sky jobs, as sbatch reads it ("" none).
  std::string rest;
};

// Reads a --dependency value. An error (for the option's line) names the
// item: a sky id under aftercorr or afterburstbuffer, a task of a sky job
// (`sky-..._7`: name the whole array), +minutes other than after's, ','
// and '?' mixed, or '?' joining sky jobs with Slurm job ids (skyslurmd
// cannot see the latter satisfied).
Result<SkyDependency> ReadSkyDependency(std::string_view text);

// Takes the sky jobs out of a request's --dependency: the request then
// carries what sbatch gets (`dependency` = the rest, dependency_resolved),
// which placement and translation see; the answer is what skyslurmd waits
// for first (no conditions: the request is left as it was). The error names
// the option's line.
Result<SkyDependency> TakeSkyDependency(Request& request);

// What skyslurmd knows of a sky job a condition names.
struct DependeeState {
  bool found = false;
  std::string state;        // as the store has it (PENDING, SPREAD, COMPLETED, ...)
  bool ended = false;       // its state is final
  std::time_t started = 0;  // 0: never started
};

enum class DependencyStatus { kWaiting, kSatisfied, kNeverSatisfied };

struct DependencyVerdict {
  DependencyStatus status = DependencyStatus::kWaiting;
  // Slurm's reason words, then what it waits for or why it never will:
  // "Dependency: afterok:sky-... is RUNNING", "DependencyNeverSatisfied:
  // afterok:sky-... ended FAILED".
  std::string reason;
  // Satisfied: what sbatch gets (SkyDependency::rest, or "" when a '?'
  // was answered by a sky job).
  std::string sbatch_dependency;
};

// Weighs the conditions at `now`. after: started (and `minutes` passed) or
// ended unstarted (cancelled); afterany: ended; afterok: COMPLETED;
// afternotok: ended otherwise. A sky job skyslurmd does not know never
// satisfies one.
DependencyVerdict WeighSkyDependency(
    const SkyDependency& dependency,
    const std::function<DependeeState(const std::string& sky_id)>& state_of, std::time_t now);

}  // namespace skyslurm::job
