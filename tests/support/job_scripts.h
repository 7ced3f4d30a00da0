// Batch scripts of the shapes whose verdicts are easy to get wrong, built
// at random from a seed (so that a run repeats exactly): heterogeneous job
// layouts, plugin options in the script's own steps, pyxis' image forms,
// and mixed CPU and memory options. The explain differential test
// (tests/broker/place/explain_differential_test.cc) asks each cluster's own
// sbatch about each.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace skyslurm::testing {

struct JobScript {
  std::string kind;  // "hetjob", "steps", "pyxis", "cpu-memory"
  std::string name;  // "hetjob-3.sh"
  std::string text;
};

// `per_kind` scripts of each kind. Deterministic for a given seed.
std::vector<JobScript> GenerateJobScripts(std::uint32_t seed, int per_kind);

}  // namespace skyslurm::testing
