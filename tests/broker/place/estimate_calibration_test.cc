#include "broker/place/estimate_calibration.h"

#include <gtest/gtest.h>

namespace skyslurm::place {
namespace {

constexpr std::time_t kNow = 1'800'000'000;

// A job submitted `ago` s before now, placed to wait `said` s, that waited `waited` s.
PlacedStart Job(std::string cluster, std::time_t ago, std::time_t said, std::time_t waited) {
  return {std::move(cluster), kNow - ago, kNow - ago + said, kNow - ago + waited};
}

TEST(EstimateCalibrationTest, RealWaitsOverEstimatedPerCluster) {
  std::vector<PlacedStart> starts;
  // gamma: estimates twice the real waits (limits twice the run times).
  for (int i = 0; i < 6; ++i) starts.push_back(Job("gamma", 1000 + i, 200, 100));
  // alpha: a third short (a GPU's turnover between jobs).
  for (int i = 0; i < 5; ++i) starts.push_back(Job("alpha", 1000 + i, 150, 200));
  const auto scales = CalibrateEstimates(starts, kNow);
  ASSERT_EQ(scales.size(), 2u);
  EXPECT_DOUBLE_EQ(scales.at("gamma").factor, 0.5);
  EXPECT_EQ(scales.at("gamma").jobs, 6);
  EXPECT_NEAR(scales.at("alpha").factor, 4.0 / 3, 1e-9);
  // A wait taken at the factor; a start now stays now.
  EXPECT_EQ(ScaledStart(kNow + 300, kNow, scales.at("gamma")), kNow + 150);
  EXPECT_EQ(ScaledStart(kNow, kNow, scales.at("alpha")), kNow);
}

TEST(EstimateCalibrationTest, TooFewJobsOrTooLittleWaitSayNothing) {
  std::vector<PlacedStart> starts;
  for (int i = 0; i < 4; ++i) starts.push_back(Job("beta", 100, 200, 100));
  // Placed to start at once and did: nothing to scale.
  for (int i = 0; i < 10; ++i) starts.push_back(Job("gamma", 100, 5, 3));
  // Ended without a start, or placed without an estimate: left out.
  for (int i = 0; i < 10; ++i) starts.push_back({"delta", kNow - 100, kNow + 50, 0, false});
  for (int i = 0; i < 10; ++i) starts.push_back({"delta", kNow - 100, 0, kNow - 10, false});
  EXPECT_TRUE(CalibrateEstimates(starts, kNow).empty());
}

TEST(EstimateCalibrationTest, OnlyTheLatestJobsOfTheLastDayCountAndTheFactorIsBounded) {
  std::vector<PlacedStart> starts;
  // Older than a day: estimates ten times too long; left out.
  for (int i = 0; i < 20; ++i) starts.push_back(Job("gamma", 2 * 86400, 1000, 100));
  EXPECT_TRUE(CalibrateEstimates(starts, kNow).empty());
  // The latest 50 (waited as said) outweigh 30 older ones (ten times too long).
  starts.clear();
  for (int i = 0; i < 30; ++i) starts.push_back(Job("gamma", 5000 + i, 1000, 100));
  for (int i = 0; i < kCalibrationLatest; ++i) starts.push_back(Job("gamma", 1000 + i, 100, 100));
  EXPECT_DOUBLE_EQ(CalibrateEstimates(starts, kNow).at("gamma").factor, 1.0);
  // Estimates a hundred times too short: held at kMaxScale.
  starts.clear();
  for (int i = 0; i < 5; ++i) starts.push_back(Job("alpha", 1000, 20, 2000));
  EXPECT_DOUBLE_EQ(CalibrateEstimates(starts, kNow).at("alpha").factor, kMaxScale);
}

// The jobs started so far are the ones whose waits were short: a job still
// waiting past its estimate counts its wait so far, one not yet past it its
// estimate, so that the factor is not made small by them alone.
TEST(EstimateCalibrationTest, JobsStillWaitingCountTheirWaitSoFar) {
  std::vector<PlacedStart> starts;
  // Started at half their estimates.
  for (int i = 0; i < 5; ++i) starts.push_back(Job("gamma", 1000 + i, 100, 50));
  // Still waiting, 400 s in, against an estimate of 100 s.
  for (int i = 0; i < 5; ++i) starts.push_back({"gamma", kNow - 400, kNow - 300, 0, true});
  EXPECT_DOUBLE_EQ(CalibrateEstimates(starts, kNow).at("gamma").factor, 2250.0 / 1000);
  // Still waiting, not yet past their estimates: neutral.
  starts.resize(5);
  for (int i = 0; i < 5; ++i) starts.push_back({"gamma", kNow - 10, kNow + 90, 0, true});
  EXPECT_DOUBLE_EQ(CalibrateEstimates(starts, kNow).at("gamma").factor, 750.0 / 1000);
  // Not started and not waiting (cancelled by a move): nothing.
  starts.resize(5);
  for (int i = 0; i < 5; ++i) starts.push_back({"gamma", kNow - 400, kNow - 300, 0, false});
  EXPECT_DOUBLE_EQ(CalibrateEstimates(starts, kNow).at("gamma").factor, 0.5);
}

}  // namespace
}  // namespace skyslurm::place
