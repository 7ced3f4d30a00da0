// The shim's own way to skyslurmd. A batch job whose routing is asked for
// goes to the daemon's socket straight from the shim (POST /v1/jobs,
// docs/api.md), with no second program started: `skyslurm __route` costs an
// exec and the loading of its libraries, more than the daemon's whole
// decision. Whatever this way does not cover (no daemon running yet, a
// script on stdin, --sky-explain, --test-only, --wait, salloc and srun,
// routing turned off) goes to `skyslurm __route` as before; the daemon says
// which of its cases are not for this way.
#pragma once

#include <string>

#include "shim/front/real_command.h"

namespace skyslurm::shim {

struct Handoff {
  bool done = false;  // the daemon took it (or refused it): exit with exit_code
  int exit_code = 0;
  // Not done, but the request may have reached the daemon (the connection
  // failed after it was sent): `skyslurm __route` must submit with this sky
  // id (SKYSLURM_SKY_ID), so that it is the same job, never a second one.
  std::string sent_sky_id;
};

// `started_ns`: the shim's start on the monotonic clock (SKYSLURM_TRACE).
Handoff SubmitToDaemon(Mode mode, int argc, char** argv, long long started_ns);

// squeue, sacct, scontrol, scancel: whether a routed job is involved, so
// that skyslurmd must answer: a global id among the jobs named
// (job/global_id.h), or, for squeue and sacct naming no job (a listing of
// the user's), routed jobs made by this user before (the state folder's
// `routed` file). Else the real command runs untouched.
bool InvolvesRoutedJobs(Mode mode, int argc, char** argv);

// The command run by skyslurmd (POST /v1/slurm), its output printed here;
// not done when no daemon answers (`skyslurm __slurm` starts one).
Handoff RunClientOnDaemon(Mode mode, int argc, char** argv);

}  // namespace skyslurm::shim
