// A Backend wrapped with what every caller of a real cluster needs: probes
// cached for a time-to-live (the daemon refreshes them in the background;
// one command's several questions share one probe), and start estimates
// rate-limited per cluster (every `sbatch --test-only` uses up a job id
// there), callers waiting for their turn within their own deadline.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "broker/backend/backend.h"

namespace skyslurm::backend {

struct CacheOptions {
  std::chrono::milliseconds probe_ttl{30'000};
  int estimates_per_second = 10;
  // An estimate for the very same job (options and script) is reused this
  // long: a burst of identical submissions asks the scheduler once, not once
  // each (skyslurmd). 0: never reused.
  std::chrono::milliseconds estimate_ttl{0};
  // A probe older than the TTL but younger than this is still answered when
  // a fresh one is already on its way, or fails for want of time (a machine
  // or a login node too busy to answer within the caller's deadline): busy
  // is not unreachable. 0: only fresh probes (a command's one decision).
  std::chrono::milliseconds max_stale{0};
};

class CachingBackend final : public Backend {
 public:
  CachingBackend(Backend& inner, CacheOptions options = {},
                 std::function<std::chrono::steady_clock::time_point()> clock = {});

  const std::string& name() const override { return inner_.name(); }
  translate::Translation Translate(const job::Request& request, const cluster::Description& target,
                                   const translate::TranslateContext& context) const override {
    return inner_.Translate(request, target, context);
  }
  std::optional<cluster::QueuedJob> AsQueued(const SubmitSpec& spec,
                                             const JobKey& key) const override {
    return inner_.AsQueued(spec, key);
  }
  Capabilities capabilities() const override { return inner_.capabilities(); }
  // A probe younger than the TTL is answered from the cache; failures are
  // not cached. One probe at a time: callers that miss while one is on its
  // way wait for its answer instead of asking the cluster again.
  Result<cluster::Inventory> Probe(std::chrono::milliseconds timeout) override;
  CheckAnswer Check(std::chrono::milliseconds timeout) override { return inner_.Check(timeout); }
  Result<StartEstimate> EstimateStart(const translate::TranslatedJob& job,
                                      std::chrono::milliseconds timeout) override;
  // A fresh cached probe (or, while a fresh one is on its way, the last good
  // one within max_stale), and a fresh cached estimate of the same job: what
  // Probe and EstimateStart would answer at once.
  std::optional<Result<cluster::Inventory>> ProbeAtOnce() override;
  std::optional<StartEstimate> EstimateAtOnce(const translate::TranslatedJob& job) override {
    return FreshEstimate(EstimateKey(job));
  }
  // The job submitted joins the cached queue as pending (the next decision
  // counts it in the work ahead) instead of the view being thrown away: a
  // burst of submissions does not probe the cluster once per job.
  Result<JobKey> Submit(const SubmitSpec& spec, std::chrono::milliseconds timeout) override;
  // A fresh cached estimate of the same job is the answer and only the
  // submission goes out; else both go out together, the pair counting as
  // one estimate against the per-second limit.
  EstimatedSubmission EstimateThenSubmit(const SubmitSpec& spec,
                                         std::chrono::milliseconds timeout) override;
  Result<std::vector<JobInfo>> Queue(std::chrono::milliseconds timeout) override {
    return inner_.Queue(timeout);
  }
  Status Cancel(const std::string& job_id, bool only_if_pending,
                std::chrono::milliseconds timeout) override {
    Invalidate();
    return inner_.Cancel(job_id, only_if_pending, timeout);
  }
  // A hold, a release and a new task limit change what can start: the
  // cached view goes, as with a cancel. (Regression: these were not
  // forwarded, so a move of pending tasks cancelled them unheld.)
  Status Hold(const std::string& job_id, std::chrono::milliseconds timeout) override {
    Invalidate();
    return inner_.Hold(job_id, timeout);
  }
  Status Release(const std::string& job_id, std::chrono::milliseconds timeout) override {
    Invalidate();
    return inner_.Release(job_id, timeout);
  }
  Status SetArrayThrottle(const std::string& job_id, std::int64_t limit,
                          std::chrono::milliseconds timeout) override {
    Invalidate();
    return inner_.SetArrayThrottle(job_id, limit, timeout);
  }
  Result<CommandOutput> RunClientCommand(
      const std::vector<std::string>& argv,
      const std::vector<std::pair<std::string, std::string>>& env,
      std::chrono::milliseconds timeout) override {
    // scancel, scontrol hold/update... change what can start: the cached
    // view goes, as with a cancel. squeue and sacct (a workflow engine
    // polls them) and scontrol show only read.
    const bool reads =
        !argv.empty() && (argv[0] == "squeue" || argv[0] == "sacct" ||
                          (argv[0] == "scontrol" && argv.size() > 1 &&
                           std::find(argv.begin(), argv.end(), "show") != argv.end()));
    if (!reads) Invalidate();
    return inner_.RunClientCommand(argv, env, timeout);
  }
  Result<std::string> Output(const std::string& job_id,
                             std::chrono::milliseconds timeout) override {
    return inner_.Output(job_id, timeout);
  }
  Result<OutputPart> OutputFrom(const std::string& job_id, std::uint64_t offset,
                                std::size_t max_bytes, std::chrono::milliseconds timeout) override {
    return inner_.OutputFrom(job_id, offset, max_bytes, timeout);
  }
  Result<std::vector<cloud::NodeUse>> NodeUses(std::time_t since,
                                               std::chrono::milliseconds timeout) override {
    return inner_.NodeUses(since, timeout);
  }

