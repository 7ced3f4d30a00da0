#include "broker/backend/slurm/slurm_ssh.h"

#include <fmt/format.h>

#include "broker/backend/slurm/estimate_then_submit.h"
#include "broker/backend/slurm/slurm_state.h"
#include "broker/ssh/command_lines.h"
#include "broker/util/deadline.h"
#include "broker/util/trace.h"

namespace skyslurm::backend {

SlurmSshBackend::Parts SlurmSshBackend::Make(ssh::SshTarget target, ssh::PoolOptions options) {
  Parts p;
  p.pool = std::make_unique<ssh::SessionPool>(std::move(target), options);
  p.runner = std::make_unique<ssh::SshCommandRunner>(*p.pool);
  return p;
}

SlurmSshBackend::SlurmSshBackend(std::string name, ssh::SshTarget target, ssh::PoolOptions options)
    : SlurmSshBackend(std::move(name), Make(std::move(target), options)) {}

SlurmSshBackend::SlurmSshBackend(std::string name, Parts parts)
    : SlurmBackend(std::move(name), *parts.runner, {}),
      pool_(std::move(parts.pool)),
      runner_(std::move(parts.runner)) {}

Result<LoginFacts> SlurmSshBackend::Login(std::chrono::milliseconds timeout) {
  std::lock_guard<std::mutex> lock(login_mu_);
  if (login_) return *login_;
  Command c{.argv = {"sh", "-c", kLoginFactsCommand}};
  c.timeout = timeout;
  auto out = pool_->Run(c);
  if (!out.ok()) return out.status();
  if (!out->success()) {
    return UnavailableError(fmt::format("{}: cannot read the login node's environment: {}", name(),
                                        out->err.substr(0, 200)));
  }
  SKY_ASSIGN_OR_RETURN(LoginFacts facts, ParseLoginFacts(out->out));
  login_ = facts;
  return facts;
}

EstimatedSubmission SlurmSshBackend::EstimateThenSubmit(const SubmitSpec& spec,
                                                        std::chrono::milliseconds timeout) {
  // Through slurmrestd the submission is a request on a channel already
  // open: the estimate's command, then that request, cost about what one
  // script holding both sbatch runs would. The script travels on the
  // agent's stdin, with the job's script and environment inside it: no
  // process on the login node has them in its arguments.
  constexpr std::size_t kMaxInline = std::size_t{4} << 20;
  if (rest_ || !pool_->UsesAgents() || !spec.first_attempt || !spec.job.script_args.empty() ||
      spec.job.script.size() > kMaxInline) {
    return Backend::EstimateThenSubmit(spec, timeout);
  }
  const Deadline deadline(timeout);
  Command test_only = TestOnlyCommand(spec.job);
  Command submit = SubmitCommand(spec);
  Prepare(submit, /*utc=*/false);
  const std::string marker = NewEstimateMarker();
  const std::string script =
      EstimateThenSubmitScript({.test_only_line = ssh::PosixCommandLine(test_only),
                                .probe_script = test_only.stdin_data.value_or(""),
                                .submit_line = ssh::PosixCommandLine(submit),
                                .job_script = spec.job.script},
                               marker);
  EstimatedSubmission answer;
  // Neither answer came back. A timeout stays one: the submission may have
  // been made (the caller settles it by the job's tag).
  auto neither = [&](const Status& why) {
    const Status said = why.WithContext(name());
    answer.estimate = said;
    answer.key = said;
    return answer;
  };
  auto ran = pool_->RunScript(script, timeout);
  if (!ran.ok()) return neither(ran.status());
  auto split = SplitEstimateThenSubmit(*ran, marker);
  if (!split.ok()) return neither(split.status());
  answer.estimate = TestOnlyAnswer(std::move(split->first));
  auto submitted = Checked("sbatch", std::move(split->second));
  if (!submitted.ok()) {
    answer.key = submitted.status();
  } else {
    answer.key = SubmittedKey(spec, *submitted, deadline.left());
  }
  return answer;
}

SlurmBackend::RestAccess SlurmSshBackend::Rest() {
  return {.request =
              [this](std::string_view method, std::string_view path, std::string_view body,
                     std::chrono::milliseconds timeout) {
                return pool_->Rest(method, path, body, timeout);
              },
          .unavailable = [this] { return pool_->RestUnavailable(); },
          .facts = [this](const SubmitSpec&,
                          std::chrono::milliseconds timeout) { return Login(timeout); }};
}

Result<JobKey> SlurmSshBackend::Submit(const SubmitSpec& spec, std::chrono::milliseconds timeout) {
  if (!rest_) return SlurmBackend::Submit(spec, timeout);
  return SubmitThroughRest(Rest(), spec, timeout);
}

Status SlurmSshBackend::Cancel(const std::string& job_id, bool only_if_pending,
                               std::chrono::milliseconds timeout) {
  if (!rest_) return SlurmBackend::Cancel(job_id, only_if_pending, timeout);
  return CancelThroughRest(Rest(), job_id, only_if_pending, timeout);
}

Result<cluster::Inventory> SlurmSshBackend::Probe(std::chrono::milliseconds timeout) {
  const Deadline deadline(timeout);
  if (rest_) SKY_RETURN_IF_ERROR(RestSpoken(Rest(), timeout));
  return SlurmBackend::Probe(deadline.left());
}

CheckAnswer SlurmSshBackend::Check(std::chrono::milliseconds timeout) {
  const Deadline deadline(timeout);
  if (Status s = pool_->Check(timeout); !s.ok()) {
    return {.verdict = "unreachable", .detail = s.message()};
  }
  std::string rest;
  if (rest_) {
    // access: rest that cannot work is a fault to fix, not a fallback to hide.
    auto pong = RestPing(deadline.left());
    if (pong.status().code() == StatusCode::kNotFound) {
      return NoKnownRestApi(pong.status());
    } else if (!pong.ok()) {
      return {.verdict = "no slurmrestd",
              .access_note = "rest+",
              .detail = pong.status().message() +
                        " (install Slurm's slurmrestd on the login node, or drop 'access: rest')"};
    } else {
      rest = fmt::format("; slurmrestd {}", *pong);
    }
  }
  CheckAnswer answer = SlurmBackend::Check(deadline.left());
  if (rest_) answer.access_note = "rest+";
  // After the version, before the partitions.
  if (answer.ok())
    answer.detail.insert(std::min(answer.detail.find(';'), answer.detail.size()), rest);
  return answer;
}

Result<std::string> SlurmSshBackend::RestPing(std::chrono::milliseconds timeout) {
  return PingRest(Rest(), timeout);
}

}  // namespace skyslurm::backend
