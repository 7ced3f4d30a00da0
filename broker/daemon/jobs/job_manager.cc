#include "broker/daemon/jobs/job_manager.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "broker/cluster/job_phase.h"
#include "broker/daemon/jobs/fault_points.h"
#include "broker/daemon/jobs/lifecycle.h"
#include "broker/job/sky_dependency.h"
#include "broker/place/planner.h"
#include "broker/util/acting_user.h"

// The face of the lifecycle: its requests, and the look at every queue that
// acts on each job by the failover policy. Each protocol that changes a job
// across clusters is a piece of its own (lifecycle.h). See docs/failover.md.
namespace skyslurm::daemon {

JobManager::JobManager(store::JobStore& store, place::Workspace& workspace, ManagerOptions options)
    : l_(std::make_unique<Lifecycle>(store, workspace, std::move(options))) {}

JobManager::~JobManager() = default;

Result<SubmitAnswer> JobManager::Submit(const SubmitRequest& request) {
  return l_->placer.SubmitNew(request);
}

Result<store::SkyJob> JobManager::Find(const std::string& id) { return l_->Find(id); }

Result<bool> JobManager::Adopt(store::SkyJob job, const std::vector<store::Copy>& copies,
                               const std::vector<store::Event>& events,
                               const std::vector<store::Intent>& intents,
                               const std::string& owner) {
  if (!LooksLikeSkyId(job.sky_id)) {
    return InvalidArgumentError(fmt::format("'{}' is not a sky id", job.sky_id));
  }
  SKY_ASSIGN_OR_RETURN(Json::Value input_json, ParseJson(job.input_json));
  SKY_ASSIGN_OR_RETURN(JobInput input, JobInputFromJson(input_json));
  job.input_json = JobInputText(input);
  job.owner = owner;
  store::JobStore& db = l_->ctx.store;
  std::lock_guard lock(LockFor(job.sky_id));
  if (auto here = db.Get(job.sky_id); here.ok()) {
    if (here->owner != owner) {
      return AlreadyExistsError(fmt::format("the sky id {} is another user's job", job.sky_id));
    }
    return false;
  }
  // The id sbatch printed and the whole of a spread array name the user's
  // own jobs only.
  if (auto named = job.global_id != 0 ? db.GetByGlobalId(job.global_id)
                                      : Result<store::SkyJob>(NotFoundError(""));
      named.ok() && named->owner != owner) {
    return AlreadyExistsError(
        fmt::format("{}: the job id {} is another user's", job.sky_id, job.global_id));
  }
  if (auto whole = job.parent.empty() ? Result<store::SkyJob>(NotFoundError(""))
                                      : db.Get(job.parent);
      whole.ok() && whole->owner != owner) {
    return AlreadyExistsError(fmt::format("{}: {} is another user's", job.sky_id, job.parent));
  }
  Status recorded = db.Apply([&]() -> Status {
    SKY_RETURN_IF_ERROR(db.Insert(job));
    for (const auto& c : copies) SKY_RETURN_IF_ERROR(db.AddCopy(c));
    for (const auto& e : events) SKY_RETURN_IF_ERROR(db.AddEvent(e));
    // A site's replica holds the job from its insert: its intents are its own.
    for (const auto& i : intents) SKY_RETURN_IF_ERROR(db.BeginIntent(i).status());
    return OkStatus();
  });
  if (!recorded.ok()) return recorded;
  Log(fmt::format("{} adopted from {}'s own skyslurmd ({})", job.sky_id, owner, job.state));
  return true;
}

Status JobManager::Cancel(const std::string& given) {
  const std::string id = l_->ctx.ResolveGlobalId(given);
  if (auto tasks = TasksOf(id)) {
    // A site's user: their own array's tasks, cancelled as its owner.
    SKY_ASSIGN_OR_RETURN(store::SkyJob whole, l_->Find(tasks->first));
    ActingFor as_owner(whole.owner);
    return l_->arrays.CancelTasks(tasks->first, tasks->second);
  }
  auto found = l_->Find(id);
  if (!found.ok()) {
    if (id.find(':') == std::string::npos) return found.status();
    // A Slurm job skyslurm did not route: cancel it where it is.
    const std::string cluster = id.substr(0, id.find(':'));
    backend::Backend* b = l_->ctx.BackendOf(cluster);
    if (b == nullptr) return NotFoundError(fmt::format("no cluster named {}", cluster));
    return b->Cancel(id.substr(id.find(':') + 1), false, l_->ctx.options.submit_timeout);
  }
  std::lock_guard lock(LockFor(found->sky_id));
  store::JobStore& db = l_->ctx.store;
  SKY_ASSIGN_OR_RETURN(store::SkyJob job, db.Get(found->sky_id));
  ActingFor as_owner(job.owner);  // a site's daemon: as the job's user
  if (!store::IsFinalState(job.state) && !l_->ctx.TakeJob(job.sky_id)) {
    // A site's job driven by another replica: the cancel is recorded, and
    // its holder carries it out at its next look (or whoever takes the job
    // over).
    SKY_RETURN_IF_ERROR(db.BeginIntent({0, job.sky_id, "cancel", "", "", l_->ctx.Now()}).status());
    return OkStatus();
  }
  if (store::IsFinalState(job.state)) {
    return FailedPreconditionError(fmt::format("{} has ended ({})", job.sky_id, job.state));
  }
  if (job.state == "SPREAD") {
    // Every part, each under its own intent (a part whose cluster does not
    // answer is cancelled when it does); then the whole.
    Status first = OkStatus();
    for (const auto& part : db.Parts(job.sky_id).value_or({})) {
      if (store::IsFinalState(part.state)) continue;
      Status st = Cancel(part.sky_id);
      if (!st.ok() && first.ok()) first = st;
    }
    job.state = "CANCELLED";
    job.reason = "cancelled by the user";
    job.ended = l_->ctx.Now();
    SKY_RETURN_IF_ERROR(l_->ctx.Record(job, EventKind::kCancelled, "skyslurm cancel: every part"));
    return first;
  }
  // One intent for the whole job, written first: the user's cancel is kept
  // whatever happens next, and every copy that may be live (the current one
  // and any left on a cluster that stopped answering) is cancelled now or,
  // when its cluster does not answer, as soon as it does.
  SKY_ASSIGN_OR_RETURN(std::int64_t intent,
                       db.BeginIntent({0, job.sky_id, "cancel", "", "", l_->ctx.Now()}));
  FaultPoint("cancel.intent");
  const std::vector<std::string> unreachable = l_->copies.CancelAll(job);
  FaultPoint("cancel.sent");
  job.state = "CANCELLED";
  job.reason = "cancelled by the user";
  job.ended = l_->ctx.Now();
  Status recorded = db.Apply([&] {
    SKY_RETURN_IF_ERROR(
        l_->ctx.Record(job, EventKind::kCancelled, "skyslurm cancel", job.cluster, job.native_id));
    return unreachable.empty() ? db.EndIntent(intent) : OkStatus();
  });
  if (!recorded.ok()) return recorded;
  if (!unreachable.empty()) {
    return UnavailableError(fmt::format(
        "{} is cancelled; its copies on {} are cancelled when those clusters answer again",
        job.sky_id, fmt::join(unreachable, ", ")));
  }
  return OkStatus();
}

Result<backend::Backend::OutputPart> JobManager::Output(const std::string& given,
                                                        std::uint64_t offset,
                                                        std::size_t max_bytes) {
  const std::string id = l_->ctx.ResolveGlobalId(given);
  std::string cluster, native_id;
  if (auto tasks = TasksOf(id)) {
    // One task's output: ID_[7] of the cluster's job that runs it.
    SKY_ASSIGN_OR_RETURN(store::SkyJob part, l_->Find(id));
    SKY_ASSIGN_OR_RETURN(std::vector<Arrays::TaskSelection> selected,
                         l_->arrays.SelectTasks(tasks->first, tasks->second));
    if (selected.front().indices.size() != 1) {
      return InvalidArgumentError(fmt::format("{}: name one task ({}_7)", id, tasks->first));
    }
    if (part.cluster.empty()) {
      return UnavailableError(
          fmt::format("{} is {} and has no job on a cluster yet", id, part.state));
    }
    backend::Backend* b = l_->ctx.BackendOf(part.cluster);
    if (b == nullptr) return NotFoundError(fmt::format("no cluster named {}", part.cluster));
    return b->OutputFrom(fmt::format("{}_{}", part.native_id, selected.front().indices.front()),
                         offset, max_bytes, l_->ctx.options.queue_timeout);
  }
  if (auto job = l_->Find(id); job.ok()) {
    if (job->state == "SPREAD" || !job->parent.empty() ||
        (job->cluster.empty() && !l_->ctx.store.Parts(job->sky_id).value_or({}).empty())) {
      return InvalidArgumentError(fmt::format(
          "{} is an array spread over clusters: skyslurm logs {}_<index> shows one task's output",
          job->parent.empty() ? job->sky_id : job->parent,
          job->parent.empty() ? job->sky_id : job->parent));
    }
    cluster = job->cluster;
    native_id = job->native_id;
    if (id.find(':') != std::string::npos) {
      cluster = id.substr(0, id.find(':'));
      native_id = id.substr(id.find(':') + 1);
    }
    if (cluster.empty()) {
      const std::string why =
          fmt::format("{} is {} and has no job on a cluster{}", job->sky_id, job->state,
                      store::IsFinalState(job->state) ? "" : " yet");
      return store::IsFinalState(job->state) ? FailedPreconditionError(why) : UnavailableError(why);
    }
  } else if (id.find(':') != std::string::npos) {
    cluster = id.substr(0, id.find(':'));
    native_id = id.substr(id.find(':') + 1);
  } else {
    return job.status();
  }
  backend::Backend* b = l_->ctx.BackendOf(cluster);
  if (b == nullptr) return NotFoundError(fmt::format("no cluster named {}", cluster));
  return b->OutputFrom(native_id, offset, max_bytes, l_->ctx.options.queue_timeout);
}

namespace {

// A spread array's parts as one row: its tasks by state over all of them,
// each cluster's in the reason ("alpha: 4 RUNNING; beta: 2 PENDING").
QueueRow FoldParts(const store::SkyJob& whole, const std::vector<QueueRow>& parts) {
  QueueRow row{whole.sky_id, "", "", whole.owner, "PENDING", "", "", 0, {}};
  std::vector<std::string> clusters, ids, each;
  for (const QueueRow& p : parts) {
    clusters.push_back(p.cluster.empty() ? "-" : p.cluster);
    ids.push_back(p.native_id.empty() ? "-" : p.native_id);
    if (row.name.empty()) row.name = p.name;
    if (p.since != 0 && (row.since == 0 || p.since < row.since)) row.since = p.since;
    std::map<std::string, std::int64_t> tasks = p.tasks;
    if (tasks.empty()) tasks[p.state] = 1;  // a part of one task, or not on a cluster yet
    std::vector<std::string> counts;
    for (const auto& [phase, n] : tasks) {
      row.tasks[phase] += n;
      counts.push_back(fmt::format("{} {}", n, phase));
    }
    each.push_back(
        fmt::format("{}: {}", p.cluster.empty() ? p.sky_id : p.cluster, fmt::join(counts, ", ")));
  }
  if (row.tasks.contains("RUNNING")) row.state = "RUNNING";
  row.cluster = fmt::format("{}", fmt::join(clusters, ","));
  row.native_id = fmt::format("{}", fmt::join(ids, ","));
  row.reason = fmt::format("{}", fmt::join(each, "; "));
  return row;
}

}  // namespace

std::vector<QueueRow> JobManager::Queue(bool expand) {
  std::vector<QueueRow> rows;
  std::set<std::string> shown;
  const place::Workspace& ws = l_->ctx.ws;
  store::JobStore& db = l_->ctx.store;
  l_->ctx.views.Visit([&](const std::map<std::string, ClusterView>& views) {
    for (const auto& h : ws.handles) {
      auto it = views.find(h.name);
      if (it == views.end()) continue;
      // Over SSH, the jobs are the login user's there.
      const cluster::ClusterEntry* entry = ws.registry.Find(h.name);
      // A site's daemon: the user who asks.
      const std::string user = entry != nullptr && entry->ssh && !entry->ssh->user.empty()
                                   ? entry->ssh->user
                               : CurrentViewer() ? CurrentViewer()->name
                                                 : ws.config.paths.user;
      for (const auto& j : it->second.jobs) {
        if (!backend::IsLive(j.phase)) continue;  // as squeue: what has not ended
        // This user's jobs there, and the sky jobs in this user's store
        // (over a login node they may run under another account).
        auto sky =
            j.sky_id.empty() ? Result<store::SkyJob>(NotFoundError("no sky id")) : db.Get(j.sky_id);
        if (j.user != user && !sky.ok()) continue;
        if (!MaySee(sky.ok() ? sky->owner : j.user)) continue;  // a site's other user's
        QueueRow r{j.sky_id,      j.key.cluster,
                   j.key.job_id,  j.user,
                   j.state,       j.reason,
                   j.name,        backend::IsWaiting(j.phase) ? j.submit_time : j.start_time,
                   j.array_tasks, j.submit_time};
        if (sky.ok()) {
          // A sky job's row is its current copy; stale copies say so.
          if (sky->cluster != j.key.cluster || sky->native_id != j.key.job_id) {
            r.reason = "stale copy of " + j.sky_id;
          } else {
            shown.insert(j.sky_id);
          }
        }
        rows.push_back(std::move(r));
      }
    }
  });
  // Sky jobs without a copy in view: between two copies, or on a cluster
  // that does not answer.
  if (auto live = db.List(true); live.ok()) {
    for (const auto& j : *live) {
      if (shown.contains(j.sky_id) || j.state == "SPREAD" || !MaySee(j.owner)) continue;
      rows.push_back({j.sky_id, j.cluster, j.native_id, j.owner, j.state, j.reason, "",
                      j.submitted != 0 ? j.submitted : j.created});
    }
  }
  if (expand) return rows;
  // A spread array is one row where its first part's was.
  std::map<std::string, std::vector<QueueRow>> parts;
  std::map<std::string, store::SkyJob> wholes;
  for (const QueueRow& r : rows) {
    if (r.sky_id.empty() || r.reason.starts_with("stale copy")) continue;
    auto sky = db.Get(r.sky_id);
    if (!sky.ok() || sky->parent.empty()) continue;
    if (!wholes.contains(sky->parent)) {
      auto whole = db.Get(sky->parent);
      if (!whole.ok()) continue;
      wholes.emplace(sky->parent, *whole);
    }
    parts[sky->parent].push_back(r);
  }
  std::vector<QueueRow> folded;
  for (QueueRow& r : rows) {
    auto sky = parts.empty() || r.sky_id.empty() ? Result<store::SkyJob>(NotFoundError(""))
                                                 : db.Get(r.sky_id);
    if (!sky.ok() || !parts.contains(sky->parent) || r.reason.starts_with("stale copy")) {
      folded.push_back(std::move(r));
      continue;
    }
    auto it = parts.find(sky->parent);
    if (it->second.empty()) continue;  // folded already
    folded.push_back(FoldParts(wholes.at(sky->parent), it->second));
    it->second.clear();
  }
  return folded;
}

std::size_t JobManager::LiveJobs() {
  auto live = l_->ctx.store.List(true);
  return live.ok() ? live->size() : 0;
}

std::vector<store::SkyJob> JobManager::List(bool live_only) {
  auto all = l_->ctx.store.List(live_only);
  if (!all.ok()) return {};
  std::erase_if(*all, [](const store::SkyJob& j) { return !MaySee(j.owner); });
  return *all;
}

// Whether the current viewer may see the sky job `sky_id` (a site's user:
// their own).
bool JobManager::Visible(const std::string& sky_id) {
  if (!CurrentViewer()) return true;
  auto job = l_->ctx.store.Get(sky_id);
  return job.ok() && MaySee(job->owner);
}

std::vector<store::Event> JobManager::History(const std::string& sky_id) {
  auto events = Visible(sky_id) ? l_->ctx.store.Events(sky_id) : NotFoundError("");
  return events.ok() ? *events : std::vector<store::Event>{};
}

std::vector<store::Copy> JobManager::CopiesOf(const std::string& sky_id) {
  auto copies = Visible(sky_id) ? l_->ctx.store.Copies(sky_id) : NotFoundError("");
  return copies.ok() ? *copies : std::vector<store::Copy>{};
}

std::vector<store::SkyJob> JobManager::PartsOf(const std::string& sky_id) {
  if (!Visible(sky_id)) return {};
  return l_->ctx.store.Parts(sky_id).value_or({});
}

Result<store::SkyJob> JobManager::FindByGlobalId(std::uint64_t global_id) {
  SKY_ASSIGN_OR_RETURN(store::SkyJob job, l_->ctx.store.GetByGlobalId(global_id));
  if (!MaySee(job.owner)) {
    return NotFoundError(fmt::format("no sky job has the id {}", global_id));
  }
  return job;
}

std::vector<JobManager::ClusterState> JobManager::ClusterStates() {
  std::vector<ClusterState> out;
  l_->ctx.views.Visit([&](const std::map<std::string, ClusterView>& views) {
    for (const auto& h : l_->ctx.ws.handles) {
      auto it = views.find(h.name);
      if (it == views.end()) {
        out.push_back({h.name, 0, 0, h.backend == nullptr ? "not reachable from skyslurmd" : ""});
        continue;
      }
      const ClusterView& v = it->second;
      out.push_back({h.name, v.answered, v.heard(), v.answer_error(), true, v.answered_now,
                     v.answered_now ? v.up_since : v.failing_since, v.probe_seconds});
    }
  });
  return out;
}

std::string JobManager::Activity(const std::string& sky_id) { return l_->ctx.Activity(sky_id); }

Status JobManager::RequestMove(const std::string& id) {
  SKY_RETURN_IF_ERROR(Find(id).status());  // a site's user: their own jobs
  return l_->mover.Ask(id);
}

Result<place::ExplainText> JobManager::Explain(const JobInput& input) {
  SKY_ASSIGN_OR_RETURN(const job::Request request, job::ParseRequest(input.ToRequestInput()));
  return ExplainRequest(request, input.cwd);
}

Result<place::ExplainText> JobManager::ExplainRequest(const job::Request& request,
                                                      const std::string& submit_dir) {
  JobContext& ctx = l_->ctx;
  place::PlanOptions options;
  options.probe_timeout = ctx.options.probe_timeout;
  options.estimate_timeout = ctx.options.estimate_timeout;
  options.policy = ctx.PolicyNow(options.probe_timeout);
  options.only = request.sky.clusters;
  if (request.sky.infra) options.pinned = *request.sky.infra;
  job::Request placed = request;
  SKY_RETURN_IF_ERROR(job::TakeSkyDependency(placed).status());
  std::vector<place::ClusterHandle> handles =
      ctx.HandlesWithout(ctx.DeadClusters(), "not answering");
  place::Plan plan = place::MakePlan(placed, handles, ctx.ws.catalog, ctx.ws.home(), options);
  return place::RenderExplain(request, ctx.ws, plan, true, submit_dir);
}

Result<place::ExplainText> JobManager::ExplainJob(const std::string& id) {
  SKY_ASSIGN_OR_RETURN(store::SkyJob job, Find(id));
  if (job.input_json.empty()) return NotFoundError(job.sky_id + " has no input kept");
  SKY_ASSIGN_OR_RETURN(const auto parsed, l_->ctx.parsed.Of(job));  // read once, kept
  return ExplainRequest(parsed->request, parsed->input.cwd);
}

std::mutex& JobManager::LockFor(const std::string& sky_id) { return l_->ctx.LockFor(sky_id); }

std::uint64_t JobManager::GlobalIdOf(const std::string& cluster,
                                     const std::string& native_id) const {
  return l_->ctx.GlobalIdOf(cluster, native_id);
}

std::optional<std::pair<std::string, std::string>> JobManager::DecodeGlobalIdOf(
    std::uint64_t global_id) const {
  return l_->ctx.DecodeGlobalIdOf(global_id);
}

const place::Workspace& JobManager::workspace() const { return l_->ctx.ws; }
std::string JobManager::home() const { return l_->ctx.ws.home(); }
backend::Backend* JobManager::BackendOf(const std::string& cluster) {
  return l_->ctx.BackendOf(cluster);
}
backend::Capabilities JobManager::CapabilitiesOf(const std::string& cluster) const {
  const place::ClusterHandle* h = l_->ctx.ws.Find(cluster);
  return h != nullptr ? h->caps : backend::Capabilities{};
}
store::JobStore& JobManager::store() { return l_->ctx.store; }
std::time_t JobManager::Now() const { return l_->ctx.Now(); }
void JobManager::Log(const std::string& line) const { l_->ctx.Log(line); }
std::chrono::milliseconds JobManager::submit_timeout() const {
  return l_->ctx.options.submit_timeout;
}
int JobManager::poll_interval() const { return l_->ctx.policy.poll_interval; }
config::SubmitOutput JobManager::submit_output() const {
  return l_->ctx.ws.config.files_submit_output;
}
std::int64_t JobManager::takeovers() const { return l_->ctx.takeovers(); }

bool JobManager::routing() const { return l_->ctx.ws.config.settings.routing; }
const std::string& JobManager::currency() const { return l_->ctx.ws.policy.currency; }
const std::string& JobManager::home_dir() const { return l_->ctx.ws.config.paths.home; }

}  // namespace skyslurm::daemon
