#include "broker/backend/slurm/local_rest.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "broker/util/scoped_sigpipe_block.h"
#include "broker/util/spawn.h"
#include "broker/util/trace.h"

namespace skyslurm::backend {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {
// The start of the error of a kept process that had ended before it read
// the request (nothing sent).
constexpr std::string_view kGoneUnread = "slurmrestd ended before reading the request";
}  // namespace

struct LocalRest::Process {
  pid_t pid = -1;
  int in = -1;   // its stdin
  int out = -1;  // its stdout
  int err = -1;  // its stderr: a line or two per request, drained as it comes
  std::string buffer;
  std::string err_tail;
  int served = 0;

  ~Process() {
    for (int fd : {in, out, err}) {
      if (fd >= 0) ::close(fd);
    }
    if (pid <= 0) return;
    // Its stdin closed, it ends at once; one that does not is killed.
    for (int i = 0; i < 20; ++i) {
      if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  void KeepErr(std::string_view more) {
    err_tail.append(more);
    if (err_tail.size() > 4096) err_tail.erase(0, err_tail.size() - 4096);
  }
  // Its last line on stderr ("slurmrestd: fatal: ..."), for a message.
  std::string LastErrLine() const {
    std::string_view v(err_tail);
    while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.remove_suffix(1);
    const auto nl = v.rfind('\n');
    if (nl != std::string_view::npos) v.remove_prefix(nl + 1);
    return std::string(v);
  }
};

std::string LocalRest::FindProgram(const std::string& bin_dir) {
  std::vector<std::string> candidates;
  if (!bin_dir.empty()) candidates.push_back(bin_dir + "/../sbin/slurmrestd");
  candidates.push_back("/usr/sbin/slurmrestd");
  candidates.push_back("/usr/local/sbin/slurmrestd");
  std::error_code ec;
  for (const std::string& c : candidates) {
    if (fs::exists(c, ec)) return fs::weakly_canonical(c, ec).string();
  }
  return "slurmrestd";  // PATH; not found, the first request says so
}

LocalRest::LocalRest(std::string slurm_conf, std::string program, std::size_t processes)
    : slurm_conf_(std::move(slurm_conf)),
      program_(program.empty() ? FindProgram("") : std::move(program)),
      max_processes_(std::max<std::size_t>(1, processes)) {}

LocalRest::~LocalRest() {
  std::lock_guard lock(mu_);
  idle_.clear();  // each closes its stdin and is reaped
}

bool LocalRest::unavailable() const {
  std::lock_guard lock(mu_);
  return unavailable_.has_value();
}

Result<std::unique_ptr<LocalRest::Process>> LocalRest::Start() {
  std::vector<std::pair<std::string, std::string>> env;
  if (!slurm_conf_.empty()) env.emplace_back("SLURM_CONF", slurm_conf_);
  auto spawned = Spawn({.argv = {program_, "-a", "rest_auth/local"}, .env = EnvironmentWith(env)});
  if (!spawned.ok()) {
    // Only a program that cannot be started makes slurmrestd unavailable
    // for good; no pipes (descriptors short for a moment) is this request's.
    if (!spawned.status().message().starts_with("cannot run ")) return spawned.status();
    return UnavailableError(std::string(spawned.status().message()));
  }
  auto p = std::make_unique<Process>();
  p->pid = spawned->pid;
  p->in = spawned->in.Release();
  p->out = spawned->out.Release();
  p->err = spawned->err.Release();
  return p;
}

std::optional<std::unique_ptr<LocalRest::Process>> LocalRest::Take(Clock::time_point deadline) {
  std::unique_lock lock(mu_);
  if (!freed_.wait_until(lock, deadline,
                         [&] { return !idle_.empty() || running_ < max_processes_; })) {
    return std::nullopt;
  }
  if (!idle_.empty()) {
    auto p = std::move(idle_.back());
    idle_.pop_back();
    return p;
  }
  ++running_;  // one to start
  return std::unique_ptr<Process>();
}

void LocalRest::Give(std::unique_ptr<Process> p) {
  {
    std::lock_guard lock(mu_);
    if (p) {
      idle_.push_back(std::move(p));
    } else {
      --running_;
    }
  }
  freed_.notify_one();
}

Result<ssh::HttpAnswer> LocalRest::Request(std::string_view method, std::string_view path,
                                           std::string_view body,
                                           std::chrono::milliseconds timeout) {
  trace::Span span(fmt::format("slurmrestd (local): {} {}", method, path), trace::Cost::kRestCall);
  const auto deadline = Clock::now() + timeout;
  auto answer = Exchange(method, path, body, deadline);
  if (answer.ok() || !answer.status().message().starts_with(kGoneUnread)) return answer;
  // A process kept idle had ended (killed, or crashed) and never read the
  // request: asked once more, of a new one.
  return Exchange(method, path, body, deadline);
}

Result<ssh::HttpAnswer> LocalRest::Exchange(std::string_view method, std::string_view path,
                                            std::string_view body, Clock::time_point deadline) {
  const auto timeout =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  {
    std::lock_guard lock(mu_);
    if (unavailable_) return *unavailable_;
  }
  auto taken = Take(deadline);
  if (!taken) {
    return DeadlineExceededError(
        fmt::format("slurmrestd: all {} busy for {} ms", max_processes_, timeout.count()));
  }
  std::unique_ptr<Process> p = std::move(*taken);
  const bool fresh = p == nullptr;
  if (fresh) {
    auto started = Start();
    if (!started.ok()) {
      {
        std::lock_guard lock(mu_);
        if (started.status().code() == StatusCode::kUnavailable) unavailable_ = started.status();
      }
      Give(nullptr);
      return started.status();
    }
    p = std::move(*started);
  }
  // Whatever ends this request other than an answer that keeps the process
  // ends the process too (its state is not known).
  auto drop = [&](Status why) -> Result<ssh::HttpAnswer> {
    p.reset();
    Give(nullptr);
    return why;
  };
  const std::string request = ssh::HttpRequestText(method, path, body);
  std::size_t written = 0;
  std::array<char, 65536> chunk;
  while (true) {
    if (auto answer = ssh::TakeHttpAnswer(p->buffer); !answer.ok()) {
      return drop(answer.status());
    } else if (answer->has_value()) {
      ssh::HttpAnswer a = std::move(**answer);
      ++p->served;
      p->err_tail.clear();
      if (a.close) {
        // It ends after an error answer: the next request starts another.
        p.reset();
        Give(nullptr);
      } else {
        Give(std::move(p));
      }
      return a;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      return drop(DeadlineExceededError(
          fmt::format("slurmrestd gave no answer within {} ms", timeout.count())));
    }
    std::array<pollfd, 3> fds{
        pollfd{.fd = p->out, .events = POLLIN, .revents = 0},
        pollfd{.fd = p->err, .events = POLLIN, .revents = 0},
        pollfd{.fd = written < request.size() ? p->in : -1, .events = POLLOUT, .revents = 0}};
    if (::poll(fds.data(), fds.size(), static_cast<int>(left.count())) < 0) {
      if (errno == EINTR) continue;
      return drop(InternalError(fmt::format("poll: {}", std::strerror(errno))));
    }
    if (fds[2].revents != 0) {
      ScopedSigpipeBlock no_sigpipe;
      const ssize_t n = ::write(p->in, request.data() + written, request.size() - written);
      if (n > 0) written += static_cast<std::size_t>(n);
      if (n < 0 && errno != EAGAIN && errno != EINTR) fds[0].revents |= POLLHUP;  // gone
    }
    if (fds[1].revents != 0) {
      const ssize_t n = ::read(p->err, chunk.data(), chunk.size());
      if (n > 0) p->KeepErr(std::string_view(chunk.data(), static_cast<std::size_t>(n)));
    }
    if ((fds[0].revents & POLLIN) != 0) {
      const ssize_t n = ::read(p->out, chunk.data(), chunk.size());
      if (n > 0) {
        p->buffer.append(chunk.data(), static_cast<std::size_t>(n));
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      fds[0].revents |= POLLHUP;
    }
    if ((fds[0].revents & (POLLHUP | POLLERR)) != 0) {
      // Ended. Its stderr's last words (a fatal error) are read first.
      for (int i = 0; i < 10; ++i) {
        const ssize_t n = ::read(p->err, chunk.data(), chunk.size());
        if (n <= 0) break;
        p->KeepErr(std::string_view(chunk.data(), static_cast<std::size_t>(n)));
      }
      // slurmrestd logs each request it routes ("operations_router: ...").
      const bool read_it = p->err_tail.find("operations_router") != std::string::npos;
      if (fresh && p->buffer.empty() && !read_it) {
        std::string said = p->LastErrLine();
        Status cannot = UnavailableError(fmt::format("{} cannot run here: {}", program_,
                                                     said.empty() ? "it exited at once" : said));
        {
          std::lock_guard lock(mu_);
          unavailable_ = cannot;
        }
        return drop(cannot);
      }
      if (!fresh && p->buffer.empty() && !read_it) {
        return drop(UnavailableError(fmt::format("{} (idle, it had ended)", kGoneUnread)));
      }
      return drop(UnavailableError(
          fmt::format("slurmrestd ended before it answered{}",
                      p->LastErrLine().empty() ? std::string() : ": " + p->LastErrLine())));
    }
  }
}

}  // namespace skyslurm::backend
