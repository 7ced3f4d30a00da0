// Intent recovery: an intent written before a submit, move or cancel and
// still open after a crash (or while its cluster was silent) is settled by
// what the cluster's queue shows: the job is adopted, finished or left
// alone, never run twice. Every look at the queues settles what is open
// before anything new is done.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "broker/daemon/jobs/piece.h"

namespace skyslurm::daemon {

class Recovery : public Piece {
 public:
  // Takes the intents open now as a crash's (this daemon's own are settled
  // by it).
  explicit Recovery(Lifecycle& lifecycle);

  // Settles the open intents; answers the sky jobs whose intents remain open.
  std::set<std::string> Settle();

 private:
  void SettleOne(const store::Intent& intent);
  // A submission: did the job reach the cluster before the crash? Adopted
  // if it did (live or ended), else left to be submitted again.
  void SettleSubmit(const store::Intent& intent, store::SkyJob& job, backend::Backend& b,
                    const std::vector<backend::JobInfo>& queue);
  // A move: where the copy it cancelled is now decides.
  void SettleMove(const store::Intent& intent, store::SkyJob& job, backend::Backend& b,
                  std::vector<backend::JobInfo> queue);
  // When an open intent is settled, for its event: "after a restart of
  // skyslurmd" for one open when this daemon started, else "once <cluster>
  // answered" (or "on a later look").
  std::string SettledWhen(const store::Intent& intent) const;

  std::set<std::int64_t> inherited_intents_;  // open when this daemon started
};

}  // namespace skyslurm::daemon
