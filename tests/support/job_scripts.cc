#include "tests/support/job_scripts.h"

#include <fmt/format.h>

#include <random>

namespace skyslurm::testing {
namespace {

class Draw {
 public:
  explicit Draw(std::uint32_t seed) : rng_(seed) {}
  template <typename T>
  const T& One(const std::vector<T>& from) {
    return from[std::uniform_int_distribution<std::size_t>(0, from.size() - 1)(rng_)];
  }
  bool Chance(int percent) { return std::uniform_int_distribution<int>(0, 99)(rng_) < percent; }

 private:
  std::mt19937 rng_;
};

// GPUs as the testbed's clusters have them and do not (alpha: 8 x h100,
// beta: 4 x its long H100 name, gamma: 8 x A100; none has a B200).
const std::vector<std::string> kGpus = {"",
                                        "--gres=gpu:h100:1",
                                        "--gres=gpu:h100:4",
                                        "--gres=gpu:h100:8",
                                        "--gres=gpu:a100:2",
                                        "--gpus-per-node=a100:8",
                                        "--gres=gpu:2",
                                        "--gpus=3",
                                        "--gres=gpu:b200:1"};
const std::vector<std::string> kTimes = {"10", "45", "2:00:00", "2-00:00:00"};
const std::vector<std::string> kPartitions = {"",     "", "gpu", "cpu", "batch", "h100-cluster",
                                              "debug"};

std::string Component(Draw& d, bool with_time) {
  std::string line = fmt::format("--nodes={}", d.One(std::vector<int>{1, 1, 2, 3}));
  if (const std::string& g = d.One(kGpus); !g.empty()) line += " " + g;
  if (const std::string& p = d.One(kPartitions); !p.empty()) line += " --partition=" + p;
  if (d.Chance(30)) line += fmt::format(" --ntasks={}", d.One(std::vector<int>{1, 2, 8}));
  if (with_time) line += " --time=" + d.One(kTimes);
  return line;
}

JobScript Hetjob(Draw& d, int i) {
  std::string text = "#!/bin/bash\n#SBATCH --job-name=het\n";
  const int components = d.One(std::vector<int>{2, 2, 3});
  for (int k = 0; k < components; ++k) {
    if (k > 0) text += d.Chance(80) ? "#SBATCH hetjob\n" : "#SBATCH packjob\n";
    text += "#SBATCH " + Component(d, k == 0 || d.Chance(30)) + "\n";
  }
  text += "srun --het-group=0 hostname\n";
  return {"hetjob", fmt::format("hetjob-{}.sh", i), text};
}

JobScript Steps(Draw& d, int i) {
  std::string text = "#!/bin/bash\n#SBATCH --time=10\n";
  if (const std::string& g = d.One(kGpus); !g.empty()) text += "#SBATCH " + g + "\n";
  text += "echo start\n";
  text += d.One(std::vector<std::string>{
      "srun --container-image=nvcr.io#nvidia/pytorch:24.01-py3 python -c 1\n",
      "srun --container-mounts=/tmp:/tmp --ntasks=1 true\n",
      "  srun -N1 --container-image ubuntu:22.04 true &\nwait\n", "srun --site-telemetry true\n",
      "srun --ntasks=1 --cpu-bind=cores true\n", "/usr/bin/srun --mpi=pmi2 true\n"});
  return {"steps", fmt::format("steps-{}.sh", i), text};
}

JobScript Pyxis(Draw& d, int i) {
  std::string text = "#!/bin/bash\n#SBATCH --time=10\n";
  if (const std::string& g = d.One(kGpus); !g.empty()) text += "#SBATCH " + g + "\n";
  text += "#SBATCH --container-image=" +
          d.One(std::vector<std::string>{"nvcr.io\\#nvidia/pytorch:24.01-py3",
                                         "\"nvcr.io#nvidia/pytorch:24.01-py3\"", "ubuntu:22.04",
                                         "alice@nvcr.io\\#nvidia/pytorch:24.01-py3",
                                         "registry.example.org:5000\\#org/image:1"}) +
          "\n";
  if (d.Chance(50)) text += "#SBATCH --container-mounts=/tmp:/data\n";
  text += "srun python train.py\n";
  return {"pyxis", fmt::format("pyxis-{}.sh", i), text};
}

JobScript CpuMemory(Draw& d, int i) {
  std::string text = "#!/bin/bash\n#SBATCH --time=10\n";
  const std::string& g = d.One(kGpus);
  if (!g.empty()) text += "#SBATCH " + g + "\n";
  std::string line = fmt::format("--nodes={}", d.One(std::vector<int>{1, 1, 2}));
  if (!g.empty() && d.Chance(40)) {
    line += fmt::format(" --cpus-per-gpu={}", d.One(std::vector<int>{2, 8, 20}));
  } else {
    line += fmt::format(" --cpus-per-task={}", d.One(std::vector<int>{1, 4, 16, 40, 70}));
  }
  if (d.Chance(50)) line += fmt::format(" --ntasks-per-node={}", d.One(std::vector<int>{1, 2, 8}));
  // One memory option: sbatch takes no two of them together.
  const int memory = d.One(std::vector<int>{0, 1, 2, 3});
  if (memory == 1)
    line += " --mem=" + d.One(std::vector<std::string>{"0", "1G", "100G", "300G", "600G"});
  if (memory == 2) line += " --mem-per-cpu=" + d.One(std::vector<std::string>{"1G", "8G", "40G"});
  if (memory == 3 && !g.empty())
    line += " --mem-per-gpu=" + d.One(std::vector<std::string>{"10G", "200G"});
  if (d.Chance(20)) line += " --exclusive";
  text += "#SBATCH " + line + "\nsrun true\n";
  return {"cpu-memory", fmt::format("cpu-memory-{}.sh", i), text};
}

}  // namespace

std::vector<JobScript> GenerateJobScripts(std::uint32_t seed, int per_kind) {
  Draw d(seed);
  std::vector<JobScript> out;
  for (int i = 0; i < per_kind; ++i) {
    out.push_back(Hetjob(d, i));
    out.push_back(Steps(d, i));
    out.push_back(Pyxis(d, i));
    out.push_back(CpuMemory(d, i));
  }
  return out;
}

}  // namespace skyslurm::testing
