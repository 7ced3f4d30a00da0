// The command-line grammar of Slurm 22.05's sbatch, salloc and srun: every
// option each accepts, long and short, with its kind of argument, as the
// real commands define them (checked against their --help and --usage by
// tests/broker/job/option_table_test.cc), plus skyslurm's own --sky-*
// options and, per site, the SPANK options other plugins register.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "broker/util/status.h"
#include "common/sky_options.h"

namespace skyslurm::job {

enum class Tool : std::uint8_t { kSbatch = 1, kSalloc = 2, kSrun = 4 };
using ToolMask = std::uint8_t;
inline constexpr ToolMask kSbatch = 1, kSalloc = 2, kSrun = 4, kAllTools = 7;
std::string_view ToolName(Tool tool);

enum class Arg : std::uint8_t { kNone, kRequired, kOptional };

// The options the broker interprets. Every other option is kOther and is
// carried to the target cluster byte for byte.
enum class Opt : std::uint16_t {
  kOther = 0,
  kAccount, kArray, kBatch, kBegin, kChdir, kClusters, kComment, kConstraint, kContainer,
  kCpusPerGpu, kCpusPerTask, kDependency, kError, kExclude, kExclusive, kExport, kExportFile,
  kGid, kGpus, kGpusPerNode, kGpusPerSocket, kGpusPerTask, kGres, kHelp, kHetGroup, kHold,
  kImmediate, kInput, kJobId, kJobName, kLicenses, kMem, kMemPerCpu, kMemPerGpu, kMincpus,
  kNoShell, kNodefile, kNodelist, kNodes, kNtasks, kNtasksPerGpu, kNtasksPerNode, kOutput,
  kParsable, kPartition, kQos, kQuiet, kReservation, kTestOnly, kTime, kTimeMin, kUid, kUsage,
  kVerbose, kVersion, kWait, kWrap,
  // skyslurm's own (registered by skyslurm.so)
  kSkyAnyCluster, kSkyInfra, kSkyExplain, kSkyManaged, kSkyRetryOnFailure, kSkyImage,
  kSkyWorkdir, kSkySyncBack,
  // a SPANK option of another plugin (e.g. pyxis' --container-image)
  kSpank,
};

// skyslurm's own options (common/sky_options.h) as this table's ids, and back.
constexpr Opt OptOf(sky::SkyOption option) {
  switch (option) {
    case sky::SkyOption::kAnyCluster: return Opt::kSkyAnyCluster;
    case sky::SkyOption::kInfra: return Opt::kSkyInfra;
    case sky::SkyOption::kExplain: return Opt::kSkyExplain;
    case sky::SkyOption::kManaged: return Opt::kSkyManaged;
    case sky::SkyOption::kRetryOnFailure: return Opt::kSkyRetryOnFailure;
    case sky::SkyOption::kImage: return Opt::kSkyImage;
    case sky::SkyOption::kWorkdir: return Opt::kSkyWorkdir;
    case sky::SkyOption::kSyncBack: return Opt::kSkySyncBack;
  }
  return Opt::kOther;
}
// The --sky-* option an id is, if it is one.
std::optional<sky::SkyOption> SkyOptionOf(Opt id);
// Every --sky-* option's id (what a command keeps out of a cluster's own sbatch).
std::vector<Opt> SkyOptionIds();

struct OptionSpec {
  std::string_view name;  // long name, without "--"
  char short_name;        // 0 when it has none
  Arg arg;
  ToolMask tools;
  Opt id;
};

// Slurm's options (and skyslurm's --sky-*), for all three commands.
std::span<const OptionSpec> BuiltinOptions();

// SBATCH_*, SALLOC_* and SLURM_* variables that set options, per command.
struct EnvOption {
  std::string_view variable;
  std::string_view option;  // long name
  ToolMask tools;
};
std::span<const EnvOption> EnvOptions();

// The options one command accepts: the built-in ones for that tool plus the
// site's SPANK options.
class OptionTable {
 public:
  explicit OptionTable(Tool tool);
  OptionTable(const OptionTable&) = delete;
  OptionTable& operator=(const OptionTable&) = delete;
  OptionTable(OptionTable&&) = default;
  OptionTable& operator=(OptionTable&&) = default;

  Tool tool() const { return tool_; }

  // Adds a SPANK option (from the plugin stack). One already known is left
  // as is (skyslurm's own, when skyslurm.so is in the stack).
  void AddSpankOption(std::string_view name, Arg arg);

  struct LongMatch {
    const OptionSpec* spec = nullptr;       // the option, when found
    std::vector<std::string_view> ambiguous;  // candidates, when the prefix is ambiguous
  };
  // getopt_long's rule: an exact name, else an unambiguous prefix of one.
  LongMatch FindLong(std::string_view name) const;
  const OptionSpec* FindShort(char c) const;
  // Exact long name only.
  const OptionSpec* Find(std::string_view name) const;
  // The option of this tool with this id (the first, for ids with aliases).
  const OptionSpec* FindById(Opt id) const;

  // Every option of this tool: the built-in ones (sorted by name), then the
  // SPANK ones added.
  std::vector<const OptionSpec*> options() const;

 private:
  Tool tool_;
  // Built once per tool and shared: sorted by name, and by short letter.
  const std::vector<const OptionSpec*>* builtin_;
  const std::array<const OptionSpec*, 128>* shorts_;
  std::deque<OptionSpec> spank_;     // stable addresses
  std::deque<std::string> strings_;  // names of SPANK options
};

// The SPANK options a command lists under "Options provided by plugins:" in
// its --help output, as (name, argument kind). --help does not tell optional
// from required arguments: any option printed with "=..." counts as
// required.
struct SpankOption {
  std::string name;
  Arg arg;
};
std::vector<SpankOption> ParseSpankOptionsFromHelp(std::string_view help_text);

}  // namespace skyslurm::job
