#include "broker/backend/kubernetes/job_translator.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <sstream>

#include "broker/backend/kubernetes/inventory.h"
#include "broker/job/container_image.h"
#include "broker/translate/gpus.h"
#include "broker/util/strings.h"

namespace skyslurm::kube {
namespace {

using job::GpuAsk;
using job::Request;

// srun lines whose options reach beyond the pod they run in.
std::vector<std::string> SpanningSteps(const Request& r) {
  std::vector<std::string> found;
  std::istringstream in(r.script);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (w[i] != "srun" && !w[i].ends_with("/srun")) continue;
      for (std::size_t j = i + 1; j < w.size() && w[j].starts_with("-"); ++j) {
        const std::string& o = w[j];
        std::string nodes;
        if (o == "-N" || o == "--nodes") {
          nodes = j + 1 < w.size() ? w[j + 1] : "";
        } else if (o.starts_with("--nodes=")) {
          nodes = o.substr(8);
        } else if (o.starts_with("-N")) {
          nodes = o.substr(2);
        }
        const bool spans = (!nodes.empty() && nodes != "1" && nodes != "1-1") || o == "-w" ||
                           o.starts_with("--nodelist") || o.starts_with("-w") ||
                           o.starts_with("--het-group") || o == "-r" || o.starts_with("--relative");
        if (spans) {
          found.push_back(
              fmt::format("{}:{}: srun {} needs other nodes' slots; on Kubernetes each "
                          "pod runs its own srun",
                          r.script_name, number, o));
        }
      }
    }
  }
  return found;
}

bool UsesSrun(const Request& r) {
  std::istringstream in(r.script);
  for (std::string word; in >> word;) {
    if (word == "srun" || word.ends_with("/srun")) return true;
  }
  return false;
}

std::string Describe(const job::Origin& o, const Request& r) { return o.Describe(r.script_name); }

}  // namespace

std::string JobShape::Key() const {
  // Each field ends with a unit separator, which no image, label or name holds.
  std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f", image,
                                pods, gpus_per_pod, gpu_label, gpu_type, millicores, memory_mb,
                                deadline_seconds, job_name);
  for (const PodMount& m : mounts) {
    key.append(fmt::format("{}{}:{}:{}:{}\x1f", m.claim ? "pvc:" : "", m.source, m.sub_path,
                           m.mount_path, m.read_only ? "ro" : "rw"));
  }
  return key;
}

std::string JobShape::Summary() const {
  return fmt::format(
      "an Indexed Job of {} pod(s), each {}{} CPU(s){}{}; image {}", pods,
      gpus_per_pod > 0
          ? fmt::format("{} nvidia.com/gpu{}, ", gpus_per_pod,
                        gpu_label.empty() ? "" : fmt::format(" ({}={})", gpu_label, gpu_type))
          : "",
      static_cast<double>(millicores) / 1000.0,
      memory_mb > 0 ? fmt::format(", {} MiB", memory_mb) : "",
      deadline_seconds > 0 ? fmt::format(", deadline {} s", deadline_seconds) : "", image);
}

Result<JobShape> ShapeOf(const translate::TranslatedJob& job) {
  const auto* shape = dynamic_cast<const JobShape*>(job.native.get());
  if (shape == nullptr) return InvalidArgumentError("not a job made for Kubernetes");
  return *shape;
}

