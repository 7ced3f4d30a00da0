// How much of their time limits a cluster's jobs really run. Users ask for
// generous limits (a job killed at its limit is lost work), so jobs end well
// before them, and a wait estimated from limits alone, as Slurm's own plan
// does, is too long by about the same factor. Jobs lately ended there (those
// squeue still shows, MinJobAge after their end) say by how much.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "broker/cluster/queue.h"

namespace skyslurm::cluster {

struct LimitUse {
  // Each user's jobs of each time limit, each user's, and all: run time
  // over time limit, summed over the jobs (a long job weighs more than a
  // short one).
  struct Share {
    int jobs = 0;
    std::int64_t run_s = 0;
    std::int64_t limit_s = 0;
  };
  Share all;
  std::map<std::string, Share> by_user;
  std::map<std::pair<std::string, std::int64_t>, Share> by_user_limit;  // limit in minutes

  // Fewer ended jobs than this say nothing.
  static constexpr int kFewest = 5;
  // The share of its time limit a job of `user` with a limit of
  // `limit_minutes` is expected to run: what the user's jobs of the same
  // limit ran (users resubmit the same job with the same limit), else the
  // user's jobs of any limit, else all jobs', each when there are enough of
  // them; else 1 (its whole limit). Never below 5%. limit_minutes 0: the
  // user's jobs of any limit first.
  double ShareOf(const std::string& user, std::int64_t limit_minutes = 0) const;
  // The jobs ShareOf(user, limit_minutes) was learned from (0: none, the
  // whole limit).
  int JobsBehind(const std::string& user, std::int64_t limit_minutes = 0) const;
};

// From the ended jobs among `jobs`: those that held nodes (a job cancelled
// while pending never ran: no node list) and had a time limit. Others are
// left out.
LimitUse LearnLimitUse(const std::vector<QueuedJob>& jobs);

}  // namespace skyslurm::cluster
