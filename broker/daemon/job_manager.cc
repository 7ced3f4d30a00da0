#include "broker/daemon/job_manager.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <future>
#include <set>

#include "broker/backend/slurm_state.h"
#include "broker/daemon/failover_policy.h"
#include "broker/daemon/fault_points.h"
#include "broker/place/audit.h"
#include "broker/place/planner.h"
#include "broker/place/submission.h"
#include "broker/util/strings.h"

namespace skyslurm::daemon {
namespace {

using place::AppendAudit;
using place::AuditLine;
using place::NoClusterMessage;

using backend::IsLiveState;

bool LooksLikeSkyId(std::string_view id) {
  return id.starts_with("sky-") && id.size() <= 64 && std::all_of(id.begin(), id.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-';
         });
}

}  // namespace

thread_local std::string JobManager::last_answer_workdir_;
thread_local std::vector<std::string> JobManager::last_answer_notes_;
thread_local bool JobManager::last_answer_home_ = false;

JobManager::JobManager(store::JobStore& store, place::Workspace& workspace, ManagerOptions options)
    : store_(store),
      ws_(workspace),
      options_(std::move(options)),
      policy_(workspace.config.settings.failover),
      started_(Now()) {}

std::time_t JobManager::Now() const {
  return options_.clock ? options_.clock() : std::time(nullptr);
}

backend::Backend* JobManager::BackendOf(const std::string& cluster) {
  place::ClusterHandle* h = ws_.Find(cluster);
  return h != nullptr ? h->backend : nullptr;
}

std::mutex& JobManager::LockFor(const std::string& sky_id) {
  std::lock_guard lock(locks_mu_);
  auto& m = locks_[sky_id];
  if (!m) m = std::make_unique<std::mutex>();
  return *m;
}

Status JobManager::Record(const store::SkyJob& job, const std::string& kind,
                          const std::string& detail, const std::string& cluster,
                          const std::string& slurm_id) {
  Status st = store_.Apply([&] {
    store::SkyJob j = job;
    j.updated = Now();
    SKY_RETURN_IF_ERROR(store_.Update(j));
    return store_.AddEvent({0, job.sky_id, Now(), kind, cluster, slurm_id, detail});
  });
  if (options_.log) {
    options_.log(fmt::format(
        "{} {}{} {}", job.sky_id, kind,
        cluster.empty() ? "" : " " + cluster + (slurm_id.empty() ? "" : ":" + slurm_id), detail));
  }
  return st;
}

Status JobManager::DetachCopy(store::SkyJob& job, const std::string& copy_state,
                              const std::string& state, const std::string& reason,
                              const std::string& kind, const std::string& detail) {
  const std::string cluster = job.cluster, slurm_id = job.slurm_id;
  return store_.Apply([&] {
    SKY_RETURN_IF_ERROR(store_.SetCopyState(cluster, slurm_id, copy_state));
    job.cluster.clear();
    job.slurm_id.clear();
    job.state = state;
    job.reason = reason;
    return Record(job, kind, detail, cluster, slurm_id);
  });
}

std::vector<std::string> JobManager::DeadClusters() {
  std::lock_guard lock(view_mu_);
  std::vector<std::string> dead;
  const std::time_t now = Now();
  for (const auto& [name, v] : views_) {
    if (!v.answered_now && v.answered != 0 && now - v.answered >= policy_.cluster_dead_after) {
      dead.push_back(name);
    } else if (!v.answered_now && v.answered == 0 && !v.error.empty() &&
               now - started_ >= policy_.cluster_dead_after) {
      dead.push_back(name);  // silent since the daemon started
    }
  }
  return dead;
}

