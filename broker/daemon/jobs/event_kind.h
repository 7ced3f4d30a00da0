// What happened to a sky job, as one type: the daemon records events by
// kind, never by a string spelled in several files. The names are what the
// store keeps and the API, `skyslurm status` and docs/failover.md show.
#pragma once

#include <string_view>

namespace skyslurm::daemon {

enum class EventKind {
  kSubmitted,           // placed and submitted for the first time
  kMoved,               // submitted elsewhere after its pending copy was cancelled
  kReplaced,            // "re-placed": its cluster went silent while it pended
  kRestarted,           // a managed job submitted again after a failure
  kRefused,             // sbatch refused it: final
  kWaiting,             // no cluster could take it yet (one silent mid-submission)
  kKept,                // of two live copies, this one stays
  kCancelled,           // skyslurm cancel
  kMoveStarted,         // its pending copy is being cancelled for a move
  kMoveAbandoned,       // the copy started before the move's cancel reached it
  kMoveDeferred,        // back-pressure: the target takes no more moves now
  kRecovered,           // an intent a crash left open was settled
  kStarted,             // its copy started
  kState,               // its state changed
  kEnded,               // its copy ended: final
  kClusterLost,         // its cluster has been silent for cluster_dead_after
  kRestarting,          // its copy ended through the infrastructure: restart follows
  kDuplicateCancelled,  // a second live copy was cancelled
  kCopied,              // its folder was copied to the cluster it goes to
  kFetched,             // its --sky-sync-back files were fetched (or could not be)
  kSpread,              // an array split into parts over several clusters
  kTasksCancelled,      // some of an array's tasks were cancelled (skyslurm cancel ID_[..])
  kTasksMoved,          // pending tasks of a spread array's part left for another cluster
  kDependency,          // it waits for the sky jobs its --dependency names, or they answered it
  kUpdated,             // scontrol update changed it: carried into its later copies, or it stays
  kMoveAsked,           // asked to move now (the dashboard): weighed at once, what came of it
};

// The kind's name in the store and the API ("re-placed", "move-started").
std::string_view EventName(EventKind kind);

}  // namespace skyslurm::daemon
