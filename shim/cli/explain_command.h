// `skyslurm explain [sbatch options] script.sh [args]`: the canonical request,
// then, for every cluster, the job as that cluster would run it (the
// directives and module lines changed, as a diff) or why it cannot run there.
#pragma once

#include <string>
#include <vector>

namespace skyslurm::cli {

// Returns the exit status: 0 when some cluster can run the job, 1 when none
// can, 2 on bad input or usage.
int RunExplain(const std::vector<std::string>& args);

}  // namespace skyslurm::cli
