#include "broker/place/estimate_calibration.h"

#include <algorithm>
#include <cmath>

namespace skyslurm::place {

std::map<std::string, EstimateScale> CalibrateEstimates(std::vector<PlacedStart> starts,
                                                        std::time_t now) {
  // Latest first: each cluster takes its newest jobs.
  std::sort(starts.begin(), starts.end(),
            [](const PlacedStart& a, const PlacedStart& b) { return a.started > b.started; });
  struct Sums {
    int jobs = 0;
    double estimated_s = 0, real_s = 0;
  };
  std::map<std::string, Sums> sums;
  for (const PlacedStart& s : starts) {
    // A job placed without an estimate, or not yet started, says nothing.
    if (s.started <= 0 || s.expected_start <= 0 || s.submitted <= 0) continue;
    if (now - s.started > kCalibrationWindowS) continue;
    Sums& c = sums[s.cluster];
    if (c.jobs == kCalibrationLatest) continue;
    ++c.jobs;
    c.estimated_s += static_cast<double>(std::max<std::time_t>(0, s.expected_start - s.submitted));
    c.real_s += static_cast<double>(std::max<std::time_t>(0, s.started - s.submitted));
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
