#include "broker/ssh/agent_script.h"

#include <fmt/format.h>

#include <charconv>

#include "broker/ssh/command_lines.h"

namespace skyslurm::ssh {

std::string AgentScript() {
  // LC_ALL=C for the loop's own byte counts (${#var}); each command gets the
  // value the login node gave (or none). Outputs go through files of a
  // private folder and back through `read`, all builtins: the only process
  // per request is the subshell's fork and the program's exec.
  return R"SH(set -u
if [ "${LC_ALL+set}" = set ]; then __sky_lc=$LC_ALL; else __sky_lc=; __sky_unset_lc=1; fi
LC_ALL=C
__sky_d=$(mktemp -d "${TMPDIR:-/tmp}/skyslurm-agent.XXXXXX") || exit 125
trap 'rm -rf "$__sky_d"' EXIT
printf 'skyslurm-agent ready\n'
while IFS=' ' read -r __sky_tag __sky_id __sky_len __sky_inlen; do
  [ "$__sky_tag" = skyslurm-agent ] || exit 124
  __sky_line=; __sky_in=
  if [ "$__sky_len" -gt 0 ]; then IFS= read -r -d '' -N "$__sky_len" __sky_line; fi
  if [ "$__sky_inlen" -gt 0 ]; then IFS= read -r -d '' -N "$__sky_inlen" __sky_in; fi
  [ "${#__sky_line}" -eq "$__sky_len" ] && [ "${#__sky_in}" -eq "$__sky_inlen" ] || exit 123
  if [ "$__sky_inlen" -gt 0 ]; then
    printf '%s' "$__sky_in" | (
      if [ -n "${__sky_unset_lc-}" ]; then unset LC_ALL; else LC_ALL=$__sky_lc; fi
      eval "$__sky_line") >"$__sky_d/o" 2>"$__sky_d/e"
  else
    (
      if [ -n "${__sky_unset_lc-}" ]; then unset LC_ALL; else LC_ALL=$__sky_lc; fi
      eval "$__sky_line") </dev/null >"$__sky_d/o" 2>"$__sky_d/e"
  fi
  __sky_rc=$?
  __sky_o=; __sky_e=
  IFS= read -r -d '' __sky_o <"$__sky_d/o"
  IFS= read -r -d '' __sky_e <"$__sky_d/e"
  printf 'skyslurm-agent %s %s %s %s\n%s%s' "$__sky_id" "$__sky_rc" "${#__sky_o}" "${#__sky_e}" "$__sky_o" "$__sky_e"
done
)SH";
}

std::string AgentCommandLine(const Command& command) {
  std::string line;
  if (!command.cwd.empty()) line += "cd " + ShellQuote(command.cwd) + " || exit 1; ";
  return line + EnvironmentAssignments(command, /*bash=*/true) + "exec " + ShellJoin(command.argv);
}

std::string AgentRequest(std::uint64_t id, std::string_view line, std::string_view input) {
  return fmt::format("skyslurm-agent {} {} {}\n{}{}", id, line.size(), input.size(), line, input);
}

Result<AgentAnswerHeader> ParseAgentAnswerHeader(std::string_view line) {
  constexpr std::string_view kTag = "skyslurm-agent ";
  auto bad = [&] {
    return InternalError(fmt::format("the agent answered '{}'", line.substr(0, 200)));
  };
  if (!line.starts_with(kTag)) return bad();
  line.remove_prefix(kTag.size());
  AgentAnswerHeader h;
  auto number = [&](auto* out) {
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), *out);
    if (ec != std::errc() || end == line.data()) return false;
    line.remove_prefix(static_cast<std::size_t>(end - line.data()));
    return true;
  };
  if (!number(&h.id) || !number(&h.status) || !number(&h.out_bytes) || !number(&h.err_bytes) ||
      !line.empty()) {
    return bad();
  }
  if (h.out_bytes > kMaxAgentStream || h.err_bytes > kMaxAgentStream) {
    return InternalError(fmt::format("the agent's answer of {} + {} bytes is over the {} taken",
                                     h.out_bytes, h.err_bytes, kMaxAgentStream));
  }
  return h;
}

}  // namespace skyslurm::ssh
