// Each cluster's queue as skyslurmd last read it, every poll: answered or
// silent since when, and its jobs. The reads (and the refreshes of each
// cluster's view for placement) run in the background, one at a time per
// cluster, so that a silent cluster never slows the look at the others.
#pragma once

#include <chrono>
#include <ctime>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "broker/backend/backend.h"
#include "broker/daemon/jobs/failover_policy.h"
#include "broker/place/workspace.h"
#include "broker/store/job_store.h"

namespace skyslurm::daemon {

struct ClusterView {
  std::time_t answered = 0;  // last successful read
  // Last answer to a command of ours (a submission): a controller that
  // takes jobs is busy, not dead, however slow its queue reads are.
  std::time_t contacted = 0;
  std::time_t read_at = 0;  // when `jobs` was read
  bool answered_now = false;
  // When the first read that failed since the last answer was started
  // (0: none failed since). A look of the daemon's own that is slow (a
  // burst of jobs to record) must not count as the cluster's silence: it
  // is silent only for as long as it was asked and did not answer.
  std::time_t failing_since = 0;
  // Since when it answers (0: it does not, or never did).
  std::time_t up_since = 0;
  std::string error;
  // How long its last probe (the placement view's refresh) took; < 0: none yet.
  double probe_seconds = -1;
  std::vector<backend::JobInfo> jobs;
  std::string answer_error() const { return answered_now ? "" : error; }
  // When it was last heard from, by a read or an answer; 0: never.
  std::time_t heard() const { return std::max(answered, contacted); }
  // Since when it has been asked and not answered (0: it answers, or was
  // never asked yet).
  std::time_t silent_since() const {
    return answered_now ? 0 : SilentSince(heard(), failing_since);
  }
};

class ClusterViews {
 public:
  ClusterViews() = default;
  ClusterViews(const ClusterViews&) = delete;
  ClusterViews& operator=(const ClusterViews&) = delete;

  // Starts a read of each live cluster's queue (when none is under way) and
  // a refresh of its cached view for placement (when none is), then takes
  // the reads that answer by `collect_for`; a read still under way keeps
  // the cluster's last answer until a later look collects it.
  void Read(place::Workspace& ws, std::chrono::milliseconds read_timeout,
            std::chrono::milliseconds probe_timeout, std::chrono::milliseconds collect_for,
            std::time_t now);

  // The clusters silent for `dead_after` seconds or more.
  std::vector<std::string> Dead(std::time_t now, int dead_after) const;
  // A cluster answered a command of ours (a submission): it is not silent.
  void Contacted(const std::string& cluster, std::time_t now);
  // What was seen of a job: its cluster's answer, its current copy and
  // every live copy carrying its sky id in the clusters that answer now.
  struct Seen {
    Observation observation;
    std::vector<backend::JobInfo> live_copies;
  };
  Seen Look(const store::SkyJob& job, std::time_t now) const;
  // A job on a cluster that answers now: the job as listed (nullopt: not
  // listed); nullopt outside when the cluster does not answer (or was
  // never read).
  std::optional<std::optional<backend::JobInfo>> Listed(const std::string& cluster,
                                                        const std::string& native_id) const;
  // Calls `f` with every cluster's view by name, under the views' lock.
  void Visit(const std::function<void(const std::map<std::string, ClusterView>&)>& f) const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, ClusterView> views_;
  // The reading thread only: reads under way, since when; probes refreshing.
  std::map<std::string, std::future<Result<std::vector<backend::JobInfo>>>> reading_;
  std::map<std::string, std::time_t> reading_since_;
  std::map<std::string, std::future<void>> refreshing_;
};

}  // namespace skyslurm::daemon
