#include "broker/cluster/limit_use.h"

#include <algorithm>

namespace skyslurm::cluster {
namespace {

constexpr double kLeast = 0.05;

const LimitUse::Share* Enough(const LimitUse::Share& s) {
  return s.jobs >= LimitUse::kFewest && s.limit_s > 0 ? &s : nullptr;
}

const LimitUse::Share* Chosen(const LimitUse& use, const std::string& user,
                              std::int64_t limit_minutes) {
  if (auto it = use.by_user_limit.find({user, limit_minutes}); it != use.by_user_limit.end()) {
    if (const auto* s = Enough(it->second)) return s;
  }
  if (auto it = use.by_user.find(user); it != use.by_user.end()) {
    if (const auto* s = Enough(it->second)) return s;
  }
  return Enough(use.all);
}

}  // namespace

double LimitUse::ShareOf(const std::string& user, std::int64_t limit_minutes) const {
  const Share* s = Chosen(*this, user, limit_minutes);
  if (s == nullptr) return 1.0;
  return std::clamp(static_cast<double>(s->run_s) / static_cast<double>(s->limit_s), kLeast, 1.0);
}

int LimitUse::JobsBehind(const std::string& user, std::int64_t limit_minutes) const {
  const Share* s = Chosen(*this, user, limit_minutes);
  return s == nullptr ? 0 : s->jobs;
}

LimitUse LearnLimitUse(const std::vector<QueuedJob>& jobs) {
  LimitUse use;
  for (const QueuedJob& j : jobs) {
    const bool ran = !j.nodelist.empty() && j.nodelist != "(null)" && j.nodelist != "None assigned";
    if (!IsFinal(j.phase) || !ran || j.time_limit_minutes <= 0 || j.start_time <= 0 ||
        j.end_time < j.start_time) {
      continue;
    }
    const std::int64_t limit_s = j.time_limit_minutes * 60;
    // A job past its limit (OverTimeLimit) used all of it.
    const std::int64_t run_s = std::min<std::int64_t>(j.end_time - j.start_time, limit_s);
    for (LimitUse::Share* s :
         {&use.all, &use.by_user[j.user], &use.by_user_limit[{j.user, j.time_limit_minutes}]}) {
      ++s->jobs;
      s->run_s += run_s;
      s->limit_s += limit_s;
    }
  }
  return use;
}

}  // namespace skyslurm::cluster
