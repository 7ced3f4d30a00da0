#include "broker/place/array_split.h"

#include <fmt/format.h>

#include <algorithm>

namespace skyslurm::place {

std::string ArrayPart::ArraySpec() const {
  job::ArrayIndices a{indices, throttle};
  return job::FormatArrayIndices(a);
}

namespace {

// One target's tasks as they are given to it: the k-th starts when the
// cluster starts its k-th task, or, under a share of a "%N" limit, not
// before its task `share` places earlier has run its time limit.
class TaskClock {
 public:
  explicit TaskClock(const SplitTarget& t) : target_(t) {}

  void Limit(std::int64_t share) { share_ = share; }

  std::time_t Next() const {
    const auto k = static_cast<std::int64_t>(given_.size());
    std::time_t at = Nth(k);
    if (share_ && k >= *share_) {
      at = std::max(at, given_[static_cast<std::size_t>(k - *share_)] + target_.run_s);
    }
    return at;
  }
  void Take() { given_.push_back(Next()); }

  // The cluster's k-th task start, by its layout (or one at a time).
  std::time_t Nth(std::int64_t k) const {
    const auto& s = target_.task_starts;
    if (s.empty()) return target_.start + k * target_.run_s;
    if (k < static_cast<std::int64_t>(s.size())) return s[static_cast<std::size_t>(k)];
    return s.back() + (k - static_cast<std::int64_t>(s.size()) + 1) * target_.run_s;
  }

  bool Takes(std::int64_t index) const {
    return (!share_ || *share_ > 0) && (!target_.max_array_size || index < *target_.max_array_size);
  }

  const std::vector<std::time_t>& given() const { return given_; }

 private:
  const SplitTarget& target_;
  std::optional<std::int64_t> share_;
  std::vector<std::time_t> given_;
};

}  // namespace

Result<ArraySplit> SplitArray(const job::ArrayIndices& array,
                              const std::vector<SplitTarget>& targets) {
  if (array.indices.empty()) return InvalidArgumentError("the array has no indices");
  if (targets.empty()) return FailedPreconditionError("no cluster can run the array's tasks");
  std::vector<TaskClock> clocks;
  clocks.reserve(targets.size());
  for (const SplitTarget& t : targets) clocks.emplace_back(t);
  std::vector<std::int64_t> shares(targets.size(), 0);
  if (array.throttle) {
    // "%N": the first N tasks that start anywhere say how many run at once
    // on each cluster; each part's limit is its share, so that together
    // they never run more than N.
    std::vector<std::int64_t> next(targets.size(), 0);
    for (std::int64_t n = 0; n < *array.throttle; ++n) {
      std::size_t best = 0;
      for (std::size_t i = 1; i < targets.size(); ++i) {
        if (clocks[i].Nth(next[i]) < clocks[best].Nth(next[best])) best = i;
      }
      ++next[best];
      ++shares[best];
    }
    for (std::size_t i = 0; i < clocks.size(); ++i) clocks[i].Limit(shares[i]);
  }
  // How many tasks each cluster takes: every task in turn to the one that
  // starts it soonest.
  std::vector<std::size_t> counts(targets.size(), 0);
  for (const std::int64_t index : array.indices) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < clocks.size(); ++i) {
      if (!clocks[i].Takes(index)) continue;
      if (!best || clocks[i].Next() < clocks[*best].Next()) best = i;
    }
    if (!best) {
      std::string limits;
      for (const SplitTarget& t : targets) {
        limits += fmt::format("{}{} {}", limits.empty() ? "" : ", ", t.cluster,
                              t.max_array_size ? std::to_string(*t.max_array_size) : "none");
      }
      return FailedPreconditionError(fmt::format(
          "array index {} is at or above the MaxArraySize of every cluster that can run it ({})",
          index, limits));
    }
    clocks[*best].Take();
    ++counts[*best];
  }
  // Which ones: a run of consecutive indices each, so that every part's
  // --array is short (slurmctld refuses a long one: "Pathname ... too
  // long"). The cluster with the lowest MaxArraySize takes the lowest: the
  // choice above kept each cluster's tasks below its limit, so the lowest
  // that many are below it too.
  std::vector<std::size_t> by_limit(targets.size());
  for (std::size_t i = 0; i < by_limit.size(); ++i) by_limit[i] = i;
  std::stable_sort(by_limit.begin(), by_limit.end(), [&](std::size_t a, std::size_t b) {
    return targets[a].max_array_size.value_or(job::kLargestMaxArraySize) <
           targets[b].max_array_size.value_or(job::kLargestMaxArraySize);
  });
  std::vector<std::vector<std::int64_t>> given(targets.size());
  auto next = array.indices.begin();
  for (std::size_t i : by_limit) {
    given[i].assign(next, next + static_cast<std::ptrdiff_t>(counts[i]));
    next += static_cast<std::ptrdiff_t>(counts[i]);
  }
  ArraySplit split;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (given[i].empty()) continue;
    ArrayPart part;
    part.cluster = targets[i].cluster;
    part.indices = std::move(given[i]);
    if (array.throttle) part.throttle = shares[i];
    part.first_start = clocks[i].given().front();
    part.last_start = clocks[i].given().back();
    split.last_start = std::max(split.last_start, part.last_start);
    split.parts.push_back(std::move(part));
  }
  return split;
}

std::time_t LastStartOn(const job::ArrayIndices& array, const SplitTarget& target) {
  TaskClock clock(target);
  if (array.throttle) clock.Limit(*array.throttle);
  std::time_t last = 0;
  for (std::size_t k = 0; k < array.indices.size(); ++k) {
    last = clock.Next();
    clock.Take();
  }
  return last;
}

}  // namespace skyslurm::place
