// A SkyPilot task YAML, as `skyslurm launch` reads it (docs/tasks.md): the
// fields SkyPilot's documentation gives a task, checked as our own
// configuration is (an unknown or misspelt field is an error naming its line
// and the nearest known field; a field skyslurm cannot honour, such as a
// SkyServe `service` or `autostop`, is refused by name). Pure: the text in,
// the task or the first error out.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm::task {

// "H100:8": a GPU type as the user spelt it and how many per node.
struct Accelerator {
  std::string type;
  int count = 1;
  std::string Text() const;  // "H100:8"
};

// One way to run the task (`resources`, or one entry of its any_of/ordered
// lists over the rest of it). Unset fields ask for nothing in particular.
struct Resources {
  // Each alternative is enough (a dict or a set: any of them; a list: in
  // the order given).
  std::vector<Accelerator> accelerators;
  bool accelerators_ordered = false;
  // "8" or "8+" (at least 8): CPUs per node; memory in GB per node.
  std::optional<int> cpus;
  std::optional<int> memory_gb;
  // "slurm/<cluster>[/<partition>]", "k8s[/<context>]", a cloud's name.
  std::optional<std::string> infra;
  std::optional<std::string> image;  // image_id's image, "docker:" removed
  std::optional<bool> use_spot;
  std::optional<int> max_restarts_on_errors;  // job_recovery
  int line = 0;                               // where these were written
};

struct FileMount {
  std::string destination;  // the path on the cluster
  std::string source;       // a local path, or a path on the cluster
  int line = 0;
};

// A variable of `envs` or `secrets`; no value: one must be given with
// --env/--secret (SkyPilot's rule).
struct Variable {
  std::string name;
  std::optional<std::string> value;
  int line = 0;
};

struct TaskSpec {
  std::string file;  // as named, for messages
  std::optional<std::string> name;
  std::optional<std::string> workdir;
  int num_nodes = 1;
  // One entry; more with any_of (any one of them) or ordered (the first
  // that can run).
  std::vector<Resources> resources{Resources{}};
  bool resources_ordered = false;
  std::vector<Variable> envs;
  std::vector<Variable> secrets;
  std::vector<FileMount> file_mounts;
  std::string setup;
  std::string run;
  // Notes for the user: fields read that have no meaning on these clusters
  // (disk_size...), said once at launch.
  std::vector<std::string> notes;
};

// `file` names the text in messages ("task.yaml:7: ...").
Result<TaskSpec> ParseTask(std::string_view yaml_text, std::string_view file);

// The task's fields, for "did you mean" and the docs.
const std::vector<std::string_view>& TaskFields();
const std::vector<std::string_view>& ResourcesFields();

}  // namespace skyslurm::task
