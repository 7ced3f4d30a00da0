// Whether a change of an array's "%N" (Slurm's ArrayTaskThrottle) reached
// the tasks it governs. `scontrol update JobId=N ArrayTaskThrottle=K` walks
// every record of the array and fails (exit 1, "N_4-5: Job has already
// finished") when some of them have ended, although it has set the limit on
// every live one: Slurm 22.05 does so once pending tasks were held and
// cancelled one by one, which is how skyslurm moves them. The records'
// own word is the judge, not the command's exit code.
#pragma once

#include <cstdint>
#include <string_view>

namespace skyslurm::backend {

// True when every record of `scontrol -o show job N` (one line each) that
// is live (not in a final state) shows ArrayTaskThrottle=`limit`; also
// when none is live (nothing is left to limit). False when a live record
// shows another limit or none, or the text names no record at all.
bool LiveRecordsHaveThrottle(std::string_view show_job_lines, std::int64_t limit);

}  // namespace skyslurm::backend
