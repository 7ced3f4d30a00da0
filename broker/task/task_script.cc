#include "broker/task/task_script.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "broker/job/container_image.h"
#include "broker/util/command.h"
#include "broker/util/strings.h"

namespace skyslurm::task {
namespace {

namespace fs = std::filesystem;

// SkyPilot's names for clouds: on these clusters, the site's elastic ones.
bool CloudName(std::string_view name) {
  static const std::set<std::string_view> kClouds = {
      "aws",    "gcp",        "azure",      "lambda",         "ibm",  "scp",     "oci",
      "runpod", "fluidstack", "paperspace", "cudo",           "do",   "vsphere", "vast",
      "nebius", "hyperbolic", "seeweb",     "primeintellect", "cloud"};
  return kClouds.contains(name);
}

std::string Where(const TaskSpec& task, int line) {
  return line > 0 ? fmt::format("{}:{}: ", task.file, line) : fmt::format("{}: ", task.file);
}

struct Placement {
  std::vector<std::string> clusters;  // empty: any
  std::optional<std::string> partition;
  std::vector<std::string> notes;
};

std::vector<std::string_view> NamesOf(const std::vector<SiteCluster>& site) {
  std::vector<std::string_view> names;
  for (const auto& c : site) names.push_back(c.name);
  return names;
}

Result<Placement> ResolveInfra(const std::string& infra, const std::vector<SiteCluster>& site,
                               const std::string& where) {
  Placement p;
  const std::vector<std::string> parts = SplitList(infra, '/');
  if (parts.empty()) return p;
  // SkyPilot's cloud: "slurm", "k8s" (or "kubernetes"), a cloud's name.
  const std::string cloud = Lower(parts[0]);
  auto on_cloud = [&](std::string_view name) {
    std::vector<std::string> names;
    for (const auto& c : site) {
      if (c.cloud == name) names.push_back(c.name);
    }
    return names;
  };
  auto no_such = [&](const std::string& name, std::string_view what) {
    std::string message = fmt::format("{}resources.infra: {}: no {} named {} here (clusters: {})",
                                      where, infra, what, name, fmt::join(NamesOf(site), ", "));
    if (const std::string near = Nearest(name, NamesOf(site)); !near.empty()) {
      message += fmt::format("; did you mean {}?", near);
    }
    return InvalidArgumentError(message);
  };
  if (cloud == "slurm") {
    if (parts.size() == 1) {
      p.clusters = on_cloud("slurm");
      return p;
    }
    const auto it =
        std::ranges::find_if(site, [&](const SiteCluster& c) { return c.name == parts[1]; });
    if (it == site.end() || it->cloud != "slurm") {
      return no_such(parts[1], "Slurm cluster");
    }
    p.clusters = {it->name};
    if (parts.size() >= 3) p.partition = parts[2];
    if (parts.size() > 3) {
      return InvalidArgumentError(fmt::format(
          "{}resources.infra: {}: slurm/<cluster>[/<partition>] has at most three parts", where,
          infra));
    }
    return p;
  }
  if (cloud == "k8s" || cloud == "kubernetes") {
    if (parts.size() == 1) {
      p.clusters = on_cloud("k8s");
      if (p.clusters.empty()) {
        return InvalidArgumentError(fmt::format(
            "{}resources.infra: {}: no Kubernetes cluster is configured here", where, infra));
      }
      return p;
    }
    const std::string context = infra.substr(infra.find('/') + 1);
    for (const auto& c : site) {
      if (c.cloud == "k8s" &&
          (c.context == context || (c.context.empty() && c.name == context) || c.name == context)) {
        p.clusters = {c.name};
        return p;
      }
    }
    return no_such(context, "Kubernetes context");
  }
  if (CloudName(cloud)) {
    for (const auto& c : site) {
      if (c.elastic) p.clusters.push_back(c.name);
    }
    if (p.clusters.empty()) {
      return InvalidArgumentError(fmt::format(
          "{}resources.infra: {}: no elastic (cloud) cluster is configured here to stand for {}",
          where, infra, cloud));
    }
    if (parts.size() > 1) {
      p.notes.push_back(
          fmt::format("{}resources.infra: {}: the region is the site's to choose; "
                      "{} stands for the elastic clusters {}",
                      where, infra, cloud, fmt::join(p.clusters, ", ")));
    }
    return p;
  }
  // A cluster named alone, as --sky-infra takes it.
  const auto it =
      std::ranges::find_if(site, [&](const SiteCluster& c) { return c.name == parts[0]; });
  if (it != site.end() && parts.size() == 1) {
    p.clusters = {it->name};
    return p;
  }
  std::string message = fmt::format(
      "{}resources.infra: '{}' names nothing here: slurm/<cluster>[/<partition>], "
      "k8s[/<context>], a cloud (aws, gcp, ...: the elastic clusters) or a cluster (clusters: {})",
      where, infra, fmt::join(NamesOf(site), ", "));
  if (const std::string near = Nearest(parts[0], NamesOf(site)); !near.empty()) {
    message += fmt::format("; did you mean {}?", near);
  }
  return InvalidArgumentError(message);
}

// A heredoc delimiter the text does not hold as a line of its own.
std::string Delimiter(std::string_view base, std::string_view text) {
  std::string d(base);
  for (int n = 2;; ++n) {
    const std::string line = "\n" + d + "\n";
    if (("\n" + std::string(text) + "\n").find(line) == std::string::npos) return d;
    d = fmt::format("{}_{}", base, n);
  }
}

std::string WithNewline(std::string text) {
  if (!text.empty() && !text.ends_with('\n')) text += '\n';
  return text;
}

// What each node runs for a phase (setup, run): its lines prefixed as
// SkyPilot prefixes them; the head's printed live, a worker's kept in a file
// the batch script prints after the step, in rank order.
constexpr std::string_view kNodeScript = R"sh(rank=${SKYPILOT_NODE_RANK:-${SLURM_NODEID:-0}}
if [ "$rank" = 0 ]; then who=head; else who="worker$rank"; fi
phase=$1 dir=$2
while read -r mount_at mount_from; do
  [ -n "$mount_at" ] || continue
  case $mount_at in "~/"*) mount_at="$HOME/${mount_at#"~/"}" ;; esac
  mkdir -p "$(dirname "$mount_at")" && ln -sfn "$mount_from" "$mount_at" ||
    echo "skyslurm: cannot link $mount_at to $mount_from" >&2
done < "$dir/mounts"
if [ "$rank" = 0 ]; then
  bash "$dir/$phase.sh" 2>&1 | sed -u "s/^/($who, rank=$rank) /"
else
  bash "$dir/$phase.sh" 2>&1 | sed -u "s/^/($who, rank=$rank) /" > "$dir/$phase-$rank.log"
fi
exit "${PIPESTATUS[0]}"
)sh";

