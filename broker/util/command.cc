#include "broker/util/command.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <thread>

#include "broker/util/scoped_sigpipe_block.h"
#include "broker/util/spawn.h"
#include "broker/util/trace.h"

namespace skyslurm {
namespace {

using Clock = std::chrono::steady_clock;
// A command without a timeout waits until this.
constexpr Clock::time_point kNoDeadline = Clock::time_point::max();

std::string LastLines(const std::string& text, std::size_t max_chars) {
  std::string_view view(text);
  while (!view.empty() && (view.back() == '\n' || view.back() == ' ')) view.remove_suffix(1);
  if (view.size() > max_chars) view = view.substr(view.size() - max_chars);
  return std::string(view);
}

// Reads what the program writes (kept up to max_output_bytes, all of its
// stdout shown to on_output) and writes its stdin, until both of its outputs
// close. False when the deadline came first.
bool Pump(const Command& command, Clock::time_point deadline, SpawnedProcess& process,
          CommandOutput& result) {
  std::string_view to_write;
  if (command.stdin_data.has_value()) to_write = *command.stdin_data;
  if (to_write.empty()) process.in.Close();
  std::array<char, 65536> buffer{};
  ScopedSigpipeBlock sigpipe_guard;
  auto drain = [&](const pollfd* polled, OwnedFd& fd, std::string& sink) {
    if (polled == nullptr || polled->revents == 0) return;
    const ssize_t n = read(fd.get(), buffer.data(), buffer.size());
    if (n > 0) {
      const auto got = static_cast<std::size_t>(n);
      const std::size_t room =
          sink.size() < command.max_output_bytes ? command.max_output_bytes - sink.size() : 0;
      if (got > room) result.truncated = true;
      sink.append(buffer.data(), std::min(got, room));
      if (&sink == &result.out && command.on_output) {
        command.on_output(std::string_view(buffer.data(), got));
      }
    } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
      fd.Close();
    }
  };
  while (process.out.open() || process.err.open()) {
    std::array<pollfd, 3> fds{};
    nfds_t count = 0;
    auto watch = [&](const OwnedFd& fd, short events) -> const pollfd* {
      if (!fd.open()) return nullptr;
      fds[count] = {fd.get(), events, 0};
      return &fds[count++];
    };
    const pollfd* out = watch(process.out, POLLIN);
    const pollfd* err = watch(process.err, POLLIN);
    const pollfd* in = watch(process.in, POLLOUT);
    int wait_ms = -1;
    if (deadline != kNoDeadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        process.in.Close();
        return false;
      }
      wait_ms = static_cast<int>(std::min<long long>(left.count() + 1, 60'000));
    }
    if (poll(fds.data(), count, wait_ms) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    drain(out, process.out, result.out);
    drain(err, process.err, result.err);
    if (in != nullptr && in->revents != 0) {
      const ssize_t n = write(process.in.get(), to_write.data(), to_write.size());
      if (n > 0) {
        to_write.remove_prefix(static_cast<std::size_t>(n));
        if (to_write.empty()) process.in.Close();
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        process.in.Close();  // the program stopped reading (EPIPE): not our error
      }
    }
  }
  process.in.Close();
  return true;
}

// Waits for the program and returns its wait status. Its output closed, it
// is normally gone already, but one may close its streams and go on
// running: the deadline still holds. Past it (timed_out set) the whole
// process group, the program and anything it started, gets SIGTERM, two
// seconds, then SIGKILL.
int Reap(pid_t pid, Clock::time_point deadline, bool& timed_out) {
  int wait_status = 0;
  while (!timed_out) {
    const bool bounded = deadline != kNoDeadline;
    const pid_t done = waitpid(pid, &wait_status, bounded ? WNOHANG : 0);
    if (done == pid) return wait_status;
    if (done < 0 && errno != EINTR) return wait_status;
    if (bounded && Clock::now() >= deadline) {
      timed_out = true;
    } else if (done == 0) {
      usleep(1'000);
    }
  }
  kill(-pid, SIGTERM);
  const auto grace_end = Clock::now() + std::chrono::seconds(2);
  pid_t done = 0;
  while ((done = waitpid(pid, &wait_status, WNOHANG)) == 0 && Clock::now() < grace_end) {
    usleep(10'000);
  }
  kill(-pid, SIGKILL);
  if (done == 0) waitpid(pid, &wait_status, 0);
  return wait_status;
}

}  // namespace

std::string CommandOutput::DescribeEnd() const {
  if (term_signal != 0) {
    return fmt::format("killed by signal {} ({})", term_signal, strsignal(term_signal));
  }
  return fmt::format("exit status {}", exit_code);
}

std::vector<Result<CommandOutput>> CommandRunner::RunAll(const std::vector<Command>& commands) {
  std::vector<Result<CommandOutput>> results(commands.size(), InternalError("not run"));
  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < commands.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = Run(commands[i]); });
  }
  if (!commands.empty()) results[0] = Run(commands[0]);
  for (auto& t : threads) t.join();
  return results;
}

Result<CommandOutput> LocalCommandRunner::Run(const Command& command) {
  if (command.argv.empty() || command.argv[0].empty()) {
    return InvalidArgumentError("no program given to run");
  }
  const std::string& program = command.argv[0];
  // append(), not " " + string: GCC 12 at -O3 reports a false -Wrestrict
  // inside the latter (GCC bug 105651).
  std::string traced = "exec " + ShellQuote(program);
  if (command.argv.size() > 1) traced.append(" ").append(ShellQuote(command.argv[1]));
  trace::Span span(std::move(traced), trace::Cost::kLocalProcess);

  const auto started = Clock::now();
  auto process = Spawn({.argv = command.argv,
                        .env = EnvironmentWith(command.env_set, command.env_unset),
                        .cwd = command.cwd,
                        .stdin_piped = command.stdin_data.has_value()});
  if (!process.ok()) return process.status();

  const Clock::time_point deadline =
      command.timeout.count() > 0 ? started + command.timeout : kNoDeadline;
  CommandOutput result;
  bool timed_out = !Pump(command, deadline, *process, result);
  const int wait_status = Reap(process->pid, deadline, timed_out);
  result.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started);
  if (WIFSIGNALED(wait_status)) {
    result.term_signal = WTERMSIG(wait_status);
  } else if (WIFEXITED(wait_status)) {
    result.exit_code = WEXITSTATUS(wait_status);
  }
  if (timed_out) {
    std::string message =
        fmt::format("{} did not finish within {} ms", program, command.timeout.count());
    if (std::string tail = LastLines(result.err, 400); !tail.empty()) {
      message += "; it said: " + tail;
    }
    return DeadlineExceededError(std::move(message));
  }
  return result;
}

std::string ShellQuote(std::string_view word) {
  if (word.empty()) return "''";
  const bool safe = word.find_first_not_of(
                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                        "@%+=:,./_-") == std::string_view::npos;
  if (safe) return std::string(word);
  std::string quoted = "'";
  for (char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += '\'';
  return quoted;
}

std::string ShellJoin(const std::vector<std::string>& words) {
  std::string joined;
  for (const auto& word : words) {
    if (!joined.empty()) joined += ' ';
    joined += ShellQuote(word);
  }
  return joined;
}

}  // namespace skyslurm
