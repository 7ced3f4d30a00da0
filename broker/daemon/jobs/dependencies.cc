// A job whose --dependency names sky jobs: no slurmctld knows those ids, so
// skyslurmd holds the job back itself and submits it when they answer the
// dependency (job/sky_dependency.h), wherever each of them ran.
#include "broker/daemon/jobs/dependencies.h"

#include <fmt/format.h>

#include "broker/daemon/jobs/lifecycle.h"

namespace skyslurm::daemon {

Result<std::optional<SkyDependencyNow>> Dependencies::Resolve(job::Request& request) {
  using Answer = std::optional<SkyDependencyNow>;
  // The request then carries what sbatch gets, also while the job waits:
  // the placement that checks it at submission must see Slurm's own ids
  // (they keep it home), not sky ids no cluster knows.
  SKY_ASSIGN_OR_RETURN(job::SkyDependency read, job::TakeSkyDependency(request));
  if (read.conditions.empty()) return Answer();
  auto state_of = [&](const std::string& sky_id) {
    auto j = store_.Get(sky_id);
    if (!j.ok()) return job::DependeeState{};
    return job::DependeeState{true, j->state, store::IsFinalState(j->state), j->started};
  };
  job::DependencyVerdict verdict = job::WeighSkyDependency(read, state_of, Now());
  return Answer(SkyDependencyNow{std::move(read), std::move(verdict)});
}

Status Dependencies::WaitFor(store::SkyJob& job, const job::Request& request,
                             const job::DependencyVerdict& verdict) {
  if (verdict.status == job::DependencyStatus::kNeverSatisfied) {
    const job::Setting* kill = request.EffectiveByName("kill-on-invalid-dep");
    if (kill != nullptr && kill->occurrence.value.value_or("") == "yes") {
      // As slurmctld does with --kill-on-invalid-dep=yes.
      job.state = "CANCELLED";
      job.reason = verdict.reason;
      job.ended = Now();
      return Record(job, EventKind::kCancelled, verdict.reason + " (--kill-on-invalid-dep=yes)");
    }
  }
  if (job.state == "PENDING" && job.reason == verdict.reason) return OkStatus();
  job.state = "PENDING";
  job.reason = verdict.reason;
  return Record(job, EventKind::kDependency, verdict.reason);
}

void Dependencies::Release(store::SkyJob& job) {
  auto parsed = ctx_.parsed.Of(job);
  if (!parsed.ok()) return;
  job::Request request = (*parsed)->request;
  auto dependency = Resolve(request);
  if (!dependency.ok() || !dependency->has_value()) {
    // Read at submission; unreadable now only if the option table changed
    // under a stored job: placed as it is, where sbatch says what it thinks.
    (void)l_.placer.PlaceAndSubmit(job, EventKind::kSubmitted, "", DeadClusters(), false);
    return;
  }
  const SkyDependencyNow& now = **dependency;
  if (!now.satisfied()) {
    (void)WaitFor(job, request, now.verdict);
    return;
  }
  job.state = "SUBMITTING";
  job.reason = now.verdict.reason;
  if (!Record(job, EventKind::kDependency,
              fmt::format("{}: submitted now{}", now.verdict.reason,
                          now.read.rest.empty() ? "" : ", with --dependency=" + now.read.rest))
           .ok()) {
    return;
  }
  // A crash from here on leaves it SUBMITTING with no cluster: the next
  // tick places it (whole), its dependency satisfied still.
  auto spread = l_.arrays.Spread(job, request, (*parsed)->input);
  if (spread.ok() && *spread) return;
  (void)l_.placer.PlaceAndSubmit(job, EventKind::kSubmitted, "its dependency is satisfied",
                                 DeadClusters(), false);
}

}  // namespace skyslurm::daemon
