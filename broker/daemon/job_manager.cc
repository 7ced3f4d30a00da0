#include "broker/daemon/job_manager.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <set>

#include "broker/backend/array_tasks.h"
#include "broker/cluster/job_phase.h"
#include "broker/daemon/failover_policy.h"
#include "broker/daemon/fault_points.h"
#include "broker/job/global_id.h"
#include "broker/job/request.h"
#include "broker/place/audit.h"
#include "broker/place/planner.h"
#include "broker/place/submission.h"
#include "broker/util/strings.h"

// The manager's shared state and its plain operations (cancel, find,
// output, queue, the tick). Each protocol that changes a job across clusters
// has a file of its own: job_submission.cc (place and submit), intent_recovery.cc
// (settle what a crash left open), copy_cleanup.cc (one live copy per job),
// job_moves.cc (move a pending job). See docs/failover.md.
namespace skyslurm::daemon {

JobManager::JobManager(store::JobStore& store, place::Workspace& workspace, ManagerOptions options)
    : store_(store),
      ws_(workspace),
      options_(std::move(options)),
      policy_(workspace.config.settings.failover),
      job_id_indices_(workspace.registry.JobIdIndices(workspace.config.settings)) {
  // What a crash left open; intents this daemon opens are settled by it.
  if (auto open = store_.OpenIntents(); open.ok()) {
    for (const auto& intent : *open) inherited_intents_.insert(intent.id);
  }
}

std::time_t JobManager::Now() const {
  return options_.clock ? options_.clock() : std::time(nullptr);
}

std::uint64_t JobManager::GlobalIdOf(const std::string& cluster,
                                     const std::string& native_id) const {
  const auto it = job_id_indices_.find(cluster);
  if (it == job_id_indices_.end()) return 0;
  return EncodeGlobalId(it->second, native_id).value_or(0);
}

std::optional<std::pair<std::string, std::string>> JobManager::DecodeGlobalIdOf(
    std::uint64_t global_id) const {
  const DecodedId d = DecodeGlobalId(global_id);
  if (d.index == 0) return std::nullopt;
  for (const auto& [cluster, index] : job_id_indices_) {
    if (index == d.index) return std::make_pair(cluster, std::to_string(d.local));
  }
  return std::nullopt;
}

Status JobManager::GiveGlobalId(store::SkyJob& job) {
  if (job.global_id != 0) return OkStatus();  // given once, kept through moves
  std::uint64_t id = GlobalIdOf(job.cluster, job.native_id);
  if (!job.parent.empty() && id != 0) {
    // A spread array's parts share the whole's id, which its first part
    // sent gives it.
    SKY_ASSIGN_OR_RETURN(store::SkyJob whole, store_.Get(job.parent));
    if (whole.global_id == 0) {
      whole.global_id = id;
      SKY_RETURN_IF_ERROR(store_.Update(whole));
    }
    id = whole.global_id;
  }
  job.global_id = id;
  if (id != 0 && !options_.routed_marker.empty() && !routed_marked_.exchange(true)) {
    // The shims' squeue and sacct merge routed jobs in from now on.
    const int fd = ::open(options_.routed_marker.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) ::close(fd);
  }
  return OkStatus();
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

Status JobManager::Record(const store::SkyJob& job, EventKind kind, const std::string& detail,
                          const std::string& cluster, const std::string& native_id) {
  Status st = store_.Apply([&] {
    store::SkyJob j = job;
    j.updated = Now();
    SKY_RETURN_IF_ERROR(store_.Update(j));
    return store_.AddEvent(
        {0, job.sky_id, Now(), std::string(EventName(kind)), cluster, native_id, detail});
  });
  if (options_.log) {
    options_.log(fmt::format(
        "{} {}{} {}", job.sky_id, EventName(kind),
        cluster.empty() ? "" : " " + cluster + (native_id.empty() ? "" : ":" + native_id), detail));
  }
  return st;
}

Status JobManager::DetachCopy(store::SkyJob& job, const std::string& copy_state,
                              const std::string& state, const std::string& reason, EventKind kind,
                              const std::string& detail) {
  const std::string cluster = job.cluster, native_id = job.native_id;
  return store_.Apply([&] {
    SKY_RETURN_IF_ERROR(store_.SetCopyState(cluster, native_id, copy_state));
    job.cluster.clear();
    job.native_id.clear();
    job.state = state;
    job.reason = reason;
    return Record(job, kind, detail, cluster, native_id);
  });
}

namespace {

// Whether the job waits on a hold: as its cluster last showed it (the
// reason recorded from its queue) or, when no read since its submission has
// shown it, as it was submitted (--hold, -H, in the arguments or the
// script).
// A part whose tasks moved away ended with every task it kept completed
// (its moved tasks counted as cancelled where they left).
bool PartCompleted(const store::SkyJob& part, const backend::JobInfo& copy) {
  auto mine = job::ParseArrayIndices(part.indices);
  if (!mine.ok() || !mine->has_value()) return false;
  auto done = copy.array_tasks.find("COMPLETED");
  return done != copy.array_tasks.end() &&
         done->second >= static_cast<std::int64_t>((*mine)->indices.size());
}

bool HeldAsLastKnown(const store::SkyJob& job, std::time_t queue_read) {
  if (job.reason.starts_with("JobHeld")) return true;
  if (queue_read > job.submitted) return false;  // seen since, and not held
  auto input = JobInputFromText(job.input_json);
  if (!input.ok()) return false;
  auto request = job::ParseRequest(input->ToRequestInput());
  return request.ok() && request->hold;
}

}  // namespace

std::vector<std::string> JobManager::DeadClusters() {
  std::lock_guard lock(view_mu_);
  std::vector<std::string> dead;
  const std::time_t now = Now();
  for (const auto& [name, v] : views_) {
    const std::time_t since = v.silent_since();
    if (since != 0 && now - since >= policy_.cluster_dead_after) dead.push_back(name);
  }
  return dead;
}

namespace {

// "sky-..._7", "sky-..._[7,9-12]": some tasks of an array, split into the
// sky id and the indices; nullopt for any other id.
std::optional<std::pair<std::string, std::string>> TasksOf(const std::string& id) {
  const auto at = id.find('_');
  if (at == std::string::npos || id.find(':') != std::string::npos ||
      !LooksLikeSkyId(id.substr(0, at))) {
    return std::nullopt;
  }
  return std::pair{id.substr(0, at), id.substr(at + 1)};
}

}  // namespace

std::string JobManager::ResolveGlobalId(const std::string& id) {
  if (!IsGlobalIdWord(id)) return id;
  const JobIdWord word = *SplitJobIdWord(id);
  if (auto job = store_.GetByGlobalId(word.number); job.ok()) return job->sky_id + word.rest;
  // Not one skyslurmd tracks (placed without it): the cluster's job it names.
  if (auto named = DecodeGlobalIdOf(word.number)) {
    return named->first + ":" + named->second + word.rest;
  }
  return id;
}

Result<store::SkyJob> JobManager::Find(const std::string& given) {
  const std::string id = ResolveGlobalId(given);
  if (auto tasks = TasksOf(id)) {
    // The part that runs them (one part: the tasks of one cluster's job).
    SKY_ASSIGN_OR_RETURN(std::vector<TaskSelection> selected,
                         SelectTasks(tasks->first, tasks->second));
    if (selected.size() != 1) {
      return InvalidArgumentError(
          fmt::format("{}: those tasks run on {} clusters; name one task", id, selected.size()));
    }
    return store_.Get(selected.front().part.sky_id);
  }
  if (id.find(':') == std::string::npos) return store_.Get(id);
  const std::string cluster = id.substr(0, id.find(':'));
  const std::string native_id = id.substr(id.find(':') + 1);
  SKY_ASSIGN_OR_RETURN(std::vector<store::SkyJob> all, store_.List(false));
  for (const auto& j : all) {
    if (j.cluster == cluster && j.native_id == native_id) return j;
  }
  for (const auto& j : all) {
    auto copies = store_.Copies(j.sky_id);
    if (!copies.ok()) continue;
    for (const auto& c : *copies) {
      if (c.cluster == cluster && c.native_id == native_id) return j;
    }
  }
  return NotFoundError(fmt::format("{} is not a job skyslurm tracks", id));
}

Status JobManager::Cancel(const std::string& given) {
  const std::string id = ResolveGlobalId(given);
  if (auto tasks = TasksOf(id)) return CancelTasks(tasks->first, tasks->second);
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
  if (job.state == "SPREAD") {
    // Every part, each under its own intent (a part whose cluster does not
    // answer is cancelled when it does); then the whole.
    Status first = OkStatus();
    for (const auto& part : store_.Parts(job.sky_id).value_or({})) {
      if (store::IsFinalState(part.state)) continue;
      Status st = Cancel(part.sky_id);
      if (!st.ok() && first.ok()) first = st;
    }
    job.state = "CANCELLED";
    job.reason = "cancelled by the user";
    job.ended = Now();
    SKY_RETURN_IF_ERROR(Record(job, EventKind::kCancelled, "skyslurm cancel: every part"));
    return first;
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
    SKY_RETURN_IF_ERROR(
        Record(job, EventKind::kCancelled, "skyslurm cancel", job.cluster, job.native_id));
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

Result<std::string> JobManager::Output(const std::string& given) {
  const std::string id = ResolveGlobalId(given);
  std::string cluster, native_id;
  if (auto tasks = TasksOf(id)) {
    // One task's output: ID_[7] of the cluster's job that runs it.
    SKY_ASSIGN_OR_RETURN(store::SkyJob part, Find(id));
    SKY_ASSIGN_OR_RETURN(std::vector<TaskSelection> selected,
                         SelectTasks(tasks->first, tasks->second));
    if (selected.front().indices.size() != 1) {
      return InvalidArgumentError(fmt::format("{}: name one task ({}_7)", id, tasks->first));
    }
    if (part.cluster.empty()) {
      return UnavailableError(
          fmt::format("{} is {} and has no job on a cluster yet", id, part.state));
    }
    backend::Backend* b = BackendOf(part.cluster);
    if (b == nullptr) return NotFoundError(fmt::format("no cluster named {}", part.cluster));
    return b->Output(fmt::format("{}_{}", part.native_id, selected.front().indices.front()),
                     options_.queue_timeout);
  }
  if (auto job = Find(id); job.ok()) {
    if (job->state == "SPREAD" || !job->parent.empty() ||
        (job->cluster.empty() && !store_.Parts(job->sky_id).value_or({}).empty())) {
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
  backend::Backend* b = BackendOf(cluster);
  if (b == nullptr) return NotFoundError(fmt::format("no cluster named {}", cluster));
  return b->Output(native_id, options_.queue_timeout);
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
        if (!backend::IsLive(j.phase)) continue;  // as squeue: what has not ended
        // This user's jobs there, and the sky jobs in this user's store
        // (over a login node they may run under another account).
        auto sky = j.sky_id.empty() ? Result<store::SkyJob>(NotFoundError("no sky id"))
                                    : store_.Get(j.sky_id);
        if (j.user != user && !sky.ok()) continue;
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
  }
  // Sky jobs without a copy in view: between two copies, or on a cluster
  // that does not answer.
  if (auto live = store_.List(true); live.ok()) {
    for (const auto& j : *live) {
      if (shown.contains(j.sky_id) || j.state == "SPREAD") continue;
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
    auto sky = store_.Get(r.sky_id);
    if (!sky.ok() || sky->parent.empty()) continue;
    if (!wholes.contains(sky->parent)) {
      auto whole = store_.Get(sky->parent);
      if (!whole.ok()) continue;
      wholes.emplace(sky->parent, *whole);
    }
    parts[sky->parent].push_back(r);
  }
  std::vector<QueueRow> folded;
  for (QueueRow& r : rows) {
    auto sky = parts.empty() || r.sky_id.empty() ? Result<store::SkyJob>(NotFoundError(""))
                                                 : store_.Get(r.sky_id);
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

std::vector<store::SkyJob> JobManager::PartsOf(const std::string& sky_id) {
  return store_.Parts(sky_id).value_or({});
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

void JobManager::Tick() {
  weighed_this_tick_ = 0;
  // Settle what a crash (or an unreachable cluster) left open first; a job
  // whose intent cannot be settled yet is left alone until it is.
  const std::set<std::string> unsettled = Recover();
  // Read every cluster's queue at once; and keep each one's view for
  // placement warm meanwhile, so that a submission never waits for a probe.
  // A read may outlast this look (a controller busy with a burst of
  // submissions answers in seconds): it is collected by a later one, and
  // meanwhile the cluster keeps its last answer. Busy is not silent: only a
  // read that fails, or gives up after half of cluster_dead_after, is.
  const auto read_timeout = std::max<std::chrono::milliseconds>(
      options_.queue_timeout, std::chrono::seconds(policy_.cluster_dead_after) / 2);
  for (std::size_t i = 0; i < ws_.handles.size(); ++i) {
    auto& h = ws_.handles[i];
    if (h.backend == nullptr) continue;
    backend::Backend* b = h.backend;
    auto& read = reading_[h.name];
    if (!read.valid()) {
      reading_since_[h.name] = Now();
      read = std::async(std::launch::async, [b, read_timeout] { return b->Queue(read_timeout); });
    }
    // Never waited for here: a silent cluster must not slow the look at
    // the others' queues. One refresh per cluster at a time.
    auto& refreshing = refreshing_[h.name];
    const bool idle = !refreshing.valid() ||
                      refreshing.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    if (i < ws_.caching.size() && ws_.caching[i] != nullptr && h.excluded.empty() && idle) {
      refreshing = std::async(std::launch::async, [c = ws_.caching[i], t = options_.probe_timeout] {
        c->Refresh(t);
      });
    }
  }
  const auto collect_by = std::chrono::steady_clock::now() + options_.queue_timeout;
  for (auto& [name, f] : reading_) {
    if (f.wait_until(collect_by) != std::future_status::ready) continue;  // still busy
  }
  const std::time_t now = Now();
  for (auto& [name, f] : reading_) {
    if (!f.valid() || f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) continue;
    auto result = f.get();  // leaves `f` empty: the next look starts a new read
    std::lock_guard lock(view_mu_);
    ClusterView& v = views_[name];
    v.answered_now = result.ok();
    if (result.ok()) {
      v.failing_since = 0;
      if (v.up_since == 0) v.up_since = now;
      v.answered = now;
      // What the queue showed is as of the read's start: a job submitted
      // since may be missing from it (the policy's queue_read guard).
      v.read_at = reading_since_[name];
      v.error.clear();
      // An array's tasks are one job, as the store knows it (array_tasks.h).
      v.jobs = backend::FoldArrayTasks(std::move(*result));
    } else {
      v.error = result.status().message();
      v.up_since = 0;
      if (v.failing_since == 0) v.failing_since = reading_since_[name];
    }
  }
  SettleStaleCopies();
  SampleGpus();
  auto live = store_.List(true);
  if (!live.ok()) return;
  {
    // A move asked for a job that ended since is forgotten.
    std::set<std::string> live_ids;
    for (const store::SkyJob& j : *live) live_ids.insert(j.sky_id);
    std::lock_guard lock(move_asked_mu_);
    std::erase_if(move_asked_, [&](const std::string& id) { return !live_ids.contains(id); });
  }
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
    // A spread array: its parts are jobs of their own; it ends with them.
    if (job.state == "SPREAD") {
      SettleSpread(job);
      continue;
    }
    // Held back until the sky jobs its --dependency names answer it.
    if (WaitsForDependency(job)) {
      ReleaseDependent(job);
      continue;
    }
    // Between two copies (a move or restart that could not be placed yet,
    // or a crash in between): place it now.
    if (job.cluster.empty()) {
      const EventKind kind = job.state == "SUBMITTING"   ? EventKind::kSubmitted
                             : job.state == "RECOVERING" ? EventKind::kRestarted
                                                         : EventKind::kReplaced;
      (void)PlaceAndSubmit(job, kind, "resumed", DeadClusters(), false);
      continue;
    }
    Observation seen;
    seen.now = now;
    std::vector<backend::JobInfo> copies;
    {
      std::lock_guard vlock(view_mu_);
      const ClusterView& v = views_[job.cluster];
      seen.cluster_answered = v.answered_now ? v.heard() : v.silent_since();
      seen.answered_now = v.answered_now;
      seen.queue_read = v.read_at;
      for (const auto& [name, view] : views_) {
        if (!view.answered_now) continue;
        for (const auto& j : view.jobs) {
          if (j.sky_id != job.sky_id) continue;
          if (j.key.cluster == job.cluster && j.key.job_id == job.native_id) seen.copy = j;
          if (backend::IsLive(j.phase)) copies.push_back(j);
        }
      }
    }
    if (ResolveCopies(job, copies)) continue;  // looked at again next time
    if (!seen.answered_now) seen.held = HeldAsLastKnown(job, seen.queue_read);
    Decision d = Decide(job, seen, policy_);
    // A move asked for now (the dashboard's "move now"): weighed at once by
    // the same rules as the daemon's own moves, only without waiting for
    // migrate_after; what came of it is an event either way.
    bool asked = false;
    if (weighed_this_tick_ < kMoveWeighsPerLook && !job.cluster.empty() &&
        TakeMoveAsked(job.sky_id)) {
      const bool waiting = seen.copy && backend::IsWaiting(seen.copy->phase) &&
                           seen.copy->array_tasks.empty() && !seen.held &&
                           seen.copy->phase != backend::JobPhase::kHeld &&
                           !seen.copy->reason.starts_with("JobHeld");
      if (!waiting || job.moves >= policy_.max_moves) {
        (void)Record(job, EventKind::kMoveAsked,
                     !waiting ? "asked to move now: it stays, it is no longer a pending job "
                                "that can move"
                              : fmt::format("asked to move now: it stays, it has moved {} "
                                            "times (max_moves)",
                                            job.moves));
      } else {
        last_weighed_.erase(job.sky_id);
        d = {Action::kWeighMove, "PENDING", "asked to move now"};
        asked = true;
      }
    }
    const int moves_before = job.moves;
    switch (d.action) {
      case Action::kNone:
        break;
      case Action::kRecord:
        if (job.state != d.state || job.reason != d.reason) {
          const bool started = d.state == "RUNNING" && job.state != "RUNNING";
          job.state = d.state;
          job.reason = d.reason;
          if (started && seen.copy) job.started = seen.copy->start_time;
          (void)Record(job, started ? EventKind::kStarted : EventKind::kState,
                       d.state + ": " + d.reason, job.cluster, job.native_id);
          if (started) (void)store_.SetCopyState(job.cluster, job.native_id, "RUNNING");
        }
        break;
      case Action::kWeighMove:
        if (job.state != "PENDING") {
          job.state = "PENDING";
          (void)Record(job, EventKind::kState, "PENDING");
        }
        WeighMove(job, d.reason);
        // Moved, between two copies, or deferred (moves_per_cluster, its
        // own event): nothing more to say.
        if (asked && job.moves == moves_before && !job.cluster.empty() && job.state == "PENDING" &&
            job.reason.find("moves_per_cluster") == std::string::npos) {
          (void)Record(job, EventKind::kMoveAsked,
                       fmt::format("asked to move now: it stays on {}: no cluster starts it "
                                   "{} s sooner (migrate_gain), or the moves' limits hold it",
                                   job.cluster, policy_.migrate_gain),
                       job.cluster, job.native_id);
        }
        break;
      case Action::kReplace: {
        Status st =
            DetachCopy(job, "STALE", d.state, d.reason, EventKind::kClusterLost,
                       d.reason + fmt::format("; the pending copy {}:{} is cancelled when {} "
                                              "answers again",
                                              job.cluster, job.native_id, job.cluster));
        if (st.ok())
          (void)PlaceAndSubmit(job, EventKind::kReplaced, d.reason, DeadClusters(), false);
        break;
      }
      case Action::kRestart: {
        ++job.restarts;
        Status st = DetachCopy(job, "ENDED", d.state, d.reason, EventKind::kRestarting, d.reason);
        FaultPoint("restart.recorded");
        if (st.ok())
          (void)PlaceAndSubmit(job, EventKind::kRestarted, d.reason, DeadClusters(), false);
        break;
      }
      case Action::kFinish:
        // --sky-sync-back: the files come back before the job is final, so
        // that a waiting sbatch finds them.
        FetchBack(job);
        job.state = d.state;
        job.reason = d.reason;
        if (job.moves > 0 && d.state == "CANCELLED" && seen.copy &&
            PartCompleted(job, *seen.copy)) {
          // A part whose pending tasks moved away: they are listed there as
          // cancelled, and every task it kept completed.
          job.state = "COMPLETED";
          job.reason = "its tasks " + job.indices + " COMPLETED (others moved to another cluster)";
        }
        job.ended = now;
        if (seen.copy) job.exit_code = seen.copy->exit_code;
        (void)store_.SetCopyState(job.cluster, job.native_id, "ENDED");
        (void)Record(job, EventKind::kEnded, job.reason, job.cluster, job.native_id);
        break;
    }
    // A part of a spread array with tasks pending long enough: some may
    // start now on another cluster.
    if (!job.parent.empty() && seen.copy && !seen.copy->pending_tasks.empty() &&
        !store::IsFinalState(job.state) && now - job.submitted >= policy_.migrate_after &&
        (d.action == Action::kNone || d.action == Action::kRecord)) {
      WeighTaskMove(job, *seen.copy);
    }
  }
}

}  // namespace skyslurm::daemon