// Runs a phase on every node (the job's one task per node: srun spans the
// allocation; on Kubernetes each pod runs it in itself) and prints the
// workers' lines after the head's.
constexpr std::string_view kPhases = R"sh(sky_on_every_node() {
  local status rank=1
  if [ -n "${SLURM_JOB_ID:-}" ] && command -v srun > /dev/null 2>&1; then
    srun --kill-on-bad-exit=1 bash "$sky_task_dir/node.sh" "$1" "$sky_task_dir"
  else
    bash "$sky_task_dir/node.sh" "$1" "$sky_task_dir"
  fi
  status=$?
  while [ -e "$sky_task_dir/$1-$rank.log" ]; do
    cat "$sky_task_dir/$1-$rank.log"
    rank=$((rank + 1))
  done
  return "$status"
}
)sh";

}  // namespace

namespace {

using Variables = std::vector<std::pair<std::string, std::string>>;

// The task's variables with the command line's over them; each needs a value.
Result<Variables> Settle(const TaskSpec& task, const std::vector<Variable>& declared,
                         const Variables& given, std::string_view field, std::string_view flag) {
  Variables settled;
  for (const auto& v : declared) {
    const auto over = std::ranges::find_if(given, [&](const auto& g) { return g.first == v.name; });
    if (over != given.end()) {
      settled.emplace_back(v.name, over->second);
    } else if (v.value) {
      settled.emplace_back(v.name, *v.value);
    } else {
      return InvalidArgumentError(fmt::format("{}{}.{} has no value: give it with {} {}=...",
                                              Where(task, v.line), field, v.name, flag, v.name));
    }
  }
  for (const auto& [k, value] : given) {
    if (std::ranges::none_of(settled, [&name = k](const auto& e) { return e.first == name; })) {
      settled.emplace_back(k, value);
    }
  }
  return settled;
}

// The workdir, a folder here (copied to a peer as the folder the job is
// submitted from); empty when the task has none.
Result<std::string> WorkdirOf(const TaskSpec& task, const fs::path& base) {
  if (!task.workdir) return std::string();
  fs::path w = *task.workdir;
  if (w.string().starts_with("~/")) {
    const char* home = std::getenv("HOME");
    w = fs::path(home != nullptr ? home : "") / w.string().substr(2);
  }
  if (w.is_relative()) w = base / w;
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(w, ec);
  if (ec || !fs::is_directory(canonical)) {
    return InvalidArgumentError(
        fmt::format("{}workdir: {} is not a folder here", Where(task, 0), w.string()));
  }
  return canonical.string();
}

// The mounts file's lines ("DESTINATION SOURCE"): a source in the workdir
// goes with it (linked to its copy); any other is a path on the cluster (a
// filesystem it mounts), linked.
Result<std::string> MountLines(const TaskSpec& task, const fs::path& base,
                               const std::string& workdir) {
  std::string mounts;
  for (const auto& m : task.file_mounts) {
    fs::path source = m.source;
    std::string from;
    if (source.string().starts_with("~/") || source.is_absolute()) {
      from = source.string();
    } else {
      if (workdir.empty()) {
        return InvalidArgumentError(fmt::format(
            "{}file_mounts.{}: '{}' is a path relative to the task, but the task has no "
            "workdir to take it to the cluster: put it in a workdir, or name its path there",
            Where(task, m.line), m.destination, m.source));
      }
      const fs::path abs = fs::weakly_canonical(base / source);
      const fs::path rel = abs.lexically_relative(workdir);
      if (rel.empty() || rel.string().starts_with("..")) {
        return InvalidArgumentError(fmt::format(
            "{}file_mounts.{}: '{}' is outside the workdir {}: only the workdir is taken to the "
            "cluster; move it there, or name a path on the cluster",
            Where(task, m.line), m.destination, m.source, workdir));
      }
      from = "$PWD/" + rel.string();  // the job's folder (its copy on a peer)
    }
    if (m.destination.find_first_of(" \t\n") != std::string::npos ||
        from.find_first_of(" \t\n") != std::string::npos) {
      return InvalidArgumentError(fmt::format("{}file_mounts.{}: paths with blanks are not taken",
                                              Where(task, m.line), m.destination));
    }
    mounts += m.destination + " " + from + "\n";
  }
  return mounts;
}

// --gpus TYPE:COUNT[,TYPE:COUNT...] as accelerators.
Result<std::vector<Accelerator>> GpusGiven(const std::string& gpus) {
  std::vector<Accelerator> out;
  for (const std::string& one : SplitList(gpus, ',')) {
    Accelerator a;
    const auto colon = one.find(':');
    a.type = Trim(one.substr(0, colon));
    if (colon != std::string::npos) {
      try {
        a.count = std::stoi(one.substr(colon + 1));
      } catch (...) {
        a.count = 0;
      }
    }
    if (a.type.empty() || a.count < 1) {
      return InvalidArgumentError(
          fmt::format("--gpus {}: '{}' is not TYPE:COUNT (H100:8)", gpus, one));
    }
    out.push_back(a);
  }
  return out;
}

// Each way to run the task: its resources with the command line's over them.
Result<std::vector<Resources>> WaysToRun(const TaskSpec& task, const TaskOverrides& overrides) {
  std::vector<Resources> ways = task.resources;
  if (overrides.gpus) {
    SKY_ASSIGN_OR_RETURN(const std::vector<Accelerator> gpus, GpusGiven(*overrides.gpus));
    for (auto& r : ways) r.accelerators = gpus;
  }
  if (overrides.infra) {
    for (auto& r : ways) r.infra = overrides.infra;
  }
  return ways;
}

// One way's GPU choices (none: one choice, no GPU), each a GPU skyslurm knows.
Result<std::vector<std::optional<Accelerator>>> GpuChoices(
    const Resources& r, const catalog::AcceleratorCatalog& catalog, const std::string& where) {
  std::vector<std::optional<Accelerator>> gpus;
  if (r.accelerators.empty()) gpus.push_back(std::nullopt);
  for (const auto& a : r.accelerators) {
    if (!catalog.Canonical(a.type) && !catalog::AcceleratorCatalog::MigProfile(a.type)) {
      std::vector<std::string_view> known;
      for (const auto& k : catalog.accelerators()) known.push_back(k.name);
      std::string message =
          fmt::format("{}resources.accelerators: '{}' is not a GPU skyslurm knows", where, a.type);
      if (const std::string near = Nearest(a.type, known); !near.empty()) {
        message += fmt::format(" (did you mean '{}'?)", near);
      }
      return InvalidArgumentError(message);
    }
    gpus.emplace_back(a);
  }
  return gpus;
}

// use_spot: only the clusters (of those the placement allows) with spot
// partitions, in them.
Status LimitToSpot(const std::vector<SiteCluster>& site, const std::string& where,
                   Placement& placement) {
  std::vector<std::string> spot_clusters;
  std::set<std::string> partitions;
  for (const auto& c : site) {
    const bool allowed = placement.clusters.empty() ||
                         std::ranges::find(placement.clusters, c.name) != placement.clusters.end();
    if (allowed && !c.spot_partitions.empty()) {
      spot_clusters.push_back(c.name);
      partitions.insert(c.spot_partitions.begin(), c.spot_partitions.end());
    }
  }
  if (spot_clusters.empty()) {
    return InvalidArgumentError(
        fmt::format("{}resources.use_spot: no cluster {}has spot partitions (the site's `spot:`)",
                    where, placement.clusters.empty() ? "" : "its infra names "));
  }
  placement.clusters = spot_clusters;
  if (!placement.partition) placement.partition = fmt::format("{}", fmt::join(partitions, ","));
  return OkStatus();
}

// What one batch script is made of.
struct ScriptInput {
  const TaskSpec& task;
  const std::string& name;
  int nodes = 1;
  const Resources& way;
  const std::optional<Accelerator>& gpu;
  const Placement& placement;
  const std::string& workdir;
  const Variables& envs;
  const std::string& mounts;
};

std::string Directives(const ScriptInput& in) {
  const Resources& r = in.way;
  const Placement& placement = in.placement;
  std::string s = "#!/bin/bash\n";
  s += fmt::format("#SBATCH --job-name={}\n", ShellQuote(in.name));
  s += fmt::format("#SBATCH --nodes={}\n", in.nodes);
  s += "#SBATCH --ntasks-per-node=1\n";
  if (in.gpu) s += fmt::format("#SBATCH --gpus-per-node={}\n", in.gpu->Text());
  if (r.cpus) s += fmt::format("#SBATCH --cpus-per-task={}\n", *r.cpus);
  if (r.memory_gb) s += fmt::format("#SBATCH --mem={}G\n", *r.memory_gb);
  if (placement.partition) s += fmt::format("#SBATCH --partition={}\n", *placement.partition);
  if (placement.clusters.size() == 1) {
    s += fmt::format("#SBATCH --sky-infra={}\n", placement.clusters[0]);
  } else if (!placement.clusters.empty()) {
    s += fmt::format("#SBATCH --sky-any-cluster={}\n", fmt::join(placement.clusters, ","));
  } else {
    s += "#SBATCH --sky-any-cluster\n";
  }
  if (r.image) {
    // Kubernetes takes --sky-image; a Slurm cluster with pyxis its
    // --container-image (a cluster without it cannot run the task).
    s += fmt::format("#SBATCH --sky-image={}\n", *r.image);
    s += fmt::format("#SBATCH --container-image={}\n", job::EnrootImageOf(*r.image));
  }
  if (r.max_restarts_on_errors && *r.max_restarts_on_errors > 0) {
    s += fmt::format("#SBATCH --sky-retry-on-failure={}\n", *r.max_restarts_on_errors);
  }
  if (in.workdir.empty()) s += "#SBATCH --sky-workdir=none\n";
  s += "#SBATCH --sky-managed\n";
  return s;
}

// The batch script: its directives, then setup and run on every node.
std::string BatchScript(const ScriptInput& in) {
  std::string s = Directives(in);
  s += fmt::format(
      "#\n# SkyPilot task {} ({}), as skyslurm launch runs it: setup, then run, on every "
      "node.\n",
      in.name, fs::path(in.task.file).filename().string());
  for (const auto& [k, v] : in.envs) s += fmt::format("export {}={}\n", k, ShellQuote(v));
  if (in.workdir.empty()) s += "cd \"$HOME\" || exit 1\n";
  s += "sky_task_dir=\"$PWD/.skyslurm-task/${SLURM_JOB_ID:-$$}\"\n";
  s += "mkdir -p \"$sky_task_dir\" || exit 1\n";
  s += "trap 'rm -rf \"$sky_task_dir\"' EXIT\n";
  auto file = [&](std::string_view file_name, std::string_view delimiter, const std::string& text) {
    const std::string d = Delimiter(delimiter, text);
    s += fmt::format("cat > \"$sky_task_dir/{}\" <<'{}'\n{}{}\n", file_name, d, WithNewline(text),
                     d);
  };
  file("setup.sh", "SKYSLURM_SETUP_END", in.task.setup);
  file("run.sh", "SKYSLURM_RUN_END", in.task.run);
  file("node.sh", "SKYSLURM_NODE_END", std::string(kNodeScript));
  // The mounts' sources: $PWD is the job's folder, taken here.
  s += "cat > \"$sky_task_dir/mounts\" <<SKYSLURM_MOUNTS_END\n" + in.mounts +
       "SKYSLURM_MOUNTS_END\n";
  s += kPhases;
  if (!Trim(in.task.setup).empty()) s += "sky_on_every_node setup || exit $?\n";
  s += "sky_on_every_node run\n";
  return s;
}

}  // namespace

