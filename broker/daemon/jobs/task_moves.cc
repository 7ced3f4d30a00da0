// Pending tasks of a spread array's part that another cluster starts now
// move there as a new part (TaskMoves, arrays.h): held, then cancelled while
// still pending, under an intent, so that a crash at any step loses no task
// and runs none twice.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "broker/backend/array_tasks.h"
#include "broker/daemon/jobs/arrays.h"
#include "broker/daemon/jobs/fault_points.h"
#include "broker/daemon/jobs/lifecycle.h"
#include "broker/place/planner.h"

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

// The candidate that starts the most of the tasks by `soon` (a plan laid
// out per task), and how many.
const place::Candidate* StartingMost(const place::Plan& plan, std::time_t soon,
                                     std::size_t* count) {
  const place::Candidate* best = nullptr;
  for (std::size_t i = 0; i < plan.candidates.size(); ++i) {
    const place::Candidate& c = plan.candidates[i];
    using Kind = place::Verdict::Kind;
    const Kind kind = plan.decision.verdicts[i].kind;
    if (!c.start || (kind != Kind::kChosen && kind != Kind::kTied && kind != Kind::kLater)) {
      continue;
    }
    std::size_t starting = c.task_starts.empty() && *c.start <= soon ? 1 : 0;
    for (std::time_t t : c.task_starts) starting += t <= soon ? 1 : 0;
    if (starting > *count) {
      best = &c;
      *count = starting;
    }
  }
  return best;
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

void TaskMoves::Weigh(store::SkyJob& part, const backend::JobInfo& copy) {
  const std::time_t now = Now();
  // As often as a move of a whole job is weighed (moves.h): each asks
  // every cluster.
  if (part.moves >= policy_.max_moves || !l_.mover.TakeWeighing(part.sky_id, now)) return;
  // A part scontrol update bound to its cluster (CarryUpdate) keeps its
  // tasks there.
  if (auto own = ctx_.parsed.Of(part); own.ok() && (*own)->request.sky.infra) return;
  auto whole = store_.Get(part.parent);
  if (!whole.ok()) return;
  auto parsed = ctx_.parsed.Of(*whole);
  if (!parsed.ok()) return;
  const JobInput* input = &(*parsed)->input;
  const job::Request* request = &(*parsed)->request;
  if (!request->array_indices) return;
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
  std::vector<place::ClusterHandle> handles = ctx_.HandlesWithout(DeadClusters(), "not answering");
  for (auto& h : handles) {
    if (h.name == part.cluster) h.unavailable = "the cluster its tasks pend on";
  }
  place::PlanOptions options;
  options.probe_timeout = options_.probe_timeout;
  options.estimate_timeout = options_.estimate_timeout;
  options.only = request->sky.clusters;
  options.policy = ctx_.PolicyNow(options.probe_timeout);
  options.lay_out_array_tasks = true;
  const place::Plan plan = place::MakePlan(*tasks, handles, ws_.catalog, ws_.home(), options);
  // Where the most of them start now: they have waited where they are.
  std::size_t best_now = 0;
  const place::Candidate* best =
      StartingMost(plan, now + std::max(5, policy_.poll_interval), &best_now);
  if (best == nullptr || l_.mover.Crowded(best->cluster, now)) return;
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
  ctx_.Log(fmt::format("{} moving tasks {} off {} to {}: {}", part.sky_id, named, part.cluster,
                       best->cluster, why));
  FaultPoint("tasks.intent");
  l_.mover.MovedInto(best->cluster, now);
  Finish(part, intent, best->cluster, why);
}


namespace {

// What a move of some tasks names in its intent's native id: "N_[20-27]",
// or "N_[20-27]%4" under a shared "%N" (the share they take along at
// most); " cancelled" after it once the move has cancelled exactly those
// tasks, so that however long the move then waits for its cluster, and
// after Slurm forgot them (MinJobAge), they are not lost.
struct MovingTasks {
  std::string ids;  // "N_[20-27]"
  std::string native;
  std::vector<std::int64_t> wanted;
  std::int64_t share_asked = 0;
  bool noted_cancelled = false;
};
constexpr std::string_view kCancelledNote = " cancelled";

std::optional<MovingTasks> ReadMovingTasks(const std::string& native_id) {
  MovingTasks m;
  m.ids = native_id;
  m.noted_cancelled = m.ids.ends_with(kCancelledNote);
  if (m.noted_cancelled) m.ids.resize(m.ids.size() - kCancelledNote.size());
  if (const auto pct = m.ids.rfind('%'); pct != std::string::npos && pct > m.ids.rfind(']')) {
    m.share_asked = std::atoll(m.ids.c_str() + pct + 1);
    m.ids.resize(pct);
  }
  const auto at = m.ids.find("_[");
  if (at == std::string::npos || m.ids.back() != ']') return std::nullopt;
  m.native = m.ids.substr(0, at);
  m.wanted = RowIndices(m.ids, m.native);
  return m;
}

// The array's rows there, as one look at its cluster's queue shows them:
// each task's phase, how many hold a place under its share, whether any
// lives. The array's own record listed by its bare id and cancelled: every
// task it held pending was cancelled (Slurm 22.05 then lists "N
// CANCELLED", without the indices), so a wanted task not listed by itself
// was one of them.
struct ArrayRows {
  std::map<std::int64_t, backend::JobPhase> seen;
  std::int64_t running = 0;
  bool live = false;
  bool record_cancelled = false;

  // False: no answer (the move is settled from its intent on a later look).
  bool Look(backend::Backend& b, const std::string& native, std::chrono::milliseconds timeout) {
    auto rows = b.Queue(timeout);
    if (!rows.ok()) return false;
    *this = ArrayRows{};
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
  }
};

}  // namespace

// One move of pending tasks, settled from its intent.
class TaskMoves::Move {
 public:
  Move(TaskMoves& moves, store::SkyJob& part, const store::Intent& intent, MovingTasks tasks,
       backend::Backend& b)
      : m_(moves), part_(part), intent_(intent), t_(std::move(tasks)), b_(b) {
    // The part's share of the "%N" as the store has it (changed only with
    // the move's record, so the same after a crash).
    auto mine = job::ParseArrayIndices(part.indices);
    if (t_.share_asked > 0 && mine.ok() && mine->has_value() && (*mine)->throttle) {
      share_ = *(*mine)->throttle;
    }
  }

  void Settle(const std::string& target, const std::string& why);

 private:
  bool Look() { return rows_.Look(b_, t_.native, m_.options_.queue_timeout); }
  // The array's limit set there; also done when the array has no live task
  // left there (the command is refused: nothing is left to limit, and what
  // follows settles the move from the queue). Else false: tried again from
  // the intent on a later look.
  bool SetShare(std::int64_t limit) {
    if (share_ == 0 || b_.SetArrayThrottle(t_.native, limit, m_.options_.queue_timeout).ok()) {
      return true;
    }
    return Look() && !rows_.live;
  }
  // Cancelled already (by this move, before a crash): as its row says, or
  // no longer listed while a cancelled task still would be.
  bool Cancelled(std::int64_t i) const {
    auto it = rows_.seen.find(i);
    if (it == rows_.seen.end()) {
      return t_.noted_cancelled || rows_.record_cancelled || listed_recently_;
    }
    return it->second == backend::JobPhase::kCancelled;
  }
  // Nothing moves: the part's share back, the move recorded as abandoned.
  void Abandon(const std::string& what) {
    if (!SetShare(share_)) return;
    (void)m_.store_.Apply([&] {
      SKY_RETURN_IF_ERROR(
          m_.Record(part_, EventKind::kMoveAbandoned, what, intent_.cluster, t_.native));
      return m_.store_.EndIntent(intent_.id);
    });
  }
  // The tasks cancelled there become a new part of the whole, placed.
  void Release(const std::vector<std::int64_t>& moved, std::int64_t given,
               const std::string& target, const std::string& why);

  TaskMoves& m_;
  store::SkyJob& part_;
  const store::Intent& intent_;
  const MovingTasks t_;
  backend::Backend& b_;
  std::int64_t share_ = 0;
  ArrayRows rows_;
  // A task not listed may be one Slurm has not listed yet, so soon after the
  // intent (its look is what settles the move).
  bool listed_recently_ = false;
};

void TaskMoves::Move::Settle(const std::string& target, const std::string& why) {
  // Lowered first, by all the tasks may take along: from now on the part
  // starts no task that the new part's share would then exceed N with.
  if (!SetShare(share_ - t_.share_asked)) return;
  // Held first (exactly those still pending; a task that started is left
  // alone), then the held ones cancelled: Slurm 22.05's scancel
  // --state=PENDING of some tasks cancels the array's whole pending record.
  // Again after a crash, which is harmless; the answers are not the judge
  // (a task that started makes the hold fail for it), the queue is.
  (void)b_.Hold(t_.ids, m_.options_.queue_timeout);
  FaultPoint("tasks.held");
  if (!Look()) return;
  listed_recently_ = m_.Now() - intent_.created < 240;
  // Still waiting, so held now (squeue lists them in the array's pending
  // record, "Resources,JobHeldAdmin", beside the ones not held): they
  // cannot start before the cancel.
  std::vector<std::int64_t> held;
  std::vector<std::int64_t> gone;  // held, or cancelled by this move before
  std::size_t already = 0;
  for (std::int64_t i : t_.wanted) {
    if (auto it = rows_.seen.find(i); it != rows_.seen.end() && backend::IsWaiting(it->second)) {
      held.push_back(i);
      gone.push_back(i);
    } else if (Cancelled(i)) {
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
  if (share_ > 0) {
    given = std::min({t_.share_asked, share_ - std::min(rows_.running, share_),
                      static_cast<std::int64_t>(held.size() + already)});
    if (already > 0) given = std::max<std::int64_t>(given, 1);
  }
  if (!m_.store_.Get(part_.parent).ok()) return;
  if (share_ > 0 && given <= 0) {
    if (!held.empty()) {
      const std::string back = fmt::format("{}_[{}]", t_.native, job::FormatArrayIndices(held));
      if (!b_.Release(back, m_.options_.queue_timeout).ok()) return;  // later, from the intent
    }
    Abandon(gone.empty() ? "its tasks started on " + intent_.cluster + " before the move"
                         : "its share of the array's %N is in use on " + intent_.cluster);
    return;
  }
  if (!held.empty()) {
    const std::string cancelling = fmt::format("{}_[{}]", t_.native, job::FormatArrayIndices(held));
    if (!b_.Cancel(cancelling, false, m_.options_.queue_timeout).ok()) {
      return;  // later, from the intent
    }
    // Those the move took from their cluster, and only those (a task that
    // started stays, and must never count as moved once Slurm forgets it).
    if (!t_.noted_cancelled) {
      std::string note = fmt::format("{}_[{}]", t_.native, job::FormatArrayIndices(gone));
      if (t_.share_asked > 0) note += fmt::format("%{}", t_.share_asked);
      (void)m_.store_.NoteIntent(intent_.id, note + std::string(kCancelledNote));
    }
    FaultPoint("tasks.cancelled");
    if (!Look()) return;
  }
  // Moved: the tasks now listed as cancelled, or no longer listed while a
  // cancelled task still would be (MinJobAge, 300 s by default). A task
  // that started stays where it ran.
  std::vector<std::int64_t> moved;
  for (std::int64_t i : t_.wanted) {
    if (Cancelled(i)) moved.push_back(i);
  }
  if (moved.empty()) {
    Abandon("its tasks started on " + intent_.cluster + " before the move");
    return;
  }
  given = std::min(given, static_cast<std::int64_t>(moved.size()));
  // What the part keeps, set before the new part can start anything.
  if (!SetShare(share_ - given)) return;
  Release(moved, given, target, why);
}

void TaskMoves::Move::Release(const std::vector<std::int64_t>& moved, std::int64_t given,
                              const std::string& target, const std::string& why) {
  auto whole = m_.store_.Get(part_.parent);
  if (!whole.ok()) return;
  auto parsed = m_.ctx_.parsed.Of(*whole);
  if (!parsed.ok()) return;
  const JobInput& input = (*parsed)->input;
  auto mine = job::ParseArrayIndices(part_.indices);
  std::vector<std::int64_t> remaining;
  if (mine.ok() && mine->has_value()) {
    std::set_difference((*mine)->indices.begin(), (*mine)->indices.end(), moved.begin(),
                        moved.end(), std::back_inserter(remaining));
  }
  const std::string spec = job::FormatArrayIndices(
      job::ArrayIndices{moved, given > 0 ? std::optional<std::int64_t>(given) : std::nullopt});
  store::SkyJob moving;
  moving.sky_id = fmt::format("{}-{}", whole->sky_id,
                              m_.store_.Parts(whole->sky_id).value_or({}).size() + 1);
  moving.owner = whole->owner;
  JobInput moving_input = input;
  moving_input.args = WithArray(input, (*parsed)->request, spec);
  moving.input_json = JobInputText(moving_input);
  moving.name = whole->name;
  moving.retry_on_failure = whole->retry_on_failure;
  moving.created = moving.updated = m_.Now();
  moving.parent = whole->sky_id;
  moving.indices = spec;
  moving.state = "MIGRATING";
  moving.reason = why;
  const std::string detail =
      fmt::format("tasks {} moved off {} as {} ({})", spec, intent_.cluster, moving.sky_id, why);
  std::unique_lock moving_lock(m_.LockFor(moving.sky_id));
  Status released = m_.store_.Apply([&] {
    SKY_RETURN_IF_ERROR(m_.store_.Insert(moving));
    part_.indices = job::FormatArrayIndices(job::ArrayIndices{
        remaining, share_ > 0 && !remaining.empty() ? std::optional<std::int64_t>(share_ - given)
                                                    : std::nullopt});
    ++part_.moves;
    SKY_RETURN_IF_ERROR(
        m_.Record(part_, EventKind::kTasksMoved, detail, intent_.cluster, t_.native));
    SKY_RETURN_IF_ERROR(
        m_.Record(*whole, EventKind::kTasksMoved, detail, intent_.cluster, t_.native));
    return m_.store_.EndIntent(intent_.id);
  });
  if (!released.ok()) return;
  FaultPoint("tasks.released");
  (void)m_.l_.placer.PlaceAndSubmit(moving, EventKind::kMoved, why, m_.DeadClusters(), true, "",
                                    target);
}

void TaskMoves::Finish(store::SkyJob& part, const store::Intent& intent, const std::string& target,
                       const std::string& why) {
  auto tasks = ReadMovingTasks(intent.native_id);
  if (!tasks) {
    (void)store_.EndIntent(intent.id);  // not one of ours
    return;
  }
  backend::Backend* b = BackendOf(intent.cluster);
  if (b == nullptr) return;
  Move(*this, part, intent, std::move(*tasks), *b).Settle(target, why);
}

}  // namespace skyslurm::daemon
