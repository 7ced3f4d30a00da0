// What Slurm's client commands print, with a cluster's own job ids put
// back as the global ids the user was given (job/global_id.h), in the
// command's own layout: a width Slurm gave a column is kept, and so is its
// justification. Pure functions over text, tested on fixtures and then on
// the testbed's real output (tests/broker/daemon/slurm_views_test.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace skyslurm::daemon {

// A cluster's job ids (an array's base id) -> the global ids they are known by.
using IdMap = std::map<std::string, std::uint64_t, std::less<>>;

// "77", "77_7", "77_[1-3]", "77.batch", "77+0": the global id in place of
// the number when the map has it; anything else as it is.
std::string MapIdValue(std::string_view value, const IdMap& map);

// squeue's format when none is given (-o, SQUEUE_FORMAT): 22.05's default,
// or its -l one; with -s/--steps, its steps' (the same with -l).
std::string SqueueDefaultFormat(bool long_format, bool steps = false);

// The format with each job id field (%i, %A, %F; with -s, whose letters
// mean other things, the step id %i alone) wrapped in markers that carry its
// width and justification, printed with no width of its own;
// UnmarkSqueueOutput then prints each mapped id as the field would have.
// `track` (jobs, not steps): the state fields (%t, %T) marked too, and each
// line ends with its job's id and state, unseen, so that an unsettled job's
// ended state is shown as CG/COMPLETING (SqueueHold).
std::string MarkSqueueFormat(std::string_view format, bool steps = false, bool track = false);
struct SqueueHold;
std::string UnmarkSqueueOutput(std::string_view out, const IdMap& map,
                               const SqueueHold* hold = nullptr);

// A cluster's ids of routed jobs that skyslurmd has not yet taken as ended:
// it may still bring their folder back, restart or move them. A final
// state their cluster prints (COMPLETED, FAILED...) is shown as COMPLETING,
// Slurm's own word for a job still finishing, until skyslurmd is done with
// it: a workflow engine that then looks for the job's outputs finds them.
using Unsettled = std::set<std::string, std::less<>>;

// squeue of a format marked with `track`: the lines of these jobs whose
// state is ended show it as CG (%t) or COMPLETING (%T); with `drop_ended`
// (the command was given --states=all only to find them: the user asked
// for squeue's default states) any other line of an ended job is dropped.
struct SqueueHold {
  const Unsettled* unsettled = nullptr;
  bool drop_ended = false;
};

// COMPLETED, FAILED, CANCELLED (and "CANCELLED by 0"), TIMEOUT, NODE_FAIL,
// OUT_OF_MEMORY, BOOT_FAIL, DEADLINE, PREEMPTED: sacct's and scontrol's
// words for a job that has ended.
bool IsEndedSlurmState(std::string_view state);

// squeue -O/--Format (and SQUEUE_FORMAT2): fields "type[:[.][size][suffix]]"
// separated by commas. Each field gets a marker at the end of its suffix,
// and the job id fields (JobID, JobArrayID, ArrayJobID) are printed whole
// (size 0); UnmarkSqueueFields then prints each id as its field would have
// (its size, default kSqueueFieldWidth, its justification and suffix), mapped.
inline constexpr int kSqueueFieldWidth = 20;
struct SqueueField {
  bool id = false;
  int width = kSqueueFieldWidth;
  bool right = false;
  std::string suffix;
};
struct MarkedSqueueFields {
  std::string format;
  std::vector<SqueueField> fields;
};
MarkedSqueueFields MarkSqueueFields(std::string_view spec);
std::string UnmarkSqueueFields(std::string_view out, const MarkedSqueueFields& marked,
                               const IdMap& map);