Result<TaskJobs> TaskToJobs(const TaskSpec& task, const TaskOverrides& overrides,
                            const std::vector<SiteCluster>& site,
                            const catalog::AcceleratorCatalog& catalog, std::string_view task_dir) {
  TaskJobs out;
  out.notes = task.notes;
  const int nodes = overrides.num_nodes.value_or(task.num_nodes);
  std::string name = overrides.name.value_or(task.name.value_or(""));
  if (name.empty()) name = fs::path(task.file).stem().string();

  SKY_ASSIGN_OR_RETURN(const Variables envs,
                       Settle(task, task.envs, overrides.env, "envs", "--env"));
  SKY_ASSIGN_OR_RETURN(const Variables secrets,
                       Settle(task, task.secrets, overrides.secrets, "secrets", "--secret"));
  for (const auto& [k, v] : secrets) {
    if (std::ranges::any_of(envs, [&name = k](const auto& e) { return e.first == name; })) {
      return InvalidArgumentError(
          fmt::format("{}{} is both in envs and in secrets", Where(task, 0), k));
    }
  }
  const fs::path base = task_dir.empty() ? fs::current_path() : fs::path(task_dir);
  SKY_ASSIGN_OR_RETURN(out.workdir, WorkdirOf(task, base));
  SKY_ASSIGN_OR_RETURN(const std::string mounts, MountLines(task, base, out.workdir));
  SKY_ASSIGN_OR_RETURN(const std::vector<Resources> ways, WaysToRun(task, overrides));
  out.ordered = task.resources_ordered ||
                (ways.size() == 1 && ways[0].accelerators_ordered && !overrides.gpus);
  for (const Resources& r : ways) {
    const std::string where = Where(task, r.line);
    SKY_ASSIGN_OR_RETURN(const auto gpus, GpuChoices(r, catalog, where));
    Placement placement;
    if (r.infra) {
      SKY_ASSIGN_OR_RETURN(placement, ResolveInfra(*r.infra, site, where));
      out.notes.insert(out.notes.end(), placement.notes.begin(), placement.notes.end());
    }
    if (r.use_spot.value_or(false)) SKY_RETURN_IF_ERROR(LimitToSpot(site, where, placement));
    for (const auto& gpu : gpus) {
      TaskJob job;
      job.label = gpu ? gpu->Text() : "no GPU";
      job.secrets = secrets;
      job.script = BatchScript({.task = task,
                                .name = name,
                                .nodes = nodes,
                                .way = r,
                                .gpu = gpu,
                                .placement = placement,
                                .workdir = out.workdir,
                                .envs = envs,
                                .mounts = mounts});
      out.alternatives.push_back(std::move(job));
    }
  }
  return out;
}

}  // namespace skyslurm::task
