#include "broker/daemon/jobs/lifecycle.h"

#include <fmt/format.h>

#include "broker/job/sky_id.h"
#include "broker/util/acting_user.h"

namespace skyslurm::daemon {

Piece::Piece(Lifecycle& lifecycle)
    : l_(lifecycle),
      ctx_(lifecycle.ctx),
      store_(lifecycle.ctx.store),
      ws_(lifecycle.ctx.ws),
      options_(lifecycle.ctx.options),
      policy_(lifecycle.ctx.policy) {}

Lifecycle::Lifecycle(store::JobStore& store, place::Workspace& workspace, ManagerOptions options)
    : ctx(store, workspace, std::move(options)),
      folders(*this),
      copies(*this),
      placer(*this),
      dependencies(*this),
      arrays(*this),
      task_moves(*this),
      mover(*this),
      recovery(*this) {}

std::optional<std::pair<std::string, std::string>> TasksOf(const std::string& id) {
  const auto at = id.find('_');
  if (at == std::string::npos || id.find(':') != std::string::npos ||
      !LooksLikeSkyId(id.substr(0, at))) {
    return std::nullopt;
  }
  return std::pair{id.substr(0, at), id.substr(at + 1)};
}

Result<store::SkyJob> Lifecycle::Find(const std::string& given) {
  SKY_ASSIGN_OR_RETURN(store::SkyJob job, FindAny(given));
  // A site's user is told of their own jobs only; another's is as unknown
  // to them as one never made (util/acting_user.h).
  if (!MaySee(job.owner)) {
    return NotFoundError(fmt::format("{} is not a job skyslurm tracks", given));
  }
  return job;
}

Result<store::SkyJob> Lifecycle::FindAny(const std::string& given) {
  const std::string id = ctx.ResolveGlobalId(given);
  if (auto tasks = TasksOf(id)) {
    // The part that runs them (one part: the tasks of one cluster's job).
    SKY_ASSIGN_OR_RETURN(std::vector<Arrays::TaskSelection> selected,
                         arrays.SelectTasks(tasks->first, tasks->second));
    if (selected.size() != 1) {
      return InvalidArgumentError(
          fmt::format("{}: those tasks run on {} clusters; name one task", id, selected.size()));
    }
    return ctx.store.Get(selected.front().part.sky_id);
  }
  if (id.find(':') == std::string::npos) return ctx.store.Get(id);
  const std::string cluster = id.substr(0, id.find(':'));
  const std::string native_id = id.substr(id.find(':') + 1);
  SKY_ASSIGN_OR_RETURN(std::vector<store::SkyJob> all, ctx.store.List(false));
  for (const auto& j : all) {
    if (j.cluster == cluster && j.native_id == native_id) return j;
  }
  for (const auto& j : all) {
    auto copies_of = ctx.store.Copies(j.sky_id);
    if (!copies_of.ok()) continue;
    for (const auto& c : *copies_of) {
      if (c.cluster == cluster && c.native_id == native_id) return j;
    }
  }
  return NotFoundError(fmt::format("{} is not a job skyslurm tracks", id));
}

}  // namespace skyslurm::daemon