  // A job decided for this cluster whose submission has not returned yet
  // (its folder copied first, its sbatch on its way): counted in every view
  // from now until Unreserve, so that the decisions taken meanwhile (a
  // burst from several shells, placed at once) see the GPUs it will take.
  // Returns its token; 0 when the job cannot be shown as queued (nothing
  // is reserved). Unreserve after the submission has returned: a job
  // submitted is by then in the view as itself.
  std::uint64_t Reserve(const SubmitSpec& spec);
  void Unreserve(std::uint64_t token);
  // How many jobs have been reserved here so far: a decision taken on a
  // view older than the last of them may be stale. (A reserved job's
  // submission changes nothing in the view: it was counted already.)
  std::uint64_t placed() const;

  void Invalidate();
  // Probes now (unless a probe is on its way) and keeps the answer: the
  // daemon keeps its view warm each poll, so that a submission never waits
  // for a probe.
  void Refresh(std::chrono::milliseconds timeout);

 private:
  using Clock = std::chrono::steady_clock;
  // The cache's key for a job's estimate, and a fresh one if there is one.
  static std::size_t EstimateKey(const translate::TranslatedJob& job);
  std::optional<StartEstimate> FreshEstimate(std::size_t key);
  void KeepEstimate(std::size_t key, const StartEstimate& estimate);
  // Waits until one more estimate fits in this second's limit (an error
  // when that is past the deadline).
  Status EstimateSlot(Clock::time_point deadline);
  // The submission's effect on the cached view.
  void Submitted(const SubmitSpec& spec, const Result<JobKey>& key);
  Backend& inner_;
  CacheOptions options_;
  std::function<Clock::time_point()> now_;
  mutable std::mutex mu_;
  std::condition_variable probed_;
  bool probing_ = false;
  std::uint64_t invalidations_ = 0;  // a probe begun before one is stale
  struct CachedEstimate {
    Clock::time_point at;
    StartEstimate estimate;
  };
  std::map<std::size_t, CachedEstimate> estimates_;
  // Estimates being asked, by job: a caller that misses the cache while
  // the same job's is asked waits for that answer instead of asking again
  // (a burst of identical jobs from many shells asks each cluster once).
  struct EstimateInFlight {
    bool done = false;
    std::optional<Result<StartEstimate>> answer;
  };
  std::map<std::size_t, std::shared_ptr<EstimateInFlight>> estimating_;
  std::condition_variable estimated_;
  std::optional<cluster::Inventory> cached_;
  Clock::time_point cached_at_{};
  // Jobs submitted lately, with when: added to a probe that missed them.
  std::deque<std::pair<Clock::time_point, cluster::QueuedJob>> recent_submits_;
  void AddRecentSubmits(cluster::Inventory& inventory);  // under mu_
  // Reserved jobs, by token (Reserve), shown as "placing-<token>".
  std::map<std::uint64_t, cluster::QueuedJob> reserved_;
  std::uint64_t next_reservation_ = 1;
  std::uint64_t placed_ = 0;
  // The last good probe, kept for max_stale even after an invalidation.
  std::optional<cluster::Inventory> last_good_;
  Clock::time_point last_good_at_{};
  std::deque<Clock::time_point> recent_estimates_;  // within the last second
};

}  // namespace skyslurm::backend
