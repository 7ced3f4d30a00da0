// The pieces of a sky job's life, each a class of its own over the shared
// context (job_context.h), and owned together here: a piece reaches its
// siblings through this. JobManager (job_manager.h) is their one face.
//
//   placer.h        place and submit: new jobs, moves, restarts, re-placing
//   moves.h         weigh a pending job's move, with back-pressure
//   arrays.h        spread an array over clusters; move its pending tasks
//   dependencies.h  hold a job back until the sky jobs it depends on answer
//   recovery.h      settle the intents a crash (or a silent cluster) left open
//   copies.h        one live copy per job; a cancel reaches them all
//   folders.h       a job's folder there and back
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "broker/daemon/jobs/arrays.h"
#include "broker/daemon/jobs/copies.h"
#include "broker/daemon/jobs/dependencies.h"
#include "broker/daemon/jobs/folders.h"
#include "broker/daemon/jobs/job_context.h"
#include "broker/daemon/jobs/moves.h"
#include "broker/daemon/jobs/placer.h"
#include "broker/daemon/jobs/recovery.h"

namespace skyslurm::daemon {

struct Lifecycle {
  Lifecycle(store::JobStore& store, place::Workspace& workspace, ManagerOptions options);
  Lifecycle(const Lifecycle&) = delete;
  Lifecycle& operator=(const Lifecycle&) = delete;

  // A sky job by its sky id, by "cluster:id" of one of its copies, by a
  // global id, or by some tasks of an array ("sky-..._7": the part that
  // runs them). A job the current viewer may not see (a site's other
  // user's) is not found.
  Result<store::SkyJob> Find(const std::string& id);
  // The same, whoever's it is.
  Result<store::SkyJob> FindAny(const std::string& id);

  JobContext ctx;
  Folders folders;
  Copies copies;
  Placer placer;
  Dependencies dependencies;
  Arrays arrays;
  TaskMoves task_moves;
  Mover mover;
  Recovery recovery;
};

// "sky-..._7", "sky-..._[7,9-12]": some tasks of an array, split into the
// sky id and the indices; nullopt for any other id.
std::optional<std::pair<std::string, std::string>> TasksOf(const std::string& id);

}  // namespace skyslurm::daemon