Status JobManager::PlaceAndSubmit(store::SkyJob& job, const std::string& kind,
                                  const std::string& why, const std::vector<std::string>& avoid,
                                  bool first_attempt) {
  SKY_ASSIGN_OR_RETURN(JobInput input, JobInputFromText(job.input_json));
  SKY_ASSIGN_OR_RETURN(job::Request request, job::ParseRequest(input.ToRequestInput()));

  std::vector<place::ClusterHandle> handles = ws_.handles;  // MakePlan may mark them
  for (auto& h : handles) {
    if (std::find(avoid.begin(), avoid.end(), h.name) != avoid.end() && h.unavailable.empty()) {
      h.unavailable = "not answering (skyslurmd)";
    }
  }
  place::PlanOptions options;
  options.probe_timeout = options_.probe_timeout;
  options.estimate_timeout = options_.estimate_timeout;
  options.only = request.sky.clusters;
  if (request.sky.infra) options.pinned = *request.sky.infra;
  place::Plan plan = place::MakePlan(request, handles, ws_.catalog, ws_.home(), options);
  if (kind == "submitted") {
    AppendAudit(ws_.config.paths.state_dir,
                AuditLine(plan, ws_.config.paths.user, job.sky_id, request.script_name));
  }
  if (!plan.decision.chosen) {
    const std::string msg = NoClusterMessage(plan);
    if (kind == "submitted") {
      job.state = "REFUSED";
      job.reason = msg;
      job.ended = Now();
      SKY_RETURN_IF_ERROR(Record(job, "refused", msg));
      return FailedPreconditionError(msg);
    }
    if (job.reason != msg) {  // retried each poll; recorded when the reason changes
      job.reason = msg;
      SKY_RETURN_IF_ERROR(Record(job, "waiting", msg));
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
  backend::SubmitSpec spec = place::SpecFor(request, *plan.chosen_job(), *target, context);
  if (job.managed) {
    // skyslurm, not Slurm, owns the retry: a requeue would hide the failure.
    spec.job.args.push_back("--no-requeue");
  }
  spec.first_attempt = first_attempt;

  SKY_ASSIGN_OR_RETURN(std::int64_t intent,
                       store_.BeginIntent({0, job.sky_id, "submit", target->name, "", Now()}));
  if (kind == "submitted") FaultPoint("submit.intent");
  auto key = target->backend->Submit(spec, options_.submit_timeout);
  if (!key.ok() && key.status().code() == StatusCode::kDeadlineExceeded) {
    // sbatch may have made the job before its answer was lost: the intent
    // stays open and the next look at that cluster settles it by sky id.
    return UnavailableError(
        fmt::format("{}; skyslurmd finishes the submission of {} when {} answers",
                    key.status().message(), job.sky_id, target->name));
  }
  if (!key.ok()) {
    (void)store_.EndIntent(intent);
    const std::string msg = key.status().message();
    if (kind == "submitted") {
      // sbatch said no (a limit, an account...): the job's answer, not a
      // passing trouble to retry.
      job.state = "REFUSED";
      job.reason = msg;
      job.ended = Now();
      SKY_RETURN_IF_ERROR(Record(job, "refused", msg, target->name));
      return FailedPreconditionError(msg);
    }
    if (job.reason != msg) {
      job.reason = msg;
      SKY_RETURN_IF_ERROR(Record(job, "waiting", msg, target->name));
    }
    return key.status();
  }
  if (kind == "submitted") FaultPoint("submit.sent");
  if (kind == "moved") FaultPoint("move.sent");
  if (kind == "restarted") FaultPoint("restart.sent");
  const std::string decision = plan.decision.summary + (why.empty() ? "" : " (" + why + ")");
  Status st = store_.Apply([&] {
    SKY_RETURN_IF_ERROR(store_.AddCopy({job.sky_id, key->cluster, key->job_id, chosen.partition,
                                        fmt::format("{}", fmt::join(spec.job.args, "\n")),
                                        spec.job.script, "PENDING", Now()}));
    job.cluster = key->cluster;
    job.slurm_id = key->job_id;
    job.state = "PENDING";
    job.reason = plan.decision.summary;
    job.submitted = Now();
    job.expected_start = chosen.start.value_or(0);
    if (kind == "moved" || kind == "re-placed") ++job.moves;
    SKY_RETURN_IF_ERROR(Record(job, kind, decision, key->cluster, key->job_id));
    return store_.EndIntent(intent);
  });
  {
    std::lock_guard lock(view_mu_);
    if (kind == "moved" || kind == "re-placed") moves_into_[key->cluster].push_back(Now());
  }
  last_answer_workdir_ = spec.workdir;
  last_answer_home_ = target->home;
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
      SKY_RETURN_IF_ERROR(PlaceAndSubmit(job, "submitted", "", DeadClusters(), false));
    }
    if (job.state == "REFUSED") return FailedPreconditionError(job.reason);
    const place::ClusterHandle* h = ws_.Find(job.cluster);
    return SubmitAnswer{job, job.reason, "", h != nullptr && h->home};
  }
  auto request = job::ParseRequest(r.input.ToRequestInput());
  if (!request.ok()) return request.status();
  store::SkyJob job;
  job.sky_id = r.sky_id;
  job.owner = ws_.config.paths.user;
  job.input_json = JobInputText(r.input);
  job.managed = r.managed || request->sky.managed;
  job.retry_on_failure = request->sky.retry_on_failure;
  job.created = job.updated = Now();
  SKY_RETURN_IF_ERROR(store_.Insert(job));
  last_answer_notes_.clear();
  FaultPoint("submit.recorded");
  SKY_RETURN_IF_ERROR(PlaceAndSubmit(job, "submitted", "", DeadClusters(), true));
  FaultPoint("submit.done");
  return SubmitAnswer{job, job.reason, last_answer_workdir_, last_answer_home_, last_answer_notes_};
}

