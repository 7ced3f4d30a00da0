// A sky job's id: sky-<UTC yyyymmdd-HHMMSS>-<12 hex>, made by whoever submits
// (the shim, skyslurm), so that a retried request names the same job. The
// 48 random bits keep two submissions of one second apart: skyslurmd takes
// a known id as a retry of its job, so two jobs that drew one id would be
// one (24 bits, the first form, made that likely in a burst: the load test
// saw it once in 1,000 submissions). Ids of the first form stay valid.
// Standard library only: the shim makes them too.
#pragma once

#include <ctime>
#include <string>
#include <string_view>

namespace skyslurm {

std::string NewSkyId(std::time_t now);

// Whether `id` has the shape of a sky id ("sky-" and letters, digits, '-').
bool LooksLikeSkyId(std::string_view id);

}  // namespace skyslurm
