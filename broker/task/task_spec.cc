#include "broker/task/task_spec.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cctype>
#include <map>

#include "broker/util/strings.h"

namespace skyslurm::task {
namespace {

// Fields skyslurm cannot honour, and why: refused by name.
const std::map<std::string_view, std::string_view>& RefusedTaskFields() {
  static const std::map<std::string_view, std::string_view> kRefused = {
      {"service",
       "SkyServe services (replicas behind a load balancer) are not run on Slurm "
       "clusters by skyslurm; run the serving program as a job instead"},
      {"pool", "SkyPilot worker pools are not kept by skyslurm"},
      {"volumes",
       "SkyPilot volumes are not made by skyslurm; name the cluster's own "
       "paths in file_mounts"},
      {"event_callback", "skyslurm runs no callbacks; `skyslurm status` tells a job's events"},
      {"config",
       "no SkyPilot setting maps to skyslurm's; set ours in "
       "~/.config/skyslurm/skyslurm.yaml (skyslurm.yaml(5))"},
      {"experimental", "SkyPilot's experimental settings have no skyslurm meaning"},
  };
  return kRefused;
}

const std::map<std::string_view, std::string_view>& RefusedResourceFields() {
  static const std::map<std::string_view, std::string_view> kRefused = {
      {"autostop",
       "the clusters here are shared Slurm clusters that nobody stops; a job "
       "ends when its run does"},
      {"ports", "no ports are opened to a job's nodes on a Slurm cluster"},
      {"instance_type",
       "a Slurm cluster has partitions, not instance types: ask for "
       "cpus, memory and accelerators instead"},
      {"region", "clusters are chosen by infra: slurm/<cluster>, k8s/<context> or a cloud"},
      {"zone", "clusters are chosen by infra: slurm/<cluster>, k8s/<context> or a cloud"},
      {"accelerator_args", "TPU settings have no meaning on these clusters"},
  };
  return kRefused;
}

// Fields read and said to have no meaning here (a note, not an error): a
// cloud VM's sizing the clusters' nodes already have.
bool NotedResourceField(std::string_view name) {
  return name == "disk_size" || name == "disk_tier" || name == "network_tier" || name == "labels" ||
         name == "priority";
}

int LineOf(const YAML::Node& node) { return node.Mark().line + 1; }

class Reader {
 public:
  explicit Reader(std::string_view file) : file_(file) {}

  Status Bad(const YAML::Node& node, std::string_view path, const std::string& what) const {
    return InvalidArgumentError(fmt::format("{}:{}: {}: {}", file_, LineOf(node), path, what));
  }

  Status Unknown(const YAML::Node& key, std::string_view where, std::string_view name,
                 const std::vector<std::string_view>& known) const {
    std::string message = fmt::format("{}:{}: unknown field '{}'{}", file_, LineOf(key), name,
                                      where.empty() ? "" : fmt::format(" in {}", where));
    if (const std::string near = Nearest(name, known); !near.empty()) {
      message += fmt::format(" (did you mean '{}'?)", near);
    }
    return InvalidArgumentError(message);
  }

  Result<std::string> Text(const YAML::Node& node, std::string_view path) const {
    if (!node.IsScalar()) return Bad(node, path, "must be a single value");
    return node.Scalar();
  }

