// How a Command is spelled for a login node's shells. Every user of a
// shared login node can read any process's arguments (/proc/PID/cmdline,
// `ps -eo args`), but only the user a process's environment: so a value
// given in Command::env_set is always set by a shell assignment (a builtin,
// on a script the shell reads from its stdin) and never given to `env` or
// `sh -c` as an argument.
#pragma once

#include <string>

#include "broker/util/command.h"

namespace skyslurm::ssh {

// The environment changes as shell assignments: "unset -v NAME; " and
// "export NAME='value'; ". A name no shell can assign is left out; with
// `bash`, bash's exported functions (BASH_FUNC_<name>%%, as `export -f`
// writes them) are defined and exported again instead.
std::string EnvironmentAssignments(const Command& command, bool bash);

// A POSIX sh command line: cd (or exit 1), the environment's assignments,
// exec of the program. Its stdin is the caller's to give.
std::string PosixCommandLine(const Command& command);

// For a channel of its own, which the user's login shell (maybe csh)
// parses: "cd DIR && exec ARGV". Only for a command without environment
// changes; one with them runs as `sh -s` reading CommandScript.
std::string RemoteCommandLine(const Command& command);
bool ChangesEnvironment(const Command& command);

// A POSIX sh script running the command, for `sh -s` (the script on sh's
// stdin): its stdin data is handed to it by sh's own printf.
std::string CommandScript(const Command& command);

}  // namespace skyslurm::ssh