namespace {

// What a pod cannot be asked for: Slurm's own notions.
void AddUnsupported(const Request& r, std::vector<std::string>& no) {
  if (r.tool != job::Tool::kSbatch) {
    no.push_back(
        "an interactive allocation (salloc, srun) cannot run on Kubernetes: submit a batch "
        "script");
  }
  if (r.hetjob) no.push_back("a heterogeneous job cannot run on Kubernetes");
  if (r.dependency) {
    no.push_back(fmt::format("--dependency={} names Slurm job ids, which Kubernetes does not know",
                             *r.dependency));
  }
  if (r.array) no.push_back("job arrays run on Slurm clusters only (for now)");
  if (r.nodelist) no.push_back(fmt::format("--nodelist={} names Slurm nodes", *r.nodelist));
  if (r.exclude) no.push_back(fmt::format("--exclude={} names Slurm nodes", *r.exclude));
  if (r.reservation)
    no.push_back(fmt::format("--reservation={} is a Slurm reservation", *r.reservation));
  if (r.licenses) no.push_back(fmt::format("--licenses={} are Slurm licenses", *r.licenses));
  if (r.constraint)
    no.push_back(fmt::format("--constraint={} names Slurm node features", *r.constraint));
  for (const auto& g : r.other_gres) {
    no.push_back(fmt::format("--gres={} is not a GPU: Kubernetes has no such resource", g.name));
  }
  for (auto& s : SpanningSteps(r)) no.push_back(std::move(s));
  // The pod's srun runs its command in the pod, whatever image a step asks
  // for: a step that wants its own container would run in another.
  for (const job::StepPluginOption& o : r.step_plugin_options) {
    if (!o.name.starts_with("container")) continue;
    no.push_back(fmt::format(
        "{}:{}: the script's step '{} --{}' asks for a container of its own; on Kubernetes every "
        "step runs in its pod's image (give the job's image with #SBATCH --container-image or "
        "--sky-image)",
        r.script_name, o.line, o.program, o.name));
  }
}

// The pods' number and size: each pod is a node, its GPUs the job's per node
// (job/gpu_demand.h), a per-job count spread evenly.
JobShape SizeOf(const Request& r, std::vector<std::string>& no) {
  JobShape shape;
  shape.pods = r.nodes ? r.nodes->min : 1;
  const job::GpuDemand& demand = r.gpu_demand;
  shape.gpus_per_pod = std::max(demand.per_node, demand.EvenShare());
  // CPUs as Slurm gives them: per task times tasks per node, or per GPU
  // times the pod's GPUs (--cpus-per-gpu), whichever asks for more.
  std::int64_t cpus = r.cpus_per_task.value_or(1) * demand.tasks_per_node;
  if (r.cpus_per_gpu) {
    cpus = std::max(cpus, *r.cpus_per_gpu * std::max<std::int64_t>(1, shape.gpus_per_pod));
  }
  shape.millicores = cpus * 1000;
  for (const GpuAsk& g : r.gpus) {
    if (g.scope == GpuAsk::Scope::kPerJob && g.count % shape.pods != 0) {
      no.push_back(fmt::format("{}: {} GPUs do not divide evenly over {} pods",
                               Describe(g.origin, r), g.count, shape.pods));
    }
    if (g.scope == GpuAsk::Scope::kPerSocket) {
      no.push_back(
          fmt::format("{}: GPUs per socket have no meaning in a pod", Describe(g.origin, r)));
    }
  }
  if (r.mem_mb) {
    shape.memory_mb = *r.mem_mb;  // 0: all of a node's (WholeNodes)
  } else if (r.mem_per_cpu_mb) {
    shape.memory_mb = *r.mem_per_cpu_mb * cpus;
  } else if (r.mem_per_gpu_mb) {
    shape.memory_mb = *r.mem_per_gpu_mb * std::max<std::int64_t>(1, shape.gpus_per_pod);
  }
  if (r.time_limit && r.time_limit->minutes) shape.deadline_seconds = *r.time_limit->minutes * 60;
  shape.job_name = r.job_name.value_or(r.script_name);
  return shape;
}

// The GPU type asked for, as this cluster's nodes are labelled.
void LabelGpuType(const std::string& gpu_type, const cluster::Description& target,
                  const translate::TranslateContext& ctx, JobShape& shape,
                  std::vector<std::string>& no) {
  if (shape.gpus_per_pod == 0 || gpu_type.empty()) return;
  for (const auto& [type, count] : translate::GpuTypesOf(target)) {
    const bool same =
        type == gpu_type || (ctx.catalog != nullptr && ctx.catalog->Same(type, gpu_type));
    if (!same) continue;
    shape.gpu_type = type;
    for (const auto& n : target.nodes) {
      for (const auto& f : n.features) {
        if (f.ends_with("=" + type)) shape.gpu_label = f.substr(0, f.size() - type.size() - 1);
      }
    }
  }
  if (shape.gpu_type.empty()) {
    std::string have;
    for (const auto& [type, count] : translate::GpuTypesOf(target)) {
      have +=
          fmt::format("{}{} x{}", have.empty() ? "" : ", ", type.empty() ? "untyped" : type, count);
    }
    no.push_back(fmt::format("no node has GPU type {} ({})", gpu_type,
                             have.empty() ? "it has no GPUs" : "it has " + have));
  } else if (shape.gpu_label.empty()) {
    no.push_back(fmt::format("the nodes with {} carry no label to select them by", shape.gpu_type));
  }
}

// --exclusive and --mem=0 ask for whole nodes (all their CPUs; all their
// memory): each pod asks for all of the smallest node that can take it, and
// a note says so (a larger node may take a second pod beside it).
void WholeNodes(const Request& r, const cluster::Description& target, JobShape& shape,
                std::vector<std::string>& caveats) {
  const bool all_cpus = r.exclusive.has_value();
  const bool all_memory = all_cpus || (r.mem_mb && *r.mem_mb == 0);
  if (!all_memory) return;
  const cluster::Node* smallest = nullptr;
  for (const auto& n : target.nodes) {
    if (!TakesPod(n, shape.gpus_per_pod > 0)) continue;
    if (n.cpus * 1000 < shape.millicores || n.memory_mb < shape.memory_mb) continue;
    std::int64_t gpus = 0;
    for (const auto& g : n.gres) {
      if (g.name == "gpu" && (shape.gpu_type.empty() || g.type == shape.gpu_type)) gpus += g.count;
    }
    if (gpus < shape.gpus_per_pod) continue;
    if (smallest == nullptr || n.cpus < smallest->cpus ||
        (n.cpus == smallest->cpus && n.memory_mb < smallest->memory_mb)) {
      smallest = &n;
    }
  }
  if (smallest == nullptr) return;  // CheckRoom says there is none
  if (all_cpus) shape.millicores = std::max(shape.millicores, smallest->cpus * 1000);
  shape.memory_mb = std::max(shape.memory_mb, smallest->memory_mb);
  caveats.push_back(fmt::format(
      "{}: each pod asks for all of the smallest node that takes it ({}{} MB); a larger node may "
      "take another pod beside it",
      all_cpus ? "--exclusive" : "--mem=0",
      all_cpus ? fmt::format("{} CPUs, ", smallest->cpus) : "", smallest->memory_mb));
}

// Could the pods ever all run at once? Said only when nothing else is wrong.
void CheckRoom(const cluster::Description& target, const JobShape& shape,
               std::vector<std::string>& no) {
  std::int64_t slots = 0, fitting_nodes = 0, gpu_only = 0;
  for (const auto& n : target.nodes) {
    if (n.usable() && !TakesPod(n, shape.gpus_per_pod > 0)) ++gpu_only;
    if (!TakesPod(n, shape.gpus_per_pod > 0)) continue;
    std::int64_t gpus = 0;
    for (const auto& g : n.gres) {
      if (g.name == "gpu" && (shape.gpu_type.empty() || g.type == shape.gpu_type)) gpus += g.count;
    }
    std::int64_t fit = shape.millicores > 0 ? n.cpus * 1000 / shape.millicores : 1;
    if (shape.gpus_per_pod > 0) fit = std::min(fit, gpus / shape.gpus_per_pod);
    if (shape.memory_mb > 0) fit = std::min(fit, n.memory_mb / shape.memory_mb);
    if (fit > 0) ++fitting_nodes;
    slots += std::max<std::int64_t>(0, fit);
  }
  if (slots >= shape.pods || !no.empty()) return;
  if (gpu_only > 0 && fitting_nodes == 0) {
    no.push_back(
        fmt::format("its {} usable node(s) are kept for GPU work (a GPU taint that only "
                    "pods asking for GPUs tolerate): a job without GPUs does not go there",
                    gpu_only));
    return;
  }
  no.push_back(fmt::format(
      "no room for {} pod(s) of {}{} CPU(s){}: {} node(s) can take one", shape.pods,
      shape.gpus_per_pod > 0
          ? fmt::format("{} GPU(s){}, ", shape.gpus_per_pod,
                        shape.gpu_type.empty() ? "" : " of type " + shape.gpu_type)
          : "",
      static_cast<double>(shape.millicores) / 1000.0,
      shape.memory_mb > 0 ? fmt::format(", {} MB", shape.memory_mb) : "", fitting_nodes));
}

// The image: --sky-image, pyxis' --container-image, a module the cluster
// maps to an image, or its default; each choice recorded as a change.
void ChooseImage(const Request& r, const cluster::Description& target,
                 const config::ClusterSettings* settings, JobShape& shape,
                 translate::TranslatedJob& job, std::vector<std::string>& no) {
  if (r.sky.image) {
    shape.image = *r.sky.image;
    job.changes.push_back({"--sky-image", "image " + shape.image, "asked for"});
  } else if (const job::Setting* s = r.EffectiveByName("container-image");
             s != nullptr && s->occurrence.value) {
    // enroot's REGISTRY#IMAGE is no name a pod can pull: its reference.
    auto reference = job::ImageReferenceOf(*s->occurrence.value);
    if (!reference.ok()) {
      no.push_back(fmt::format("{}: --container-image: {}", Describe(s->origin, r),
                               reference.status().message()));
      return;
    }
    shape.image = *reference;
    job.changes.push_back({Describe(s->origin, r), "image " + shape.image,
                           shape.image == *s->occurrence.value
                               ? std::string("pyxis' --container-image")
                               : fmt::format("pyxis' --container-image={}, as a registry names it",
                                             *s->occurrence.value)});
  } else {
    for (const auto& m : r.modules) {
      if (settings == nullptr || m.dynamic) continue;
      auto exact = settings->images.find(m.word);
      auto by_name = settings->images.find(m.name);
      const auto hit = exact != settings->images.end() ? exact : by_name;
      if (hit == settings->images.end()) continue;
      shape.image = hit->second;
      job.changes.push_back(
          {fmt::format("{}:{}", r.script_name, m.line), "image " + shape.image,
           fmt::format("module {} is that image on {} (images)", m.word, target.name)});
      break;
    }
    if (shape.image.empty() && settings != nullptr && !settings->default_image.empty()) {
      shape.image = settings->default_image;
      job.changes.push_back(
          {"(none)", "image " + shape.image, "the default_image of " + target.name});
    }
  }
  if (shape.image.empty()) {
    no.push_back(
        fmt::format("no container image: give --sky-image (or --container-image), or ask "
                    "for an images map or default_image for {}",
                    target.name));
  }
}

// pyxis' --container-mounts (SRC:DST[:FLAGS], comma-separated) as the
// pod's volumes: a source under a root of the home is mounted from the
// cluster's root of that name (`paths`: a node folder, or pvc:CLAIM[/SUB]);
// any other source is refused, naming the option and why.
void MountVolumes(const Request& r, const translate::TranslateContext& ctx, JobShape& shape,
                  translate::TranslatedJob& job, std::vector<std::string>& no) {
  const job::Setting* s = r.EffectiveByName("container-mounts");
  if (s == nullptr || !s->occurrence.value) return;
  const std::string where = Describe(s->origin, r);
  const translate::PathRoots none;
  const translate::PathRoots& from = ctx.home_roots != nullptr ? *ctx.home_roots : none;
  const translate::PathRoots& to = ctx.target_roots != nullptr ? *ctx.target_roots : none;
  for (const std::string& item : SplitList(*s->occurrence.value)) {
    const std::vector<std::string> parts = SplitList(item, ':');
    if (parts.empty() || parts.size() > 3 || parts[0].empty()) {
      no.push_back(
          fmt::format("{}: --container-mounts item '{}' is not SRC[:DST[:FLAGS]]", where, item));
      continue;
    }
    PodMount mount;
    mount.mount_path = parts.size() > 1 && !parts[1].empty() ? parts[1] : parts[0];
    mount.read_only = parts.size() > 2 && parts[2].find("ro") != std::string::npos;
    const translate::PathMapping m = translate::MapPath(parts[0], from, to);
    using Fate = translate::PathMapping::Fate;
    if (m.fate != Fate::kMapped && m.fate != Fate::kSame) {
      no.push_back(fmt::format(
          "{}: --container-mounts {}: {} lies under no root that {}'s paths name (paths.<root> "
          "in its settings: a node folder or pvc:CLAIM), so no volume can hold it",
          where, item, parts[0], job.cluster));
      continue;
    }
    if (m.path.starts_with("pvc:")) {
      const std::string claim = m.path.substr(4);
      const auto slash = claim.find('/');
      mount.claim = true;
      mount.source = claim.substr(0, slash);
      mount.sub_path = slash == std::string::npos ? "" : claim.substr(slash + 1);
    } else {
      mount.source = m.path;
    }
    job.changes.push_back(
        {where,
         fmt::format("--container-mounts {} -> volume {}{}{} at {}", item,
                     mount.claim ? "claim " : "node folder ", mount.source,
                     mount.sub_path.empty() ? "" : "/" + mount.sub_path, mount.mount_path),
         fmt::format("{}'s {} root", job.cluster, m.root)});
    shape.mounts.push_back(std::move(mount));
  }
}

// What the job asks for that Kubernetes leaves aside.
std::vector<std::string> CaveatsOf(const Request& r, const JobShape& shape) {
  std::vector<std::string> caveats;
  if (!r.partitions.empty()) {
    caveats.push_back(
        fmt::format("partition {} is Slurm's: not used on Kubernetes", r.partitions.front()));
  }
  if (r.account) caveats.push_back("--account is Slurm's: not used on Kubernetes");
  if (r.qos) caveats.push_back("--qos is Slurm's: not used on Kubernetes");
  if (r.output || r.error) {
    caveats.push_back("--output/--error: the job's output is its pods' logs (skyslurm logs)");
  }
  if (UsesSrun(r)) {
    caveats.push_back(
        "each pod is one node: srun in the script runs its command once, in its own pod");
  }
  if (shape.deadline_seconds == 0) caveats.push_back("no --time: no deadline on Kubernetes");
  return caveats;
}

}  // namespace

