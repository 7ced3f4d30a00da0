#include "broker/ssh/session_pool.h"

#include <fmt/format.h>

#include <algorithm>

#include "broker/ssh/agent_script.h"
#include "broker/ssh/command_batch.h"
#include "broker/ssh/command_lines.h"
#include "broker/util/trace.h"

namespace skyslurm::ssh {

SshTarget TargetFromConfig(const config::SshHost& host) {
  SshTarget t;
  t.name = host.name;
  t.hostname = host.hostname;
  t.port = host.port;
  t.user = host.user;
  t.identity_files = host.identity_files;
  t.known_hosts_files = host.known_hosts_files;
  t.global_known_hosts_files = host.global_known_hosts_files;
  t.identities_only = host.identities_only;
  t.proxy_jump = host.proxy_jump;
  if (host.connect_timeout_s && *host.connect_timeout_s > 0) {
    t.connect_timeout = std::chrono::seconds(*host.connect_timeout_s);
  }
  if (host.server_alive_interval_s && *host.server_alive_interval_s > 0) {
    t.keepalive = std::chrono::seconds(*host.server_alive_interval_s);
  }
  return t;
}

namespace {

// What a trace line says of a command: its program and first argument,
// never its environment's values or its input.
std::string Traced(const Command& command) {
  std::string said;
  for (std::size_t i = 0; i < command.argv.size() && i < 2; ++i) {
    said.append(i == 0 ? "" : " ").append(ShellQuote(command.argv[i]).substr(0, 60));
  }
  return said;
}

}  // namespace

SessionPool::SessionPool(SshTarget target, PoolOptions options)
    : target_(std::move(target)), options_(options) {}

SessionPool::~SessionPool() = default;

int SessionPool::connections_opened() const {
  std::lock_guard<std::mutex> lock(mu_);
  return opened_;
}

std::unique_ptr<Connection> SessionPool::Take(bool* reused) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return !idle_.empty() || in_use_ < options_.max_connections; });
  ++in_use_;
  // Close connections idle for too long; reuse the most recent one.
  const auto now = Clock::now();
  std::erase_if(idle_, [&](const auto& c) { return now - c->last_used() > options_.idle_limit; });
  // A session past its time is used no more: its pooled connections go, and
  // the next one opened says a login is needed (and closes its master).
  if (target_.session && target_.one_time_code &&
      !config::SessionUntil(*target_.session, std::chrono::system_clock::now())) {
    idle_.clear();
  }
  if (!idle_.empty()) {
    auto c = std::move(idle_.back());
    idle_.pop_back();
    *reused = true;
    return c;
  }
  *reused = false;
  return nullptr;  // the caller opens one (outside the lock)
}

void SessionPool::Give(std::unique_ptr<Connection> c) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_use_;
    if (c && !c->broken()) idle_.push_back(std::move(c));
  }
  cv_.notify_one();
}

Result<std::unique_ptr<Connection>> SessionPool::Acquire(Clock::time_point deadline, bool* reused) {
  auto c = Take(reused);
  if (c) return c;
  auto opened = Connection::Open(target_, deadline);
  if (!opened.ok()) {
    Give(nullptr);
    return opened.status();
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++opened_;
  return opened;
}

Status SessionPool::Check(std::chrono::milliseconds timeout) {
  bool reused = false;
  SKY_ASSIGN_OR_RETURN(auto c, Acquire(Clock::now() + timeout, &reused));
  Give(std::move(c));
  return OkStatus();
}

Result<CommandOutput> SessionPool::Exec(std::string_view what, const Spelled& channel,
                                        const Spelled& agent, Clock::time_point deadline,
                                        std::size_t max_output) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool reused = false;
    SKY_ASSIGN_OR_RETURN(auto c, Acquire(deadline, &reused));
    bool sent = false;
    bool use_agent;
    {
      std::lock_guard<std::mutex> lock(mu_);
      use_agent = options_.agents && !agents_unavailable_;
    }
    Result<CommandOutput> result = InternalError("not run");
    if (use_agent) {
      trace::Span span(fmt::format("agent {}: {}", target_.name, what), trace::Cost::kAgentCommand);
      result = c->AgentExec(agent.line, agent.input, deadline, max_output, &sent);
      if (!result.ok() && c->agent_unavailable()) {
        std::lock_guard<std::mutex> lock(mu_);
        agents_unavailable_ = true;
        use_agent = false;
      }
    }
    if (!use_agent && !sent && !c->broken()) {
      trace::Span span(fmt::format("ssh {}: {}", target_.name, what), trace::Cost::kRemoteCommand);
      result = c->Exec(channel.line, channel.input, deadline, max_output, &sent);
    }
    const bool retry = !result.ok() && !sent && reused && attempt == 0;
    Give(std::move(c));
    if (retry) continue;  // the pooled connection had died: a fresh one, once
    return result;
  }
  return InternalError("unreachable");
}

