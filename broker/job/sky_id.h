// A sky job's id: sky-<UTC yyyymmdd-HHMMSS>-<6 hex>, made by whoever submits
// (the shim, skyslurm), so that a retried request names the same job.
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
