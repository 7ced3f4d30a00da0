// The --sky-* options: their names, arguments, help text and the checks of
// their values, in one header with no dependency beyond the standard library,
// shared by the SPANK plugin (spank/plugin.cc registers them with Slurm) and
// the broker's option table (broker/job/option_table.cc), so that the two
// never disagree and the broker links none of the plugin's code.
#pragma once

#include <array>
#include <charconv>
#include <span>
#include <string>
#include <string_view>

namespace skyslurm::sky {

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

// Every option, in --help order.
inline constexpr std::array<OptionSpec, 8> kOptionSpecs{{
    {SkyOption::kAnyCluster, "sky-any-cluster", "[clusters]",
     "skyslurm: run the job on whichever cluster starts it first (optionally only among "
     "these comma-separated clusters)",
     ArgumentKind::kOptional},
    {SkyOption::kInfra, "sky-infra", "cluster", "skyslurm: run the job on this cluster",
     ArgumentKind::kRequired},
    {SkyOption::kExplain, "sky-explain", nullptr,
     "skyslurm: print where the job would run and why; submit nothing", ArgumentKind::kNone},
    {SkyOption::kManaged, "sky-managed", nullptr,
     "skyslurm: track the job and restart it elsewhere after node failure or preemption",
     ArgumentKind::kNone},
    {SkyOption::kRetryOnFailure, "sky-retry-on-failure", "N",
     "skyslurm: with --sky-managed, also restart the job up to N times when it fails",
     ArgumentKind::kRequired},
    {SkyOption::kImage, "sky-image", "image",
     "skyslurm: on a Kubernetes cluster, run the job in this container image",
     ArgumentKind::kRequired},
    {SkyOption::kWorkdir, "sky-workdir", "dir",
     "skyslurm: the folder copied to another cluster and run in there (default: the submit "
     "folder; 'none': copy nothing)",
     ArgumentKind::kRequired},
    {SkyOption::kSyncBack, "sky-sync-back", "pattern",
     "skyslurm: when the job ends on another cluster, fetch its files matching this pattern "
     "into the submit folder ('none': nothing, not even what it wrote)",
     ArgumentKind::kRequired},
}};

// The most restarts --sky-retry-on-failure may ask for.
inline constexpr int kMaxRetries = 100;

inline std::span<const OptionSpec> SkyOptionSpecs() { return kOptionSpecs; }

// True when `value` is Slurm's way of saying "given without a value": null,
// "" (remotely) or the literal "(null)" Slurm hands a job's steps.
inline bool IsAbsentValue(const char* value) {
  return value == nullptr || *value == '\0' || std::string_view(value) == "(null)";
}

// Whether `name` can be a cluster name: what Slurm's ClusterName accepts
// (letters, digits, '-', '_'; at most 64 characters).
inline bool IsValidClusterName(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

// Checks an option's value as given on a command line or #SBATCH line.
// `value` is null when the option came without one. Returns an empty string
// when valid, else the message to show the user.
inline std::string ValidateOptionValue(SkyOption id, const char* value) {
  const bool absent = IsAbsentValue(value);
  const std::string_view text = absent ? std::string_view() : std::string_view(value);
  switch (id) {
    case SkyOption::kAnyCluster: {
      if (absent) return {};
      std::size_t start = 0;
      while (start <= text.size()) {
        std::size_t end = text.find(',', start);
        if (end == std::string_view::npos) end = text.size();
        const std::string_view name = text.substr(start, end - start);
        if (!IsValidClusterName(name)) {
          return "invalid --sky-any-cluster list '" + std::string(text) +
                 "': expected comma-separated cluster names (letters, digits, '-', '_')";
        }
        start = end + 1;
      }
      return {};
    }
    case SkyOption::kInfra:
      if (absent) return "--sky-infra needs a cluster name";
      if (!IsValidClusterName(text)) {
        return "invalid --sky-infra cluster '" + std::string(text) +
               "': expected a cluster name (letters, digits, '-', '_')";
      }
      return {};
    case SkyOption::kExplain:
    case SkyOption::kManaged:
      return {};
    case SkyOption::kImage:
      if (absent) return "--sky-image needs a container image";
      for (const char c : text) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\'' || c == '"') {
          return "invalid --sky-image '" + std::string(text) +
                 "': an image reference has no spaces or quotes";
        }
      }
      return {};
    case SkyOption::kWorkdir:
      if (absent) return "--sky-workdir needs a folder (or 'none')";
      if (text.find('\n') != std::string_view::npos) {
        return "invalid --sky-workdir '" + std::string(text) + "': a folder name has no newline";
      }
      return {};
    case SkyOption::kSyncBack:
      if (absent) return "--sky-sync-back needs a file pattern (out/*.txt, *.ckpt)";
      if (text.starts_with("/") || text.find("..") != std::string_view::npos ||
          text.find('\n') != std::string_view::npos) {
        return "invalid --sky-sync-back '" + std::string(text) +
               "': a pattern is relative to the job's folder, without '..'";
      }
      return {};
    case SkyOption::kRetryOnFailure: {
      int n = -1;
      const auto* end = text.data() + text.size();
      const auto [ptr, ec] = std::from_chars(text.data(), end, n);
      if (absent || ec != std::errc() || ptr != end || n < 0 || n > kMaxRetries) {
        return "invalid --sky-retry-on-failure value '" + std::string(text) +
               "': expected a whole number from 0 to " + std::to_string(kMaxRetries);
      }
      return {};
    }
  }
  return "unknown skyslurm option";
}

}  // namespace skyslurm::sky
