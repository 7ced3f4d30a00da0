// A job's folder travels before its submission: measured against
// sync_limit (nothing sent when it is over), packed into the job for a
// backend that carries it there, or copied with rsync under the
// submission's intent, a few at once per cluster; and what a job asked to
// bring back (--sky-sync-back, or what it wrote for a program that reads
// sbatch's answer) fetched when it ends. Each step is an event of the job's.
#pragma once

#include <map>
#include <memory>
#include <semaphore>
#include <string>
#include <utility>

#include "broker/daemon/jobs/piece.h"
#include "broker/sync/workdir_plan.h"

namespace skyslurm::daemon {

class Folders : public Piece {
 public:
  explicit Folders(Lifecycle& lifecycle) : Piece(lifecycle) {}

  // The plan's folder measured against sync_limit: the error says what to do.
  Status CheckSize(const sync::WorkdirPlan& plan, const std::string& cluster);
  // The folder copied to `cluster` (at most kCopiesPerCluster at once into
  // one cluster: its sshd drops connections beyond MaxStartups), recorded;
  // answers what was sent.
  Result<std::string> Copy(store::SkyJob& job, const sync::WorkdirPlan& plan,
                           const std::string& cluster);
  // A Kubernetes job's folder, packed for its ConfigMap (no larger than a
  // ConfigMap holds: the error says what to do), recorded as copied.
  Result<std::string> Pack(store::SkyJob& job, const sync::WorkdirPlan& plan,
                           const std::string& cluster);
  // The folder a submission of the job to `cluster` copies to, and from
  // (("", "") when it copies none): for a copy adopted after a crash.
  std::pair<std::string, std::string> CopiedFolder(const store::SkyJob& job,
                                                   const std::string& cluster);
  // A job that asked for it (--sky-sync-back) and ran in a copied folder:
  // the matching files fetched into the folder it came from, recorded.
  void FetchBack(store::SkyJob& job);

  static constexpr std::ptrdiff_t kCopiesPerCluster = 4;

 private:
  std::mutex copy_slots_mu_;
  std::map<std::string, std::unique_ptr<std::counting_semaphore<kCopiesPerCluster>>> copy_slots_;
};

}  // namespace skyslurm::daemon
