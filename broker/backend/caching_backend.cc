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
}

Result<cluster::Inventory> CachingBackend::Probe(std::chrono::milliseconds timeout) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_ && now_() - cached_at_ < options_.probe_ttl) return *cached_;
  }
  auto fresh = inner_.Probe(timeout);
  if (fresh.ok()) {
    std::lock_guard<std::mutex> lock(mu_);
    cached_ = *fresh;
    cached_at_ = now_();
  }
  return fresh;
}

Result<StartEstimate> CachingBackend::EstimateStart(const translate::TranslatedJob& job,
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