Result<store::SkyJob> JobManager::Find(const std::string& id) {
  if (id.find(':') == std::string::npos) return store_.Get(id);
  const std::string cluster = id.substr(0, id.find(':'));
  const std::string slurm_id = id.substr(id.find(':') + 1);
  SKY_ASSIGN_OR_RETURN(std::vector<store::SkyJob> all, store_.List(false));
  for (const auto& j : all) {
    if (j.cluster == cluster && j.slurm_id == slurm_id) return j;
  }
  for (const auto& j : all) {
    auto copies = store_.Copies(j.sky_id);
    if (!copies.ok()) continue;
    for (const auto& c : *copies) {
      if (c.cluster == cluster && c.slurm_id == slurm_id) return j;
    }
  }
  return NotFoundError(fmt::format("{} is not a job skyslurm tracks", id));
}

Status JobManager::Cancel(const std::string& id) {
  auto found = Find(id);
  if (!found.ok()) {
    if (id.find(':') == std::string::npos) return found.status();
    // A Slurm job skyslurm did not route: cancel it where it is.
    const std::string cluster = id.substr(0, id.find(':'));
    backend::Backend* b = BackendOf(cluster);
    if (b == nullptr) return NotFoundError(fmt::format("no cluster named {}", cluster));
    return b->Cancel(id.substr(id.find(':') + 1), false, options_.submit_timeout);
  }
  std::lock_guard lock(LockFor(found->sky_id));
  SKY_ASSIGN_OR_RETURN(store::SkyJob job, store_.Get(found->sky_id));
  if (store::IsFinalState(job.state)) {
    return FailedPreconditionError(fmt::format("{} has ended ({})", job.sky_id, job.state));
  }
  // One intent for the whole job, written first: the user's cancel is kept
  // whatever happens next, and every copy that may be live (the current one
  // and any left on a cluster that stopped answering) is cancelled now or,
  // when its cluster does not answer, as soon as it does.
  SKY_ASSIGN_OR_RETURN(std::int64_t intent,
                       store_.BeginIntent({0, job.sky_id, "cancel", "", "", Now()}));
  FaultPoint("cancel.intent");
  const std::vector<std::string> unreachable = CancelCopies(job);
  FaultPoint("cancel.sent");
  job.state = "CANCELLED";
  job.reason = "cancelled by the user";
  job.ended = Now();
  Status recorded = store_.Apply([&] {
    SKY_RETURN_IF_ERROR(Record(job, "cancelled", "skyslurm cancel", job.cluster, job.slurm_id));
    return unreachable.empty() ? store_.EndIntent(intent) : OkStatus();
  });
  if (!recorded.ok()) return recorded;
  if (!unreachable.empty()) {
    return UnavailableError(fmt::format(
        "{} is cancelled; its copies on {} are cancelled when those clusters answer again",
        job.sky_id, fmt::join(unreachable, ", ")));
  }
  return OkStatus();
}

std::vector<std::string> JobManager::CancelCopies(const store::SkyJob& job) {
  std::vector<std::string> unreachable;
  auto copies = store_.Copies(job.sky_id);
  if (!copies.ok()) return {"(state database)"};
  // One look at each cluster's queue, however many copies are there.
  std::map<std::string, Result<std::vector<backend::JobInfo>>> queues;
  for (const auto& c : *copies) {
    if (c.state == "CANCELLED" || c.state == "ENDED") continue;
    backend::Backend* b = BackendOf(c.cluster);
    auto it = queues.find(c.cluster);
    if (it == queues.end()) {
      it = queues
               .emplace(c.cluster, b == nullptr ? Result<std::vector<backend::JobInfo>>(
                                                      UnavailableError("no backend"))
                                                : b->Jobs(options_.queue_timeout))
               .first;
    }
    const auto& queue = it->second;
    if (!queue.ok()) {
      unreachable.push_back(c.cluster);
      continue;
    }
    const bool live = std::any_of(queue->begin(), queue->end(), [&](const backend::JobInfo& j) {
      return j.key.job_id == c.slurm_id && IsLiveState(j.state) &&
             backend::PhaseOf(j.state) != backend::SlurmPhase::kEnding;
    });
    // scancel refuses a job that has already ended: the queue decides.
    if (live && !b->Cancel(c.slurm_id, false, options_.submit_timeout).ok()) {
      unreachable.push_back(c.cluster);
      continue;
    }
    (void)store_.SetCopyState(c.cluster, c.slurm_id, live ? "CANCELLED" : "ENDED");
  }
  return unreachable;
}

