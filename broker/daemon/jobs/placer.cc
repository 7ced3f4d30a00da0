#include "broker/daemon/jobs/placer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "broker/daemon/jobs/fault_points.h"
#include "broker/daemon/jobs/lifecycle.h"
#include "broker/place/audit.h"
#include "broker/place/submission.h"
#include "broker/util/acting_user.h"
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

// skyslurmd's steps of a submission: its folder measured, packed and copied
// as the job's events, under the intent written before anything is sent.
class DaemonSteps : public place::SubmissionSteps {
 public:
  // `native_id`: the number a job is given on a cluster without ids of its
  // own ("" for one with).
  DaemonSteps(Lifecycle& l, store::SkyJob& job, EventKind kind, bool first_attempt,
              std::string cluster, std::function<std::string()> native_id)
      : l_(l),
        job_(job),
        kind_(kind),
        first_attempt_(first_attempt),
        cluster_(std::move(cluster)),
        native_id_(std::move(native_id)) {}

  Status CheckFolder(const sync::WorkdirPlan& folder, const std::string& cluster) override {
    return l_.folders.CheckSize(folder, cluster);
  }
  Result<std::string> PackFolder(const sync::WorkdirPlan& folder,
                                 const std::string& cluster) override {
    return l_.folders.Pack(job_, folder, cluster);
  }
  Status BeforeSending(backend::SubmitSpec& spec) override {
    spec.native_id = native_id_();
    spec.first_attempt = first_attempt_;
    SKY_ASSIGN_OR_RETURN(
        intent_, l_.ctx.store.BeginIntent({0, job_.sky_id, "submit", cluster_, "", l_.ctx.Now()}));
    if (kind_ == EventKind::kSubmitted) FaultPoint("submit.intent");
    return OkStatus();
  }
  Result<std::string> CopyFolder(const sync::WorkdirPlan& folder,
                                 const std::string& cluster) override {
    SKY_ASSIGN_OR_RETURN(std::string copied, l_.folders.Copy(job_, folder, cluster));
    if (kind_ == EventKind::kSubmitted) FaultPoint("submit.copied");
    return copied;
  }

  // The intent written (0: none yet).
  std::int64_t intent() const { return intent_; }

 private:
  Lifecycle& l_;
  store::SkyJob& job_;
  const EventKind kind_;
  const bool first_attempt_;
  const std::string cluster_;
  const std::function<std::string()> native_id_;
  std::int64_t intent_ = 0;
};

}  // namespace

// What one placement works from: the job as typed, its request (with what
// is left of its --dependency for sbatch) and that dependency now.
struct Placer::Job {
  const JobInput& input;
  const job::Request& request;
  const std::optional<SkyDependencyNow>& dependency;
};

