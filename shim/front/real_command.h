// The shim's front: which Slurm command it stands in for, and where the real
// one is. Deliberately plain (libc and the standard library only): this runs
// on every sbatch/salloc/srun a user types, before anything else.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace skyslurm::shim {

// The job commands, then the client commands that see jobs (squeue, sacct,
// scontrol, scancel: daemon_handoff.h's InvolvesRoutedJobs).
enum class Mode { kSbatch, kSalloc, kSrun, kSqueue, kSacct, kScontrol, kScancel };
inline bool IsClientMode(Mode mode) { return mode >= Mode::kSqueue; }

// The file name of the one shim binary; each command's name is a link to
// it. Any file with this real name is a shim, never the real command.
inline constexpr std::string_view kShimFileName = "skyslurm-shim";

// The mode named by argv[0]'s last path component, if it names one.
std::optional<Mode> ModeFromArgv0(std::string_view argv0);
std::string_view ModeName(Mode mode);

// Finds the executable `name` in `search_path` (PATH's syntax; an empty entry
// means the current directory, as execvp has it) that is not a skyslurm shim:
// neither `self` (this program's real path) nor any file whose real path ends
// in kShimFileName, so two installed copies of the shim never call each other.
// Returns the path as found on PATH, or nullopt with `why` saying what was
// skipped.
std::optional<std::string> FindRealCommand(std::string_view name, std::string_view search_path,
                                           std::string_view self, std::string* why);

}  // namespace skyslurm::shim