Result<std::string> JobManager::Output(const std::string& id) {
  std::string cluster, slurm_id;
  if (auto job = Find(id); job.ok()) {
    cluster = job->cluster;
    slurm_id = job->slurm_id;
    if (id.find(':') != std::string::npos) {
      cluster = id.substr(0, id.find(':'));
      slurm_id = id.substr(id.find(':') + 1);
    }
    if (cluster.empty()) {
      const std::string why =
          fmt::format("{} is {} and has no job on a cluster{}", job->sky_id, job->state,
                      store::IsFinalState(job->state) ? "" : " yet");
      return store::IsFinalState(job->state) ? FailedPreconditionError(why) : UnavailableError(why);
    }
  } else if (id.find(':') != std::string::npos) {
    cluster = id.substr(0, id.find(':'));
    slurm_id = id.substr(id.find(':') + 1);
  } else {
    return job.status();
  }
  backend::Backend* b = BackendOf(cluster);
  if (b == nullptr) return NotFoundError(fmt::format("no cluster named {}", cluster));
  return b->Output(slurm_id, options_.queue_timeout);
}

std::vector<QueueRow> JobManager::Queue() {
  std::vector<QueueRow> rows;
  std::set<std::string> shown;
  {
    std::lock_guard lock(view_mu_);
    for (const auto& h : ws_.handles) {
      auto it = views_.find(h.name);
      if (it == views_.end()) continue;
      // Over SSH, the jobs are the login user's there.
      const cluster::ClusterEntry* entry = ws_.registry.Find(h.name);
      const std::string user = entry != nullptr && entry->ssh && !entry->ssh->user.empty()
                                   ? entry->ssh->user
                                   : ws_.config.paths.user;
      for (const auto& j : it->second.jobs) {
        if (j.user != user) continue;
        if (!IsLiveState(j.state)) continue;  // as squeue: what has not ended
        QueueRow r{j.sky_id,     j.key.cluster,
                   j.key.job_id, j.user,
                   j.state,      j.reason,
                   j.name,       backend::IsWaitingState(j.state) ? j.submit_time : j.start_time};
        if (!j.sky_id.empty()) {
          // A sky job's row is its current copy; stale copies say so.
          auto sky = store_.Get(j.sky_id);
          if (sky.ok() && (sky->cluster != j.key.cluster || sky->slurm_id != j.key.job_id)) {
            r.reason = "stale copy of " + j.sky_id;
          } else if (sky.ok()) {
            shown.insert(j.sky_id);
          }
        }
        rows.push_back(std::move(r));
      }
    }
  }
  // Sky jobs without a copy in view: between two copies, or on a cluster
  // that does not answer.
  if (auto live = store_.List(true); live.ok()) {
    for (const auto& j : *live) {
      if (shown.contains(j.sky_id)) continue;
      rows.push_back({j.sky_id, j.cluster, j.slurm_id, j.owner, j.state, j.reason, "",
                      j.submitted != 0 ? j.submitted : j.created});
    }
  }
  return rows;
}

std::size_t JobManager::LiveJobs() {
  auto live = store_.List(true);
  return live.ok() ? live->size() : 0;
}

std::vector<store::SkyJob> JobManager::List() {
  auto all = store_.List(false);
  return all.ok() ? *all : std::vector<store::SkyJob>{};
}

std::vector<store::Event> JobManager::History(const std::string& sky_id) {
  auto events = store_.Events(sky_id);
  return events.ok() ? *events : std::vector<store::Event>{};
}

std::vector<store::Copy> JobManager::CopiesOf(const std::string& sky_id) {
  auto copies = store_.Copies(sky_id);
  return copies.ok() ? *copies : std::vector<store::Copy>{};
}

std::vector<JobManager::ClusterState> JobManager::ClusterStates() {
  std::lock_guard lock(view_mu_);
  std::vector<ClusterState> out;
  for (const auto& h : ws_.handles) {
    auto it = views_.find(h.name);
    if (it == views_.end()) {
      out.push_back({h.name, 0, h.backend == nullptr ? "not reachable from skyslurmd" : ""});
    } else {
      out.push_back({h.name, it->second.answered, it->second.answer_error()});
    }
  }
  return out;
}

