// What every piece of a job's life (lifecycle.h) starts from: the shared
// context, and its pieces' siblings through the lifecycle that owns them.
#pragma once

#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include "broker/daemon/jobs/job_context.h"

namespace skyslurm::daemon {

struct Lifecycle;

class Piece {
 public:
  Piece(const Piece&) = delete;
  Piece& operator=(const Piece&) = delete;

 protected:
  explicit Piece(Lifecycle& lifecycle);
  ~Piece() = default;

  Lifecycle& l_;
  JobContext& ctx_;
  store::JobStore& store_;
  place::Workspace& ws_;
  const ManagerOptions& options_;
  const config::FailoverSettings& policy_;

  std::time_t Now() const { return ctx_.Now(); }
  Status Record(const store::SkyJob& job, EventKind kind, const std::string& detail,
                const std::string& cluster = "", const std::string& native_id = "") {
    return ctx_.Record(job, kind, detail, cluster, native_id);
  }
  backend::Backend* BackendOf(const std::string& cluster) { return ctx_.BackendOf(cluster); }
  std::mutex& LockFor(const std::string& sky_id) { return ctx_.LockFor(sky_id); }
  std::vector<std::string> DeadClusters() const { return ctx_.DeadClusters(); }
};

}  // namespace skyslurm::daemon
