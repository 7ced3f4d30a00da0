// How a cluster's start estimates lately came true. The pending-work model
// (start_estimate.h) is only as good as what it is told: time limits users
// set at twice what their jobs run make its waits too long, GPUs that pass
// from one job to the next in seconds no run time counts make them too short.
// The jobs skyslurm itself placed on a cluster say by how much, whatever the
// cause: their real waits over the waits the model gave them. Opt-in (`estimates: calibrated`), a
// placement then takes each cluster's estimated wait at that ratio.
#pragma once

#include <ctime>
#include <map>
#include <string>
#include <vector>

namespace skyslurm::place {

// One placed job: when it was submitted where it is, the start the model
// gave it (before any calibration: learning from calibrated answers would
// undo the calibration the next time), and its real start (Slurm's), or
// that it still waits.
struct PlacedStart {
  std::string cluster;
  std::time_t submitted = 0;
  std::time_t expected_start = 0;
  std::time_t started = 0;  // 0: not started
  bool waiting = false;     // not started and still pending
};

struct EstimateScale {
  double factor = 1;  // real waits over estimated, summed
  int jobs = 0;       // the jobs it was learned from
};

// Fewer jobs than this, or estimated waits under kLeastWaitS in all, say
// nothing (their cluster is left out of the map).
inline constexpr int kCalibrationFewest = 5;
inline constexpr double kLeastWaitS = 60;
// The latest jobs per cluster that count, and how far back.
inline constexpr int kCalibrationLatest = 50;
inline constexpr std::time_t kCalibrationWindowS = 24 * 3600;
// A factor is kept within [1/kMaxScale, kMaxScale]: a few odd jobs never
// make a cluster look free or hopeless.
inline constexpr double kMaxScale = 4;

// Per cluster, from the latest kCalibrationLatest jobs placed there within
// kCalibrationWindowS of `now` that started or still wait (a job placed to
// start at once counts: its real wait, if any, makes the factor larger). A
// job still waiting past its estimate counts the wait so far, one not yet
// past it counts its estimate: the jobs that started so far are those whose
// waits were short, and they alone would make every factor too small.
std::map<std::string, EstimateScale> CalibrateEstimates(std::vector<PlacedStart> starts,
                                                        std::time_t now);

// `start` with its wait from `now` taken at `scale`; a start not later than
// now stays.
std::time_t ScaledStart(std::time_t start, std::time_t now, const EstimateScale& scale);

}  // namespace skyslurm::place