void JobManager::SettleIntent(const store::Intent& intent) {
  std::lock_guard lock(LockFor(intent.sky_id));
  auto job = store_.Get(intent.sky_id);
  if (!job.ok()) {
    // Only a job that is not there at all ends its intent; a database that
    // cannot answer leaves it for the next look.
    if (job.status().code() == StatusCode::kNotFound) (void)store_.EndIntent(intent.id);
    return;
  }
  if (intent.action == "cancel") {
    // The user's cancel: every copy that may be live, then the job.
    if (!CancelCopies(*job).empty()) return;  // a cluster does not answer: later
    (void)store_.Apply([&] {
      if (!store::IsFinalState(job->state)) {
        job->state = "CANCELLED";
        job->reason = "cancelled by the user";
        job->ended = Now();
        SKY_RETURN_IF_ERROR(
            Record(*job, "cancelled", "skyslurm cancel, settled after a restart of skyslurmd"));
      }
      return store_.EndIntent(intent.id);
    });
    return;
  }
  backend::Backend* b = BackendOf(intent.cluster);
  if (b == nullptr) return;  // a cluster no longer configured: kept for the record
  auto queue = b->Jobs(options_.queue_timeout);
  if (!queue.ok()) return;  // the cluster does not answer: later
  if (intent.action == "move") {
    // A move cancels only a pending copy; where the copy is now decides.
    auto state_of_copy = [&](const std::vector<backend::JobInfo>& jobs) {
      for (const auto& j : jobs) {
        if (j.key.job_id == intent.slurm_id && IsLiveState(j.state)) return j.state;
      }
      return std::string("CANCELLED");
    };
    std::string state = state_of_copy(*queue);
    if (backend::IsWaitingState(state)) {
      (void)b->Cancel(intent.slurm_id, true, options_.queue_timeout);
      auto again = b->Jobs(options_.queue_timeout);
      if (!again.ok()) return;
      state = state_of_copy(*again);
    }
    const bool current = job->cluster == intent.cluster && job->slurm_id == intent.slurm_id;
    (void)store_.Apply([&] {
      if (IsLiveState(state)) {
        // It started before the move reached it: it stays where it runs.
        if (current && !store::IsFinalState(job->state)) {
          job->state = "RUNNING";
          SKY_RETURN_IF_ERROR(Record(*job, "move-abandoned",
                                     "it started on " + intent.cluster + " before the move",
                                     intent.cluster, intent.slurm_id));
        }
        return store_.EndIntent(intent.id);
      }
      SKY_RETURN_IF_ERROR(store_.SetCopyState(intent.cluster, intent.slurm_id, "CANCELLED"));
      if (current && !store::IsFinalState(job->state)) {
        SKY_RETURN_IF_ERROR(
            DetachCopy(*job, "CANCELLED", "MIGRATING", job->reason, "recovered",
                       "the move's cancel was settled after a restart of skyslurmd"));
      }
      return store_.EndIntent(intent.id);
    });
    return;
  }
  // submit: did the job reach the cluster before the crash? Any job there
  // carrying the sky id that the store does not know yet is that one, live
  // or already ended (a short job): it is adopted, never submitted again.
  std::set<std::string> known;
  if (auto copies = store_.Copies(job->sky_id); copies.ok()) {
    for (const auto& c : *copies) known.insert(c.cluster + ":" + c.slurm_id);
  }
  const backend::JobInfo* found = nullptr;
  for (const auto& j : *queue) {
    if (j.sky_id == intent.sky_id && !known.contains(j.key.ToString())) found = &j;
  }
  (void)store_.Apply([&] {
    if (found != nullptr && store::IsFinalState(job->state)) {
      // Cancelled (or ended) meanwhile: the copy that did reach the cluster goes too.
      if (IsLiveState(found->state))
        (void)b->Cancel(found->key.job_id, false, options_.queue_timeout);
      SKY_RETURN_IF_ERROR(store_.AddCopy({job->sky_id, found->key.cluster, found->key.job_id,
                                          found->partition, "", "", "CANCELLED", Now()}));
    } else if (found != nullptr && job->cluster.empty()) {
      SKY_RETURN_IF_ERROR(store_.AddCopy({job->sky_id, found->key.cluster, found->key.job_id,
                                          found->partition, "", "", found->state, Now()}));
      job->cluster = found->key.cluster;
      job->slurm_id = found->key.job_id;
      job->state = "PENDING";  // the next look records what it really is
      job->submitted = found->submit_time != 0 ? found->submit_time : Now();
      SKY_RETURN_IF_ERROR(Record(*job, "recovered",
                                 "found on the cluster after a restart of skyslurmd",
                                 found->key.cluster, found->key.job_id));
    }
    return store_.EndIntent(intent.id);
  });
}

