#include "broker/backend/caching_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "broker/backend/array_tasks.h"
#include "broker/util/acting_user.h"

namespace skyslurm::backend {

namespace {

// A job of ours shown in a view: sent without a partition, it is in the
// cluster's default one (as Slurm puts it), where the start estimates
// count the work ahead of a job.
cluster::QueuedJob InItsPartition(cluster::QueuedJob job, const cluster::Inventory& view) {
  if (job.partition.empty()) {
    if (const cluster::Partition* p = view.description.DefaultPartition()) job.partition = p->name;
  }
  return job;
}

}  // namespace

CachingBackend::CachingBackend(Backend& inner, CacheOptions options,
                               std::function<Clock::time_point()> clock)
    : inner_(inner),
      options_(options),
      now_(clock ? std::move(clock) : [] { return Clock::now(); }) {}

void CachingBackend::Invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  cached_.reset();
  ++invalidations_;
}

Result<cluster::Inventory> CachingBackend::Probe(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mu_);
  auto stale_ok = [&] { return last_good_ && now_() - last_good_at_ < options_.max_stale; };
  while (true) {
    if (cached_ && now_() - cached_at_ < options_.probe_ttl) return *cached_;
    if (!probing_) break;
    if (stale_ok()) return *last_good_;  // the fresh one is on its way
    if (probed_.wait_until(lock, deadline) == std::cv_status::timeout) {
      return DeadlineExceededError(
          fmt::format("{}: no answer within {} s", inner_.name(), timeout.count() / 1000));
    }
  }
  probing_ = true;
  const std::uint64_t generation = invalidations_;
  lock.unlock();
  // However the probe ends (an exception too), the next caller may probe.
  struct Done {
    CachingBackend& self;
    std::optional<Result<cluster::Inventory>>& result;
    std::uint64_t generation;
    ~Done() {
      std::lock_guard<std::mutex> relock(self.mu_);
      if (result && result->ok()) self.AddRecentSubmits(**result);
      if (result && result->ok() && generation == self.invalidations_) {
        self.cached_ = **result;
        self.cached_at_ = self.now_();
      }
      if (result && result->ok()) {
        self.last_good_ = **result;
        self.last_good_at_ = self.now_();
      }
      self.probing_ = false;
      self.probed_.notify_all();
    }
  };
  std::optional<Result<cluster::Inventory>> fresh;
  {
    Done done{*this, fresh, generation};
    fresh = inner_.Probe(timeout);
  }
  if (!fresh->ok() && fresh->status().code() == StatusCode::kDeadlineExceeded) {
    // Too busy to answer in time is not unreachable: the last view, if recent.
    std::lock_guard<std::mutex> relock(mu_);
    if (stale_ok()) return *last_good_;
  }
  return std::move(*fresh);
}

std::optional<Result<cluster::Inventory>> CachingBackend::ProbeAtOnce() {
  // Probe's own first answers, in its order, and nothing where it would wait.
  std::lock_guard<std::mutex> lock(mu_);
  if (cached_ && now_() - cached_at_ < options_.probe_ttl) return *cached_;
  if (probing_ && last_good_ && now_() - last_good_at_ < options_.max_stale) return *last_good_;
  return std::nullopt;
}

void CachingBackend::AddRecentSubmits(cluster::Inventory& inventory) {
  const auto now = now_();
  // A job a probe missed shows in the next one begun after its submission.
  const auto keep = 2 * options_.probe_ttl + options_.max_stale;
  while (!recent_submits_.empty() && now - recent_submits_.front().first > keep) {
    recent_submits_.pop_front();
  }
  // One the probe saw ended is gone for good: added back, it would hold its
  // GPUs for its whole time limit in every estimate until it aged out here.
  // An array is listed by its tasks ("437_20", "437_[28-35%8]"): it is the
  // job whose id they carry (else an array just sent counted twice, its
  // tasks and itself, and a cluster running it looked full for a minute).
  auto same = [](const std::string& listed, const std::string& sent) {
    return ArrayJobId(listed) == sent;
  };
  std::erase_if(recent_submits_, [&](const auto& recent) {
    return std::any_of(inventory.ended.begin(), inventory.ended.end(),
                       [&](const std::string& id) { return same(id, recent.second.job_id); });
  });
  for (const auto& recent : recent_submits_) {
    const cluster::QueuedJob& job = recent.second;
    const bool listed =
        std::any_of(inventory.jobs.begin(), inventory.jobs.end(),
                    [&](const cluster::QueuedJob& j) { return same(j.job_id, job.job_id); });
    if (!listed) inventory.jobs.push_back(InItsPartition(job, inventory));
  }
  for (const auto& [token, job] : reserved_) {
    inventory.jobs.push_back(InItsPartition(job, inventory));
  }
}