// sacct's text: the JobID and JobIDRaw columns mapped. `parsable`: -p/-P
// (fields split at '|', the first line the header); else the fixed-width
// table, whose second line of dashes gives each column's width. The output
// must have its header (callers drop it afterwards when asked).
// The State of an unsettled job's own line (not its steps') is held as
// COMPLETING; without a JobID or JobIDRaw column to tell whose a line is,
// every line's is when `all_unsettled` (each job the command named on this
// cluster is unsettled: `sacct -j <id> -o State`).
std::string MapSacctOutput(std::string_view out, bool parsable, const IdMap& map,
                           const Unsettled& unsettled = {}, bool all_unsettled = false);

// scontrol's records: JobId=, ArrayJobId= and HetJobId= values mapped; an
// unsettled job's JobState= held as COMPLETING.
std::string MapScontrolOutput(std::string_view out, const IdMap& map,
                              const Unsettled& unsettled = {});

// sacct -M/--clusters/-L's output, asked with one more field at the end,
// its Cluster (`cluster_width` wide when not parsable): each line's ids
// mapped with its cluster's map (MapSacctOutput), that field removed.
inline constexpr int kSacctClusterWidth = 40;
// sacct's fields when none are given, and with -l (22.05's, as its header
// names them; -l and --format exclude each other, so -M -l asks for these).
inline constexpr char kSacctDefaultFormat[] =
    "JobID,JobName,Partition,Account,AllocCPUS,State,ExitCode";
inline constexpr std::string_view kSacctLongFormat =
    "JobID,JobIDRaw,JobName,Partition,MaxVMSize,MaxVMSizeNode,MaxVMSizeTask,AveVMSize,MaxRSS,"
    "MaxRSSNode,MaxRSSTask,AveRSS,MaxPages,MaxPagesNode,MaxPagesTask,AvePages,MinCPU,MinCPUNode,"
    "MinCPUTask,AveCPU,NTasks,AllocCPUS,Elapsed,State,ExitCode,AveCPUFreq,ReqCPUFreqMin,"
    "ReqCPUFreqMax,ReqCPUFreqGov,ReqMem,ConsumedEnergy,MaxDiskRead,MaxDiskReadNode,"
    "MaxDiskReadTask,AveDiskRead,MaxDiskWrite,MaxDiskWriteNode,MaxDiskWriteTask,AveDiskWrite,"
    "ReqTRES,AllocTRES,TRESUsageInAve,TRESUsageInMax,TRESUsageInMaxNode,TRESUsageInMaxTask,"
    "TRESUsageInMin,TRESUsageInMinNode,TRESUsageInMinTask,TRESUsageInTot,TRESUsageOutMax,"
    "TRESUsageOutMaxNode,TRESUsageOutMaxTask,TRESUsageOutAve,TRESUsageOutTot";
std::string MapSacctByCluster(std::string_view out, bool parsable,
                              const std::map<std::string, IdMap, std::less<>>& maps,
                              const std::map<std::string, Unsettled, std::less<>>& unsettled);

// squeue -M/--clusters' output: a section per cluster, each begun by a line
// "CLUSTER: <name>"; each section mapped by `map_one` with that cluster's
// map from `maps` (none: an empty one). With -h there are no sections and
// each line begins with its cluster's name: each line mapped with that
// cluster's map; a line before the first section naming none (-l's date)
// with an empty one.
std::string MapClusterSections(
    std::string_view out, const std::map<std::string, IdMap, std::less<>>& maps,
    const std::function<std::string(std::string_view, const IdMap&)>& map_one);

// squeue -M -h as squeue prints it, from the sections printed without -h
// (which alone say whose each line is: with -h and a format given, squeue
// names no cluster): the "CLUSTER:" lines, each section's header and blank
// lines dropped; with `name_lines` (squeue's own layout, default or -l) and
// several sections, each line begun by its cluster's name in 10 columns
// and a blank, as 22.05 prints them.
std::string SectionsWithoutHeaders(std::string_view sections, bool name_lines);

// The text without its first `lines` lines.
std::string DropLines(std::string_view text, int lines);

}  // namespace skyslurm::daemon
