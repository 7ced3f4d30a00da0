// Moves: a job pending long enough is weighed against the other clusters;
// when one starts it clearly sooner (migrate_gain), the pending copy is
// cancelled and the job submitted there, under an intent, with
// back-pressure per cluster (moves_per_cluster). A move asked for now (the
// dashboard's "move now") is weighed at the next look by the same rules.
#pragma once

#include <ctime>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "broker/daemon/jobs/piece.h"

namespace skyslurm::daemon {

class Mover : public Piece {
 public:
  explicit Mover(Lifecycle& lifecycle) : Piece(lifecycle) {}

  // A new look at the queues: its budget of weighings starts again.
  void BeginLook() { weighed_this_look_ = 0; }
  // Whether the job (or a part's tasks) may be weighed now: not weighed in
  // the last poll, and within the look's budget (each weighing asks every
  // cluster: sbatch --test-only uses up job ids there); counted as weighed.
  bool TakeWeighing(const std::string& sky_id, std::time_t now);
  // Whether the look's budget has room for one more weighing.
  bool Room() const { return weighed_this_look_ < kMoveWeighsPerLook; }
  // Weighs the pending job, and moves it when that pays.
  void Weigh(store::SkyJob& job, const std::string& why);

  // Back-pressure: a move (or moved tasks) went into `cluster`; whether it
  // took moves_per_cluster moves this minute already.
  void MovedInto(const std::string& cluster, std::time_t now);
  bool Crowded(const std::string& cluster, std::time_t now, int* recent = nullptr);

  // A move asked for now: FailedPrecondition with the reason for a job that
  // cannot move (ended, running, pinned by --sky-infra, an array, held, out
  // of moves); else weighed at the next look.
  Status Ask(const std::string& id);
  // Takes a move asked for the job (the next look's); false when none was.
  bool TakeAsked(const std::string& sky_id);
  // Forgets what was asked for jobs that ended since (`live`: those that did not).
  void ForgetAskedBut(const std::set<std::string>& live);
  // The job is weighed again at once (a move asked for now).
  void ForgetWeighing(const std::string& sky_id) { last_weighed_.erase(sky_id); }

 private:
  int weighed_this_look_ = 0;                    // the look's thread only
  std::map<std::string, std::time_t> last_weighed_;  // the look's thread only
  std::mutex mu_;
  std::map<std::string, std::vector<std::time_t>> moves_into_;
  std::set<std::string> asked_;
};

}  // namespace skyslurm::daemon
