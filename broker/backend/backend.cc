#include "broker/backend/backend.h"

#include <fmt/format.h>

#include <utility>

#include "broker/backend/array_tasks.h"
#include "broker/util/deadline.h"

namespace skyslurm::backend {

Result<std::vector<JobInfo>> Backend::Jobs(std::chrono::milliseconds timeout) {
  SKY_ASSIGN_OR_RETURN(std::vector<JobInfo> all, Queue(timeout));
  std::erase_if(all, [](const JobInfo& j) { return j.sky_id.empty(); });
  return FoldArrayTasks(std::move(all));
}

EstimatedSubmission Backend::EstimateThenSubmit(const SubmitSpec& spec,
                                                std::chrono::milliseconds timeout) {
  const Deadline deadline(timeout);
  EstimatedSubmission both;
  both.estimate = EstimateStart(spec.job, timeout);
  both.key = Submit(spec, deadline.left());
  return both;
}

CheckAnswer Backend::Check(std::chrono::milliseconds timeout) {
  CheckAnswer answer;
  auto probe = Probe(timeout);
  if (!probe.ok()) {
    answer.verdict = "no answer";
    answer.detail = probe.status().message();
    return answer;
  }
  std::size_t usable = 0, bootable = 0;
  for (const auto& n : probe->description.nodes) {
    if (n.usable()) ++usable;
    if (n.bootable()) ++bootable;
  }
  answer.detail =
      fmt::format("{} partitions, {}/{} nodes usable", probe->description.partitions.size(), usable,
                  probe->description.nodes.size());
  // An elastic cluster's powered-down nodes are capacity, not a fault.
  if (bootable > 0) answer.detail += fmt::format(", {} boot on demand", bootable);
  return answer;
}

cluster::QueuedJob QueuedAsSubmitted(const SubmitSpec& spec, const JobKey& key) {
  cluster::QueuedJob q = spec.job.queued;
  q.job_id = key.job_id;
  q.comment = SkyTag(spec.sky_id);
  q.submit_time = std::time(nullptr);
  return q;
}

std::string SkyTag(const std::string& sky_id) { return "skyslurm:" + sky_id; }

std::optional<std::string> SkyIdInComment(std::string_view comment) {
  const auto at = comment.find("skyslurm:sky-");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = comment.substr(at + 9);
  const auto end = rest.find_first_of(" \t;,");
  return std::string(rest.substr(0, end));
}

Result<std::vector<cloud::NodeUse>> Backend::NodeUses(std::time_t /*since*/,
                                                      std::chrono::milliseconds /*timeout*/) {
  return UnimplementedError(
      fmt::format("{} ({}) keeps no accounting skyslurm reads", name(), capabilities().kind));
}

Result<Backend::OutputPart> Backend::OutputFrom(const std::string& job_id, std::uint64_t offset,
                                                std::size_t max_bytes,
                                                std::chrono::milliseconds timeout) {
  SKY_ASSIGN_OR_RETURN(std::string whole, Output(job_id, timeout));
  OutputPart part;
  part.size = whole.size();
  if (offset < whole.size()) part.bytes = whole.substr(offset, max_bytes);
  return part;
}

}  // namespace skyslurm::backend