  Result<int> PositiveInt(const YAML::Node& node, std::string_view path) const {
    SKY_ASSIGN_OR_RETURN(std::string text, Text(node, path));
    int value = 0;
    std::size_t used = 0;
    try {
      value = std::stoi(text, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != text.size() || value < 1) {
      return Bad(node, path, fmt::format("'{}' is not a whole number of at least 1", text));
    }
    return value;
  }

  // "8", "8+" (at least 8), for cpus; memory also "32GB".
  Result<int> AtLeast(const YAML::Node& node, std::string_view path, bool memory) const {
    SKY_ASSIGN_OR_RETURN(std::string text, Text(node, path));
    std::string number = Trim(text);
    if (number.ends_with('+')) number.pop_back();
    if (memory) {
      const std::string lower = Lower(number);
      if (lower.ends_with("gb")) number.resize(number.size() - 2);
      if (Lower(number).ends_with('g')) number.pop_back();
    }
    double value = 0;
    std::size_t used = 0;
    try {
      value = std::stod(number, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != number.size() || value <= 0) {
      return Bad(node, path,
                 fmt::format("'{}' is not a number{} (as {}, or {}+ for at least that)", text,
                             memory ? " of GB" : "", memory ? "32" : "8", memory ? "32" : "8"));
    }
    // Slurm counts whole CPUs and megabytes: a fraction of a CPU is one,
    // memory is rounded up to the next GB.
    return static_cast<int>(value) + (value > static_cast<int>(value) ? 1 : 0);
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

bool ShellName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// "H100:8", "H100", "H100: 8" as a one-entry dict.
Result<Accelerator> ParseAccelerator(const Reader& r, const YAML::Node& node,
                                     std::string_view type_text, const YAML::Node* count_node) {
  Accelerator a;
  std::string text = Trim(type_text);
  std::string count_text;
  if (const auto colon = text.find(':'); colon != std::string::npos) {
    count_text = Trim(std::string_view(text).substr(colon + 1));
    text = Trim(std::string_view(text).substr(0, colon));
  }
  if (count_node != nullptr && count_node->IsDefined() && !count_node->IsNull()) {
    if (!count_text.empty()) {
      return r.Bad(node, "resources.accelerators",
                   fmt::format("'{}' gives its count twice", type_text));
    }
    SKY_ASSIGN_OR_RETURN(count_text, r.Text(*count_node, "resources.accelerators"));
  }
  if (text.empty()) return r.Bad(node, "resources.accelerators", "a GPU type is missing");
  a.type = text;
  if (!count_text.empty()) {
    std::size_t used = 0;
    double count = 0;
    try {
      count = std::stod(count_text, &used);
    } catch (...) {
      used = 0;
    }
    if (used == 0 || used != count_text.size() || count <= 0) {
      return r.Bad(
          node, "resources.accelerators",
          fmt::format("'{}': the count '{}' is not a number of GPUs", type_text, count_text));
    }
    if (count != static_cast<int>(count)) {
      return r.Bad(node, "resources.accelerators",
                   fmt::format("'{}': a fraction of a GPU cannot be asked of Slurm (GPUs are "
                               "not shared between jobs); ask for a whole one",
                               type_text));
    }
    a.count = static_cast<int>(count);
  }
  return a;
}

Status ParseAccelerators(const Reader& r, const YAML::Node& node, Resources& out) {
  out.accelerators.clear();
  if (node.IsScalar()) {
    SKY_ASSIGN_OR_RETURN(Accelerator a, ParseAccelerator(r, node, node.Scalar(), nullptr));
    out.accelerators.push_back(a);
  } else if (node.IsMap()) {  // {H100: 8, A100: 8} or the set {H100:8, A100:8}
    for (const auto& entry : node) {
      SKY_ASSIGN_OR_RETURN(std::string key, r.Text(entry.first, "resources.accelerators"));
      SKY_ASSIGN_OR_RETURN(Accelerator a, ParseAccelerator(r, entry.first, key, &entry.second));
      out.accelerators.push_back(a);
    }
  } else if (node.IsSequence()) {  // [H100:8, A100:8]: in this order
    out.accelerators_ordered = true;
    for (const auto& entry : node) {
      SKY_ASSIGN_OR_RETURN(std::string text, r.Text(entry, "resources.accelerators"));
      SKY_ASSIGN_OR_RETURN(Accelerator a, ParseAccelerator(r, entry, text, nullptr));
      out.accelerators.push_back(a);
    }
  } else if (!node.IsNull()) {
    return r.Bad(node, "resources.accelerators", "must be H100:8, a dict or a list of them");
  }
  if (node.IsDefined() && !node.IsNull() && out.accelerators.empty()) {
    return r.Bad(node, "resources.accelerators", "names no GPU");
  }
  return OkStatus();
}

// infra from SkyPilot's older `cloud` field.
std::string InfraOfCloud(const std::string& cloud) {
  const std::string c = Lower(cloud);
  if (c == "kubernetes" || c == "k8s") return "k8s";
  return c;
}

Status ParseResources(const Reader& r, const YAML::Node& node, Resources& out, bool nested,
                      std::vector<std::string>& notes) {
  if (!node.IsMap()) return r.Bad(node, "resources", "must be a mapping of fields");
  out.line = LineOf(node);
  for (const auto& entry : node) {
    const std::string name = entry.first.Scalar();
    const YAML::Node& v = entry.second;
    const std::string path = "resources." + name;
    if (const auto refused = RefusedResourceFields().find(name);
        refused != RefusedResourceFields().end()) {
      return r.Bad(entry.first, path, fmt::format("not honoured by skyslurm: {}", refused->second));
    }
    if (NotedResourceField(name)) {
      notes.push_back(
          fmt::format("{}:{}: {} has no meaning on these clusters (their nodes are "
                      "as they are); ignored",
                      r.file(), LineOf(entry.first), path));
      continue;
    }
    if (name == "accelerators") {
      SKY_RETURN_IF_ERROR(ParseAccelerators(r, v, out));
    } else if (name == "cpus") {
      SKY_ASSIGN_OR_RETURN(int cpus, r.AtLeast(v, path, false));
      out.cpus = cpus;
    } else if (name == "memory") {
      SKY_ASSIGN_OR_RETURN(int gb, r.AtLeast(v, path, true));
      out.memory_gb = gb;
    } else if (name == "infra") {
      SKY_ASSIGN_OR_RETURN(std::string infra, r.Text(v, path));
      out.infra = Trim(infra);
    } else if (name == "cloud") {
      SKY_ASSIGN_OR_RETURN(std::string cloud, r.Text(v, path));
      out.infra = InfraOfCloud(Trim(cloud));
    } else if (name == "image_id") {
      SKY_ASSIGN_OR_RETURN(std::string image, r.Text(v, path));
      if (!image.starts_with("docker:")) {
        return r.Bad(v, path,
                     fmt::format("'{}': only container images (docker:<image>) run here; a "
                                 "cloud's machine image has no meaning on a Slurm cluster",
                                 image));
      }
      out.image = image.substr(7);
    } else if (name == "use_spot") {
      SKY_ASSIGN_OR_RETURN(std::string spot, r.Text(v, path));
      const std::string s = Lower(spot);
      if (s != "true" && s != "false") return r.Bad(v, path, "must be true or false");
      out.use_spot = s == "true";
    } else if (name == "job_recovery" || name == "spot_recovery") {
      if (v.IsMap()) {
        for (const auto& field : v) {
          const std::string key = field.first.Scalar();
          if (key == "max_restarts_on_errors") {
            SKY_ASSIGN_OR_RETURN(std::string text, r.Text(field.second, path + "." + key));
            try {
              out.max_restarts_on_errors = std::stoi(text);
            } catch (...) {
              return r.Bad(field.second, path + "." + key, "must be a whole number");
            }
          } else if (key != "strategy") {
            return r.Unknown(field.first, path, key, {"strategy", "max_restarts_on_errors"});
          }
        }
      }
      // A strategy alone (FAILOVER, EAGER_NEXT_REGION): skyslurmd's own
      // failover is what a job gets here.
    } else if ((name == "any_of" || name == "ordered") && !nested) {
      // Read by the caller.
    } else {
      std::vector<std::string_view> known = ResourcesFields();
      if (nested)
        std::erase_if(known, [](std::string_view f) { return f == "any_of" || f == "ordered"; });
      return r.Unknown(entry.first, nested ? "resources.any_of" : "resources", name, known);
    }
  }
  return OkStatus();
}

// s3://, gs://, r2://, cos://, oci://, and Azure's blob addresses.
bool ObjectStore(std::string_view source) {
  for (std::string_view scheme :
       {"s3://", "gs://", "r2://", "cos://", "oci://", "https://", "http://", "nebius://"}) {
    if (source.starts_with(scheme)) return true;
  }
  return false;
}

Status ParseVariables(const Reader& r, const YAML::Node& node, std::string_view field,
                      std::vector<Variable>& out) {
  if (node.IsNull()) return OkStatus();
  if (!node.IsMap()) return r.Bad(node, field, "must be a mapping of NAME: value");
  for (const auto& entry : node) {
    Variable v;
    v.name = entry.first.Scalar();
    v.line = LineOf(entry.first);
    if (!ShellName(v.name)) {
      return r.Bad(entry.first, fmt::format("{}.{}", field, v.name),
                   "is not a variable name (letters, digits and _, not first a digit)");
    }
    if (!entry.second.IsNull()) {
      SKY_ASSIGN_OR_RETURN(std::string value,
                           r.Text(entry.second, fmt::format("{}.{}", field, v.name)));
      v.value = value;
    }
    out.push_back(std::move(v));
  }
  return OkStatus();
}

}  // namespace

std::string Accelerator::Text() const { return fmt::format("{}:{}", type, count); }

const std::vector<std::string_view>& TaskFields() {
  static const std::vector<std::string_view> kFields = {
      "name",    "workdir",     "num_nodes",      "resources", "envs",
      "secrets", "file_mounts", "setup",          "run",       "service",
      "pool",    "volumes",     "event_callback", "config",    "experimental"};
  return kFields;
}

const std::vector<std::string_view>& ResourcesFields() {
  static const std::vector<std::string_view> kFields = {
      "infra",        "cloud",         "accelerators",     "cpus",    "memory",    "image_id",
      "use_spot",     "job_recovery",  "spot_recovery",    "any_of",  "ordered",   "autostop",
      "ports",        "instance_type", "region",           "zone",    "disk_size", "disk_tier",
      "network_tier", "labels",        "accelerator_args", "priority"};
  return kFields;
}

Result<TaskSpec> ParseTask(std::string_view yaml_text, std::string_view file) {
  const Reader r(file);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(
        fmt::format("{}:{}: not valid YAML: {}", file, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) {
    return InvalidArgumentError(
        fmt::format("{}: a task is a mapping of fields (name, resources, setup, run...)", file));
  }
  TaskSpec task;
  task.file = std::string(file);
  YAML::Node resources;
  for (const auto& entry : root) {
    const std::string name = entry.first.Scalar();
    const YAML::Node& v = entry.second;
    if (const auto refused = RefusedTaskFields().find(name); refused != RefusedTaskFields().end()) {
      return r.Bad(entry.first, name, fmt::format("not honoured by skyslurm: {}", refused->second));
    }
    if (name == "name") {
      SKY_ASSIGN_OR_RETURN(std::string n, r.Text(v, name));
      task.name = n;
    } else if (name == "workdir") {
      if (v.IsMap()) {
        return r.Bad(v, name,
                     "a git workdir (url, ref) is not fetched by skyslurm; clone it and name "
                     "the folder");
      }
      SKY_ASSIGN_OR_RETURN(std::string w, r.Text(v, name));
      task.workdir = w;
    } else if (name == "num_nodes") {
      SKY_ASSIGN_OR_RETURN(int n, r.PositiveInt(v, name));
      task.num_nodes = n;
    } else if (name == "resources") {
      resources = v;
    } else if (name == "envs") {
      SKY_RETURN_IF_ERROR(ParseVariables(r, v, name, task.envs));
    } else if (name == "secrets") {
      SKY_RETURN_IF_ERROR(ParseVariables(r, v, name, task.secrets));
    } else if (name == "file_mounts") {
      if (v.IsNull()) continue;
      if (!v.IsMap()) return r.Bad(v, name, "must be a mapping of /path/on/cluster: source");
      for (const auto& mount : v) {
        FileMount m;
        m.destination = mount.first.Scalar();
        m.line = LineOf(mount.first);
        const std::string path = "file_mounts." + m.destination;
        const YAML::Node source = mount.second.IsMap() ? mount.second["source"] : mount.second;
        if (mount.second.IsMap() && !source.IsDefined()) {
          return r.Bad(mount.second, path,
                       "a bucket made by SkyPilot (name, store, mode) is not made by skyslurm");
        }
        SKY_ASSIGN_OR_RETURN(m.source, r.Text(source, path));
        if (ObjectStore(m.source)) {
          return r.Bad(source, path,
                       fmt::format("'{}' is an object store: skyslurm mounts local folders and "
                                   "paths on the clusters, not buckets; copy what the job needs "
                                   "into its workdir or onto the cluster first",
                                   m.source));
        }
        if (!m.destination.starts_with('/') && !m.destination.starts_with('~')) {
          return r.Bad(mount.first, path, "the path on the cluster must be absolute (or ~/...)");
        }
        task.file_mounts.push_back(std::move(m));
      }
    } else if (name == "setup") {
      if (v.IsNull()) continue;
      SKY_ASSIGN_OR_RETURN(task.setup, r.Text(v, name));
    } else if (name == "run") {
      if (v.IsNull()) continue;
      SKY_ASSIGN_OR_RETURN(task.run, r.Text(v, name));
    } else {
      return r.Unknown(entry.first, "", name, TaskFields());
    }
  }
  if (resources.IsDefined() && !resources.IsNull()) {
    Resources base;
    SKY_RETURN_IF_ERROR(ParseResources(r, resources, base, false, task.notes));
    const YAML::Node any_of = resources["any_of"];
    const YAML::Node ordered = resources["ordered"];
    if (any_of.IsDefined() && ordered.IsDefined()) {
      return r.Bad(ordered, "resources.ordered", "give any_of or ordered, not both");
    }
    const YAML::Node& list = any_of.IsDefined() ? any_of : ordered;
    if (list.IsDefined()) {
      if (!list.IsSequence() || list.size() == 0) {
        return r.Bad(list, any_of.IsDefined() ? "resources.any_of" : "resources.ordered",
                     "must be a list of resources");
      }
      task.resources.clear();
      task.resources_ordered = ordered.IsDefined();
      for (const auto& entry : list) {
        Resources one = base;
        SKY_RETURN_IF_ERROR(ParseResources(r, entry, one, true, task.notes));
        task.resources.push_back(one);
      }
    } else {
      task.resources = {base};
    }
  }
  return task;
}

}  // namespace skyslurm::task
