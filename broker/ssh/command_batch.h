// Several independent commands run side by side on a login node through one
// SSH channel: a small POSIX sh script, sent on the channel's stdin, starts
// every command in the background with its output in files of a private
// temporary folder, waits, and prints each command's exit status and
// output in length-prefixed frames. One channel and one round trip instead
// of one per command, and the commands' own run times overlap.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "broker/util/command.h"
#include "broker/util/status.h"

namespace skyslurm::ssh {

// The script for these commands (each as RemoteCommandLine renders it; none
// may read stdin). Run it with `sh -s`, the script on stdin.
std::string BatchScript(const std::vector<std::string>& command_lines);

// The commands' outputs, in order, from what the script printed. Output
// beyond max_output[i] bytes is dropped and flagged. Anything that is not
// exactly `count` frames is an error quoting what came instead.
Result<std::vector<CommandOutput>> ParseBatchOutput(std::string_view printed, std::size_t count,
                                                    const std::vector<std::size_t>& max_output);

}  // namespace skyslurm::ssh