bool Placer::ReclaimedFromSpot(const store::SkyJob& job) {
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

std::string Placer::NextNativeId(const std::string& cluster) {
  // The backend takes its jobs' numbers from the cluster's shared counter,
  // at least this one, so that kappa:7 always means one job in this store
  // even when the counter was lost.
  std::lock_guard lock(ids_mu_);
  auto highest = store_.HighestNativeId(cluster);
  std::int64_t& last = last_native_id_[cluster];
  last = std::max(last, highest.ok() ? *highest : 0) + 1;
  return std::to_string(last);
}

Result<Placed> Placer::PlaceAndSubmit(store::SkyJob& job, EventKind kind, const std::string& why,
                                      const std::vector<std::string>& avoid, bool first_attempt,
                                      const std::string& leaving, const std::string& only) {
  SKY_ASSIGN_OR_RETURN(std::shared_ptr<const ParsedJob> parsed, ctx_.parsed.Of(job));
  job::Request request = parsed->request;
  SKY_ASSIGN_OR_RETURN(std::optional<SkyDependencyNow> dependency,
                       l_.dependencies.Resolve(request));
  return PlaceAndSubmitRead(job, Job{parsed->input, request, dependency}, kind, why, avoid,
                            first_attempt, leaving, only);
}

place::PlanOptions Placer::OptionsFor(const store::SkyJob& job, const job::Request& request,
                                      EventKind kind) {
  place::PlanOptions options;
  options.probe_timeout = options_.probe_timeout;
  options.estimate_timeout = options_.estimate_timeout;
  options.only = request.sky.clusters;
  if (request.sky.infra) options.pinned = *request.sky.infra;
  options.estimate_with_submission = true;
  options.policy = ctx_.PolicyNow(options.probe_timeout);
  if (kind == EventKind::kRestarted && ReclaimedFromSpot(job) &&
      options.policy.spot == place::SpotUse::kAllow) {
    // A provider that took one spot node back may take the next: on-demand
    // first, spot only when nothing else can run the job.
    options.policy.spot = place::SpotUse::kAvoid;
  }
  return options;
}

place::Plan Placer::Decide(const job::Request& request, std::vector<place::ClusterHandle>& handles,
                           const place::PlanOptions& options,
                           std::unique_lock<std::mutex>& placing) {
  // Decisions taken at once (a burst from several shells) would each see
  // the same view: the one that chose a cluster another job was reserved
  // on since its view was taken is taken again (cheap: the probes and the
  // same job's estimates are cached), at most twice; the choice and the
  // reservation that shows it to the next decisions go together.
  place::Plan plan;
  for (int replans = 0;; ++replans) {
    const std::map<std::string, std::uint64_t> placed = PlacedSoFar(ws_);
    plan = place::MakePlan(request, handles, ws_.catalog, ws_.home(), options);
    placing.lock();
    if (replans == 2 || !plan.decision.chosen) return plan;
    const std::string& cluster = plan.candidates[*plan.decision.chosen].cluster;
    const backend::CachingBackend* cache = CacheOf(ws_, cluster);
    if (cache == nullptr || !placed.contains(cluster) || cache->placed() == placed.at(cluster)) {
      return plan;
    }
    placing.unlock();
  }
}

Result<Placed> Placer::NoCluster(store::SkyJob& job, EventKind kind, const place::Plan& plan) {
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

Result<Placed> Placer::PlaceAndSubmitRead(store::SkyJob& job, const Job& what, EventKind kind,
                                          const std::string& why,
                                          const std::vector<std::string>& avoid, bool first_attempt,
                                          const std::string& leaving, const std::string& only) {
  // A --dependency on sky jobs not yet answered holds the job back here
  // (dependencies.h); at its submission it is placed all the same, so that
  // a job no cluster can run is refused now, not when it is released.
  const bool held_back = what.dependency && !what.dependency->satisfied();
  const bool checked_at_submission = kind == EventKind::kSubmitted && first_attempt;
  if (held_back && !checked_at_submission) {
    SKY_RETURN_IF_ERROR(l_.dependencies.WaitFor(job, what.request, what.dependency->verdict));
    return Placed{};
  }
  std::vector<place::ClusterHandle> handles =
      ctx_.HandlesWithout(avoid, "not answering (skyslurmd)");
  for (auto& h : handles) {
    if (h.name == leaving && h.unavailable.empty()) {
      h.unavailable = "the cluster the job is moving from";
    }
    if (!only.empty() && h.name != only && h.excluded.empty()) {
      h.excluded = fmt::format("the array's split gave this part to {}", only);
    }
  }
  const place::PlanOptions options = OptionsFor(job, what.request, kind);
  std::unique_lock placing(placing_mu_, std::defer_lock);
  place::Plan plan = Decide(what.request, handles, options, placing);
  if (held_back && plan.decision.chosen) {
    // Runnable; it waits for its dependency, not for a cluster (its
    // estimate would say nothing of when it starts: not audited).
    placing.unlock();
    SKY_RETURN_IF_ERROR(l_.dependencies.WaitFor(job, what.request, what.dependency->verdict));
    return Placed{};
  }
  // A plan whose estimate goes with the submission is audited once it is known.
  if (kind == EventKind::kSubmitted && !plan.deferred) {
    AppendAudit(ws_.config.paths.state_dir,
                AuditLine(plan, ws_.config.paths.user, job.sky_id, what.request.script_name));
  }
  if (!plan.decision.chosen && (!leaving.empty() || !only.empty())) {
    // Nowhere else after all: back where it was rather than nowhere (a
    // part the split gave a cluster that now says no: anywhere).
    placing.unlock();
    return PlaceAndSubmitRead(job, what, kind, why, avoid, first_attempt, "", "");
  }
  if (!plan.decision.chosen) return NoCluster(job, kind, plan);
  return SubmitTo(job, what, kind, why, first_attempt, plan, options, placing);
}

Result<Placed> Placer::SubmitTo(store::SkyJob& job, const Job& what, EventKind kind,
                                const std::string& why, bool first_attempt, place::Plan& plan,
                                const place::PlanOptions& options,
                                std::unique_lock<std::mutex>& placing) {
  const place::Candidate& chosen = plan.candidates[*plan.decision.chosen];
  place::ClusterHandle* target = ws_.Find(chosen.cluster);
  if (target == nullptr || target->backend == nullptr) {
    return InternalError(fmt::format("cluster {} has no backend", chosen.cluster));
  }
  place::SubmissionContext context{
      .sky_id = job.sky_id, .env = &what.input.env, .submit_dir = what.input.cwd};
  for (const place::ClusterResult& c : plan.clusters) {
    if (c.name == chosen.cluster && c.inventory) context.description = &c.inventory->description;
  }
  if (job.restarts > 0) {
    context.extra_env.emplace_back("SKYSLURM_RESTART_COUNT", std::to_string(job.restarts));
  }
  // A task's secrets go with the job wherever it runs, in sbatch's
  // environment (a task's script has no --export list, which would carry
  // them in sbatch's arguments), never in its script.
  for (const std::string& name : what.input.secret_names) {
    if (auto it = what.input.env.find(name); it != what.input.env.end()) {
      context.extra_env.emplace_back(name, it->second);
    }
  }
  if (!job.parent.empty()) {
    // A part of a spread array: its tasks are the whole array's (their
    // SKYPILOT_TASK_ID, and the plugin's SLURM_ARRAY_TASK_MIN/MAX/COUNT).
    context.task_id = job.parent;
    for (auto& [name, value] : l_.arrays.WholeArrayEnv(job)) {
      context.extra_env.emplace_back(name, value);
    }
  }
  place::Submission sub = place::PrepareSubmission(ws_, *target, what.request, *plan.chosen_job(),
                                                   context, what.input.cwd);
  // skyslurm, not the cluster, owns a managed job's restarts.
  sub.spec.restartable = !job.managed;
  // Counted where it goes from now on: the decisions taken while its folder
  // is copied and its sbatch is on its way see the GPUs it will take.
  const Reservation reserved(ws_, target->name, sub.spec);
  placing.unlock();
  DaemonSteps steps(l_, job, kind, first_attempt, target->name, [this, target]() -> std::string {
    return target->caps.own_job_ids ? "" : NextNativeId(target->name);
  });
  const Status sent = place::Send(sub, *target, steps,
                                  {.timeout = options_.submit_timeout,
                                   .estimate = place::EstimateWithSubmission{
                                       &plan, &what.request, &ws_.catalog, &options.policy}});
  if (plan.deferred && kind == EventKind::kSubmitted &&
      sub.stage >= place::Submission::Stage::kSubmit) {
    AppendAudit(ws_.config.paths.state_dir,
                AuditLine(plan, ws_.config.paths.user, job.sky_id, what.request.script_name));
  }
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
  if (!sent.ok()) {
    if (sub.stage == place::Submission::Stage::kBeforeSending) return sent;
    if (sub.stage == place::Submission::Stage::kFolder) {
      if (steps.intent() != 0) (void)store_.EndIntent(steps.intent());
      return refused(sent.message());
    }
    if (sent.code() == StatusCode::kDeadlineExceeded) {
      // sbatch may have made the job before its answer was lost, or may
      // still make it: the intent stays open, marked unanswered from now,
      // and a look at that cluster settles it by sky id, submitting again
      // only once unanswered_grace has passed without the job showing.
      (void)store_.Apply([&] {
        SKY_RETURN_IF_ERROR(store_.EndIntent(steps.intent()));
        return store_
            .BeginIntent({0, job.sky_id, std::string(kUnansweredSubmit), target->name, "", Now()})
            .status();
      });
      return UnavailableError(
          fmt::format("{}; skyslurmd finishes the submission of {} when {} answers", sent.message(),
                      job.sky_id, target->name));
    }
    (void)store_.EndIntent(steps.intent());
    // sbatch said no (a limit, an account...): the job's answer, not a
    // passing trouble to retry.
    if (kind == EventKind::kSubmitted) return refused(sent.message());
    (void)refused(sent.message());
    return sent;
  }
  const backend::JobKey& key = *sub.key;
  // The cluster answered: however slow its queue reads are meanwhile (a
  // burst of submissions keeps its controller busy), it is not silent.
  ctx_.views.Contacted(key.cluster, Now());
  if (kind == EventKind::kSubmitted) FaultPoint("submit.sent");
  if (kind == EventKind::kMoved) FaultPoint("move.sent");
  if (kind == EventKind::kRestarted) FaultPoint("restart.sent");
  const std::string decision = plan.decision.summary + (why.empty() ? "" : " (" + why + ")");
  const sync::WorkdirPlan& folder = sub.folder;
  Status st = store_.Apply([&] {
    SKY_RETURN_IF_ERROR(
        store_.AddCopy({job.sky_id, key.cluster, key.job_id, chosen.partition,
                        fmt::format("{}", fmt::join(sub.spec.job.args, "\n")), sub.spec.job.script,
                        "PENDING", Now(), folder.copy ? folder.dest : sub.spec.workdir,
                        folder.copy ? folder.source : "", sub.sent_ns}));
    job.cluster = key.cluster;
    job.native_id = key.job_id;
    SKY_RETURN_IF_ERROR(ctx_.GiveGlobalId(job));
    job.state = "PENDING";
    job.reason = plan.decision.summary;
    job.submitted = Now();
    job.expected_start = chosen.start.value_or(0);
    job.model_start = chosen.model_start.value_or(job.expected_start);
    if (kind == EventKind::kMoved || kind == EventKind::kReplaced) ++job.moves;
    SKY_RETURN_IF_ERROR(Record(job, kind, decision, key.cluster, key.job_id));
    return store_.EndIntent(steps.intent());
  });
  if (kind == EventKind::kMoved || kind == EventKind::kReplaced) {
    l_.mover.MovedInto(key.cluster, Now());
  }
  SKY_RETURN_IF_ERROR(st);
  return Placed{sub.Workdir(target->caps), sub.FolderNote(), target->home,
                plan.chosen_job()->caveats};
}

Result<SubmitAnswer> Placer::SubmitNew(const SubmitRequest& r) {
  if (!LooksLikeSkyId(r.sky_id)) {
    return InvalidArgumentError(fmt::format("'{}' is not a sky id", r.sky_id));
  }
  std::lock_guard lock(LockFor(r.sky_id));
  if (auto existing = store_.Get(r.sky_id); existing.ok()) {
    // The client's retry of a request the daemon may have half done.
    store::SkyJob job = *existing;
    if (!MaySee(job.owner)) {
      return AlreadyExistsError(fmt::format("the sky id {} is another user's job", r.sky_id));
    }
    ActingFor as_owner(job.owner);
    auto open = store_.OpenIntents();
    const bool intent_open = open.ok() && std::any_of(open->begin(), open->end(), [&](auto& i) {
                               return i.sky_id == job.sky_id;
                             });
    // (A site's replica: only a job it holds; its holder places it otherwise.)
    if (job.state == "SUBMITTING" && job.cluster.empty() && !intent_open &&
        ctx_.TakeJob(job.sky_id)) {
      SKY_RETURN_IF_ERROR(
          PlaceAndSubmit(job, EventKind::kSubmitted, "", DeadClusters(), false).status());
    }
    if (job.state == "REFUSED") return FailedPreconditionError(job.reason);
    if (job.state == "SPREAD" || (store::IsFinalState(job.state) && job.cluster.empty() &&
                                  !store_.Parts(job.sky_id).value_or({}).empty())) {
      return l_.arrays.Answer(job);
    }
    const place::ClusterHandle* h = ws_.Find(job.cluster);
    return SubmitAnswer{job, job.reason, "", "", h != nullptr && h->home};
  }
  std::shared_ptr<const ParsedJob> parsed = r.parsed;
  if (parsed == nullptr) {
    SKY_ASSIGN_OR_RETURN(parsed, ParseJob(r.input));
  }
  const job::Request& request = parsed->request;
  // Sky jobs a --dependency names must exist, as slurmctld refuses unknown
  // ids ("Job dependency problem"): checked before anything is recorded.
  job::Request resolved = request;
  SKY_ASSIGN_OR_RETURN(std::optional<SkyDependencyNow> dependency,
                       l_.dependencies.Resolve(resolved));
  if (dependency) {
    for (const auto& c : dependency->read.conditions) {
      if (auto named = store_.Get(c.sky_id); named.ok() && MaySee(named->owner)) continue;
      const job::Setting* s = request.Effective(job::Opt::kDependency);
      return InvalidArgumentError(
          fmt::format("{}: --dependency={}: skyslurm knows no job {} (skyslurm queue lists yours)",
                      s->origin.Describe(request.script_name), *request.dependency, c.sky_id));
    }
  }
  if (request.sky.infra && ws_.Find(*request.sky.infra) == nullptr) {
    return InvalidArgumentError(fmt::format("--sky-infra={}: no such cluster", *request.sky.infra));
  }
  store::SkyJob job;
  job.sky_id = r.sky_id;
  // A site's daemon: the user MUNGE named; a user's own: its user.
  job.owner = r.owner.empty() ? ws_.config.paths.user : r.owner;
  ActingFor as_owner(job.owner);
  job.input_json = JobInputText(r.input);
  job.name = job::SlurmJobName(request);
  job.managed = r.managed || request.sky.managed;
  job.retry_on_failure = request.sky.retry_on_failure;
  job.created = job.updated = Now();
  SKY_RETURN_IF_ERROR(store_.Insert(job));
  ctx_.parsed.Keep(job.sky_id, job.input_json, parsed);
  FaultPoint("submit.recorded");
  // Held back for its dependency: spread (or not) when it is released.
  if (!dependency || dependency->satisfied()) {
    SKY_ASSIGN_OR_RETURN(const bool spread, l_.arrays.Spread(job, resolved, parsed->input));
    if (spread) return l_.arrays.Answer(job);
  }
  // The input, request and dependency read above, not again from the store.
  SKY_ASSIGN_OR_RETURN(Placed placed,
                       PlaceAndSubmitRead(job, Job{parsed->input, resolved, dependency},
                                          EventKind::kSubmitted, "", DeadClusters(), true, "", ""));
  FaultPoint("submit.done");
  return SubmitAnswer{job, job.reason, placed.workdir, placed.folder, placed.home, placed.notes};
}

}  // namespace skyslurm::daemon
