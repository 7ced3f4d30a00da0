// scontrol update of a routed job (JobManager::CarryUpdate): what the
// clusters took is carried into the input every later copy is submitted
// from, or binds the job to its cluster (job/job_update.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "broker/daemon/jobs/job_manager.h"
#include "broker/daemon/jobs/lifecycle.h"
#include "broker/job/job_update.h"

namespace skyslurm::daemon {

void JobManager::CarryUpdate(const std::string& sky_id,
                             const std::vector<std::string>& update_words,
                             const std::set<std::string>& done) {
  const job::JobUpdate update = job::TranslateJobUpdate(update_words);
  if (update.empty()) return;
  store::JobStore& db = l_->ctx.store;
  auto whole = db.Get(sky_id);
  if (!whole.ok()) return;
  const std::string typed = fmt::format("scontrol update {}", fmt::join(update_words, " "));
  auto carry = [&](store::SkyJob& job, const job::JobUpdate& u, const std::string& bind_to) {
    auto input = JobInputFromText(job.input_json);
    if (!input.ok()) return;
    input->args = job::ApplyJobUpdate(input->args, u, bind_to);
    job.input_json = JobInputText(*input);
    std::string detail = typed;
    if (!u.options.empty()) {
      detail += fmt::format(": its later copies are submitted with {}", fmt::join(u.options, " "));
    }
    if (!bind_to.empty()) {
      detail +=
          fmt::format("{} {} is {}'s own, so it stays there (--sky-infra={})",
                      u.options.empty() ? ":" : ";", fmt::join(u.binding, " "), bind_to, bind_to);
    }
    (void)l_->ctx.Record(job, EventKind::kUpdated, detail, job.cluster, job.native_id);
  };
  auto parts = db.Parts(sky_id).value_or({});
  if (parts.empty()) {
    if (store::IsFinalState(whole->state) || !done.contains(whole->cluster)) return;
    carry(*whole, update, update.binding.empty() ? "" : whole->cluster);
    return;
  }
  // A spread array: each part as a job; the whole (its pending tasks that
  // move are submitted from its input) takes what means the same anywhere.
  bool any = false;
  for (auto& part : parts) {
    if (store::IsFinalState(part.state) || !done.contains(part.cluster)) continue;
    carry(part, update, update.binding.empty() ? "" : part.cluster);
    any = true;
  }
  job::JobUpdate portable = update;
  portable.binding.clear();
  if (any && !portable.empty()) carry(*whole, portable, "");
}

}  // namespace skyslurm::daemon
