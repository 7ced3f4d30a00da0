// The resident command loop ("agent") a login node runs on one long-lived
// SSH channel: bash reads framed requests on the channel's stdin and answers
// each with the command's exit status and output. A command then costs a
// fork of the loop and the exec of the program itself: no sshd session, no
// login shell, no `env`. Requests carry their own folder, environment and
// input, so one agent serves any command.
//
//   request:  "skyslurm-agent <id> <line bytes> <input bytes>\n" <line> <input>
//   answer:   "skyslurm-agent <id> <status> <stdout bytes> <stderr bytes>\n" <stdout> <stderr>
//
// <line> is a bash command line (AgentCommandLine), run in a subshell;
// <input> is its stdin (none: /dev/null). Neither may hold a NUL byte, and
// the outputs come back cut at their first NUL (bash's variables hold none):
// a command whose output has NULs (`env -0`) encodes it (base64).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "broker/util/command.h"
#include "broker/util/status.h"

namespace skyslurm::ssh {

// The loop, to run as `bash -c <script>` (it prints "skyslurm-agent ready"
// first).
std::string AgentScript();

constexpr std::string_view kAgentReady = "skyslurm-agent ready\n";

// The command line an agent runs for `command`: cd, then the environment
// changes as bash's assignments (EnvironmentAssignments), then `exec` of
// the program (no `env`, whose arguments would show the values).
std::string AgentCommandLine(const Command& command);

std::string AgentRequest(std::uint64_t id, std::string_view line, std::string_view input);

// The most an agent's answer may say of one stream; a header claiming
// more (a broken or hostile login node) is an error, never a wait or an
// allocation of that size. A header line longer than kMaxAgentHeader is one.
inline constexpr std::size_t kMaxAgentStream = std::size_t{512} << 20;
inline constexpr std::size_t kMaxAgentHeader = 4096;

struct AgentAnswerHeader {
  std::uint64_t id = 0;
  int status = 0;
  std::size_t out_bytes = 0, err_bytes = 0;
};
// The header line (without its newline); an error quoting anything else,
// or naming a size over kMaxAgentStream.
Result<AgentAnswerHeader> ParseAgentAnswerHeader(std::string_view line);

}  // namespace skyslurm::ssh
