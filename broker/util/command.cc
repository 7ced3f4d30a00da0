#include "broker/util/command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <map>
#include <thread>

#include "broker/util/scoped_sigpipe_block.h"
#include "broker/util/trace.h"

extern char** environ;

namespace skyslurm {
namespace {

using Clock = std::chrono::steady_clock;

// A pipe whose ends are closed on destruction.
struct Pipe {
  int read_end = -1;
  int write_end = -1;
  Pipe() = default;
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    CloseRead();
    CloseWrite();
  }
  bool Open() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) return false;
    read_end = fds[0];
    write_end = fds[1];
    return true;
  }
  void CloseRead() {
    if (read_end >= 0) close(read_end);
    read_end = -1;
  }
  void CloseWrite() {
    if (write_end >= 0) close(write_end);
    write_end = -1;
  }
};

// The environment for the child: ours, with the command's changes.
std::vector<std::string> BuildEnvironment(const Command& command) {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry(*e);
    auto eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    env.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
  }
  for (const auto& name : command.env_unset) env.erase(name);
  for (const auto& [name, value] : command.env_set) env[name] = value;
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

std::string LastLines(const std::string& text, std::size_t max_chars) {
  std::string_view view(text);
  while (!view.empty() && (view.back() == '\n' || view.back() == ' ')) view.remove_suffix(1);
  if (view.size() > max_chars) view = view.substr(view.size() - max_chars);
  return std::string(view);
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

  Pipe in, out, err;
  if (!in.Open() || !out.Open() || !err.Open()) {
    return InternalError(
        fmt::format("cannot create pipes to run {}: {}", program, std::strerror(errno)));
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (command.stdin_data.has_value()) {
    posix_spawn_file_actions_adddup2(&actions, in.read_end, STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out.write_end, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write_end, STDERR_FILENO);
  // Nothing of ours leaks into the program (an SSH socket, a database).
  posix_spawn_file_actions_addclosefrom_np(&actions, STDERR_FILENO + 1);
  if (!command.cwd.empty()) {
    posix_spawn_file_actions_addchdir_np(&actions, command.cwd.c_str());
  }

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, so a timeout kills what it started too; a clean
  // signal mask and default dispositions, whatever this process has blocked
  // or ignored (a program that inherits a blocked SIGTERM never stops).
  sigset_t no_signals, all_signals;
  sigemptyset(&no_signals);
  sigfillset(&all_signals);
  posix_spawnattr_setsigmask(&attr, &no_signals);
  posix_spawnattr_setsigdefault(&attr, &all_signals);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> env = BuildEnvironment(command);
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = command.argv;
  std::vector<char*> argvp;
  argvp.reserve(args.size() + 1);
  for (auto& a : args) argvp.push_back(a.data());
  argvp.push_back(nullptr);

  const auto started = Clock::now();
  pid_t pid = -1;
  const int spawn_error =
      posix_spawnp(&pid, program.c_str(), &actions, &attr, argvp.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawn_error != 0) {
    std::string why = fmt::format("cannot run {}: {}", program, std::strerror(spawn_error));
    if (spawn_error == ENOENT) return NotFoundError(std::move(why));
    if (spawn_error == EACCES) return PermissionDeniedError(std::move(why));
    return InternalError(std::move(why));
  }
  in.CloseRead();
  out.CloseWrite();
  err.CloseWrite();

  CommandOutput result;
  std::string_view to_write;
  if (command.stdin_data.has_value()) {
    to_write = *command.stdin_data;
    SetNonBlocking(in.write_end);
  }
  if (to_write.empty()) in.CloseWrite();
  SetNonBlocking(out.read_end);
  SetNonBlocking(err.read_end);

  const bool has_deadline = command.timeout.count() > 0;
  const auto deadline = started + command.timeout;
  bool timed_out = false;
  std::array<char, 65536> buffer{};
  ScopedSigpipeBlock sigpipe_guard;

  while (out.read_end >= 0 || err.read_end >= 0) {
    std::array<pollfd, 3> fds{};
    nfds_t count = 0;
    int out_index = -1, err_index = -1, in_index = -1;
    if (out.read_end >= 0) {
      out_index = static_cast<int>(count);
      fds[count++] = {out.read_end, POLLIN, 0};
    }
    if (err.read_end >= 0) {
      err_index = static_cast<int>(count);
      fds[count++] = {err.read_end, POLLIN, 0};
    }
    if (in.write_end >= 0) {
      in_index = static_cast<int>(count);
      fds[count++] = {in.write_end, POLLOUT, 0};
    }
    int wait_ms = -1;
    if (has_deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left.count() + 1, 60'000));
    }
    const int ready = poll(fds.data(), count, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto drain = [&](int index, Pipe& pipe, std::string& sink) {
      if (index < 0 || fds[static_cast<std::size_t>(index)].revents == 0) return;
      const ssize_t n = read(pipe.read_end, buffer.data(), buffer.size());
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
        pipe.CloseRead();
      }
    };
    drain(out_index, out, result.out);
    drain(err_index, err, result.err);
    if (in_index >= 0 && fds[static_cast<std::size_t>(in_index)].revents != 0) {
      const ssize_t n = write(in.write_end, to_write.data(), to_write.size());
      if (n > 0) {
        to_write.remove_prefix(static_cast<std::size_t>(n));
        if (to_write.empty()) in.CloseWrite();
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        in.CloseWrite();  // the program stopped reading (EPIPE): not our error
      }
    }
  }
  in.CloseWrite();

  int wait_status = 0;
  bool reaped = false;
  while (!timed_out) {
    // Output closed; the program is normally gone already, but one may close
    // its streams and go on running: the deadline still holds.
    const pid_t done = waitpid(pid, &wait_status, has_deadline ? WNOHANG : 0);
    if (done == pid) {
      reaped = true;
      break;
    }
    if (done < 0 && errno != EINTR) break;
    if (has_deadline && Clock::now() >= deadline) {
      timed_out = true;
    } else if (done == 0) {
      usleep(1'000);
    }
  }
  if (timed_out && !reaped) {
    // The whole process group: the program and anything it started.
    kill(-pid, SIGTERM);
    const auto grace_end = Clock::now() + std::chrono::seconds(2);
    pid_t done = 0;
    while ((done = waitpid(pid, &wait_status, WNOHANG)) == 0 && Clock::now() < grace_end) {
      usleep(10'000);
    }
    kill(-pid, SIGKILL);
    if (done == 0) waitpid(pid, &wait_status, 0);
  }
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
