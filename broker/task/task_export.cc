#include "broker/task/task_export.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>

#include "broker/job/container_image.h"
#include "broker/task/task_script.h"
#include "broker/util/strings.h"

namespace skyslurm::task {
namespace {

// A YAML scalar: plain when YAML reads it back as the same string.
std::string YamlScalar(std::string_view text) {
  const bool plain =
      !text.empty() && text.find_first_of("#{}[],&*!|>'\"%@`\n") == std::string_view::npos &&
      text.find(": ") == std::string_view::npos && text.front() != ':' && text.back() != ':' &&
      text.front() != '-' && text.front() != ' ' && text.back() != ' ' && Lower(text) != "true" &&
      Lower(text) != "false" && Lower(text) != "null" && Lower(text) != "yes" &&
      Lower(text) != "no" && text != "~";
  if (plain) return std::string(text);
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// A block of text under `key: |`.
std::string Block(std::string_view key, std::string_view text) {
  std::string out = fmt::format("{}: |\n", key);
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    out += line.empty() ? "\n" : "  " + line + "\n";
  }
  return out;
}

// The script without its first line (#!) and its #SBATCH lines, and
// without the blank lines that leaves at its start.
std::string Body(const std::string& script) {
  std::istringstream lines(script);
  std::string body;
  bool first = true;
  for (std::string line; std::getline(lines, line);) {
    const bool shebang = first && line.starts_with("#!");
    first = false;
    if (shebang || Trim(line).starts_with("#SBATCH")) continue;
    if (body.empty() && Trim(line).empty()) continue;
    body += line + "\n";
  }
  while (body.ends_with("\n\n")) body.pop_back();
  return body;
}

// The image: --sky-image, else pyxis' --container-image (as a registry
// names it). Slurm's own --container is an OCI bundle's folder: no image.
std::optional<std::string> TaskImage(const job::Request& r, std::vector<std::string>& not_carried) {
  std::optional<std::string> image = r.sky.image;
  const job::Setting* pyxis = r.EffectiveByName("container-image");
  if (!image && pyxis != nullptr && pyxis->occurrence.value) {
    auto reference = job::ImageReferenceOf(*pyxis->occurrence.value);
    if (reference.ok()) {
      image = *reference;
    } else {
      not_carried.push_back(fmt::format("--container-image: {}", reference.status().message()));
    }
  }
  if (r.container) {
    not_carried.push_back(fmt::format(
        "--container={}: an OCI bundle's folder is no image a task names", *r.container));
  }
  return image;
}

}  // namespace

Result<ExportedTask> ExportTask(const job::Request& r, const std::vector<SiteCluster>& site) {
  ExportedTask out;
  auto cannot = [&](const std::string& why) {
    return InvalidArgumentError(
        fmt::format("{} cannot be expressed as a SkyPilot task: {}", r.script_name, why));
  };
  if (r.array) return cannot(fmt::format("--array={}: a task runs once", *r.array));
  if (r.hetjob) return cannot("a heterogeneous job: a task's nodes are all alike");
  if (r.wrap) return cannot("--wrap: give the command in a script");
  const std::int64_t nodes = r.nodes ? r.nodes->min : 1;
  if (r.nodes && r.nodes->max != r.nodes->min) {
    return cannot(
        fmt::format("--nodes={}-{}: a task has one number of nodes", r.nodes->min, r.nodes->max));
  }
  std::string gpus;
  for (const auto& g : r.gpus) {
    if (g.type.empty()) {
      return cannot(fmt::format("GPUs of no type ({}): a task's accelerators name one (H100:8)",
                                g.origin.Describe(r.script_name)));
    }
    std::int64_t per_node = g.count;
    if (g.scope == job::GpuAsk::Scope::kPerJob) {
      if (nodes != 1 || g.count <= 0) {
        return cannot("GPUs per job over several nodes: a task asks for GPUs per node");
      }
    } else if (g.scope != job::GpuAsk::Scope::kPerNode) {
      return cannot(
          fmt::format("GPUs per {}: a task asks for GPUs per node", job::ScopeName(g.scope)));
    }
    if (!gpus.empty()) return cannot("GPUs of two kinds at once: a task asks for one kind");
    gpus = fmt::format("{}:{}", g.type, per_node);
  }
  // CPUs and memory per node, as a task counts them.
  const std::int64_t tasks_per_node =
      r.ntasks_per_node.value_or(r.ntasks ? std::max<std::int64_t>(1, *r.ntasks / nodes) : 1);
  std::optional<std::int64_t> cpus;
  if (r.cpus_per_task) cpus = *r.cpus_per_task * tasks_per_node;
  std::optional<std::int64_t> memory_gb;
  auto gb = [](std::int64_t mb) { return (mb + 1023) / 1024; };
  if (r.mem_mb && *r.mem_mb > 0) {
    memory_gb = gb(*r.mem_mb);
    if (*r.mem_mb % 1024 != 0) {
      out.not_carried.push_back(
          fmt::format("--mem={}M: a task counts memory in GB, so {}G", *r.mem_mb, *memory_gb));
    }
  } else if (r.mem_per_cpu_mb) {
    memory_gb = gb(*r.mem_per_cpu_mb * cpus.value_or(1));
    out.not_carried.push_back(
        fmt::format("--mem-per-cpu: a task asks for memory per node ({}G)", *memory_gb));
  }
  // Where: a cluster (and partition) the script pins.
  auto infra_of = [&](const std::string& cluster) {
    const auto it =
        std::ranges::find_if(site, [&](const SiteCluster& c) { return c.name == cluster; });
    if (it == site.end()) return "slurm/" + cluster;  // not configured here
    if (it->cloud == "k8s") return "k8s/" + (it->context.empty() ? it->name : it->context);
    // A kind SkyPilot has no name for: the cluster's name alone reaches it.
    return it->cloud.empty() ? cluster : it->cloud + "/" + cluster;
  };
  std::optional<std::string> infra;
  if (r.sky.infra) {
    infra = infra_of(*r.sky.infra);
    if (r.partitions.size() == 1 && infra->starts_with("slurm/")) *infra += "/" + r.partitions[0];
  } else if (r.sky.clusters.size() == 1) {
    infra = infra_of(r.sky.clusters[0]);
  }
  if (!r.partitions.empty() &&
      !(infra && infra->starts_with("slurm/") && r.sky.infra && r.partitions.size() == 1)) {
    out.not_carried.push_back(
        fmt::format("--partition={}: a task names a partition with its cluster "
                    "(infra: slurm/<cluster>/<partition>)",
                    fmt::join(r.partitions, ",")));
  }
  if (r.sky.clusters.size() > 1) {
    out.not_carried.push_back(
        fmt::format("--sky-any-cluster={}: a task's infra names one cluster or all of a kind",
                    fmt::join(r.sky.clusters, ",")));
  }
  // What no task field says.
  static const std::set<job::Opt> kCarried = {job::Opt::kJobName,     job::Opt::kNodes,
                                              job::Opt::kNtasks,      job::Opt::kNtasksPerNode,
                                              job::Opt::kCpusPerTask, job::Opt::kMem,
                                              job::Opt::kMemPerCpu,   job::Opt::kGpus,
                                              job::Opt::kGpusPerNode, job::Opt::kGres,
                                              job::Opt::kPartition,   job::Opt::kSkyAnyCluster,
                                              job::Opt::kSkyInfra,    job::Opt::kSkyManaged,
                                              job::Opt::kSkyImage,    job::Opt::kSkyRetryOnFailure,
                                              job::Opt::kSkyWorkdir,  job::Opt::kContainer,
                                              job::Opt::kExport};
  std::set<std::string> said;
  for (const auto& s : r.settings) {
    if (kCarried.contains(s.id()) || s.name() == "container-image" ||
        !said.insert(s.name()).second) {
      continue;
    }
    const auto& value = s.occurrence.value;
    out.not_carried.push_back(
        fmt::format("--{}{}: no task field says it{}", s.name(), value ? "=" + *value : "",
                    s.id() == job::Opt::kTime ? " (the partition's default limit applies)" : ""));
  }
  if (!r.script_args.empty()) {
    out.not_carried.push_back(fmt::format("the script's arguments ({}): a task's run has none",
                                          fmt::join(r.script_args, " ")));
  }
  if (nodes > 1) {
    out.not_carried.push_back(fmt::format(
        "a batch script runs once, on the first of its {} nodes, and starts its own steps; a "
        "task's run runs on every node: check that the run is meant for each",
        nodes));
  }

  std::string y = fmt::format("# From {} (skyslurm export).\n", r.script_name);
  // sbatch names a job after its script unless told otherwise.
  const std::string name =
      r.job_name.value_or(std::filesystem::path(r.script_name).filename().string());
  if (!name.empty()) y += fmt::format("name: {}\n", YamlScalar(name));
  y += "workdir: .\n";
  if (nodes != 1) y += fmt::format("num_nodes: {}\n", nodes);
  const std::optional<std::string> image = TaskImage(r, out.not_carried);
  const bool any_resources =
      !gpus.empty() || cpus || memory_gb || infra || image || r.sky.retry_on_failure > 0;
  if (any_resources) {
    y += "resources:\n";
    if (infra) y += fmt::format("  infra: {}\n", *infra);
    if (!gpus.empty()) y += fmt::format("  accelerators: {}\n", YamlScalar(gpus));
    if (cpus) y += fmt::format("  cpus: {}\n", *cpus);
    if (memory_gb) y += fmt::format("  memory: {}\n", *memory_gb);
    if (image) y += fmt::format("  image_id: {}\n", YamlScalar("docker:" + *image));
    if (r.sky.retry_on_failure > 0) {
      y += fmt::format("  job_recovery:\n    max_restarts_on_errors: {}\n", r.sky.retry_on_failure);
    }
  }
  y += Block("run", Body(r.script));
  out.yaml = std::move(y);
  return out;
}

}  // namespace skyslurm::task
