#include "broker/backend/array_tasks.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "broker/cluster/queue.h"

namespace skyslurm::backend {

std::string_view ArrayJobId(std::string_view job_id) {
  const auto underscore = job_id.find('_');
  return underscore == std::string_view::npos ? job_id : job_id.substr(0, underscore);
}

namespace {

// How many tasks a row stands for: "452_[1-3,7%2]" four, "452_5" one.
std::int64_t TasksOf(std::string_view job_id) {
  const auto open = job_id.find("_[");
  if (open == std::string_view::npos || job_id.back() != ']') return 1;
  return std::max<std::int64_t>(
      1, cluster::ArrayTaskCount(job_id.substr(open + 2, job_id.size() - open - 3)));
}

// The indices a waiting row stands for: "1-3,7" of "452_[1-3,7%2]", "5" of
// "452_5".
std::string WaitingIndices(std::string_view job_id) {
  const auto underscore = job_id.find('_');
  if (underscore == std::string_view::npos) return "";
  std::string_view tasks = job_id.substr(underscore + 1);
  if (tasks.starts_with('[') && tasks.ends_with(']')) tasks = tasks.substr(1, tasks.size() - 2);
  return std::string(tasks.substr(0, tasks.find('%')));
}

// The end that decides an ended array's: the infrastructure's faults first
// (what a site sees first), then the tasks' own.
int EndRank(JobPhase phase) {
  switch (phase) {
    case JobPhase::kNodeFail:
      return 0;
    case JobPhase::kBootFail:
      return 1;
    case JobPhase::kPreempted:
      return 2;
    case JobPhase::kFailed:
      return 3;
    case JobPhase::kTimeout:
      return 4;
    case JobPhase::kCancelled:
      return 5;
    default:
      return 6;
  }
}

JobInfo Fold(const std::vector<const JobInfo*>& tasks) {
  JobInfo out = *tasks.front();
  out.key.job_id = std::string(ArrayJobId(out.key.job_id));
  out.array_tasks.clear();
  bool unknown = false, started = false, live = false, any_pending = false, all_held = true;
  const JobInfo* pending_row = nullptr;
  const JobInfo* ended = nullptr;
  const JobInfo* running = nullptr;
  out.start_time = 0;
  out.end_time = 0;
  out.exit_code = 0;
  for (const JobInfo* t : tasks) {
    out.array_tasks[std::string(PhaseName(t->phase))] += TasksOf(t->key.job_id);
    if (t->submit_time != 0 && (out.submit_time == 0 || t->submit_time < out.submit_time)) {
      out.submit_time = t->submit_time;
    }
    if (t->phase == JobPhase::kUnknown) unknown = true;
    if (IsLive(t->phase)) live = true;
    if (IsWaiting(t->phase)) {
      // Held ones (the user's hold) wait for their release where they are.
      // squeue says PENDING for them, with the hold as the reason
      // (JobHeldUser; a record whose tasks are partly held names another
      // reason first: those are a move's, which settles them itself).
      const bool on_hold = t->phase == JobPhase::kHeld || t->reason.starts_with("JobHeld");
      const std::string waiting = on_hold ? "" : WaitingIndices(t->key.job_id);
      if (!waiting.empty()) {
        out.pending_tasks += (out.pending_tasks.empty() ? "" : ",") + waiting;
      }
      any_pending = true;
      all_held = all_held && t->phase == JobPhase::kHeld;
      if (pending_row == nullptr) pending_row = t;
      continue;
    }
    started = true;
    if (t->start_time != 0 && (out.start_time == 0 || t->start_time < out.start_time)) {
      out.start_time = t->start_time;
    }
    out.end_time = std::max(out.end_time, t->end_time);
    if (HasNodes(t->phase) && (running == nullptr || t->phase == JobPhase::kRunning)) running = t;
    if (IsFinal(t->phase)) {
      out.exit_code = std::max(out.exit_code, t->exit_code);
      if (ended == nullptr || EndRank(t->phase) < EndRank(ended->phase)) ended = t;
    }
  }
  if (unknown) {
    out.phase = JobPhase::kUnknown;
  } else if (started && live) {
    out.phase = JobPhase::kRunning;
    const JobInfo* shown = running != nullptr ? running : pending_row;
    out.state = "RUNNING";
    out.reason = shown != nullptr ? shown->reason : "None";
  } else if (started) {
    out.phase = ended->phase;
    out.state = ended->state;
    out.reason = ended->reason;
  } else {
    out.phase = any_pending && all_held ? JobPhase::kHeld : JobPhase::kPending;
    out.state = pending_row->state;
    out.reason = pending_row->reason;
  }
  return out;
}

}  // namespace

std::vector<JobInfo> FoldArrayTasks(std::vector<JobInfo> rows) {
  // Rows of one array, in queue order, by (cluster, array job id).
  using Key = std::pair<std::string, std::string>;
  std::map<Key, std::vector<const JobInfo*>> arrays;
  for (const JobInfo& j : rows) {
    const std::string_view base = ArrayJobId(j.key.job_id);
    if (j.sky_id.empty() || base.size() == j.key.job_id.size()) continue;
    arrays[{j.key.cluster, std::string(base)}].push_back(&j);
  }
  if (arrays.empty()) return rows;
  // The array's own record listed by its bare id beside its tasks: Slurm
  // 22.05 lists it so once every task it still held pending was cancelled
  // (a move's scancel of them), "452 CANCELLED" beside "452_5 COMPLETED".
  // It is one of the array's rows (its cancelled tasks), not another job
  // with the array's id.
  auto group_of = [&](const JobInfo& j) -> std::vector<const JobInfo*>* {
    if (j.sky_id.empty()) return nullptr;
    auto it = arrays.find(Key{j.key.cluster, std::string(ArrayJobId(j.key.job_id))});
    return it == arrays.end() ? nullptr : &it->second;
  };
  for (const JobInfo& j : rows) {
    if (ArrayJobId(j.key.job_id).size() != j.key.job_id.size()) continue;
    if (auto* group = group_of(j)) group->push_back(&j);
  }
  std::vector<JobInfo> out;
  out.reserve(rows.size());
  for (const JobInfo& j : rows) {
    auto* group = group_of(j);
    if (group == nullptr) {
      out.push_back(j);
      continue;
    }
    // In the place of the first of its rows in the queue's order.
    const JobInfo* first = *std::min_element(group->begin(), group->end());
    if (first != &j) continue;
    out.push_back(Fold(*group));
  }
  return out;
}

}  // namespace skyslurm::backend
