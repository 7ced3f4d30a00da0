#include "broker/backend/slurm/estimate_then_submit.h"

#include <fmt/format.h>

#include <charconv>
#include <random>

namespace skyslurm::backend {

std::string NewEstimateMarker() {
  std::random_device rd;
  const unsigned long long bits = (static_cast<unsigned long long>(rd()) << 32) ^ rd();
  return fmt::format("skyslurm-estimate-{:016x}", bits);
}

std::string EstimateThenSubmitScript(const EstimateThenSubmitParts& parts,
                                     std::string_view marker) {
  // The marker starts a line of its own whatever the estimate printed last;
  // printf is sh's own, so the scripts cost no process and sit in no
  // process's arguments.
  return fmt::format("printf %s {} | ({}) 2>&1; printf '\\n{} %d\\n' \"$?\"; printf %s {} | ({})\n",
                     ShellQuote(parts.probe_script), parts.test_only_line, marker,
                     ShellQuote(parts.job_script), parts.submit_line);
}

Result<std::pair<CommandOutput, CommandOutput>> SplitEstimateThenSubmit(const CommandOutput& both,
                                                                        std::string_view marker) {
  const std::string needle = fmt::format("\n{} ", marker);
  const auto at = both.out.find(needle);
  const auto status_at = at + needle.size();
  const auto line_end = at == std::string::npos ? at : both.out.find('\n', status_at);
  int status = -1;
  if (line_end != std::string::npos) {
    const auto [p, ec] =
        std::from_chars(both.out.data() + status_at, both.out.data() + line_end, status);
    if (ec != std::errc() || p != both.out.data() + line_end) status = -1;
  }
  if (status < 0) {
    const std::string said = both.err.empty() ? both.out : both.err;
    return UnavailableError(fmt::format("the estimate did not finish ({}): {}", both.DescribeEnd(),
                                        said.substr(0, 400)));
  }
  CommandOutput estimate;
  estimate.exit_code = status;
  estimate.out = both.out.substr(0, at);
  CommandOutput submit = both;
  submit.out = both.out.substr(line_end + 1);
  return std::make_pair(std::move(estimate), std::move(submit));
}

}  // namespace skyslurm::backend