std::set<std::string> JobManager::Recover() {
  std::set<std::string> unsettled;
  auto open = store_.OpenIntents();
  if (!open.ok()) return unsettled;
  for (const auto& intent : *open) SettleIntent(intent);
  auto left = store_.OpenIntents();
  if (left.ok()) {
    for (const auto& intent : *left) unsettled.insert(intent.sky_id);
  }
  return unsettled;
}

bool JobManager::ResolveCopies(store::SkyJob& job, const std::vector<backend::JobInfo>& live) {
  // More than one live Slurm job carries this sky id (a cluster came back
  // after its pending job was placed again, or a crash between two steps):
  // the first to start is kept; if none runs, the current one.
  if (live.size() < 2) return false;
  const backend::JobInfo* keep = nullptr;
  for (const auto& j : live) {
    if (backend::IsWaitingState(j.state) || j.start_time == 0) continue;
    if (keep == nullptr || j.start_time < keep->start_time) keep = &j;
  }
  if (keep == nullptr) {
    for (const auto& j : live) {
      if (j.key.cluster == job.cluster && j.key.job_id == job.slurm_id) keep = &j;
    }
  }
  if (keep == nullptr) keep = &live.front();
  for (const auto& j : live) {
    if (&j == keep) continue;
    backend::Backend* b = BackendOf(j.key.cluster);
    if (b == nullptr) continue;
    const bool pending = backend::IsWaitingState(j.state);
    if (!b->Cancel(j.key.job_id, pending, options_.queue_timeout).ok()) continue;
    (void)store_.SetCopyState(j.key.cluster, j.key.job_id, "CANCELLED");
    (void)store_.AddEvent(
        {0, job.sky_id, Now(), "duplicate-cancelled", j.key.cluster, j.key.job_id,
         fmt::format("{} copy {} cancelled; {} kept ({})", pending ? "pending" : "running",
                     j.key.ToString(), keep->key.ToString(),
                     backend::IsWaitingState(keep->state) ? "the current copy" : "started first")});
  }
  if (job.cluster != keep->key.cluster || job.slurm_id != keep->key.job_id) {
    job.cluster = keep->key.cluster;
    job.slurm_id = keep->key.job_id;
    job.state = backend::IsWaitingState(keep->state) ? "PENDING" : "RUNNING";
    job.started = keep->start_time;
    (void)Record(job, "kept", "this copy started first", job.cluster, job.slurm_id);
    return true;
  }
  return false;
}

void JobManager::SettleStaleCopies() {
  auto stale = store_.CopiesInState("STALE");
  if (!stale.ok()) return;
  for (const auto& c : *stale) {
    std::optional<backend::JobInfo> seen;
    {
      std::lock_guard lock(view_mu_);
      auto it = views_.find(c.cluster);
      if (it == views_.end() || !it->second.answered_now) continue;  // still silent
      for (const auto& j : it->second.jobs) {
        if (j.key.job_id == c.slurm_id) seen = j;
      }
    }
    std::unique_lock lock(LockFor(c.sky_id), std::try_to_lock);
    if (!lock.owns_lock()) continue;
    auto job = store_.Get(c.sky_id);
    if (!job.ok()) continue;
    if (job->cluster == c.cluster && job->slurm_id == c.slurm_id) continue;  // kept as current
    if (seen && IsLiveState(seen->state) && !store::IsFinalState(job->state)) {
      continue;  // the job lives on: ResolveCopies keeps the first to start
    }
    if (seen && IsLiveState(seen->state)) {
      // The job has ended elsewhere: this copy must not run it again.
      backend::Backend* b = BackendOf(c.cluster);
      if (b == nullptr || !b->Cancel(c.slurm_id, false, options_.queue_timeout).ok()) continue;
      (void)store_.SetCopyState(c.cluster, c.slurm_id, "CANCELLED");
      (void)store_.AddEvent({0, c.sky_id, Now(), "duplicate-cancelled", c.cluster, c.slurm_id,
                             fmt::format("stale copy {}:{} cancelled: {} has ended ({})", c.cluster,
                                         c.slurm_id, c.sky_id, job->state)});
    } else {
      (void)store_.SetCopyState(c.cluster, c.slurm_id, "ENDED");
    }
  }
}