Result<HttpAnswer> SessionPool::Rest(std::string_view method, std::string_view path,
                                     std::string_view body, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const std::string request = HttpRequestText(method, path, body);
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool reused = false;
    SKY_ASSIGN_OR_RETURN(auto c, Acquire(deadline, &reused));
    bool sent = false;
    Result<HttpAnswer> answer = InternalError("not sent");
    {
      trace::Span span(fmt::format("rest {}: {} {}", target_.name, method, path),
                       trace::Cost::kRestCall);
      answer = c->RestExec(request, deadline, &sent);
    }
    if (!answer.ok() && c->rest_unavailable()) {
      std::lock_guard<std::mutex> lock(mu_);
      rest_unavailable_ = true;
    }
    const bool retry = !answer.ok() && !sent && reused && !c->rest_unavailable() && attempt == 0;
    Give(std::move(c));
    if (retry) continue;
    return answer;
  }
  return InternalError("unreachable");
}

bool SessionPool::RestUnavailable() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rest_unavailable_;
}

bool SessionPool::UsesAgents() const {
  std::lock_guard<std::mutex> lock(mu_);
  return options_.agents && !agents_unavailable_;
}

Result<CommandOutput> SessionPool::Run(const Command& command) {
  if (command.argv.empty()) return InvalidArgumentError("no program given to run");
  const auto timeout = command.timeout.count() > 0 ? command.timeout : options_.default_timeout;
  const auto deadline = Clock::now() + timeout;
  if (ChangesEnvironment(command)) {
    // On a channel the values would be arguments of `env`: sh reads them
    // from its stdin instead.
    return Exec(Traced(command), {.line = "sh -s", .input = CommandScript(command)},
                {.line = AgentCommandLine(command), .input = command.stdin_data}, deadline,
                command.max_output_bytes);
  }
  return Exec(Traced(command), {.line = RemoteCommandLine(command), .input = command.stdin_data},
              {.line = AgentCommandLine(command), .input = command.stdin_data}, deadline,
              command.max_output_bytes);
}

Result<CommandOutput> SessionPool::RunScript(const std::string& script,
                                             std::chrono::milliseconds timeout,
                                             std::size_t max_output) {
  return Exec("a script", {.line = "sh -s", .input = script},
              {.line = script, .input = std::nullopt}, Clock::now() + timeout, max_output);
}

std::vector<Result<CommandOutput>> SessionPool::RunAll(const std::vector<Command>& commands) {
  std::vector<Result<CommandOutput>> results;
  const bool batchable =
      commands.size() > 1 && std::none_of(commands.begin(), commands.end(), [](const Command& c) {
        return c.argv.empty() || c.stdin_data.has_value();
      });
  if (!batchable) {
    for (const auto& c : commands) results.push_back(Run(c));
    return results;
  }
  std::vector<std::string> lines;
  std::vector<std::size_t> limits;
  auto timeout = options_.default_timeout;
  std::size_t total_limit = 0;
  for (const auto& c : commands) {
    lines.push_back(PosixCommandLine(c));
    limits.push_back(c.max_output_bytes);
    if (c.timeout.count() > 0) timeout = std::min(timeout, c.timeout);
    // Room for every command's output and the frame headers.
    total_limit += std::min<std::size_t>(c.max_output_bytes, std::size_t{1} << 40) * 2 + 100;
  }
  const std::string script = BatchScript(lines);
  auto ran = Exec(fmt::format("{} commands side by side", commands.size()),
                  {.line = "sh -s", .input = script}, {.line = "exec sh -s", .input = script},
                  Clock::now() + timeout, total_limit);
  auto outputs = [&]() -> Result<std::vector<CommandOutput>> {
    if (!ran.ok()) return ran.status();
    if (!ran->out.starts_with("skyslurm-batch ")) {
      // The script never got as far as its first frame (no sh, no mktemp).
      return UnavailableError(fmt::format("{}: the login node could not run the commands ({}): {}",
                                          target_.name, ran->DescribeEnd(),
                                          ran->err.substr(0, 400)));
    }
    auto parsed = ParseBatchOutput(ran->out, commands.size(), limits);
    if (!parsed.ok()) return parsed.status().WithContext(target_.name);
    return parsed;
  }();
  if (!outputs.ok()) {
    results.assign(commands.size(), outputs.status());
    return results;
  }
  for (auto& o : *outputs) results.push_back(std::move(o));
  return results;
}

}  // namespace skyslurm::ssh
