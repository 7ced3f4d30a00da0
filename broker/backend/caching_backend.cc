#include "broker/backend/caching_backend.h"

#include <fmt/format.h>

#include <thread>

namespace skyslurm::backend {

CachingBackend::CachingBackend(Backend& inner, CacheOptions options,
                               std::function<Clock::time_point()> clock)
    : inner_(inner), options_(options), now_(clock ? std::move(clock) : [] { return Clock::now(); }) {}

void CachingBackend::Invalidate() {
  std::lock_guard<std::mutex> lock(mu_);
  cached_.reset();
  ++invalidations_;
}

Result<cluster::Inventory> CachingBackend::Probe(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    if (cached_ && now_() - cached_at_ < options_.probe_ttl) return *cached_;
    if (!probing_) break;
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
      if (result && result->ok() && generation == self.invalidations_) {
        self.cached_ = **result;
        self.cached_at_ = self.now_();
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
  return std::move(*fresh);
}

Result<StartEstimate> CachingBackend::EstimateStart(const translate::TranslatedJob& job,
                                                    std::chrono::milliseconds timeout) {
  std::string key_text = job.script;
  for (const auto& a : job.args) key_text += '\x1f' + a;
  const std::size_t key = std::hash<std::string>{}(key_text);
  if (options_.estimate_ttl.count() > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = estimates_.find(key);
    if (it != estimates_.end() && now_() - it->second.at < options_.estimate_ttl) {
      return it->second.estimate;
    }
  }
  auto answer = RateLimitedEstimate(job, timeout);
  if (answer.ok() && options_.estimate_ttl.count() > 0) {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = now_();
    std::erase_if(estimates_, [&](const auto& e) { return now - e.second.at >= options_.estimate_ttl; });
    estimates_[key] = {now, *answer};
  }
  return answer;
}

Result<StartEstimate> CachingBackend::RateLimitedEstimate(const translate::TranslatedJob& job,
                                                          std::chrono::milliseconds timeout) {
  const auto deadline = now_() + timeout;
  while (true) {
    Clock::time_point wait_until;
    {
      std::lock_guard<std::mutex> lock(mu_);
      const auto now = now_();
      while (!recent_estimates_.empty() && now - recent_estimates_.front() >= std::chrono::seconds(1)) {
        recent_estimates_.pop_front();
      }
      if (static_cast<int>(recent_estimates_.size()) < options_.estimates_per_second) {
        recent_estimates_.push_back(now);
        break;
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
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now_());
  return inner_.EstimateStart(job, std::max(left, std::chrono::milliseconds(1)));
}

}  // namespace skyslurm::backend