void JobManager::WeighMove(store::SkyJob& job, const std::string& why) {
  const std::time_t now = Now();
  // Each weighing asks every cluster (sbatch --test-only uses up job ids
  // there): once per job every 5 s at most, and a bounded number per tick.
  if (auto it = last_weighed_.find(job.sky_id);
      it != last_weighed_.end() && now - it->second < std::max(5, policy_.poll_interval)) {
    return;
  }
  if (weighed_this_tick_ >= kWeighsPerTick) return;
  ++weighed_this_tick_;
  last_weighed_[job.sky_id] = now;
  auto input = JobInputFromText(job.input_json);
  if (!input.ok()) return;
  auto request = job::ParseRequest(input->ToRequestInput());
  if (!request.ok()) return;
  std::vector<place::ClusterHandle> handles = ws_.handles;
  const std::vector<std::string> dead = DeadClusters();
  for (auto& h : handles) {
    if (std::find(dead.begin(), dead.end(), h.name) != dead.end()) h.unavailable = "not answering";
  }
  place::PlanOptions options;
  options.probe_timeout = options_.probe_timeout;
  options.estimate_timeout = options_.estimate_timeout;
  options.only = request->sky.clusters;
  if (request->sky.infra) return;  // pinned: it stays
  place::Plan plan = place::MakePlan(*request, handles, ws_.catalog, ws_.home(), options);
  std::optional<std::time_t> here;
  const place::Candidate* best = nullptr;
  for (const auto& c : plan.candidates) {
    if (!c.start || !c.excluded.empty() || !c.unreachable.empty() || !c.infeasible.empty())
      continue;
    if (c.cluster == job.cluster) {
      // This cluster's estimate counts the job itself among the work ahead:
      // at least now, at most what it says.
      here = std::min(here.value_or(*c.start), *c.start);
    } else if (best == nullptr || *c.start < *best->start) {
      best = &c;
    }
  }
  if (best == nullptr) return;
  const std::time_t own = std::max(here.value_or(now + 365 * 86400), now);
  if (!MovePays(own, *best->start, policy_.migrate_gain)) return;
  {
    std::lock_guard lock(view_mu_);
    auto& recent = moves_into_[best->cluster];
    std::erase_if(recent, [&](std::time_t t) { return now - t >= 60; });
    if (static_cast<int>(recent.size()) >= policy_.moves_per_cluster) {
      const std::string deferred = fmt::format(
          "{} already took {} moves this minute (moves_per_cluster)", best->cluster, recent.size());
      if (job.reason != deferred) {  // once, not every weighing
        job.reason = deferred;
        (void)Record(job, "move-deferred", deferred, best->cluster);
      }
      return;
    }
  }
  const std::string reason =
      fmt::format("{}; {}/{} starts it {} against {} on {}", why, best->cluster, best->partition,
                  place::FormatWait(*best->start, now), place::FormatWait(own, now), job.cluster);
  // Cancel the pending copy, only if it is still pending.
  const std::string old_cluster = job.cluster, old_id = job.slurm_id;
  auto intent = store_.BeginIntent({0, job.sky_id, "move", old_cluster, old_id, now});
  if (!intent.ok()) return;
  FaultPoint("move.intent");
  backend::Backend* b = BackendOf(old_cluster);
  if (b == nullptr || !b->Cancel(old_id, true, options_.queue_timeout).ok()) return;
  FaultPoint("move.cancelled");
  auto queue = b->Jobs(options_.queue_timeout);
  if (!queue.ok()) return;  // settled on a later tick from the intent
  for (const auto& j : *queue) {
    if (j.key.job_id == old_id && IsLiveState(j.state)) {
      // It started before the cancel reached it: it stays where it is.
      (void)store_.EndIntent(*intent);
      job.state = backend::IsWaitingState(j.state) ? "PENDING" : "RUNNING";
      (void)Record(job, "move-abandoned", "it started on " + old_cluster + " before the move",
                   old_cluster, old_id);
      return;
    }
  }
  Status released = store_.Apply([&] {
    SKY_RETURN_IF_ERROR(DetachCopy(job, "CANCELLED", "MIGRATING", reason, "move-started", reason));
    return store_.EndIntent(*intent);
  });
  if (!released.ok()) return;
  FaultPoint("move.released");
  (void)PlaceAndSubmit(job, "moved", reason, dead, false);
}

