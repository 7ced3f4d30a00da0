#include "broker/place/estimate_calibration.h"

#include <algorithm>
#include <cmath>

namespace skyslurm::place {

std::map<std::string, EstimateScale> CalibrateEstimates(std::vector<PlacedStart> starts,
                                                        std::time_t now) {
  // Latest placed first: each cluster takes its newest jobs.
  std::sort(starts.begin(), starts.end(),
            [](const PlacedStart& a, const PlacedStart& b) { return a.submitted > b.submitted; });
  struct Sums {
    int jobs = 0;
    double estimated_s = 0, real_s = 0;
  };
  std::map<std::string, Sums> sums;
  for (const PlacedStart& s : starts) {
    // A job placed without an estimate, or ended without a start (a move
    // cancels one), says nothing.
    if (s.expected_start <= 0 || s.submitted <= 0 || (s.started <= 0 && !s.waiting)) continue;
    if (now - s.submitted > kCalibrationWindowS) continue;
    Sums& c = sums[s.cluster];
    if (c.jobs == kCalibrationLatest) continue;
    ++c.jobs;
    const auto estimated = std::max<std::time_t>(0, s.expected_start - s.submitted);
    const auto real = s.started > 0 ? std::max<std::time_t>(0, s.started - s.submitted)
                                    : std::max(now - s.submitted, estimated);
    c.estimated_s += static_cast<double>(estimated);
    c.real_s += static_cast<double>(real);
  }
  std::map<std::string, EstimateScale> scales;
  for (const auto& [cluster, c] : sums) {
    if (c.jobs < kCalibrationFewest || c.estimated_s < kLeastWaitS) continue;
    const double factor = std::clamp(c.real_s / c.estimated_s, 1 / kMaxScale, kMaxScale);
    scales[cluster] = {factor, c.jobs};
  }
  return scales;
}

std::time_t ScaledStart(std::time_t start, std::time_t now, const EstimateScale& scale) {
  if (start <= now) return start;
  return now +
         static_cast<std::time_t>(std::lround(static_cast<double>(start - now) * scale.factor));
}

}  // namespace skyslurm::place
