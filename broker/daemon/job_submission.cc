// Submission: a new sky job is recorded, placed on the warm view of the
// clusters and submitted under an intent, so that a crash at any step leaves
// either no job or exactly one (intent_recovery.cc settles the rest).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

#include "broker/daemon/fault_points.h"
#include "broker/daemon/job_manager.h"
#include "broker/place/audit.h"
#include "broker/place/job_folder.h"
#include "broker/place/planner.h"
#include "broker/place/spending.h"
#include "broker/place/submission.h"
#include "broker/util/trace.h"

namespace skyslurm::daemon {

using place::AppendAudit;
using place::AuditLine;
using place::NoClusterMessage;

namespace {

backend::CachingBackend* CacheOf(place::Workspace& ws, const std::string& cluster) {
  for (std::size_t i = 0; i < ws.handles.size() && i < ws.caching.size(); ++i) {
    if (ws.handles[i].name == cluster) return ws.caching[i];
  }
  return nullptr;
}

// How many jobs have been reserved on each cluster, by name.
std::map<std::string, std::uint64_t> PlacedSoFar(place::Workspace& ws) {
  std::map<std::string, std::uint64_t> placed;
  for (std::size_t i = 0; i < ws.handles.size() && i < ws.caching.size(); ++i) {
    if (ws.caching[i] != nullptr) placed[ws.handles[i].name] = ws.caching[i]->placed();
  }
  return placed;
}

// A job decided for a cluster, counted in its view until its submission has
// returned (CachingBackend::Reserve), whichever way it returns.
class Reservation {
 public:
  Reservation(place::Workspace& ws, const std::string& cluster, const backend::SubmitSpec& spec)
      : cache_(CacheOf(ws, cluster)) {
    if (cache_ != nullptr) token_ = cache_->Reserve(spec);
  }
  ~Reservation() {
    if (token_ != 0) cache_->Unreserve(token_);
  }
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;