void JobManager::Tick() {
  weighed_this_tick_ = 0;
  // Settle what a crash (or an unreachable cluster) left open first; a job
  // whose intent cannot be settled yet is left alone until it is.
  const std::set<std::string> unsettled = Recover();
  // Read every cluster's queue at once.
  std::vector<std::pair<std::string, std::future<Result<std::vector<backend::JobInfo>>>>> reads;
  for (auto& h : ws_.handles) {
    if (h.backend == nullptr) continue;
    backend::Backend* b = h.backend;
    const auto timeout = options_.queue_timeout;
    reads.emplace_back(h.name,
                       std::async(std::launch::async, [b, timeout] { return b->Queue(timeout); }));
  }
  const std::time_t now = Now();
  for (auto& [name, f] : reads) {
    auto result = f.get();
    std::lock_guard lock(view_mu_);
    ClusterView& v = views_[name];
    v.answered_now = result.ok();
    if (result.ok()) {
      v.answered = now;
      v.read_at = now;
      v.error.clear();
      v.jobs = std::move(*result);
    } else {
      v.error = result.status().message();
    }
  }
  SettleStaleCopies();
  auto live = store_.List(true);
  if (!live.ok()) return;
  for (store::SkyJob job : *live) {
    if (unsettled.contains(job.sky_id)) continue;
    std::unique_lock lock(LockFor(job.sky_id), std::try_to_lock);
    if (!lock.owns_lock()) continue;  // a request is working on it
    // An intent opened since Recover() (a cancel in flight): settled first.
    if (store_.HasOpenIntent(job.sky_id)) continue;
    auto fresh = store_.Get(job.sky_id);
    if (!fresh.ok()) continue;
    job = *fresh;
    if (store::IsFinalState(job.state)) continue;
    // Between two copies (a move or restart that could not be placed yet,
    // or a crash in between): place it now.
    if (job.cluster.empty()) {
      const std::string kind = job.state == "SUBMITTING"   ? "submitted"
                               : job.state == "RECOVERING" ? "restarted"
                                                           : "re-placed";
      (void)PlaceAndSubmit(job, kind, "resumed", DeadClusters(), false);
      continue;
    }
    Observation seen;
    seen.now = now;
    std::vector<backend::JobInfo> copies;
    {
      std::lock_guard vlock(view_mu_);
      const ClusterView& v = views_[job.cluster];
      seen.cluster_answered = v.answered;
      seen.answered_now = v.answered_now;
      seen.queue_read = v.read_at;
      for (const auto& [name, view] : views_) {
        if (!view.answered_now) continue;
        for (const auto& j : view.jobs) {
          if (j.sky_id != job.sky_id) continue;
          if (j.key.cluster == job.cluster && j.key.job_id == job.slurm_id) seen.copy = j;
          if (IsLiveState(j.state)) copies.push_back(j);
        }
      }
      if (seen.cluster_answered == 0 && !v.error.empty()) {
        seen.cluster_answered = started_;  // silent since the daemon started
      }
    }
    if (ResolveCopies(job, copies)) continue;  // looked at again next time
    Decision d = Decide(job, seen, policy_);
    switch (d.action) {
      case Action::kNone:
        break;
      case Action::kRecord:
        if (job.state != d.state || job.reason != d.reason) {
          const bool started = d.state == "RUNNING" && job.state != "RUNNING";
          job.state = d.state;
          job.reason = d.reason;
          if (started && seen.copy) job.started = seen.copy->start_time;
          (void)Record(job, started ? "started" : "state", d.state + ": " + d.reason, job.cluster,
                       job.slurm_id);
          if (started) (void)store_.SetCopyState(job.cluster, job.slurm_id, "RUNNING");
        }
        break;
      case Action::kWeighMove:
        if (job.state != "PENDING") {
          job.state = "PENDING";
          (void)Record(job, "state", "PENDING");
        }
        WeighMove(job, d.reason);
        break;
      case Action::kReplace: {
        Status st =
            DetachCopy(job, "STALE", d.state, d.reason, "cluster-lost",
                       d.reason + fmt::format("; the pending copy {}:{} is cancelled when {} "
                                              "answers again",
                                              job.cluster, job.slurm_id, job.cluster));
        if (st.ok()) (void)PlaceAndSubmit(job, "re-placed", d.reason, DeadClusters(), false);
        break;
      }
      case Action::kRestart: {
        ++job.restarts;
        Status st = DetachCopy(job, "ENDED", d.state, d.reason, "restarting", d.reason);
        FaultPoint("restart.recorded");
        if (st.ok()) (void)PlaceAndSubmit(job, "restarted", d.reason, DeadClusters(), false);
        break;
      }
      case Action::kFinish:
        job.state = d.state;
        job.reason = d.reason;
        job.ended = now;
        if (seen.copy) job.exit_code = seen.copy->exit_code;
        (void)store_.SetCopyState(job.cluster, job.slurm_id, "ENDED");
        (void)Record(job, "ended", d.reason, job.cluster, job.slurm_id);
        break;
    }
  }
}

}  // namespace skyslurm::daemon
