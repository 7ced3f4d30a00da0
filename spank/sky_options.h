// The --sky-* options as the SPANK plugin registers them, and the checks of
// their values. Plain C++ with no Slurm dependency, so that it is unit-tested
// on its own; spank/plugin.cc adapts it to spank.h.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace skyslurm::spank {

enum class SkyOption {
  kAnyCluster = 1,      // --sky-any-cluster[=a,b,c]
  kInfra = 2,           // --sky-infra=NAME
  kExplain = 3,         // --sky-explain
  kManaged = 4,         // --sky-managed
  kRetryOnFailure = 5,  // --sky-retry-on-failure=N
  kImage = 6,           // --sky-image=IMAGE (a Kubernetes cluster's container image)
  kWorkdir = 7,         // --sky-workdir=DIR|none (the folder copied to a peer)
  kSyncBack = 8,        // --sky-sync-back=PATTERN (files fetched back when the job ends)
};

enum class ArgumentKind { kNone = 0, kRequired = 1, kOptional = 2 };  // spank's has_arg

struct OptionSpec {
  SkyOption id;
  const char* name;     // without the leading "--"
  const char* arginfo;  // shown in --help as --NAME=arginfo
  const char* usage;
  ArgumentKind argument;
};

// Every option the plugin registers, in --help order.
std::span<const OptionSpec> SkyOptionSpecs();

// Checks an option's value as given on a command line or #SBATCH line.
// `value` is null when the option came without one; Slurm hands the literal
// "(null)" to a job's steps for a bare optional option, and "" remotely:
// both mean "no value". Returns an empty string when valid, else the message
// to show the user.
std::string ValidateOptionValue(SkyOption id, const char* value);

// True when `value` is Slurm's way of saying "given without a value".
bool IsAbsentValue(const char* value);

// Whether `name` can be a cluster name: what Slurm's ClusterName accepts
// (letters, digits, '-', '_'; at most 64 characters).
bool IsValidClusterName(std::string_view name);

}  // namespace skyslurm::spank
