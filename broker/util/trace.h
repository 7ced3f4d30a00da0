// Spans of one routed submission (SKYSLURM_TRACE=1): what it cost, step by
// step, and how many processes, remote commands and state writes it took.
// A Trace is installed on the thread that works for a request (a client
// command, or one of skyslurmd's API threads); Span records into the trace
// of its thread and costs nothing when there is none. Threads started for
// the request (the planner's probes and estimates) adopt its trace.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace skyslurm::trace {

// What a span counts.
enum class Cost {
  kNone,
  kLocalProcess,   // a process started on this machine
  kRemoteCommand,  // a command on a login node: sshd + a shell + the program
  kAgentCommand,   // a command through a resident agent: the program only
  kRestCall,       // an HTTP request to slurmrestd: no process
  kStoreWrite,     // a SQLite transaction
  kParse,          // a job's options and script read (job::ParseRequest)
};

struct SpanRecord {
  std::string name;
  std::int64_t start_us = 0;  // since the trace began
  std::int64_t took_us = 0;
  Cost cost = Cost::kNone;
  int thread = 0;  // 0: the request's own thread
};

class Trace {
 public:
  explicit Trace(std::string where);
  // `origin`: when the trace began (a client's start, handed over).
  Trace(std::string where, std::chrono::steady_clock::time_point origin);

  void Add(SpanRecord span);
  std::vector<SpanRecord> spans() const;
  const std::string& where() const { return where_; }
  std::chrono::steady_clock::time_point origin() const { return origin_; }
  int NextThread() { return ++threads_; }

  // One line per span ("  +12.3 ms  4.5 ms  daemon  ssh gamma: sbatch"),
  // then the counts.
  std::string Render() const;
  // "2 local processes, 1 remote command (3 processes there), ...", and
  // how often a job was parsed, when it was.
  std::string Counts() const;

 private:
  std::string where_;
  std::chrono::steady_clock::time_point origin_;
  mutable std::mutex mu_;
  std::vector<SpanRecord> spans_;
  std::atomic<int> threads_{0};
};

// The trace of this thread, or null.
std::shared_ptr<Trace> Current();

// Installs `trace` on this thread for the scope (null: none). A thread the
// request started (`adopted`) numbers its spans apart.
class Install {
 public:
  explicit Install(std::shared_ptr<Trace> trace, bool adopted = false);
  ~Install();
  Install(const Install&) = delete;
  Install& operator=(const Install&) = delete;

 private:
  std::shared_ptr<Trace> previous_;
  int previous_thread_;
};

// A span from construction to destruction, in the thread's trace.
class Span {
 public:
  explicit Span(std::string name, Cost cost = Cost::kNone);
  ~Span();
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;
  // Renames the span (what it turned out to be).
  void Rename(std::string name) { name_ = std::move(name); }
  // Records nothing after all (the step did not happen here).
  void Cancel() { trace_.reset(); }

 private:
  std::shared_ptr<Trace> trace_;
  std::string name_;
  Cost cost_;
  std::chrono::steady_clock::time_point start_;
};

// Whether SKYSLURM_TRACE asks for a trace.
bool Wanted();

}  // namespace skyslurm::trace