std::uint64_t CachingBackend::Reserve(const SubmitSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::uint64_t token = next_reservation_++;
  auto q = inner_.AsQueued(spec, {inner_.name(), fmt::format("placing-{}", token)});
  if (!q) return 0;
  if (cached_) cached_->jobs.push_back(InItsPartition(*q, *cached_));
  if (last_good_) last_good_->jobs.push_back(InItsPartition(*q, *last_good_));
  reserved_.emplace(token, std::move(*q));
  ++placed_;
  return token;
}

std::uint64_t CachingBackend::placed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return placed_;
}

void CachingBackend::Unreserve(std::uint64_t token) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = reserved_.find(token);
  if (it == reserved_.end()) return;
  const std::string id = it->second.job_id;
  reserved_.erase(it);
  for (auto* view : {&cached_, &last_good_}) {
    if (*view)
      std::erase_if((*view)->jobs, [&](const cluster::QueuedJob& j) { return j.job_id == id; });
  }
}

void CachingBackend::Refresh(std::chrono::milliseconds timeout) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (probing_) return;
    cached_.reset();  // a new probe, whatever the TTL says
  }
  (void)Probe(timeout);
}

void CachingBackend::Submitted(const SubmitSpec& spec, const Result<JobKey>& key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!key.ok()) {
    // The queue may have changed (sbatch may have made the job): probe again.
    cached_.reset();
    ++invalidations_;
    return;
  }
  if (auto q = inner_.AsQueued(spec, *key)) {
    if (cached_) cached_->jobs.push_back(InItsPartition(*q, *cached_));
    if (last_good_) last_good_->jobs.push_back(InItsPartition(*q, *last_good_));
    // A probe on its way may have read the queue before this job: it is
    // added to the probes that come back without it, for a while.
    recent_submits_.emplace_back(now_(), std::move(*q));
  } else {
    cached_.reset();
    ++invalidations_;
  }
}

Result<JobKey> CachingBackend::Submit(const SubmitSpec& spec, std::chrono::milliseconds timeout) {
  auto key = inner_.Submit(spec, timeout);
  Submitted(spec, key);
  return key;
}

namespace {

// Options that name a job or its files and never change when it starts
// (unless --dependency=singleton makes the name matter): left out of the
// estimate's key, so that a workflow's jobs that differ only by them share
// one estimate. Only the exact spellings; any other stays in the key.
bool NamesOnly(std::string_view word) {
  for (std::string_view prefix : {"--job-name=", "--output=", "--error=", "--comment="}) {
    if (word.starts_with(prefix)) return true;
  }
  return false;
}
bool NamesNext(std::string_view word) {
  return word == "-J" || word == "--job-name" || word == "-o" || word == "--output" ||
         word == "-e" || word == "--error" || word == "--comment";
}

}  // namespace

std::size_t CachingBackend::EstimateKey(const translate::TranslatedJob& job) {
  // A site's daemon asks as each user (their priority and limits decide):
  // one user's estimate is never another's.
  std::string key_text = ActingUser() + '\x1d' + job.script + '\x1e' +
                         (job.native ? job.native->Key() : std::string());
  const bool singleton = std::any_of(job.args.begin(), job.args.end(), [](const std::string& a) {
    return a.find("singleton") != std::string::npos;
  });
  for (std::size_t i = 0; i < job.args.size(); ++i) {
    const std::string& a = job.args[i];
    if (!singleton && NamesOnly(a)) continue;
    if (!singleton && NamesNext(a) && i + 1 < job.args.size()) {
      ++i;
      continue;
    }
    key_text += '\x1f' + a;
  }
  return std::hash<std::string>{}(key_text);
}

