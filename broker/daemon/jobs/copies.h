// A sky job has one live copy. Copies a silent cluster kept, or that two
// moves left behind, are cancelled once their cluster answers, keeping the
// one that started first (or the current one); a cancel reaches every copy
// that may be live.
#pragma once

#include <string>
#include <vector>

#include "broker/daemon/jobs/piece.h"

namespace skyslurm::daemon {

class Copies : public Piece {
 public:
  explicit Copies(Lifecycle& lifecycle) : Piece(lifecycle) {}

  // Several live copies of the job in view: all but one cancelled. Answers
  // whether the job's current copy changed.
  bool Resolve(store::SkyJob& job, const std::vector<backend::JobInfo>& live);
  // Copies left on a cluster that stopped answering, once it answers: a
  // live one is cancelled unless it is the job's current copy.
  void SettleStale();
  // Cancels every copy of the job that may be live; answers the clusters
  // that could not be asked (their copies are left as they are).
  std::vector<std::string> CancelAll(const store::SkyJob& job);
};

}  // namespace skyslurm::daemon
