#include "broker/util/acting_user.h"

#include <utility>

namespace skyslurm {
namespace {

thread_local std::optional<Viewer> t_viewer;
thread_local std::string t_acting;

}  // namespace

const std::optional<Viewer>& CurrentViewer() { return t_viewer; }

bool MaySee(const std::string& owner) {
  return !t_viewer || t_viewer->admin || t_viewer->name == owner;
}

const std::string& ActingUser() { return t_acting; }

ViewerScope::ViewerScope(std::optional<Viewer> viewer) : before_(std::move(t_viewer)) {
  t_viewer = std::move(viewer);
}
ViewerScope::~ViewerScope() { t_viewer = std::move(before_); }

ActingFor::ActingFor(std::string user) : before_(std::move(t_acting)) {
  t_acting = std::move(user);
}
ActingFor::~ActingFor() { t_acting = std::move(before_); }

WorkingFor WorkingFor::Current() { return {t_viewer, t_acting}; }

void SetWorkingFor(WorkingFor w) {
  t_viewer = std::move(w.viewer);
  t_acting = std::move(w.acting);
}

}  // namespace skyslurm