std::optional<StartEstimate> CachingBackend::FreshEstimate(std::size_t key) {
  if (options_.estimate_ttl.count() <= 0) return std::nullopt;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = estimates_.find(key);
  if (it == estimates_.end() || now_() - it->second.at >= options_.estimate_ttl) {
    return std::nullopt;
  }
  return it->second.estimate;
}

void CachingBackend::KeepEstimate(std::size_t key, const StartEstimate& estimate) {
  if (options_.estimate_ttl.count() <= 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  const auto now = now_();
  std::erase_if(estimates_,
                [&](const auto& e) { return now - e.second.at >= options_.estimate_ttl; });
  estimates_[key] = {now, estimate};
}

Result<StartEstimate> CachingBackend::EstimateStart(const translate::TranslatedJob& job,
                                                    std::chrono::milliseconds timeout) {
  const std::size_t key = EstimateKey(job);
  if (auto fresh = FreshEstimate(key)) return *fresh;
  const auto deadline = now_() + timeout;
  std::shared_ptr<EstimateInFlight> mine;
  if (options_.estimate_ttl.count() > 0) {
    std::unique_lock<std::mutex> lock(mu_);
    if (auto it = estimating_.find(key); it != estimating_.end()) {
      // The same job's estimate is on its way: its answer, when it comes.
      // (Waited for on the steady clock: now_ may be a test's.)
      std::shared_ptr<EstimateInFlight> theirs = it->second;
      if (!estimated_.wait_for(lock, timeout, [&] { return theirs->done; })) {
        return DeadlineExceededError(
            fmt::format("{}: no start estimate within {} ms", inner_.name(), timeout.count()));
      }
      return *theirs->answer;
    }
    mine = std::make_shared<EstimateInFlight>();
    estimating_[key] = mine;
  }
  auto asked = [&]() -> Result<StartEstimate> {
    SKY_RETURN_IF_ERROR(EstimateSlot(deadline));
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now_());
    return inner_.EstimateStart(job, std::max(left, std::chrono::milliseconds(1)));
  }();
  if (asked.ok()) KeepEstimate(key, *asked);
  if (mine) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      mine->done = true;
      mine->answer = asked;
      estimating_.erase(key);
    }
    estimated_.notify_all();
  }
  return asked;
}

EstimatedSubmission CachingBackend::EstimateThenSubmit(const SubmitSpec& spec,
                                                       std::chrono::milliseconds timeout) {
  EstimatedSubmission answer;
  const std::size_t key = EstimateKey(spec.job);
  if (auto fresh = FreshEstimate(key)) {
    answer.estimate = *fresh;
    answer.key = Submit(spec, timeout);
    return answer;
  }
  const auto deadline = now_() + timeout;
  auto left = [&] {
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now_()),
                    std::chrono::milliseconds(1));
  };
  if (Status slot = EstimateSlot(deadline); !slot.ok()) {
    // No estimate this second: the job is submitted all the same.
    answer.estimate = slot;
    answer.key = Submit(spec, left());
    return answer;
  }
  answer = inner_.EstimateThenSubmit(spec, left());
  if (answer.estimate.ok()) KeepEstimate(key, *answer.estimate);
  Submitted(spec, answer.key);
  return answer;
}

Status CachingBackend::EstimateSlot(Clock::time_point deadline) {
  while (true) {
    Clock::time_point wait_until;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const auto now = now_();
      while (!recent_estimates_.empty() &&
             now - recent_estimates_.front() >= std::chrono::seconds(1)) {
        recent_estimates_.pop_front();
      }
      if (static_cast<int>(recent_estimates_.size()) < options_.estimates_per_second) {
        recent_estimates_.push_back(now);
        return OkStatus();
      }
      wait_until = recent_estimates_.front() + std::chrono::seconds(1);
    }
    if (wait_until >= deadline) {
      return UnavailableError(fmt::format(
          "{}: too many start estimates asked at once (at most {} per second per cluster)",
          inner_.name(), options_.estimates_per_second));
    }
    std::this_thread::sleep_until(wait_until);
  }
}

}  // namespace skyslurm::backend