translate::Translation TranslateForKubernetes(const Request& r, const cluster::Description& target,
                                              const translate::TranslateContext& ctx) {
  translate::Translation out;
  out.cluster = target.name;
  std::vector<std::string>& no = out.reasons;
  translate::TranslatedJob job;
  job.cluster = target.name;
  job.tool = r.tool;

  AddUnsupported(r, no);
  JobShape shape = SizeOf(r, no);
  LabelGpuType(r.gpu_demand.type, target, ctx, shape, no);
  std::vector<std::string> whole_node_notes;
  WholeNodes(r, target, shape, whole_node_notes);
  CheckRoom(target, shape, no);
  ChooseImage(r, target, ctx.settings, shape, job, no);
  MountVolumes(r, ctx, shape, job, no);
  if (!no.empty()) return out;

  job.caveats = CaveatsOf(r, shape);
  job.caveats.insert(job.caveats.end(), whole_node_notes.begin(), whole_node_notes.end());
  const std::string ns = target.partitions.empty() ? "default" : target.partitions.front().name;
  job.fitting_partitions = {ns};
  job.partition_note = "the namespace of " + target.name;
  job.script = r.wrap ? "#!/bin/sh\n" + *r.wrap + "\n" : r.script;
  job.script_args = r.script_args;
  // As the namespace's pods list it once submitted (inventory.h).
  cluster::QueuedJob& q = job.queued;
  q.phase = cluster::JobPhase::kPending;
  q.state = "PENDING";
  q.reason = "Pending";
  q.partition = ns;
  q.nodes = shape.pods;
  q.gpus_per_node = shape.gpus_per_pod;
  q.gpu_type = shape.gpu_type;
  q.time_limit_minutes = (shape.deadline_seconds + 59) / 60;
  job.native = std::make_shared<const JobShape>(std::move(shape));
  out.job = std::move(job);
  return out;
}

}  // namespace skyslurm::kube
