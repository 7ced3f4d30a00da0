// Spreading one job array over clusters (docs/placement.md, "One array over
// several clusters"): when the clusters together start its tasks sooner
// than the best one alone, the array becomes one SPREAD sky job with a part
// per cluster. Each part is a sky job of its own (its indices as its
// --array, the whole array's id as its tasks' SKYPILOT_TASK_ID), so every
// protocol of a single job holds for it unchanged: the intent before its
// submission, recovery after a crash, tracking, cancel. The parts are
// recorded with the whole in one transaction before anything is sent: a
// crash leaves either the array unspread (placed whole later) or every part
// recorded (each submitted exactly once).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "broker/backend/array_tasks.h"
#include "broker/cluster/job_phase.h"
#include "broker/daemon/fault_points.h"
#include "broker/daemon/job_manager.h"
#include "broker/place/array_split.h"
#include "broker/place/planner.h"

namespace skyslurm::daemon {
namespace {

// The job's arguments with `--array=SPEC` after its other options, so that
// it is the one sbatch applies (the command line's last --array wins, and
// over the script's #SBATCH lines): before the script and its arguments.
std::vector<std::string> WithArray(const JobInput& input, const job::Request& request,
                                   const std::string& spec) {
  std::vector<std::string> args = input.args;
  const bool operand = request.script_operand;
  std::size_t at = args.size();
  const std::size_t after = request.script_args.size() + (operand ? 1 : 0);
  at = after <= at ? at - after : at;
  args.insert(args.begin() + static_cast<std::ptrdiff_t>(at), "--array=" + spec);
  return args;
}

std::string Plural(std::size_t n, std::string_view one) {
  return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s");
}

// "[7,9-12]" as "7,9-12" (as Slurm lists a row's tasks); anything else as it is.
std::string_view Unbracketed(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  return text;
}

// "7", "[7,9-12]", "7,9" as ArrayIndices.
Result<std::vector<std::int64_t>> TaskList(const std::string& given) {
  const std::string text(Unbracketed(given));
  auto parsed = job::ParseArrayIndices(text);
  if (!parsed.ok() || !parsed->has_value() || text.find('%') != std::string::npos) {
    return InvalidArgumentError(
        fmt::format("'{}' is not a list of array indices (7, [7,9-12])", text));
  }
  return (*parsed)->indices;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> JobManager::WholeArrayEnv(
    const store::SkyJob& part) {
  auto whole = store_.Get(part.parent);
  if (!whole.ok()) return {};
  auto input = JobInputFromText(whole->input_json);
  if (!input.ok()) return {};
  auto request = job::ParseRequest(input->ToRequestInput());
  if (!request.ok() || !request->array_indices || request->array_indices->indices.empty()) {
    return {};
  }
  const auto& indices = request->array_indices->indices;
  return {{"SKYSLURM_ARRAY_TASK_MIN", std::to_string(indices.front())},
          {"SKYSLURM_ARRAY_TASK_MAX", std::to_string(indices.back())},
          {"SKYSLURM_ARRAY_TASK_COUNT", std::to_string(indices.size())}};
}

Result<bool> JobManager::SpreadArray(store::SkyJob& job, const job::Request& request,
                                     const JobInput& input) {
  // Only a batch array that may go anywhere, and is not skyslurm's to
  // restart (a managed job restarts whole).
  if (!request.array_indices || request.array_indices->indices.size() < 2 ||
      request.tool != job::Tool::kSbatch || request.sky.infra || job.managed) {
    return false;
  }
  std::vector<place::ClusterHandle> handles = ws_.handles;
  const std::vector<std::string> dead = DeadClusters();
  for (auto& h : handles) {
    if (std::find(dead.begin(), dead.end(), h.name) != dead.end() && h.unavailable.empty()) {
      h.unavailable = "not answering (skyslurmd)";
    }
  }
  place::PlanOptions options;
  options.probe_timeout = options_.probe_timeout;
  options.estimate_timeout = options_.estimate_timeout;
  options.only = request.sky.clusters;
  options.policy = PolicyNow(options.probe_timeout);
  options.lay_out_array_tasks = true;
  const place::Plan plan = place::MakePlan(request, handles, ws_.catalog, ws_.home(), options);
  if (!plan.decision.chosen) return false;  // the whole array's placement says why
  // Every cluster that may run it, best first: the plan's choice, then by
  // start; one partition per cluster (a part goes to a cluster, where its
  // own placement picks the partition again).
  std::vector<std::size_t> order(plan.candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if ((a == *plan.decision.chosen) != (b == *plan.decision.chosen)) {
      return a == *plan.decision.chosen;
    }
    const auto& ca = plan.candidates[a];
    const auto& cb = plan.candidates[b];
    return ca.start.value_or(0) < cb.start.value_or(0);
  });
  std::vector<place::SplitTarget> targets;
  for (std::size_t i : order) {
    const place::Candidate& c = plan.candidates[i];
    using Kind = place::Verdict::Kind;
    const Kind kind = plan.decision.verdicts[i].kind;
    if (!c.start || (kind != Kind::kChosen && kind != Kind::kTied && kind != Kind::kLater)) {
      continue;
    }
    if (std::any_of(targets.begin(), targets.end(),
                    [&](const auto& t) { return t.cluster == c.cluster; })) {
      continue;
    }
    place::SplitTarget t{c.cluster, *c.start, c.task_starts, 3600, std::nullopt};
    for (const auto& r : plan.clusters) {
      if (r.name != c.cluster || !r.inventory) continue;
      t.run_s = place::JobMinutes(request, r.inventory->description, c.partition) * 60;
      t.max_array_size = r.inventory->description.max_array_size;
    }
    targets.push_back(std::move(t));
  }
  if (targets.size() < 2) return false;
  auto split = place::SplitArray(*request.array_indices, targets);
  // An index no cluster takes: the whole array's placement says so.
  if (!split.ok() || split->parts.size() < 2) return false;
  const std::time_t whole = place::LastStartOn(*request.array_indices, targets.front());
  if (split->last_start >= whole) return false;

  // The parts, each checked to read back as exactly its indices.
  std::vector<store::SkyJob> parts;
  std::vector<std::string> described;
  for (std::size_t k = 0; k < split->parts.size(); ++k) {
    const place::ArrayPart& p = split->parts[k];
    JobInput part_input = input;
    part_input.args = WithArray(input, request, p.ArraySpec());
    auto reread = job::ParseRequest(part_input.ToRequestInput());
    if (!reread.ok() || !reread->array_indices || reread->array_indices->indices != p.indices) {
      return false;  // an argument list this cannot rewrite: placed whole
    }
    store::SkyJob part;
    part.sky_id = fmt::format("{}-{}", job.sky_id, k + 1);
    part.owner = job.owner;
    part.input_json = JobInputText(part_input);
    part.name = job.name;
    part.retry_on_failure = job.retry_on_failure;
    part.created = part.updated = Now();
    part.parent = job.sky_id;
    part.indices = p.ArraySpec();
    parts.push_back(std::move(part));
    described.push_back(fmt::format("{} {} ({}, the first {}, the last {})", p.cluster,
                                    p.ArraySpec(), Plural(p.indices.size(), "task"),
                                    place::FormatWait(p.first_start, plan.now),
                                    place::FormatWait(p.last_start, plan.now)));
  }
  // Locked before they are visible: the look at the queues must not place
  // a part the split has given a cluster.
  std::vector<std::unique_lock<std::mutex>> locks;
  for (const auto& part : parts) locks.emplace_back(LockFor(part.sky_id));
  job.state = "SPREAD";
  job.reason =
      fmt::format("spread over {} clusters: its last task starts {} against {} kept whole on {}",
                  parts.size(), place::FormatWait(split->last_start, plan.now),
                  place::FormatWait(whole, plan.now), targets.front().cluster);
  job.expected_start = plan.now;
  for (const auto& p : split->parts)
    job.expected_start = std::min(job.expected_start, p.first_start);
  const Status recorded = store_.Apply([&] {
    for (const auto& part : parts) SKY_RETURN_IF_ERROR(store_.Insert(part));
    return Record(job, EventKind::kSpread,
                  fmt::format("{}: {}", job.reason, fmt::join(described, "; ")));
  });
  SKY_RETURN_IF_ERROR(recorded);
  FaultPoint("spread.recorded");
  std::vector<std::string> sent;  // parts on a cluster
  for (std::size_t k = 0; k < parts.size(); ++k) {
    store::SkyJob& part = parts[k];
    const std::string& cluster = split->parts[k].cluster;
    Status st = PlaceAndSubmit(part, EventKind::kSubmitted, "", DeadClusters(), true, "", cluster);
    if (st.code() == StatusCode::kFailedPrecondition) {
      // Refused there after all (a limit of its own): anywhere else.
      std::vector<std::string> avoid = DeadClusters();
      avoid.push_back(cluster);
      part.state = "SUBMITTING";
      part.ended = 0;
      st = PlaceAndSubmit(part, EventKind::kSubmitted, "refused by " + cluster, avoid, true);
    }
    if (st.code() == StatusCode::kFailedPrecondition) {
      // Nowhere: the array is refused whole; the parts sent are cancelled.
      const std::string why = fmt::format("part {} ({}): {}", k + 1, part.indices, st.message());
      for (std::size_t j = 0; j < parts.size(); ++j) {
        if (j == k) continue;
        auto fresh = store_.Get(parts[j].sky_id);
        if (!fresh.ok() || store::IsFinalState(fresh->state)) continue;
        (void)CancelCopies(*fresh);
        fresh->state = "REFUSED";
        fresh->reason = "another part of the array was refused: " + why;
        fresh->ended = Now();
        (void)Record(*fresh, EventKind::kRefused, fresh->reason, fresh->cluster, fresh->native_id);
      }
      job.state = "REFUSED";
      job.reason = why;
      job.ended = Now();
      SKY_RETURN_IF_ERROR(Record(job, EventKind::kRefused, why));
      return FailedPreconditionError(why);
    }
    // Anything else (an answer lost): its intent finishes it.
    if (k == 0) FaultPoint("spread.first-sent");
  }
  return true;
}

SubmitAnswer JobManager::SpreadAnswer(const store::SkyJob& job) {
  SubmitAnswer answer;
  answer.job = job;
  answer.summary = job.reason;
  answer.parts = store_.Parts(job.sky_id).value_or({});
  // Named as Slurm's own answer would name the job: its first part there.
  for (const auto& p : answer.parts) {
    if (p.native_id.empty()) continue;
    answer.job.cluster = p.cluster;
    answer.job.native_id = p.native_id;
    if (answer.job.global_id == 0) answer.job.global_id = p.global_id;
    break;
  }
  return answer;
}

void JobManager::SettleSpread(store::SkyJob& job) {
  auto parts = store_.Parts(job.sky_id);
  if (!parts.ok() || parts->empty()) return;
  std::time_t started = 0, ended = 0;
  for (const auto& p : *parts) {
    if (!store::IsFinalState(p.state)) {
      if (p.started != 0 && (job.started == 0 || p.started < job.started)) {
        job.started = p.started;
        (void)store_.Update(job);
      }
      return;
    }
    if (p.started != 0) started = started == 0 ? p.started : std::min(started, p.started);
    ended = std::max(ended, p.ended);
  }
  // Every part ended: the array's state is the first that did not complete
  // (as sacct shows an array whose tasks ended differently), its exit code
  // the highest.
  job.state = "COMPLETED";
  std::vector<std::string> each;
  for (const auto& p : *parts) {
    if (job.state == "COMPLETED" && p.state != "COMPLETED") job.state = p.state;
    job.exit_code = std::max(job.exit_code, p.exit_code);
    each.push_back(fmt::format("{} {} on {}", p.indices, p.state,
                               p.cluster.empty() ? "no cluster" : p.cluster));
  }
  job.reason = fmt::format("its parts: {}", fmt::join(each, "; "));
  if (started != 0) job.started = started;
  job.ended = ended != 0 ? ended : Now();
  (void)Record(job, EventKind::kEnded, job.reason);
}

Result<std::vector<JobManager::TaskSelection>> JobManager::SelectTasks(
    const std::string& sky_id, const std::string& index_text) {
  SKY_ASSIGN_OR_RETURN(std::vector<std::int64_t> wanted, TaskList(index_text));
  SKY_ASSIGN_OR_RETURN(store::SkyJob job, store_.Get(sky_id));
  SKY_ASSIGN_OR_RETURN(std::vector<store::SkyJob> parts, store_.Parts(sky_id));
  if (parts.empty()) {
    // An array kept whole: itself, with the indices it was given.
    SKY_ASSIGN_OR_RETURN(JobInput input, JobInputFromText(job.input_json));
    SKY_ASSIGN_OR_RETURN(job::Request request, job::ParseRequest(input.ToRequestInput()));
    if (!request.array_indices) {
      return InvalidArgumentError(fmt::format("{} is not a job array", sky_id));
    }
    job.indices = job::FormatArrayIndices(request.array_indices->indices);
    parts.push_back(job);
  }
  std::vector<TaskSelection> out;
  std::vector<std::int64_t> found;
  for (const auto& part : parts) {
    auto mine = job::ParseArrayIndices(part.indices);
    if (!mine.ok() || !mine->has_value()) continue;
    TaskSelection s{part, {}};
    std::set_intersection(wanted.begin(), wanted.end(), (*mine)->indices.begin(),
                          (*mine)->indices.end(), std::back_inserter(s.indices));
    if (s.indices.empty()) continue;
    found.insert(found.end(), s.indices.begin(), s.indices.end());
    out.push_back(std::move(s));
  }
  std::sort(found.begin(), found.end());
  std::vector<std::int64_t> missing;
  std::set_difference(wanted.begin(), wanted.end(), found.begin(), found.end(),
                      std::back_inserter(missing));
  if (!missing.empty()) {
    return NotFoundError(
        fmt::format("{} has no task {}", sky_id, job::FormatArrayIndices(missing)));
  }
  return out;
}

Status JobManager::CancelTasks(const std::string& sky_id, const std::string& index_text) {
  SKY_ASSIGN_OR_RETURN(std::vector<TaskSelection> selected, SelectTasks(sky_id, index_text));
  Status result = OkStatus();
  for (auto& s : selected) {
    std::lock_guard lock(LockFor(s.part.sky_id));
    auto part = store_.Get(s.part.sky_id);
    if (!part.ok()) continue;
    const std::string tasks = job::FormatArrayIndices(s.indices);
    if (store::IsFinalState(part->state)) {
      result = FailedPreconditionError(
          fmt::format("tasks {} of {} have ended ({})", tasks, sky_id, part->state));
      continue;
    }
    if (part->cluster.empty()) {
      result = UnavailableError(
          fmt::format("tasks {} of {} are not on a cluster yet ({})", tasks, sky_id, part->state));
      continue;
    }
    backend::Backend* b = BackendOf(part->cluster);
    if (b == nullptr) continue;
    // scancel ID_[7,9-12]: those tasks only, wherever they are in their
    // life; the part ends when its last task does.
    Status st =
        b->Cancel(fmt::format("{}_[{}]", part->native_id, tasks), false, options_.submit_timeout);
    if (!st.ok()) {
      result = st;
      continue;
    }
    (void)Record(*part, EventKind::kTasksCancelled, "skyslurm cancel: tasks " + tasks,
                 part->cluster, part->native_id);
  }
  return result;
}

}  // namespace skyslurm::daemon

namespace skyslurm::daemon {
namespace {

// The indices a queue row of array `native` stands for ("452_5": 5,
// "452_[1-3,7%2]": 1, 2, 3, 7); none for another job's row.
std::vector<std::int64_t> RowIndices(const std::string& row_id, const std::string& native) {
  if (backend::ArrayJobId(row_id) != native || row_id.size() == native.size()) return {};
  auto parsed =
      job::ParseArrayIndices(Unbracketed(std::string_view(row_id).substr(native.size() + 1)));
  if (!parsed.ok() || !parsed->has_value()) return {};
  return (*parsed)->indices;
}

// How many tasks of an array's row run (or end) now: the ones its "%N"
// counts.
std::int64_t RunningTasks(const backend::JobInfo& copy) {
  std::int64_t n = 0;
  for (backend::JobPhase p : {backend::JobPhase::kRunning, backend::JobPhase::kEnding}) {
    if (auto it = copy.array_tasks.find(std::string(backend::PhaseName(p)));
        it != copy.array_tasks.end()) {
      n += it->second;
    }
  }
  return n;
}

}  // namespace

void JobManager::WeighTaskMove(store::SkyJob& part, const backend::JobInfo& copy) {
  const std::time_t now = Now();
  // As often as a move of a whole job is weighed (job_moves.cc): each asks
  // every cluster.
  if (auto it = last_weighed_.find(part.sky_id);
      it != last_weighed_.end() && now - it->second < std::max(5, policy_.poll_interval)) {
    return;
  }
  if (weighed_this_tick_ >= kMoveWeighsPerLook || part.moves >= policy_.max_moves) return;
  ++weighed_this_tick_;
  last_weighed_[part.sky_id] = now;
  // A part scontrol update bound to its cluster (CarryUpdate) keeps its
  // tasks there.
  if (auto own = JobInputFromText(part.input_json); own.ok()) {
    auto own_request = job::ParseRequest(own->ToRequestInput());
    if (own_request.ok() && own_request->sky.infra) return;
  }
  auto whole = store_.Get(part.parent);
  if (!whole.ok()) return;
  auto input = JobInputFromText(whole->input_json);
  if (!input.ok()) return;
  auto request = job::ParseRequest(input->ToRequestInput());
  if (!request.ok() || !request->array_indices) return;
  // Its waiting tasks that are still its own (a read begun before a move
  // may still list the ones that left).
  auto pending = job::ParseArrayIndices(copy.pending_tasks);
  auto mine = job::ParseArrayIndices(part.indices);
  if (!pending.ok() || !pending->has_value() || !mine.ok() || !mine->has_value()) return;
  // Under a "%N" the parts share, a part gives the tasks that move the part
  // of its share its cluster leaves unused (it runs fewer tasks than its
  // share): more would let the parts together run more than N. One whose
  // share is in use gains nothing by a move: the limit holds its tasks back.
  std::int64_t spare = 0;
  if (request->array_indices->throttle) {
    if (!(*mine)->throttle) return;
    spare = *(*mine)->throttle - RunningTasks(copy);
    if (spare <= 0) return;
  }
  std::vector<std::int64_t> waiting;
  std::set_intersection((*pending)->indices.begin(), (*pending)->indices.end(),
                        (*mine)->indices.begin(), (*mine)->indices.end(),
                        std::back_inserter(waiting));
  if (waiting.empty()) return;
  JobInput asked = *input;
  asked.args = WithArray(*input, *request, job::FormatArrayIndices(waiting));
  auto tasks = job::ParseRequest(asked.ToRequestInput());
  if (!tasks.ok() || !job::TakeSkyDependency(*tasks).ok()) return;
  std::vector<place::ClusterHandle> handles = ws_.handles;
  const std::vector<std::string> dead = DeadClusters();
  for (auto& h : handles) {
    if (std::find(dead.begin(), dead.end(), h.name) != dead.end()) h.unavailable = "not answering";
    if (h.name == part.cluster) h.unavailable = "the cluster its tasks pend on";
  }
  place::PlanOptions options;
  options.probe_timeout = options_.probe_timeout;
  options.estimate_timeout = options_.estimate_timeout;
  options.only = request->sky.clusters;
  options.policy = PolicyNow(options.probe_timeout);
  options.lay_out_array_tasks = true;
  const place::Plan plan = place::MakePlan(*tasks, handles, ws_.catalog, ws_.home(), options);
  // Where the most of them start now: they have waited where they are.
  const std::time_t soon = now + std::max(5, policy_.poll_interval);
  const place::Candidate* best = nullptr;
  std::size_t best_now = 0;
  for (std::size_t i = 0; i < plan.candidates.size(); ++i) {
    const place::Candidate& c = plan.candidates[i];
    using Kind = place::Verdict::Kind;
    const Kind kind = plan.decision.verdicts[i].kind;
    if (!c.start || (kind != Kind::kChosen && kind != Kind::kTied && kind != Kind::kLater)) {
      continue;
    }
    std::size_t starting = c.task_starts.empty() && *c.start <= soon ? 1 : 0;
    for (std::time_t t : c.task_starts) starting += t <= soon ? 1 : 0;
    if (starting > best_now) {
      best = &c;
      best_now = starting;
    }
  }
  if (best == nullptr) return;
  {
    std::lock_guard lock(view_mu_);
    if (MovesInLastMinute(moves_into_[best->cluster], now) >= policy_.moves_per_cluster) return;
  }
  // The last of them: the ones their cluster would start last.
  const std::size_t take = std::min(best_now, waiting.size());
  const std::vector<std::int64_t> moving(waiting.end() - static_cast<std::ptrdiff_t>(take),
                                         waiting.end());
  std::string why = fmt::format(
      "{} of its tasks pend on {} after {} s; {}/{} starts {} of them now", waiting.size(),
      part.cluster, now - part.submitted, best->cluster, best->partition, take);
  // "N_[20-27]", and under a shared "%N" the share they take along at most
  // ("N_[20-27]%4"): FinishTaskMove settles it against what runs then.
  std::string named = fmt::format("{}_[{}]", part.native_id, job::FormatArrayIndices(moving));
  if (spare > 0) {
    const std::int64_t share = std::min<std::int64_t>(spare, static_cast<std::int64_t>(take));
    named += fmt::format("%{}", share);
    why += fmt::format(", up to {} at once (its share of %{} unused there)", share,
                       *request->array_indices->throttle);
  }
  store::Intent intent{0, part.sky_id, "move-tasks", part.cluster, named, now};
  auto begun = store_.BeginIntent(intent);
  if (!begun.ok()) return;
  intent.id = *begun;
  if (options_.log) {
    options_.log(fmt::format("{} moving tasks {} off {} to {}: {}", part.sky_id, named,
                             part.cluster, best->cluster, why));
  }
  FaultPoint("tasks.intent");
  {
    std::lock_guard lock(view_mu_);
    moves_into_[best->cluster].push_back(now);
  }
  FinishTaskMove(part, intent, best->cluster, why);
}

void JobManager::FinishTaskMove(store::SkyJob& part, const store::Intent& intent,
                                const std::string& target, const std::string& why) {
  // "N_[20-27]", or "N_[20-27]%4" under a shared "%N" (WeighTaskMove);
  // " cancelled" after it once the move has cancelled exactly those tasks
  // (noted below): however long the move then waits for its cluster, and
  // after Slurm forgot them (MinJobAge), they are not lost.
  constexpr std::string_view kCancelledNote = " cancelled";
  std::string ids = intent.native_id;
  const bool noted_cancelled = ids.ends_with(kCancelledNote);
  if (noted_cancelled) ids.resize(ids.size() - kCancelledNote.size());
  std::int64_t share_asked = 0;
  if (const auto pct = ids.rfind('%'); pct != std::string::npos && pct > ids.rfind(']')) {
    share_asked = std::atoll(ids.c_str() + pct + 1);
    ids.resize(pct);
  }
  const auto at = ids.find("_[");
  if (at == std::string::npos || ids.back() != ']') {
    (void)store_.EndIntent(intent.id);  // not one of ours
    return;
  }
  const std::string native = ids.substr(0, at);
  const std::vector<std::int64_t> wanted = RowIndices(ids, native);
  backend::Backend* b = BackendOf(intent.cluster);
  if (b == nullptr) return;
  // The part's share of the "%N" as the store has it (changed only with the
  // move's record, so the same after a crash).
  std::int64_t share = 0;
  auto mine_now = job::ParseArrayIndices(part.indices);
  if (share_asked > 0 && mine_now.ok() && mine_now->has_value() && (*mine_now)->throttle) {
    share = *(*mine_now)->throttle;
  }
  // One look at the array's rows there: each task's phase, how many hold a
  // place under its share, whether any lives. False: no answer (the move
  // is settled from its intent on a later look).
  // The array's own record listed by its bare id and cancelled: every task
  // it held pending was cancelled (Slurm 22.05 then lists "N CANCELLED",
  // without the indices), so a wanted task not listed by itself was one of
  // them.
  std::map<std::int64_t, backend::JobPhase> seen;
  std::int64_t running = 0;
  bool live = false;
  bool record_cancelled = false;
  auto look = [&] {
    auto rows = b->Queue(options_.queue_timeout);
    if (!rows.ok()) return false;
    seen.clear();
    running = 0;
    live = false;
    record_cancelled = false;
    for (const auto& r : *rows) {
      if (r.key.job_id == native) {
        record_cancelled = r.phase == backend::JobPhase::kCancelled;
        live = live || backend::IsLive(r.phase);
        continue;
      }
      const std::vector<std::int64_t> indices = RowIndices(r.key.job_id, native);
      if (indices.empty()) continue;
      for (std::int64_t i : indices) seen[i] = r.phase;
      live = live || backend::IsLive(r.phase);
      if (backend::IsLive(r.phase) && !backend::IsWaiting(r.phase)) {
        running += static_cast<std::int64_t>(indices.size());
      }
    }
    return true;
  };
  // The array's limit set there; also done when the array has no live task
  // left there (the command is refused: nothing is left to limit, and what
  // follows settles the move from the queue). Else false: tried again from
  // the intent on a later look.
  auto set_share = [&](std::int64_t limit) {
    if (share == 0 || b->SetArrayThrottle(native, limit, options_.queue_timeout).ok()) {
      return true;
    }
    return look() && !live;
  };
  // Lowered first, by all the tasks may take along: from now on the part
  // starts no task that the new part's share would then exceed N with.
  if (!set_share(share - share_asked)) return;
  // Held first (exactly those still pending; a task that started is left
  // alone), then the held ones cancelled: Slurm 22.05's scancel
  // --state=PENDING of some tasks cancels the array's whole pending record.
  // Again after a crash, which is harmless; the answers are not the judge
  // (a task that started makes the hold fail for it), the queue is.
  (void)b->Hold(ids, options_.queue_timeout);
  FaultPoint("tasks.held");
  if (!look()) return;
  // Still waiting, so held now (squeue lists them in the array's pending
  // record, "Resources,JobHeldAdmin", beside the ones not held): they
  // cannot start before the cancel. Already cancelled: by this move before
  // a crash.
  const bool listed_recently = Now() - intent.created < 240;
  auto cancelled = [&](std::int64_t i) {
    auto it = seen.find(i);
    if (it == seen.end()) return noted_cancelled || record_cancelled || listed_recently;
    return it->second == backend::JobPhase::kCancelled;
  };
  std::vector<std::int64_t> held;
  std::vector<std::int64_t> gone;  // held, or cancelled by this move before
  std::size_t already = 0;
  for (std::int64_t i : wanted) {
    if (auto it = seen.find(i); it != seen.end() && backend::IsWaiting(it->second)) {
      held.push_back(i);
      gone.push_back(i);
    } else if (cancelled(i)) {
      ++already;
      gone.push_back(i);
    }
  }
  // Under a shared "%N": the share the tasks take along is what the part
  // leaves unused now (tasks may have started since the move was weighed),
  // no more than they are. None: nothing moves, the held tasks wait again.
  // (After a crash past the cancel, the part ran at most its lowered share
  // since, so some share is left: the clamp only guards that.)
  std::int64_t given = 0;
  if (share > 0) {
    given = std::min({share_asked, share - std::min(running, share),
                      static_cast<std::int64_t>(held.size() + already)});
    if (already > 0) given = std::max<std::int64_t>(given, 1);
  }
  auto whole = store_.Get(part.parent);
  if (!whole.ok()) return;
  auto abandon = [&](const std::string& what) {
    if (!set_share(share)) return;
    (void)store_.Apply([&] {
      SKY_RETURN_IF_ERROR(Record(part, EventKind::kMoveAbandoned, what, intent.cluster, native));
      return store_.EndIntent(intent.id);
    });
  };
  if (share > 0 && given <= 0) {
    if (!held.empty()) {
      const std::string back = fmt::format("{}_[{}]", native, job::FormatArrayIndices(held));
      if (!b->Release(back, options_.queue_timeout).ok()) return;  // later, from the intent
    }
    abandon(gone.empty() ? "its tasks started on " + intent.cluster + " before the move"
                         : "its share of the array's %N is in use on " + intent.cluster);
    return;
  }
  if (!held.empty()) {
    const std::string cancelling = fmt::format("{}_[{}]", native, job::FormatArrayIndices(held));
    if (!b->Cancel(cancelling, false, options_.queue_timeout).ok())
      return;  // later, from the intent
    // Those the move took from their cluster, and only those (a task that
    // started stays, and must never count as moved once Slurm forgets it).
    if (!noted_cancelled) {
      std::string note = fmt::format("{}_[{}]", native, job::FormatArrayIndices(gone));
      if (share_asked > 0) note += fmt::format("%{}", share_asked);
      (void)store_.NoteIntent(intent.id, note + std::string(kCancelledNote));
    }
    FaultPoint("tasks.cancelled");
    if (!look()) return;
  }
  // Moved: the tasks now listed as cancelled, or no longer listed while a
  // cancelled task still would be (MinJobAge, 300 s by default). A task
  // that started stays where it ran.
  std::vector<std::int64_t> moved;
  for (std::int64_t i : wanted) {
    if (cancelled(i)) moved.push_back(i);
  }
  if (moved.empty()) {
    abandon("its tasks started on " + intent.cluster + " before the move");
    return;
  }
  given = std::min(given, static_cast<std::int64_t>(moved.size()));
  // What the part keeps, set before the new part can start anything.
  if (!set_share(share - given)) return;
  auto input = JobInputFromText(whole->input_json);
  if (!input.ok()) return;
  auto request = job::ParseRequest(input->ToRequestInput());
  if (!request.ok()) return;
  auto mine = job::ParseArrayIndices(part.indices);
  std::vector<std::int64_t> remaining;
  if (mine.ok() && mine->has_value()) {
    std::set_difference((*mine)->indices.begin(), (*mine)->indices.end(), moved.begin(),
                        moved.end(), std::back_inserter(remaining));
  }
  const std::string spec = job::FormatArrayIndices(
      job::ArrayIndices{moved, given > 0 ? std::optional<std::int64_t>(given) : std::nullopt});
  store::SkyJob moving;
  moving.sky_id =
      fmt::format("{}-{}", whole->sky_id, store_.Parts(whole->sky_id).value_or({}).size() + 1);
  moving.owner = whole->owner;
  JobInput moving_input = *input;
  moving_input.args = WithArray(*input, *request, spec);
  moving.input_json = JobInputText(moving_input);
  moving.name = whole->name;
  moving.retry_on_failure = whole->retry_on_failure;
  moving.created = moving.updated = Now();
  moving.parent = whole->sky_id;
  moving.indices = spec;
  moving.state = "MIGRATING";
  moving.reason = why;
  const std::string detail =
      fmt::format("tasks {} moved off {} as {} ({})", spec, intent.cluster, moving.sky_id, why);
  std::unique_lock moving_lock(LockFor(moving.sky_id));
  Status released = store_.Apply([&] {
    SKY_RETURN_IF_ERROR(store_.Insert(moving));
    part.indices = job::FormatArrayIndices(job::ArrayIndices{
        remaining, share > 0 && !remaining.empty() ? std::optional<std::int64_t>(share - given)
                                                   : std::nullopt});
    ++part.moves;
    SKY_RETURN_IF_ERROR(Record(part, EventKind::kTasksMoved, detail, intent.cluster, native));
    SKY_RETURN_IF_ERROR(Record(*whole, EventKind::kTasksMoved, detail, intent.cluster, native));
    return store_.EndIntent(intent.id);
  });
  if (!released.ok()) return;
  FaultPoint("tasks.released");
  (void)PlaceAndSubmit(moving, EventKind::kMoved, why, DeadClusters(), true, "", target);
}

}  // namespace skyslurm::daemon
