// A job's folder travels before its submission: measured against
// sync_limit (nothing sent when it is over), then copied with rsync under
// the submission's intent. A crash during the copy leaves the intent open;
// its settling finds no job there, and the next submission copies again,
// sending only what did not arrive: one job, with every file.
#include "broker/daemon/jobs/folders.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "broker/config/settings.h"
#include "broker/daemon/jobs/lifecycle.h"
#include "broker/job/request.h"
#include "broker/place/job_folder.h"
#include "broker/sync/folder_pack.h"
#include "broker/sync/rsync.h"
#include "broker/util/trace.h"

namespace skyslurm::daemon {
namespace {

CommandRunner& RunnerOf(CommandRunner* given) {
  static LocalCommandRunner local;
  return given != nullptr ? *given : local;
}

}  // namespace

Status Folders::CheckSize(const sync::WorkdirPlan& plan, const std::string& cluster) {
  trace::Span span("measure " + sync::Tilde(plan.source, ws_.config.paths.home));
  return place::FolderFits(RunnerOf(options_.copy_runner), ws_, plan, cluster,
                           options_.copy_timeout);
}

Result<std::string> Folders::Copy(store::SkyJob& job, const sync::WorkdirPlan& plan,
                                  const std::string& cluster) {
  SKY_ASSIGN_OR_RETURN(sync::RsyncRemote remote, place::RemoteOf(ws_, cluster));
  std::counting_semaphore<kCopiesPerCluster>* slots = nullptr;
  {
    std::lock_guard lock(copy_slots_mu_);
    auto& s = copy_slots_[cluster];
    if (!s) s = std::make_unique<std::counting_semaphore<kCopiesPerCluster>>(kCopiesPerCluster);
    slots = s.get();
  }
  const std::string shown = sync::Tilde(plan.source, ws_.config.paths.home);
  const std::string doing = fmt::format("copying {} to {}", shown, cluster);
  auto say = [&](const std::string& what) { ctx_.SetActivity(job.sky_id, what); };
  say(doing + " (waiting for a turn)");
  slots->acquire();
  say(doing);
  auto copied = [&] {
    trace::Span span(fmt::format("copy {} to {}:{}", shown, cluster, plan.dest));
    return sync::Push(
        RunnerOf(options_.copy_runner), remote, plan.source, plan.dest, options_.copy_timeout,
        [&](int percent) { say(fmt::format("{}: {}%", doing, percent)); },
        plan.mode == sync::WorkdirMode::kPerJob);
  }();
  slots->release();
  say("");
  if (!copied.ok()) return copied.status();
  const std::string what =
      fmt::format("{} to {}:{}: {}", shown, cluster, plan.dest, sync::DescribeStats(*copied));
  SKY_RETURN_IF_ERROR(Record(job, EventKind::kCopied, what, cluster));
  return sync::DescribeStats(*copied);
}

Result<std::string> Folders::Pack(store::SkyJob& job, const sync::WorkdirPlan& plan,
                                  const std::string& cluster) {
  const std::string shown = sync::Tilde(plan.source, ws_.config.paths.home);
  trace::Span span(fmt::format("pack {} for {}", shown, cluster));
  SKY_ASSIGN_OR_RETURN(std::string packed,
                       place::PackJobFolder(RunnerOf(options_.copy_runner), ws_, plan, cluster,
                                            options_.copy_timeout));
  SKY_RETURN_IF_ERROR(
      Record(job, EventKind::kCopied,
             fmt::format("{} packed into the job for {}: {} (unpacked into {} in "
                         "each pod)",
                         shown, cluster, config::DescribeBytes(packed.size()), sync::kPodFolder),
             cluster));
  return packed;
}

std::pair<std::string, std::string> Folders::CopiedFolder(const store::SkyJob& job,
                                                          const std::string& cluster) {
  auto parsed = ctx_.parsed.Of(job);
  const place::ClusterHandle* target = ws_.Find(cluster);
  if (!parsed.ok() || target == nullptr) return {};
  const sync::WorkdirPlan folder =
      place::PlanJobFolder(ws_, *target, (*parsed)->request, job.sky_id, (*parsed)->input.cwd);
  if (!folder.copy) return {};
  return {folder.dest, folder.source};
}

void Folders::FetchBack(store::SkyJob& job) {
  auto parsed = ctx_.parsed.Of(job);
  if (!parsed.ok()) return;
  const JobInput* input = &(*parsed)->input;
  const std::vector<std::string>& patterns = (*parsed)->request.sky.sync_back;
  if (std::ranges::find(patterns, "none") != patterns.end()) return;
  // A program that read sbatch's answer (a workflow engine) looks for the
  // job's outputs where it submitted it, as it would on one cluster: what
  // the job wrote comes back unless patterns say what (sync_back: the
  // submitter's SKYSLURM_SYNC_BACK, else the configuration's).
  config::SyncBack mode = ws_.config.settings.sync_back;
  if (auto e = input->env.find("SKYSLURM_SYNC_BACK"); e != input->env.end()) {
    if (auto asked = config::ParseSyncBack(e->second); asked.ok()) mode = *asked;
  }
  const bool written =
      patterns.empty() && (mode == config::SyncBack::kAlways ||
                           (mode == config::SyncBack::kAuto && input->at_terminal == false));
  if (patterns.empty() && !written) return;
  auto copies = store_.Copies(job.sky_id);
  if (!copies.ok()) return;
  const store::Copy* copy = nullptr;
  for (const auto& c : *copies) {
    if (c.cluster == job.cluster && c.native_id == job.native_id) copy = &c;
  }
  // Home, or a shared filesystem: the files are where the job ran.
  if (copy == nullptr || copy->workdir.empty() || copy->source.empty()) return;
  const std::string what = written ? "what it wrote" : fmt::format("{}", fmt::join(patterns, " "));
  auto remote = place::RemoteOf(ws_, job.cluster);
  Result<sync::RsyncStats> got = remote.status();
  bool same_folder = false;
  if (remote.ok()) {
    trace::Span span(fmt::format("fetch {} from {}:{}", what, job.cluster, copy->workdir));
    CommandRunner& runner = RunnerOf(options_.copy_runner);
    // A copy adopted after a crash has no time it was sent: all of the
    // folder comes back (files newer here are kept).
    got = written && copy->sent_ns != 0
              ? sync::PullChanged(runner, *remote, copy->workdir, copy->source, copy->sent_ns,
                                  options_.copy_timeout, &same_folder)
              : sync::Pull(runner, *remote, copy->workdir, copy->source, patterns,
                           options_.copy_timeout);
  }
  const std::string into = sync::Tilde(copy->source, ws_.config.paths.home);
  if (same_folder) {
    (void)Record(job, EventKind::kFetched,
                 fmt::format("nothing to fetch: {}:{} is {} (a filesystem both mount; shared_fs "
                             "naming them spares the copy too)",
                             job.cluster, copy->workdir, into),
                 job.cluster, job.native_id);
    return;
  }
  (void)Record(job, EventKind::kFetched,
               got.ok() ? fmt::format("{} from {}:{} into {}: {}", what, job.cluster, copy->workdir,
                                      into, sync::DescribeStats(*got, true))
                        : fmt::format("{} could not be fetched into {}: {}", what, into,
                                      got.status().message()),
               job.cluster, job.native_id);
}

}  // namespace skyslurm::daemon
