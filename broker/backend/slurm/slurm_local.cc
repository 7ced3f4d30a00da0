#include "broker/backend/slurm/slurm_local.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "broker/util/deadline.h"

extern char** environ;

namespace skyslurm::backend {

std::vector<std::pair<std::string, std::string>> SlurmLocalBackend::Env(const std::string& conf) {
  if (conf.empty()) return {};
  return {{"SLURM_CONF", conf}};
}

// runner_ is a member initialized after the base: the base only stores the
// reference, and uses it once construction is complete.
SlurmLocalBackend::SlurmLocalBackend(std::string name, std::string slurm_conf,
                                     std::string modulepath, std::string slurm_bin_dir)
    : SlurmBackend(std::move(name), runner_, Env(slurm_conf), std::move(modulepath), slurm_bin_dir),
      slurm_conf_(std::move(slurm_conf)),
      slurm_bin_dir_(std::move(slurm_bin_dir)) {}

void SlurmLocalBackend::UseRest(bool on, std::string program) {
  if (!on) {
    rest_.reset();
    return;
  }
  rest_ = std::make_unique<LocalRest>(
      slurm_conf_, program.empty() ? LocalRest::FindProgram(slurm_bin_dir_) : std::move(program));
}

void SlurmLocalBackend::RunAsUsers(std::string helper) {
  rest_.reset();
  runner_.as_users.emplace(std::move(helper), runner_.local);
}

Result<LoginFacts> SlurmLocalBackend::Facts(const SubmitSpec& spec) const {
  LoginFacts facts;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) {
    return InternalError("cannot read this machine's host name");
  }
  facts.hostname = host;
  // sbatch's folder without --chdir: where the job was submitted (never
  // this process's own folder: skyslurmd works in its state folder).
  const char* home = std::getenv("HOME");
  facts.home = !spec.submit_dir.empty() ? spec.submit_dir : home != nullptr ? home : "/";
  // The umask sbatch would use: SLURM_UMASK when set (skyslurmd keeps the
  // user's there), else this process's, read without changing it (umask(2)
  // sets it for every thread).
  if (const char* kept = std::getenv("SLURM_UMASK"); kept != nullptr && *kept != '\0') {
    facts.umask = kept;
  } else {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
      if (line.starts_with("Umask:")) {
        facts.umask = line.substr(line.find_first_not_of(" \t", 6));
        break;
      }
    }
  }
  // The environment sbatch would run with (SubmitCommand, prepared):
  // this process's, or the one the submitter gave, with its changes.
  Command c = SubmitCommand(spec);
  Prepare(c, /*utc=*/false);
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string_view::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  for (const std::string& name : c.env_unset) env.erase(name);
  for (const auto& [k, v] : c.env_set) env[k] = v;
  facts.environment = std::move(env);
  return facts;
}

SlurmBackend::RestAccess SlurmLocalBackend::Rest() {
  return {
      .request =
          [this](std::string_view method, std::string_view path, std::string_view body,
                 std::chrono::milliseconds timeout) {
            return rest_->Request(method, path, body, timeout);
          },
      .unavailable = [this] { return rest_->unavailable(); },
      .facts = [this](const SubmitSpec& spec, std::chrono::milliseconds) { return Facts(spec); }};
}

Result<JobKey> SlurmLocalBackend::Submit(const SubmitSpec& spec,
                                         std::chrono::milliseconds timeout) {
  if (!rest_) return SlurmBackend::Submit(spec, timeout);
  return SubmitThroughRest(Rest(), spec, timeout);
}

Status SlurmLocalBackend::Cancel(const std::string& job_id, bool only_if_pending,
                                 std::chrono::milliseconds timeout) {
  if (!rest_) return SlurmBackend::Cancel(job_id, only_if_pending, timeout);
  return CancelThroughRest(Rest(), job_id, only_if_pending, timeout);
}

Result<cluster::Inventory> SlurmLocalBackend::Probe(std::chrono::milliseconds timeout) {
  const Deadline deadline(timeout);
  if (rest_) SKY_RETURN_IF_ERROR(RestSpoken(Rest(), timeout));
  return SlurmBackend::Probe(deadline.left());
}

CheckAnswer SlurmLocalBackend::Check(std::chrono::milliseconds timeout) {
  const Deadline deadline(timeout);
  std::string rest;
  if (rest_) {
    // access: rest that cannot work is a fault to fix, not a fallback to hide.
    auto pong = PingRest(Rest(), deadline.left());
    if (pong.status().code() == StatusCode::kNotFound) {
      return NoKnownRestApi(pong.status());
    } else if (!pong.ok()) {
      return {.verdict = "no slurmrestd",
              .access_note = "rest+",
              .detail = pong.status().message() +
                        " (skyslurmd runs it as the user, never as root: install Slurm's "
                        "slurmrestd, or drop 'access: rest')"};
    } else {
      rest = fmt::format("; slurmrestd {}", *pong);
    }
  }
  CheckAnswer answer = SlurmBackend::Check(deadline.left());
  if (rest_) answer.access_note = "rest+";
  if (answer.ok()) {
    answer.detail.insert(std::min(answer.detail.find(';'), answer.detail.size()), rest);
  }
  return answer;
}

}  // namespace skyslurm::backend
