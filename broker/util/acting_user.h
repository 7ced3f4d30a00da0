// Whom a thread works for. A user's own skyslurmd works for its user only and
// never sets these. A site's skyslurmd serves many users: each request is
// answered for the user MUNGE named (the viewer: what they may see), and
// each job is acted on as its owner (the acting user: whose uid Slurm's
// commands run with, site/run_as_runner.h). Both are set by scopes on the
// thread that does the work and carried to the threads it starts for it
// (place/planner.cc), as the trace is.
#pragma once

#include <optional>
#include <string>

namespace skyslurm {

// The user a request is answered for.
struct Viewer {
  std::string name;    // their login name, as jobs' owners are recorded
  bool admin = false;  // a member of the site's admin group: sees every job
};

// The viewer of this thread's request; nullopt: no one in particular (a
// user's own daemon, the daemon's own look at the queues), who sees all.
const std::optional<Viewer>& CurrentViewer();
// Whether the current viewer may see and act on a job owned by `owner`.
bool MaySee(const std::string& owner);

// The user whose uid this thread's commands run with ("" = the process's own).
const std::string& ActingUser();

// Sets the viewer for the scope's life on this thread, then restores the one before.
class ViewerScope {
 public:
  explicit ViewerScope(std::optional<Viewer> viewer);
  ~ViewerScope();
  ViewerScope(const ViewerScope&) = delete;
  ViewerScope& operator=(const ViewerScope&) = delete;

 private:
  std::optional<Viewer> before_;
};

// Sets the acting user for the scope's life on this thread ("" = none),
// then restores the one before.
class ActingFor {
 public:
  explicit ActingFor(std::string user);
  ~ActingFor();
  ActingFor(const ActingFor&) = delete;
  ActingFor& operator=(const ActingFor&) = delete;

 private:
  std::string before_;
};

// Both, as a thread has them, to carry into a thread it starts.
struct WorkingFor {
  std::optional<Viewer> viewer;
  std::string acting;
  static WorkingFor Current();
};
// Sets both for this thread until set again: for a server whose handler
// before each request sets it and whose handler after clears it.
void SetWorkingFor(WorkingFor w);

class WorkingForScope {
 public:
  explicit WorkingForScope(const WorkingFor& w) : viewer_(w.viewer), acting_(w.acting) {}

 private:
  ViewerScope viewer_;
  ActingFor acting_;
};

}  // namespace skyslurm
