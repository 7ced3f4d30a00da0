// A job's folder on a cluster is made by the user, for the user alone: a
// folder another user can write to (or owns) on its way would let them
// swap the job's files before it starts, and the job would run their code
// as the user.
#pragma once

#include <string>

namespace skyslurm::sync {

// A POSIX sh command (for a login node's shell, which may be csh: single
// quotes only, no '!') that checks every existing folder on the way to
// `dest` (dest included; a relative dest is under the home, which is the
// user's) and makes what is missing with mode 0700. A folder passes when it
// is the user's own, or root's and either not writable by other users or
// sticky (/tmp, a 1777 scratch root); a symbolic link on the way passes
// when it is the user's or root's and what it points at passes. Otherwise
// it exits 97 and says on stderr which folder and why; it never makes
// anything then. The copy into the folder keeps it private (PushArgv's
// --chmod: rsync would give it the source folder's mode).
std::string MakePrivateFolderCommand(const std::string& dest);

// The exit status of a refusal.
constexpr int kFolderRefused = 97;

}  // namespace skyslurm::sync
