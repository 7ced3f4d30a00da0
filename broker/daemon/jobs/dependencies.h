// A job whose --dependency names sky jobs: no slurmctld knows those ids, so
// skyslurmd holds the job back itself and submits it when they answer the
// dependency (job/sky_dependency.h), wherever each of them ran.
#pragma once

#include <optional>

#include "broker/daemon/jobs/piece.h"
#include "broker/job/request.h"
#include "broker/job/sky_dependency.h"

namespace skyslurm::daemon {

// A --dependency on sky jobs, read and weighed now against the store.
struct SkyDependencyNow {
  job::SkyDependency read;
  job::DependencyVerdict verdict;
  bool satisfied() const { return verdict.status == job::DependencyStatus::kSatisfied; }
};

class Dependencies : public Piece {
 public:
  explicit Dependencies(Lifecycle& lifecycle) : Piece(lifecycle) {}

  // The request's dependency on sky jobs; `request` then carries what is
  // left for sbatch (Request::dependency_resolved). nullopt: it names no
  // sky job. The error names the option's line.
  Result<std::optional<SkyDependencyNow>> Resolve(job::Request& request);
  // Held back until its sky jobs answer the dependency: PENDING with no
  // cluster and Slurm's reason (Dependency, DependencyNeverSatisfied), an
  // event when the reason changes; never satisfied with
  // --kill-on-invalid-dep=yes, cancelled.
  Status WaitFor(store::SkyJob& job, const job::Request& request,
                 const job::DependencyVerdict& verdict);
  // A job held back for its dependency, weighed on each look: once the sky
  // jobs answer it, submitted (spread, if an array that gains by it).
  void Release(store::SkyJob& job);
  // Whether the job is held back for its dependency (never submitted yet).
  static bool Waits(const store::SkyJob& job) {
    return job.state == "PENDING" && job.cluster.empty() && job.submitted == 0;
  }
};

}  // namespace skyslurm::daemon