 private:
  backend::CachingBackend* cache_ = nullptr;
  std::uint64_t token_ = 0;
};

}  // namespace

// The answer of the last submission on this thread (under the job's lock).
thread_local std::string JobManager::last_answer_workdir_;
thread_local std::vector<std::string> JobManager::last_answer_notes_;
thread_local bool JobManager::last_answer_home_ = false;
thread_local std::string JobManager::last_answer_folder_;

bool JobManager::ReclaimedFromSpot(const store::SkyJob& job) {
  auto copies = store_.Copies(job.sky_id);
  if (!copies.ok() || copies->empty()) return false;
  const store::Copy& last = copies->back();
  const std::vector<std::string> spot = ws_.config.settings.For(last.cluster).spot;
  if (std::find(spot.begin(), spot.end(), last.partition) == spot.end()) return false;
  // The failure policy's reason names the state that ended the copy
  // (failover_policy.cc): the node was lost, not the job's own failure.
  for (std::string_view lost : {"NODE_FAIL", "PREEMPTED", "BOOT_FAIL"}) {
    if (job.reason.starts_with(lost)) return true;
  }
  return false;
}

place::Policy JobManager::PolicyNow(std::chrono::milliseconds timeout) {
  place::Policy policy = place::PlacementPolicy(ws_, timeout);
  if (!ws_.config.settings.calibrate_estimates) return policy;
  const std::time_t now = Now();
  // Every cluster's latest jobs fit in this many rows.
  auto placed =
      store_.PlacedSince(now - place::kCalibrationWindowS, place::kCalibrationLatest * 20);
  if (!placed.ok()) return policy;  // estimates as laid out: no worse than the default
  std::vector<place::PlacedStart> starts;
  for (const store::SkyJob& j : *placed) {
    // What the model said: calibration learns from the model, not from its
    // own scaled answers (which would undo it the next time).
    starts.push_back({j.cluster, j.submitted, j.model_start > 0 ? j.model_start : j.expected_start,
                      j.started, j.started == 0 && j.state == "PENDING"});
  }
  policy.estimate_scales = place::CalibrateEstimates(std::move(starts), now);
  return policy;
}

Status JobManager::PlaceAndSubmit(store::SkyJob& job, EventKind kind, const std::string& why,
                                  const std::vector<std::string>& avoid, bool first_attempt,
                                  const std::string& leaving, const std::string& only) {
  SKY_ASSIGN_OR_RETURN(JobInput input, JobInputFromText(job.input_json));
  SKY_ASSIGN_OR_RETURN(job::Request request, job::ParseRequest(input.ToRequestInput()));
  SKY_ASSIGN_OR_RETURN(std::optional<SkyDependencyNow> dependency, ResolveDependency(request));
  return PlaceAndSubmitRead(job, input, request, dependency, kind, why, avoid, first_attempt,
                            leaving, only);
}

Status JobManager::PlaceAndSubmitRead(store::SkyJob& job, const JobInput& input,
                                      const job::Request& request,
                                      const std::optional<SkyDependencyNow>& dependency,
                                      EventKind kind, const std::string& why,
                                      const std::vector<std::string>& avoid, bool first_attempt,
                                      const std::string& leaving, const std::string& only) {
  // A --dependency on sky jobs not yet answered holds the job back here
  // (job_dependency.cc); at its submission it is placed all the same, so
  // that a job no cluster can run is refused now, not when it is released.
  const bool held_back = dependency && !dependency->satisfied();
  const bool checked_at_submission = kind == EventKind::kSubmitted && first_attempt;
  if (held_back && !checked_at_submission) {
    return WaitForDependency(job, request, dependency->verdict);
  }

  std::vector<place::ClusterHandle> handles = ws_.handles;  // MakePlan may mark them
  for (auto& h : handles) {
    if (std::find(avoid.begin(), avoid.end(), h.name) != avoid.end() && h.unavailable.empty()) {
      h.unavailable = "not answering (skyslurmd)";
    }
    if (h.name == leaving && h.unavailable.empty()) {
      h.unavailable = "the cluster the job is moving from";
    }
    if (!only.empty() && h.name != only && h.excluded.empty()) {
      h.excluded = fmt::format("the array's split gave this part to {}", only);
    }
  }
  place::PlanOptions options;
  options.probe_timeout = options_.probe_timeout;
  options.estimate_timeout = options_.estimate_timeout;
  options.only = request.sky.clusters;
  if (request.sky.infra) options.pinned = *request.sky.infra;
  options.estimate_with_submission = true;
  options.policy = PolicyNow(options.probe_timeout);
  if (kind == EventKind::kRestarted && ReclaimedFromSpot(job) &&
      options.policy.spot == place::SpotUse::kAllow) {
    // A provider that took one spot node back may take the next: on-demand
    // first, spot only when nothing else can run the job.
    options.policy.spot = place::SpotUse::kAvoid;
  }
  // Decisions taken at once (a burst from several shells) would each see
  // the same view: the one that chose a cluster another job was reserved
  // on since its view was taken is taken again (cheap: the probes and the
  // same job's estimates are cached), at most twice; the choice and the
  // reservation that shows it to the next decisions go together.
  place::Plan plan;
  std::unique_lock placing(placing_mu_, std::defer_lock);
  for (int replans = 0;; ++replans) {
    const std::map<std::string, std::uint64_t> placed = PlacedSoFar(ws_);
    plan = place::MakePlan(request, handles, ws_.catalog, ws_.home(), options);
    placing.lock();
    if (replans == 2 || !plan.decision.chosen) break;
    const std::string& cluster = plan.candidates[*plan.decision.chosen].cluster;
    const backend::CachingBackend* cache = CacheOf(ws_, cluster);
    if (cache == nullptr || !placed.contains(cluster) || cache->placed() == placed.at(cluster)) {
      break;
    }
    placing.unlock();
  }
  if (held_back && plan.decision.chosen) {
    // Runnable; it waits for its dependency, not for a cluster (its
    // estimate would say nothing of when it starts: not audited).
    placing.unlock();
    return WaitForDependency(job, request, dependency->verdict);
  }
  // A plan whose estimate goes with the submission is audited once it is known.
  if (kind == EventKind::kSubmitted && !plan.deferred) {
    AppendAudit(ws_.config.paths.state_dir,
                AuditLine(plan, ws_.config.paths.user, job.sky_id, request.script_name));
  }
  if (!plan.decision.chosen && (!leaving.empty() || !only.empty())) {
    // Nowhere else after all: back where it was rather than nowhere (a
    // part the split gave a cluster that now says no: anywhere).
    placing.unlock();
    return PlaceAndSubmitRead(job, input, request, dependency, kind, why, avoid, first_attempt);
  }
  if (!plan.decision.chosen) {
    const std::string msg = NoClusterMessage(plan);
    if (kind == EventKind::kSubmitted) {
      job.state = "REFUSED";
      job.reason = msg;
      job.ended = Now();
      SKY_RETURN_IF_ERROR(Record(job, EventKind::kRefused, msg));
      return FailedPreconditionError(msg);
    }
    if (job.reason != msg) {  // retried each poll; recorded when the reason changes
      job.reason = msg;
      SKY_RETURN_IF_ERROR(Record(job, EventKind::kWaiting, msg));
    }
    return UnavailableError(msg);
  }
  const place::Candidate& chosen = plan.candidates[*plan.decision.chosen];
  place::ClusterHandle* target = ws_.Find(chosen.cluster);
  if (target == nullptr || target->backend == nullptr) {
    return InternalError(fmt::format("cluster {} has no backend", chosen.cluster));
  }
  place::SubmissionContext context{
      .sky_id = job.sky_id, .env = &input.env, .submit_dir = input.cwd};
  if (job.restarts > 0) {
    context.extra_env.emplace_back("SKYSLURM_RESTART_COUNT", std::to_string(job.restarts));
  }
  // A task's secrets go with the job wherever it runs, in sbatch's
  // environment (a task's script has no --export list, which would carry
  // them in sbatch's arguments), never in its script.
  for (const std::string& name : input.secret_names) {
    if (auto it = input.env.find(name); it != input.env.end()) {
      context.extra_env.emplace_back(name, it->second);
    }
  }
  if (!job.parent.empty()) {
    // A part of a spread array: its tasks are the whole array's (their
    // SKYPILOT_TASK_ID, and the plugin's SLURM_ARRAY_TASK_MIN/MAX/COUNT).
    context.task_id = job.parent;
    for (auto& [name, value] : WholeArrayEnv(job)) context.extra_env.emplace_back(name, value);
  }
  backend::SubmitSpec spec = place::SpecFor(request, *plan.chosen_job(), *target, context);
  // skyslurm, not the cluster, owns a managed job's restarts.
  spec.restartable = !job.managed;
  // The job's folder there: where it runs, and whether it is copied first.
  const sync::WorkdirPlan folder =
      place::PlanJobFolder(ws_, *target, request, job.sky_id, input.cwd);
  place::ApplyJobFolder(folder, request, &spec);
  // Counted where it goes from now on: the decisions taken while its folder
  // is copied and its sbatch is on its way see the GPUs it will take.
  const Reservation reserved(ws_, target->name, spec);
  placing.unlock();
  // A submission sbatch (or the copy before it) refused: the first one's
  // final answer; a later one's passing trouble, retried.
  auto refused = [&](const std::string& msg) -> Status {
    if (kind == EventKind::kSubmitted) {
      job.state = "REFUSED";
      job.reason = msg;
      job.ended = Now();
      SKY_RETURN_IF_ERROR(Record(job, EventKind::kRefused, msg, target->name));
      return FailedPreconditionError(msg);
    }
    if (job.reason != msg) {
      job.reason = msg;
      SKY_RETURN_IF_ERROR(Record(job, EventKind::kWaiting, msg, target->name));
    }
    return UnavailableError(msg);
  };
  std::string copied;  // what was sent, for the answer
  if (folder.copy || folder.pack) {
    if (Status fits = CheckFolderSize(folder, target->name); !fits.ok()) {
      return refused(fits.message());
    }
  }
  if (folder.pack) {
    // Nothing leaves this machine before the job's own objects do.
    auto packed = PackFolder(job, folder, target->name);
    if (!packed.ok()) return refused(packed.status().message());
    spec.folder_archive = std::move(*packed);
    copied = config::DescribeBytes(spec.folder_archive.size()) + " packed";
  }
  if (!target->caps.own_job_ids) {
    // A cluster without job ids of its own (Kubernetes): the backend takes
    // its jobs' numbers from the cluster's shared counter, at least this one,
    // so that kappa:7 always means one job in this store even when the
    // counter was lost.
    std::lock_guard lock(ids_mu_);
    auto highest = store_.HighestNativeId(target->name);
    std::int64_t& last = last_native_id_[target->name];
    last = std::max(last, highest.ok() ? *highest : 0) + 1;
    spec.native_id = std::to_string(last);
  }
  spec.first_attempt = first_attempt;

  SKY_ASSIGN_OR_RETURN(std::int64_t intent,
                       store_.BeginIntent({0, job.sky_id, "submit", target->name, "", Now()}));
  if (kind == EventKind::kSubmitted) FaultPoint("submit.intent");
  // The real clock, as the files' times are: what is newer there once the
  // job has ended, the job wrote.
  std::int64_t sent_ns = 0;
  if (folder.copy) {
    sent_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
    auto sent = CopyFolder(job, folder, target->name);
    if (!sent.ok()) {
      (void)store_.EndIntent(intent);
      return refused(sent.status().message());
    }
    copied = *sent;
    if (kind == EventKind::kSubmitted) FaultPoint("submit.copied");
  }
  auto key = [&] {
    trace::Span span("submit to " + target->name);
    if (!plan.deferred) return target->backend->Submit(spec, options_.submit_timeout);
    auto both = target->backend->EstimateThenSubmit(spec, options_.submit_timeout);
    place::CompleteDeferredEstimate(plan, both.estimate, request, ws_.catalog, options.policy);
    if (kind == EventKind::kSubmitted) {
      AppendAudit(ws_.config.paths.state_dir,
                  AuditLine(plan, ws_.config.paths.user, job.sky_id, request.script_name));
    }
    return std::move(both.key);
  }();
  if (!key.ok() && key.status().code() == StatusCode::kDeadlineExceeded) {
    // sbatch may have made the job before its answer was lost, or may
    // still make it: the intent stays open, marked unanswered from now, and
    // a look at that cluster settles it by sky id, submitting again only
    // once unanswered_grace has passed without the job showing.
    (void)store_.Apply([&] {
      SKY_RETURN_IF_ERROR(store_.EndIntent(intent));
      return store_
          .BeginIntent({0, job.sky_id, std::string(kUnansweredSubmit), target->name, "", Now()})
          .status();
    });
    return UnavailableError(
        fmt::format("{}; skyslurmd finishes the submission of {} when {} answers",
                    key.status().message(), job.sky_id, target->name));
  }
  if (!key.ok()) {
    (void)store_.EndIntent(intent);
    // sbatch said no (a limit, an account...): the job's answer, not a
    // passing trouble to retry.
    if (kind == EventKind::kSubmitted) return refused(key.status().message());
    (void)refused(key.status().message());
    return key.status();
  }
  {
    // The cluster answered: however slow its queue reads are meanwhile (a
    // burst of submissions keeps its controller busy), it is not silent.
    std::lock_guard lock(view_mu_);
    views_[key->cluster].contacted = Now();
  }
  if (kind == EventKind::kSubmitted) FaultPoint("submit.sent");
  if (kind == EventKind::kMoved) FaultPoint("move.sent");
  if (kind == EventKind::kRestarted) FaultPoint("restart.sent");
  const std::string decision = plan.decision.summary + (why.empty() ? "" : " (" + why + ")");
  Status st = store_.Apply([&] {
    SKY_RETURN_IF_ERROR(store_.AddCopy(
        {job.sky_id, key->cluster, key->job_id, chosen.partition,
         fmt::format("{}", fmt::join(spec.job.args, "\n")), spec.job.script, "PENDING", Now(),
         folder.copy ? folder.dest : spec.workdir, folder.copy ? folder.source : "", sent_ns}));
    job.cluster = key->cluster;
    job.native_id = key->job_id;
    SKY_RETURN_IF_ERROR(GiveGlobalId(job));
    job.state = "PENDING";
    job.reason = plan.decision.summary;
    job.submitted = Now();
    job.expected_start = chosen.start.value_or(0);
    job.model_start = chosen.model_start.value_or(job.expected_start);
    if (kind == EventKind::kMoved || kind == EventKind::kReplaced) ++job.moves;
    SKY_RETURN_IF_ERROR(Record(job, kind, decision, key->cluster, key->job_id));
    return store_.EndIntent(intent);
  });
  {
    std::lock_guard lock(view_mu_);
    if (kind == EventKind::kMoved || kind == EventKind::kReplaced)
      moves_into_[key->cluster].push_back(Now());
  }
  last_answer_workdir_ = spec.workdir.empty() ? target->caps.default_workdir : spec.workdir;
  last_answer_home_ = target->home;
  last_answer_folder_ = folder.reason.empty() || copied.empty()
                            ? folder.reason
                            : fmt::format("{} ({})", folder.reason, copied);
  last_answer_notes_ = plan.chosen_job()->caveats;
  return st;
}

Result<SubmitAnswer> JobManager::Submit(const SubmitRequest& r) {
  if (!LooksLikeSkyId(r.sky_id)) {
    return InvalidArgumentError(fmt::format("'{}' is not a sky id", r.sky_id));
  }
  std::lock_guard lock(LockFor(r.sky_id));
  if (auto existing = store_.Get(r.sky_id); existing.ok()) {
    // The client's retry of a request the daemon may have half done.
    store::SkyJob job = *existing;
    auto open = store_.OpenIntents();
    const bool intent_open = open.ok() && std::any_of(open->begin(), open->end(), [&](auto& i) {
                               return i.sky_id == job.sky_id;
                             });
    if (job.state == "SUBMITTING" && job.cluster.empty() && !intent_open) {
      SKY_RETURN_IF_ERROR(PlaceAndSubmit(job, EventKind::kSubmitted, "", DeadClusters(), false));
    }
    if (job.state == "REFUSED") return FailedPreconditionError(job.reason);
    if (job.state == "SPREAD" || (store::IsFinalState(job.state) && job.cluster.empty() &&
                                  !store_.Parts(job.sky_id).value_or({}).empty())) {
      return SpreadAnswer(job);
    }
    const place::ClusterHandle* h = ws_.Find(job.cluster);
    return SubmitAnswer{job, job.reason, "", "", h != nullptr && h->home};
  }
  auto request = job::ParseRequest(r.input.ToRequestInput());
  if (!request.ok()) return request.status();
  // Sky jobs a --dependency names must exist, as slurmctld refuses unknown
  // ids ("Job dependency problem"): checked before anything is recorded.
  job::Request resolved = *request;
  SKY_ASSIGN_OR_RETURN(std::optional<SkyDependencyNow> dependency, ResolveDependency(resolved));
  if (dependency) {
    for (const auto& c : dependency->read.conditions) {
      if (store_.Get(c.sky_id).ok()) continue;
      const job::Setting* s = request->Effective(job::Opt::kDependency);
      return InvalidArgumentError(
          fmt::format("{}: --dependency={}: skyslurm knows no job {} (skyslurm queue lists yours)",
                      s->origin.Describe(request->script_name), *request->dependency, c.sky_id));
    }
  }
  if (request->sky.infra && ws_.Find(*request->sky.infra) == nullptr) {
    return InvalidArgumentError(
        fmt::format("--sky-infra={}: no such cluster", *request->sky.infra));
  }
  store::SkyJob job;
  job.sky_id = r.sky_id;
  job.owner = ws_.config.paths.user;
  job.input_json = JobInputText(r.input);
  job.name = job::SlurmJobName(*request);
  job.managed = r.managed || request->sky.managed;
  job.retry_on_failure = request->sky.retry_on_failure;
  job.created = job.updated = Now();
  SKY_RETURN_IF_ERROR(store_.Insert(job));
  last_answer_notes_.clear();
  last_answer_folder_.clear();
  FaultPoint("submit.recorded");
  // Held back for its dependency: spread (or not) when it is released.
  if (!dependency || dependency->satisfied()) {
    SKY_ASSIGN_OR_RETURN(const bool spread, SpreadArray(job, resolved, r.input));
    if (spread) return SpreadAnswer(job);
  }
  // The input, request and dependency read above, not again from the store.
  SKY_RETURN_IF_ERROR(PlaceAndSubmitRead(job, r.input, resolved, dependency, EventKind::kSubmitted,
                                         "", DeadClusters(), true));
  FaultPoint("submit.done");
  return SubmitAnswer{job,
                      job.reason,
                      last_answer_workdir_,
                      last_answer_folder_,
                      last_answer_home_,
                      last_answer_notes_};
}

}  // namespace skyslurm::daemon
