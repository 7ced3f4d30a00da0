// Placing a job and submitting it there: a new sky job, a move, a restart, a
// job re-placed after its cluster died. The decision is taken on the warm
// view of the clusters and the job is submitted by the one pipeline
// (place/submission.h), with skyslurmd's steps: an intent written before
// anything is sent, its folder copied under it, each step an event; a crash
// at any step leaves either no job or exactly one (recovery.h settles the
// rest).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "broker/daemon/jobs/dependencies.h"
#include "broker/daemon/jobs/parsed_jobs.h"
#include "broker/daemon/jobs/piece.h"
#include "broker/daemon/jobs/submit_types.h"
#include "broker/place/planner.h"

namespace skyslurm::daemon {

// What the user is told of a job just placed.
struct Placed {
  std::string workdir;  // where it runs there ("" = the default)
  std::string folder;   // what became of its folder: copied where, or why not
  bool home = false;    // it went to the home cluster
  std::vector<std::string> notes;
};

class Placer : public Piece {
 public:
  explicit Placer(Lifecycle& lifecycle) : Piece(lifecycle) {}

  // Records and places a new sky job; the same sky id again answers with
  // the job as it is (a client's retry never makes a second job).
  Result<SubmitAnswer> SubmitNew(const SubmitRequest& request);

  // Places the job (clusters in `avoid` left out) and submits it, recording
  // the new copy. `kind`: kSubmitted, kMoved, kRestarted or kReplaced.
  // `leaving`: the cluster a move takes the job from, placed on again only
  // when no other can run it. `only`: the one cluster it may go to (a spread
  // array's part, as the split gave it); "" = any.
  Result<Placed> PlaceAndSubmit(store::SkyJob& job, EventKind kind, const std::string& why,
                                const std::vector<std::string>& avoid, bool first_attempt,
                                const std::string& leaving = "", const std::string& only = "");

 private:
  struct Job;  // what one placement works from
  Result<Placed> PlaceAndSubmitRead(store::SkyJob& job, const Job& what, EventKind kind,
                                    const std::string& why, const std::vector<std::string>& avoid,
                                    bool first_attempt, const std::string& leaving,
                                    const std::string& only);
  place::PlanOptions OptionsFor(const store::SkyJob& job, const job::Request& request,
                                EventKind kind);
  // The plan, taken again while another decision reserved the cluster it
  // chose meanwhile; returns with `placing` held.
  place::Plan Decide(const job::Request& request, std::vector<place::ClusterHandle>& handles,
                     const place::PlanOptions& options, std::unique_lock<std::mutex>& placing);
  Result<Placed> NoCluster(store::SkyJob& job, EventKind kind, const place::Plan& plan);
  Result<Placed> SubmitTo(store::SkyJob& job, const Job& what, EventKind kind,
                          const std::string& why, bool first_attempt, place::Plan& plan,
                          const place::PlanOptions& options, std::unique_lock<std::mutex>& placing);
  // Whether the job's last copy ran on a spot partition whose node was
  // taken back (or failed): its restart then prefers on-demand.
  bool ReclaimedFromSpot(const store::SkyJob& job);
  // A new number for a job on a cluster without ids of its own.
  std::string NextNativeId(const std::string& cluster);

  // Held from a placement's choice to its reservation.
  std::mutex placing_mu_;
  // The last number given to a job on each cluster without ids of its own.
  std::mutex ids_mu_;
  std::map<std::string, std::int64_t> last_native_id_;
};

}  // namespace skyslurm::daemon
