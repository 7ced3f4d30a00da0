// Values for sbatch's value-taking options, to ask the real sbatch and
// skyslurm's parser the same question (tests/broker/job/sbatch_differential_test.cc).
// Each option gets its hand-listed edge cases (every suffix, case and form
// Slurm's own parsers branch on) and then values built at random from the
// same parts, seeded, so that a run can be repeated exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace skyslurm::testing {

struct OptionValue {
  std::string option;  // long name, without "--"
  std::string value;   // never contains a newline or a tab
};

// Every option the generator knows, with `random_per_option` random values
// each beside its listed ones. Deterministic for a given seed.
std::vector<OptionValue> GenerateOptionValues(std::uint32_t seed, int random_per_option);

// The options the generator covers, in the order it lists them.
std::vector<std::string> GeneratedOptions();

}  // namespace skyslurm::testing
