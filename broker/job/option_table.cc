#include "broker/job/option_table.h"

#include <algorithm>
#include <array>

namespace skyslurm::job {
namespace {

// Slurm 22.05.8 (src/common/slurm_opt.c and each command's --help/--usage).
// Sorted by name; "wait" is two options: a flag for sbatch, a number for srun.
constexpr OptionSpec kSlurmOptions[] = {
    {"accel-bind", 0, Arg::kRequired, kSrun, Opt::kOther},
    {"account", 'A', Arg::kRequired, kAllTools, Opt::kAccount},
    {"acctg-freq", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"array", 'a', Arg::kRequired, kSbatch, Opt::kArray},
    {"batch", 0, Arg::kRequired, kSbatch, Opt::kBatch},
    {"bb", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"bbf", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"bcast", 0, Arg::kOptional, kSrun, Opt::kOther},
    {"bcast-exclude", 0, Arg::kRequired, kSrun, Opt::kOther},
    {"begin", 'b', Arg::kRequired, kAllTools, Opt::kBegin},
    {"bell", 0, Arg::kNone, kSalloc, Opt::kOther},
    {"chdir", 'D', Arg::kRequired, kAllTools, Opt::kChdir},
    {"cluster", 0, Arg::kRequired, kAllTools, Opt::kClusters},
    {"cluster-constraint", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"clusters", 'M', Arg::kRequired, kAllTools, Opt::kClusters},
    {"comment", 0, Arg::kRequired, kAllTools, Opt::kComment},
    {"compress", 0, Arg::kOptional, kSrun, Opt::kOther},
    {"constraint", 'C', Arg::kRequired, kAllTools, Opt::kConstraint},
    {"container", 0, Arg::kRequired, kAllTools, Opt::kContainer},
    {"context", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"contiguous", 0, Arg::kNone, kAllTools, Opt::kOther},
    {"core-spec", 'S', Arg::kRequired, kAllTools, Opt::kOther},
    {"cores-per-socket", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"cpu-bind", 0, Arg::kRequired, kSrun, Opt::kOther},
    {"cpu-freq", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"cpu_bind", 0, Arg::kRequired, kSrun, Opt::kOther},
    {"cpus-per-gpu", 0, Arg::kRequired, kAllTools, Opt::kCpusPerGpu},
    {"cpus-per-task", 'c', Arg::kRequired, kAllTools, Opt::kCpusPerTask},
    {"deadline", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"debugger-test", 0, Arg::kNone, kSrun, Opt::kOther},
    {"delay-boot", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"dependency", 'd', Arg::kRequired, kAllTools, Opt::kDependency},
    {"disable-status", 'X', Arg::kNone, kSrun, Opt::kOther},
    {"distribution", 'm', Arg::kRequired, kAllTools, Opt::kOther},
    {"epilog", 0, Arg::kRequired, kSrun, Opt::kOther},
    {"error", 'e', Arg::kRequired, kSbatch|kSrun, Opt::kError},
    {"exact", 0, Arg::kNone, kSrun, Opt::kOther},
    {"exclude", 'x', Arg::kRequired, kAllTools, Opt::kExclude},
    {"exclusive", 0, Arg::kOptional, kAllTools, Opt::kExclusive},
    {"export", 0, Arg::kRequired, kSbatch|kSrun, Opt::kExport},
    {"export-file", 0, Arg::kRequired, kSbatch, Opt::kExportFile},
    {"extra-node-info", 'B', Arg::kRequired, kAllTools, Opt::kOther},
    {"get-user-env", 0, Arg::kOptional, kSalloc|kSbatch, Opt::kOther},
    {"gid", 0, Arg::kRequired, kAllTools, Opt::kGid},
    {"gpu-bind", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"gpu-freq", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"gpus", 'G', Arg::kRequired, kAllTools, Opt::kGpus},
    {"gpus-per-node", 0, Arg::kRequired, kAllTools, Opt::kGpusPerNode},
    {"gpus-per-socket", 0, Arg::kRequired, kAllTools, Opt::kGpusPerSocket},
    {"gpus-per-task", 0, Arg::kRequired, kAllTools, Opt::kGpusPerTask},
    {"gres", 0, Arg::kRequired, kAllTools, Opt::kGres},
    {"gres-flags", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"help", 'h', Arg::kNone, kAllTools, Opt::kHelp},
    {"het-group", 0, Arg::kRequired, kSrun, Opt::kHetGroup},
    {"hint", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"hold", 'H', Arg::kNone, kAllTools, Opt::kHold},
    {"ignore-pbs", 0, Arg::kNone, kSbatch, Opt::kOther},
    {"immediate", 'I', Arg::kOptional, kSalloc|kSrun, Opt::kImmediate},
    {"input", 'i', Arg::kRequired, kSbatch|kSrun, Opt::kInput},
    {"interactive", 0, Arg::kNone, kSrun, Opt::kOther},
    {"job-name", 'J', Arg::kRequired, kAllTools, Opt::kJobName},
    {"jobid", 0, Arg::kRequired, kSrun, Opt::kJobId},
    {"kill-command", 'K', Arg::kOptional, kSalloc, Opt::kOther},
    {"kill-on-bad-exit", 'K', Arg::kOptional, kSrun, Opt::kOther},
    {"kill-on-invalid-dep", 0, Arg::kRequired, kSbatch, Opt::kOther},
    {"label", 'l', Arg::kNone, kSrun, Opt::kOther},
    {"licenses", 'L', Arg::kRequired, kAllTools, Opt::kLicenses},
    {"mail-type", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"mail-user", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"mcs-label", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"mem", 0, Arg::kRequired, kAllTools, Opt::kMem},
    {"mem-bind", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"mem-per-cpu", 0, Arg::kRequired, kAllTools, Opt::kMemPerCpu},
    {"mem-per-gpu", 0, Arg::kRequired, kAllTools, Opt::kMemPerGpu},
    {"mincpus", 0, Arg::kRequired, kAllTools, Opt::kMincpus},
    {"mpi", 0, Arg::kRequired, kSrun, Opt::kOther},
    {"msg-timeout", 0, Arg::kRequired, kSrun, Opt::kOther},
    {"multi-prog", 0, Arg::kNone, kSrun, Opt::kOther},
    {"network", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"nice", 0, Arg::kOptional, kAllTools, Opt::kOther},
    {"no-allocate", 'Z', Arg::kNone, kSrun, Opt::kOther},
    {"no-bell", 0, Arg::kNone, kSalloc, Opt::kOther},
    {"no-kill", 'k', Arg::kOptional, kAllTools, Opt::kOther},
    {"no-requeue", 0, Arg::kNone, kSbatch, Opt::kOther},
    {"no-shell", 0, Arg::kNone, kSalloc, Opt::kNoShell},
    {"nodefile", 'F', Arg::kRequired, kAllTools, Opt::kNodefile},
    {"nodelist", 'w', Arg::kRequired, kAllTools, Opt::kNodelist},
    {"nodes", 'N', Arg::kRequired, kAllTools, Opt::kNodes},
    {"ntasks", 'n', Arg::kRequired, kAllTools, Opt::kNtasks},
    {"ntasks-per-core", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"ntasks-per-gpu", 0, Arg::kRequired, kAllTools, Opt::kNtasksPerGpu},
    {"ntasks-per-node", 0, Arg::kRequired, kAllTools, Opt::kNtasksPerNode},
    {"ntasks-per-socket", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"ntasks-per-tres", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"open-mode", 0, Arg::kRequired, kSbatch|kSrun, Opt::kOther},
    {"output", 'o', Arg::kRequired, kSbatch|kSrun, Opt::kOutput},
    {"overcommit", 'O', Arg::kNone, kAllTools, Opt::kOther},
    {"overlap", 0, Arg::kOptional, kSrun, Opt::kOther},
    {"oversubscribe", 's', Arg::kNone, kAllTools, Opt::kOther},
    {"pack-group", 0, Arg::kRequired, kSrun, Opt::kHetGroup},
    {"parsable", 0, Arg::kNone, kSbatch, Opt::kParsable},
    {"partition", 'p', Arg::kRequired, kAllTools, Opt::kPartition},
    {"power", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"prefer", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"preserve-env", 'E', Arg::kNone, kSrun, Opt::kOther},
    {"priority", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"profile", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"prolog", 0, Arg::kRequired, kSrun, Opt::kOther},
    {"propagate", 0, Arg::kOptional, kSbatch|kSrun, Opt::kOther},
    {"pty", 0, Arg::kNone, kSrun, Opt::kOther},
    {"qos", 'q', Arg::kRequired, kAllTools, Opt::kQos},
    {"quiet", 'Q', Arg::kNone, kAllTools, Opt::kQuiet},
    {"quit-on-interrupt", 0, Arg::kNone, kSrun, Opt::kOther},
    {"reboot", 0, Arg::kNone, kAllTools, Opt::kOther},
    {"relative", 'r', Arg::kRequired, kSrun, Opt::kOther},
    {"requeue", 0, Arg::kNone, kSbatch, Opt::kOther},
    {"reservation", 0, Arg::kRequired, kAllTools, Opt::kReservation},
    {"resv-ports", 0, Arg::kOptional, kSrun, Opt::kOther},
    {"send-libs", 0, Arg::kOptional, kSrun, Opt::kOther},
    {"signal", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"slurmd-debug", 0, Arg::kRequired, kSrun, Opt::kOther},
    {"sockets-per-node", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"spread-job", 0, Arg::kNone, kAllTools, Opt::kOther},
    {"switches", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"task-epilog", 0, Arg::kRequired, kSrun, Opt::kOther},
    {"task-prolog", 0, Arg::kRequired, kSrun, Opt::kOther},
    {"tasks-per-node", 0, Arg::kRequired, kAllTools, Opt::kNtasksPerNode},
    {"test-only", 0, Arg::kNone, kSbatch|kSrun, Opt::kTestOnly},
    {"thread-spec", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"threads", 'T', Arg::kRequired, kSrun, Opt::kOther},
    {"threads-per-core", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"time", 't', Arg::kRequired, kAllTools, Opt::kTime},
    {"time-min", 0, Arg::kRequired, kAllTools, Opt::kTimeMin},
    {"tmp", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"uid", 0, Arg::kRequired, kAllTools, Opt::kUid},
    {"unbuffered", 'u', Arg::kNone, kSrun, Opt::kOther},
    {"usage", 0, Arg::kNone, kAllTools, Opt::kUsage},
    {"use-min-nodes", 0, Arg::kNone, kAllTools, Opt::kOther},
    {"verbose", 'v', Arg::kNone, kAllTools, Opt::kVerbose},
    {"version", 'V', Arg::kNone, kAllTools, Opt::kVersion},
    {"wait", 'W', Arg::kNone, kSbatch, Opt::kWait},
    {"wait", 'W', Arg::kRequired, kSrun, Opt::kWait},
    {"wait-all-nodes", 0, Arg::kRequired, kSalloc|kSbatch, Opt::kOther},
    {"wckey", 0, Arg::kRequired, kAllTools, Opt::kOther},
    {"whole", 0, Arg::kNone, kSrun, Opt::kOther},
    {"wrap", 0, Arg::kRequired, kSbatch, Opt::kWrap},
    {"x11", 0, Arg::kOptional, kSalloc|kSrun, Opt::kOther},
};

constexpr Arg ArgOf(sky::ArgumentKind kind) {
  switch (kind) {
    case sky::ArgumentKind::kNone: return Arg::kNone;
    case sky::ArgumentKind::kRequired: return Arg::kRequired;
    case sky::ArgumentKind::kOptional: return Arg::kOptional;
  }
  return Arg::kNone;
}

// skyslurm's options, registered by skyslurm.so in every command: read from
// their one definition (common/sky_options.h).
constexpr std::array<OptionSpec, sky::kOptionSpecs.size()> SkyOptionTable() {
  std::array<OptionSpec, sky::kOptionSpecs.size()> all{};
  std::size_t i = 0;
  for (const auto& spec : sky::kOptionSpecs) {
    all[i++] = {spec.name, 0, ArgOf(spec.argument), kAllTools, OptOf(spec.id)};
  }
  return all;
}
constexpr auto kSkyOptions = SkyOptionTable();

constexpr std::array<OptionSpec, std::size(kSlurmOptions) + std::size(kSkyOptions)> Joined() {
  std::array<OptionSpec, std::size(kSlurmOptions) + std::size(kSkyOptions)> all{};
  std::size_t i = 0;
  for (const auto& o : kSlurmOptions) all[i++] = o;
  for (const auto& o : kSkyOptions) all[i++] = o;
  return all;
}
constexpr auto kAllOptions = Joined();

// Environment variables that set options (each command's env_vars table).
// Where two variables name the same option, the later one in this list wins,
// as in Slurm, which applies them in this order.
constexpr EnvOption kEnvOptions[] = {
    {"SBATCH_ACCOUNT", "account", kSbatch},
    {"SBATCH_ARRAY_INX", "array", kSbatch},
    {"SBATCH_ACCTG_FREQ", "acctg-freq", kSbatch},
    {"SBATCH_BATCH", "batch", kSbatch},
    {"SBATCH_BURST_BUFFER", "bb", kSbatch},
    {"SBATCH_CLUSTER_CONSTRAINT", "cluster-constraint", kSbatch},
    {"SBATCH_CLUSTERS", "clusters", kSbatch},
    {"SLURM_CLUSTERS", "clusters", kSbatch},
    {"SBATCH_CONTAINER", "container", kSbatch},
    {"SBATCH_CONSTRAINT", "constraint", kSbatch},
    {"SBATCH_CORE_SPEC", "core-spec", kSbatch},
    {"SBATCH_CPU_FREQ_REQ", "cpu-freq", kSbatch},
    {"SBATCH_CPUS_PER_GPU", "cpus-per-gpu", kSbatch},
    {"SBATCH_DEBUG", "verbose", kSbatch},
    {"SBATCH_DELAY_BOOT", "delay-boot", kSbatch},
    {"SBATCH_DISTRIBUTION", "distribution", kSbatch},
    {"SBATCH_EXCLUSIVE", "exclusive", kSbatch},
    {"SBATCH_EXPORT", "export", kSbatch},
    {"SBATCH_GET_USER_ENV", "get-user-env", kSbatch},
    {"SBATCH_GRES", "gres", kSbatch},
    {"SBATCH_GRES_FLAGS", "gres-flags", kSbatch},
    {"SBATCH_GPUS", "gpus", kSbatch},
    {"SBATCH_GPU_BIND", "gpu-bind", kSbatch},
    {"SBATCH_GPU_FREQ", "gpu-freq", kSbatch},
    {"SBATCH_GPUS_PER_NODE", "gpus-per-node", kSbatch},
    {"SBATCH_GPUS_PER_SOCKET", "gpus-per-socket", kSbatch},
    {"SBATCH_GPUS_PER_TASK", "gpus-per-task", kSbatch},
    {"SLURM_HINT", "hint", kSbatch},
    {"SBATCH_HINT", "hint", kSbatch},
    {"SBATCH_JOB_NAME", "job-name", kSbatch},
    {"SBATCH_MEM_BIND", "mem-bind", kSbatch},
    {"SBATCH_MEM_PER_CPU", "mem-per-cpu", kSbatch},
    {"SBATCH_MEM_PER_GPU", "mem-per-gpu", kSbatch},
    {"SBATCH_MEM_PER_NODE", "mem", kSbatch},
    {"SBATCH_NETWORK", "network", kSbatch},
    {"SBATCH_NO_KILL", "no-kill", kSbatch},
    {"SBATCH_NO_REQUEUE", "no-requeue", kSbatch},
    {"SBATCH_OPEN_MODE", "open-mode", kSbatch},
    {"SBATCH_OVERCOMMIT", "overcommit", kSbatch},
    {"SBATCH_PARTITION", "partition", kSbatch},
    {"SBATCH_POWER", "power", kSbatch},
    {"SBATCH_PROFILE", "profile", kSbatch},
    {"SBATCH_QOS", "qos", kSbatch},
    {"SBATCH_REQUEUE", "requeue", kSbatch},
    {"SBATCH_RESERVATION", "reservation", kSbatch},
    {"SBATCH_SIGNAL", "signal", kSbatch},
    {"SBATCH_SPREAD_JOB", "spread-job", kSbatch},
    {"SBATCH_THREAD_SPEC", "thread-spec", kSbatch},
    {"SBATCH_THREADS_PER_CORE", "threads-per-core", kSbatch},
    {"SBATCH_TIMELIMIT", "time", kSbatch},
    {"SBATCH_USE_MIN_NODES", "use-min-nodes", kSbatch},
    {"SBATCH_WAIT", "wait", kSbatch},
    {"SBATCH_WAIT_ALL_NODES", "wait-all-nodes", kSbatch},
    {"SBATCH_WCKEY", "wckey", kSbatch},
    {"SBATCH_ERROR", "error", kSbatch},
    {"SBATCH_INPUT", "input", kSbatch},
    {"SBATCH_OUTPUT", "output", kSbatch},
    {"SALLOC_ACCOUNT", "account", kSalloc},
    {"SALLOC_ACCTG_FREQ", "acctg-freq", kSalloc},
    {"SALLOC_BELL", "bell", kSalloc},
    {"SALLOC_BURST_BUFFER", "bb", kSalloc},
    {"SALLOC_CLUSTER_CONSTRAINT", "cluster-constraint", kSalloc},
    {"SALLOC_CLUSTERS", "clusters", kSalloc},
    {"SLURM_CLUSTERS", "clusters", kSalloc},
    {"SALLOC_CONTAINER", "container", kSalloc},
    {"SALLOC_CONSTRAINT", "constraint", kSalloc},
    {"SALLOC_CORE_SPEC", "core-spec", kSalloc},
    {"SALLOC_CPU_FREQ_REQ", "cpu-freq", kSalloc},
    {"SALLOC_CPUS_PER_GPU", "cpus-per-gpu", kSalloc},
    {"SALLOC_DEBUG", "verbose", kSalloc},
    {"SALLOC_DELAY_BOOT", "delay-boot", kSalloc},
    {"SALLOC_EXCLUSIVE", "exclusive", kSalloc},
    {"SALLOC_GPUS", "gpus", kSalloc},
    {"SALLOC_GPU_BIND", "gpu-bind", kSalloc},
    {"SALLOC_GPU_FREQ", "gpu-freq", kSalloc},
    {"SALLOC_GPUS_PER_NODE", "gpus-per-node", kSalloc},
    {"SALLOC_GPUS_PER_SOCKET", "gpus-per-socket", kSalloc},
    {"SALLOC_GPUS_PER_TASK", "gpus-per-task", kSalloc},
    {"SALLOC_GRES", "gres", kSalloc},
    {"SALLOC_GRES_FLAGS", "gres-flags", kSalloc},
    {"SALLOC_IMMEDIATE", "immediate", kSalloc},
    {"SALLOC_HINT", "hint", kSalloc},
    {"SLURM_HINT", "hint", kSalloc},
    {"SALLOC_KILL_CMD", "kill-command", kSalloc},
    {"SALLOC_MEM_BIND", "mem-bind", kSalloc},
    {"SALLOC_MEM_PER_CPU", "mem-per-cpu", kSalloc},
    {"SALLOC_MEM_PER_GPU", "mem-per-gpu", kSalloc},
    {"SALLOC_MEM_PER_NODE", "mem", kSalloc},
    {"SALLOC_NETWORK", "network", kSalloc},
    {"SALLOC_NO_BELL", "no-bell", kSalloc},
    {"SALLOC_NO_KILL", "no-kill", kSalloc},
    {"SALLOC_OVERCOMMIT", "overcommit", kSalloc},
    {"SALLOC_PARTITION", "partition", kSalloc},
    {"SALLOC_POWER", "power", kSalloc},
    {"SALLOC_PROFILE", "profile", kSalloc},
    {"SALLOC_QOS", "qos", kSalloc},
    {"SALLOC_RESERVATION", "reservation", kSalloc},
    {"SALLOC_SIGNAL", "signal", kSalloc},
    {"SALLOC_SPREAD_JOB", "spread-job", kSalloc},
    {"SALLOC_THREAD_SPEC", "thread-spec", kSalloc},
    {"SALLOC_THREADS_PER_CORE", "threads-per-core", kSalloc},
    {"SALLOC_TIMELIMIT", "time", kSalloc},
    {"SALLOC_USE_MIN_NODES", "use-min-nodes", kSalloc},
    {"SALLOC_WAIT_ALL_NODES", "wait-all-nodes", kSalloc},
    {"SALLOC_WCKEY", "wckey", kSalloc},
    {"SLURM_ACCOUNT", "account", kSrun},
    {"SLURM_ACCTG_FREQ", "acctg-freq", kSrun},
    {"SLURM_BCAST", "bcast", kSrun},
    {"SLURM_BCAST_EXCLUDE", "bcast-exclude", kSrun},
    {"SLURM_BURST_BUFFER", "bb", kSrun},
    {"SLURM_CLUSTERS", "clusters", kSrun},
    {"SLURM_CLUSTER_CONSTRAINT", "cluster-constraint", kSrun},
    {"SLURM_COMPRESS", "compress", kSrun},
    {"SLURM_CONSTRAINT", "constraint", kSrun},
    {"SLURM_CORE_SPEC", "core-spec", kSrun},
    {"SRUN_CPUS_PER_TASK", "cpus-per-task", kSrun},
    {"SLURM_CPU_BIND", "cpu-bind", kSrun},
    {"SLURM_CPU_FREQ_REQ", "cpu-freq", kSrun},
    {"SLURM_CPUS_PER_GPU", "cpus-per-gpu", kSrun},
    {"SLURM_DELAY_BOOT", "delay-boot", kSrun},
    {"SLURM_DEPENDENCY", "dependency", kSrun},
    {"SLURM_DISABLE_STATUS", "disable-status", kSrun},
    {"SLURM_DISTRIBUTION", "distribution", kSrun},
    {"SLURM_EPILOG", "epilog", kSrun},
    {"SLURM_EXACT", "exact", kSrun},
    {"SLURM_EXCLUSIVE", "exclusive", kSrun},
    {"SLURM_EXPORT_ENV", "export", kSrun},
    {"SRUN_EXPORT_ENV", "export", kSrun},
    {"SLURM_GPUS", "gpus", kSrun},
    {"SLURM_GPU_BIND", "gpu-bind", kSrun},
    {"SLURM_GPU_FREQ", "gpu-freq", kSrun},
    {"SLURM_GPUS_PER_NODE", "gpus-per-node", kSrun},
    {"SLURM_GPUS_PER_SOCKET", "gpus-per-socket", kSrun},
    {"SLURM_GPUS_PER_TASK", "gpus-per-task", kSrun},
    {"SLURM_GRES", "gres", kSrun},
    {"SLURM_GRES_FLAGS", "gres-flags", kSrun},
    {"SLURM_HINT", "hint", kSrun},
    {"SLURM_JOB_ID", "jobid", kSrun},
    {"SLURM_JOB_NAME", "job-name", kSrun},
    {"SLURM_JOB_NUM_NODES", "nodes", kSrun},
    {"SLURM_KILL_BAD_EXIT", "kill-on-bad-exit", kSrun},
    {"SLURM_LABELIO", "label", kSrun},
    {"SLURM_MEM_BIND", "mem-bind", kSrun},
    {"SLURM_MEM_PER_CPU", "mem-per-cpu", kSrun},
    {"SLURM_MEM_PER_GPU", "mem-per-gpu", kSrun},
    {"SLURM_MEM_PER_NODE", "mem", kSrun},
    {"SLURM_MPI_TYPE", "mpi", kSrun},
    {"SLURM_NCORES_PER_SOCKET", "cores-per-socket", kSrun},
    {"SLURM_NETWORK", "network", kSrun},
    {"SLURM_NO_KILL", "no-kill", kSrun},
    {"SLURM_NPROCS", "ntasks", kSrun},
    {"SLURM_NTASKS", "ntasks", kSrun},
    {"SLURM_NSOCKETS_PER_NODE", "sockets-per-node", kSrun},
    {"SLURM_NTASKS_PER_NODE", "ntasks-per-node", kSrun},
    {"SLURM_NTASKS_PER_GPU", "ntasks-per-gpu", kSrun},
    {"SLURM_NTASKS_PER_TRES", "ntasks-per-tres", kSrun},
    {"SLURM_OPEN_MODE", "open-mode", kSrun},
    {"SLURM_OVERCOMMIT", "overcommit", kSrun},
    {"SLURM_OVERLAP", "overlap", kSrun},
    {"SLURM_PARTITION", "partition", kSrun},
    {"SLURM_POWER", "power", kSrun},
    {"SLURM_PROFILE", "profile", kSrun},
    {"SLURM_PROLOG", "prolog", kSrun},
    {"SLURM_QOS", "qos", kSrun},
    {"SLURM_REMOTE_CWD", "chdir", kSrun},
    {"SLURM_RESERVATION", "reservation", kSrun},
    {"SLURM_RESV_PORTS", "resv-ports", kSrun},
    {"SLURM_SEND_LIBS", "send-libs", kSrun},
    {"SLURM_SIGNAL", "signal", kSrun},
    {"SLURM_SPREAD_JOB", "spread-job", kSrun},
    {"SLURM_SRUN_MULTI", "multi-prog", kSrun},
    {"SLURM_STDERRMODE", "error", kSrun},
    {"SLURM_STDINMODE", "input", kSrun},
    {"SLURM_STDOUTMODE", "output", kSrun},
    {"SLURM_TASK_EPILOG", "task-epilog", kSrun},
    {"SLURM_TASK_PROLOG", "task-prolog", kSrun},
    {"SLURM_THREAD_SPEC", "thread-spec", kSrun},
    {"SLURM_THREADS", "threads", kSrun},
    {"SLURM_THREADS_PER_CORE", "threads-per-core", kSrun},
    {"SLURM_TIMELIMIT", "time", kSrun},
    {"SLURM_UNBUFFEREDIO", "unbuffered", kSrun},
    {"SLURM_USE_MIN_NODES", "use-min-nodes", kSrun},
    {"SLURM_WAIT", "wait", kSrun},
    {"SLURM_WCKEY", "wckey", kSrun},
    {"SLURM_WORKING_DIR", "chdir", kSrun},
    {"SLURMD_DEBUG", "slurmd-debug", kSrun},
    {"SRUN_CONTAINER", "container", kSrun},
    {"SLURM_DEBUG", "verbose", kSrun},
};

constexpr ToolMask MaskOf(Tool tool) { return static_cast<ToolMask>(tool); }

}  // namespace

std::string_view ToolName(Tool tool) {
  switch (tool) {
    case Tool::kSbatch: return "sbatch";
    case Tool::kSalloc: return "salloc";
    case Tool::kSrun: return "srun";
  }
  return "sbatch";
}

std::span<const OptionSpec> BuiltinOptions() { return kAllOptions; }

std::optional<sky::SkyOption> SkyOptionOf(Opt id) {
  for (const auto& spec : sky::kOptionSpecs) {
    if (OptOf(spec.id) == id) return spec.id;
  }
  return std::nullopt;
}

std::vector<Opt> SkyOptionIds() {
  std::vector<Opt> ids;
  for (const auto& spec : sky::kOptionSpecs) ids.push_back(OptOf(spec.id));
  return ids;
}
std::span<const EnvOption> EnvOptions() { return kEnvOptions; }

namespace {

struct ToolIndex {
  std::vector<const OptionSpec*> by_name;
  std::array<const OptionSpec*, 128> by_short{};
};

const ToolIndex& IndexFor(Tool tool) {
  static const auto indexes = [] {
    std::array<ToolIndex, 3> all;
    for (int t = 0; t < 3; ++t) {
      const ToolMask mask = static_cast<ToolMask>(1 << t);
      for (const auto& spec : kAllOptions) {
        if ((spec.tools & mask) == 0) continue;
        all[static_cast<std::size_t>(t)].by_name.push_back(&spec);
        if (spec.short_name > 0) {
          all[static_cast<std::size_t>(t)].by_short[static_cast<unsigned char>(spec.short_name)] =
              &spec;
        }
      }
      std::stable_sort(all[static_cast<std::size_t>(t)].by_name.begin(),
                       all[static_cast<std::size_t>(t)].by_name.end(),
                       [](const OptionSpec* a, const OptionSpec* b) { return a->name < b->name; });
    }
    return all;
  }();
  const int t = tool == Tool::kSbatch ? 0 : tool == Tool::kSalloc ? 1 : 2;
  return indexes[static_cast<std::size_t>(t)];
}

}  // namespace

OptionTable::OptionTable(Tool tool)
    : tool_(tool), builtin_(&IndexFor(tool).by_name), shorts_(&IndexFor(tool).by_short) {}

std::vector<const OptionSpec*> OptionTable::options() const {
  std::vector<const OptionSpec*> all = *builtin_;
  for (const auto& s : spank_) all.push_back(&s);
  return all;
}

void OptionTable::AddSpankOption(std::string_view name, Arg arg) {
  if (Find(name) != nullptr) return;
  const std::string& stored = strings_.emplace_back(name);
  spank_.push_back({stored, 0, arg, MaskOf(tool_), Opt::kSpank});
}

OptionTable::LongMatch OptionTable::FindLong(std::string_view name) const {
  LongMatch match;
  if (const OptionSpec* exact = Find(name)) {
    match.spec = exact;
    return match;
  }
  if (name.empty()) return match;
  const OptionSpec* first = nullptr;
  auto consider = [&](const OptionSpec* spec) {
    if (first == nullptr) {
      first = spec;
      match.ambiguous.push_back(spec->name);
    } else if (spec->arg != first->arg || spec->id != first->id || spec->id == Opt::kOther ||
               spec->id == Opt::kSpank) {
      // glibc accepts several prefix matches only when they are the same
      // option under two names (cpu-bind and cpu_bind).
      match.ambiguous.push_back(spec->name);
    }
  };
  auto it = std::lower_bound(builtin_->begin(), builtin_->end(), name,
                             [](const OptionSpec* s, std::string_view n) { return s->name < n; });
  for (; it != builtin_->end() && (*it)->name.starts_with(name); ++it) consider(*it);
  for (const auto& s : spank_) {
    if (s.name.starts_with(name)) consider(&s);
  }
  if (match.ambiguous.size() == 1) {
    match.spec = first;
    match.ambiguous.clear();
  }
  return match;
}

const OptionSpec* OptionTable::FindShort(char c) const {
  if (c <= 0) return nullptr;
  return (*shorts_)[static_cast<unsigned char>(c)];
}

const OptionSpec* OptionTable::Find(std::string_view name) const {
  auto it = std::lower_bound(builtin_->begin(), builtin_->end(), name,
                             [](const OptionSpec* s, std::string_view n) { return s->name < n; });
  if (it != builtin_->end() && (*it)->name == name) return *it;
  for (const auto& s : spank_) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const OptionSpec* OptionTable::FindById(Opt id) const {
  for (const OptionSpec* spec : *builtin_) {
    if (spec->id == id) return spec;
  }
  for (const auto& s : spank_) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

std::vector<SpankOption> ParseSpankOptionsFromHelp(std::string_view help) {
  std::vector<SpankOption> found;
  const auto start = help.find("Options provided by plugins:");
  if (start == std::string_view::npos) return found;
  std::string_view rest = help.substr(start);
  rest.remove_prefix(rest.find('\n') == std::string_view::npos ? rest.size() : rest.find('\n') + 1);
  while (!rest.empty()) {
    const auto eol = rest.find('\n');
    std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 1);
    // The section ends at the next heading (a line starting in column 0).
    if (!line.empty() && line.front() != ' ') break;
    const auto dashes = line.find_first_not_of(' ');
    if (dashes == std::string_view::npos || line.substr(dashes, 2) != "--") continue;
    std::string_view spec = line.substr(dashes + 2);
    spec = spec.substr(0, spec.find(' '));
    SpankOption option;
    const auto eq = spec.find('=');
    option.name = std::string(spec.substr(0, eq));
    if (eq == std::string_view::npos) {
      option.arg = Arg::kNone;
    } else {
      // spank prints "--name=arginfo" alike for required and optional
      // arguments, and arginfo is free text (pyxis writes
      // "--container-image=[USER@][REGISTRY#]IMAGE..." for a required one).
      // Optional arguments are rare outside skyslurm's own options, which
      // the table already knows: take the argument as required.
      option.arg = Arg::kRequired;
    }
    if (!option.name.empty()) found.push_back(std::move(option));
  }
  return found;
}

}  // namespace skyslurm::job
