// How long `sbatch --wait` on a routed job keeps waiting while nobody can
// say how the job is doing (its cluster, or skyslurmd's view of it, silent):
// the job's time limit plus cluster_dead_after, counted from the last answer.
// The time limit is the job's -t, else its partition's DefaultTime where the
// caller knows it, else an hour (what the planner assumes too). Then the wait
// ends with an error saying what happened; the job itself is left alone.
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>

namespace skyslurm::route {

class WaitBound {
 public:
  // time_limit_minutes: as above; nullopt when not known (an hour is used).
  WaitBound(std::optional<std::int64_t> time_limit_minutes, int cluster_dead_after_s,
            std::time_t now);

  // Someone answered about the job at `now`.
  void Answered(std::time_t now) { last_answer_ = now; }

  // The seconds of silence the wait accepts.
  std::int64_t bound_seconds() const { return bound_; }

  // The error that ends the wait, once silence has lasted past the bound;
  // `who` names the silent party ("cluster beta", "skyslurmd"), `later` how
  // to follow the job up ("skyslurm status sky-...").
  std::optional<std::string> GiveUp(std::time_t now, const std::string& who, const std::string& job,
                                    const std::string& later) const;

 private:
  std::int64_t bound_;
  std::time_t last_answer_;
};

}  // namespace skyslurm::route
