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
#include "broker/daemon/jobs/arrays.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "broker/backend/array_tasks.h"
#include "broker/cluster/job_phase.h"
#include "broker/daemon/jobs/fault_points.h"
#include "broker/daemon/jobs/lifecycle.h"
#include "broker/place/array_split.h"
#include "broker/place/planner.h"

namespace skyslurm::daemon {

// The command line's last --array wins, over the script's #SBATCH lines too.
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

std::string_view Unbracketed(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  return text;
}

namespace {

std::string Plural(std::size_t n, std::string_view one) {
  return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s");
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

std::vector<std::pair<std::string, std::string>> Arrays::WholeArrayEnv(const store::SkyJob& part) {
  auto whole = store_.Get(part.parent);
  if (!whole.ok()) return {};
  auto parsed = ctx_.parsed.Of(*whole);
  if (!parsed.ok()) return {};
  const job::Request& request = (*parsed)->request;
  if (!request.array_indices || request.array_indices->indices.empty()) return {};
  const auto& indices = request.array_indices->indices;
  return {{"SKYSLURM_ARRAY_TASK_MIN", std::to_string(indices.front())},
          {"SKYSLURM_ARRAY_TASK_MAX", std::to_string(indices.back())},
          {"SKYSLURM_ARRAY_TASK_COUNT", std::to_string(indices.size())}};
}

namespace {

// Every cluster that may run the array, best first: the plan's choice, then
// by start; one partition per cluster (a part goes to a cluster, where its
// own placement picks the partition again).
std::vector<place::SplitTarget> SplitTargets(const place::Plan& plan, const job::Request& request) {
  std::vector<std::size_t> order(plan.candidates.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if ((a == *plan.decision.chosen) != (b == *plan.decision.chosen)) {
      return a == *plan.decision.chosen;
    }
    return plan.candidates[a].start.value_or(0) < plan.candidates[b].start.value_or(0);
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
  return targets;
}

}  // namespace

place::Plan Arrays::PlanTasks(const job::Request& request) {
  std::vector<place::ClusterHandle> handles =
      ctx_.HandlesWithout(DeadClusters(), "not answering (skyslurmd)");
  place::PlanOptions options;
  options.probe_timeout = options_.probe_timeout;
  options.estimate_timeout = options_.estimate_timeout;
  options.only = request.sky.clusters;
  options.policy = ctx_.PolicyNow(options.probe_timeout);
  options.lay_out_array_tasks = true;
  return place::MakePlan(request, handles, ws_.catalog, ws_.home(), options);
}

std::optional<Arrays::Parts> Arrays::MakeParts(const store::SkyJob& job,
                                               const job::Request& request, const JobInput& input,
                                               const place::ArraySplit& split, std::time_t now) {
  Parts out;
  for (std::size_t k = 0; k < split.parts.size(); ++k) {
    const place::ArrayPart& p = split.parts[k];
    JobInput part_input = input;
    part_input.args = WithArray(input, request, p.ArraySpec());
    auto reread = ParseJob(part_input);
    if (!reread.ok() || !(*reread)->request.array_indices ||
        (*reread)->request.array_indices->indices != p.indices) {
      return std::nullopt;  // an argument list this cannot rewrite: placed whole
    }
    out.parsed.push_back(*reread);
    store::SkyJob part;
    part.sky_id = fmt::format("{}-{}", job.sky_id, k + 1);
    part.owner = job.owner;
    part.input_json = JobInputText(part_input);
    part.name = job.name;
    part.retry_on_failure = job.retry_on_failure;
    part.created = part.updated = Now();
    part.parent = job.sky_id;
    part.indices = p.ArraySpec();
    out.jobs.push_back(std::move(part));
    out.described.push_back(fmt::format("{} {} ({}, the first {}, the last {})", p.cluster,
                                        p.ArraySpec(), Plural(p.indices.size(), "task"),
                                        place::FormatWait(p.first_start, now),
                                        place::FormatWait(p.last_start, now)));
  }
  return out;
}

Result<bool> Arrays::Spread(store::SkyJob& job, const job::Request& request,
                            const JobInput& input) {
  // Only a batch array that may go anywhere, and is not skyslurm's to
  // restart (a managed job restarts whole).
  if (!request.array_indices || request.array_indices->indices.size() < 2 ||
      request.tool != job::Tool::kSbatch || request.sky.infra || job.managed) {
    return false;
  }
  const place::Plan plan = PlanTasks(request);
  if (!plan.decision.chosen) return false;  // the whole array's placement says why
  const std::vector<place::SplitTarget> targets = SplitTargets(plan, request);
  if (targets.size() < 2) return false;
  auto split = place::SplitArray(*request.array_indices, targets);
  // An index no cluster takes: the whole array's placement says so.
  if (!split.ok() || split->parts.size() < 2) return false;
  const std::time_t whole = place::LastStartOn(*request.array_indices, targets.front());
  if (split->last_start >= whole) return false;
  // The parts, each checked to read back as exactly its indices (each read
  // once: kept for its placement).
  std::optional<Parts> parts = MakeParts(job, request, input, *split, plan.now);
  if (!parts) return false;

  // Locked before they are visible: the look at the queues must not place
  // a part the split has given a cluster.
  std::vector<std::unique_lock<std::mutex>> locks;
  for (const auto& part : parts->jobs) locks.emplace_back(LockFor(part.sky_id));
  job.state = "SPREAD";
  job.reason =
      fmt::format("spread over {} clusters: its last task starts {} against {} kept whole on {}",
                  parts->jobs.size(), place::FormatWait(split->last_start, plan.now),
                  place::FormatWait(whole, plan.now), targets.front().cluster);
  job.expected_start = plan.now;
  for (const auto& p : split->parts)
    job.expected_start = std::min(job.expected_start, p.first_start);
  const Status recorded = store_.Apply([&] {
    for (const auto& part : parts->jobs) SKY_RETURN_IF_ERROR(store_.Insert(part));
    return Record(job, EventKind::kSpread,
                  fmt::format("{}: {}", job.reason, fmt::join(parts->described, "; ")));
  });
  SKY_RETURN_IF_ERROR(recorded);
  for (std::size_t k = 0; k < parts->jobs.size(); ++k) {
    ctx_.parsed.Keep(parts->jobs[k].sky_id, parts->jobs[k].input_json, parts->parsed[k]);
  }
  FaultPoint("spread.recorded");
  SKY_RETURN_IF_ERROR(SendParts(job, parts->jobs, *split));
  return true;
}

Status Arrays::SendParts(store::SkyJob& job, std::vector<store::SkyJob>& parts,
                         const place::ArraySplit& split) {
  for (std::size_t k = 0; k < parts.size(); ++k) {
    store::SkyJob& part = parts[k];
    const std::string& cluster = split.parts[k].cluster;
    Status st =
        l_.placer.PlaceAndSubmit(part, EventKind::kSubmitted, "", DeadClusters(), true, "", cluster)
            .status();
    if (st.code() == StatusCode::kFailedPrecondition) {
      // Refused there after all (a limit of its own): anywhere else.
      std::vector<std::string> avoid = DeadClusters();
      avoid.push_back(cluster);
      part.state = "SUBMITTING";
      part.ended = 0;
      st = l_.placer
               .PlaceAndSubmit(part, EventKind::kSubmitted, "refused by " + cluster, avoid, true)
               .status();
    }
    if (st.code() == StatusCode::kFailedPrecondition) {
      // Nowhere: the array is refused whole.
      const std::string why = fmt::format("part {} ({}): {}", k + 1, part.indices, st.message());
      return RefuseWhole(job, parts, k, why);
    }
    // Anything else (an answer lost): its intent finishes it.
    if (k == 0) FaultPoint("spread.first-sent");
  }
  return OkStatus();
}

Status Arrays::RefuseWhole(store::SkyJob& job, const std::vector<store::SkyJob>& parts,
                           std::size_t refused, const std::string& why) {
  // The parts sent are cancelled.
  for (std::size_t j = 0; j < parts.size(); ++j) {
    if (j == refused) continue;
    auto fresh = store_.Get(parts[j].sky_id);
    if (!fresh.ok() || store::IsFinalState(fresh->state)) continue;
    (void)l_.copies.CancelAll(*fresh);
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

SubmitAnswer Arrays::Answer(const store::SkyJob& job) {
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

void Arrays::Settle(store::SkyJob& job) {
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

Result<std::vector<Arrays::TaskSelection>> Arrays::SelectTasks(const std::string& sky_id,
                                                               const std::string& index_text) {
  SKY_ASSIGN_OR_RETURN(std::vector<std::int64_t> wanted, TaskList(index_text));
  SKY_ASSIGN_OR_RETURN(store::SkyJob job, store_.Get(sky_id));
  SKY_ASSIGN_OR_RETURN(std::vector<store::SkyJob> parts, store_.Parts(sky_id));
  if (parts.empty()) {
    // An array kept whole: itself, with the indices it was given.
    SKY_ASSIGN_OR_RETURN(std::shared_ptr<const ParsedJob> parsed, ctx_.parsed.Of(job));
    const job::Request& request = parsed->request;
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

Status Arrays::CancelTasks(const std::string& sky_id, const std::string& index_text) {
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
