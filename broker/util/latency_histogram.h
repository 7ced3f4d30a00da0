// A latency histogram as Prometheus keeps one: cumulative buckets of
// seconds, their sum and count, observed from any thread without a lock,
// and written in Prometheus' text format (a site daemon's /metrics).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace skyslurm {

class LatencyHistogram {
 public:
  // Upper bounds in seconds (then +Inf): from a local statement to a
  // submission that waits for a busy controller.
  static constexpr std::array<double, 14> kBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                     0.25,  0.5,    1,     2.5,  5,     10,   30};

  void Observe(std::chrono::nanoseconds elapsed);

  // `name`_bucket{le=...}, `name`_sum and `name`_count, with HELP and TYPE
  // lines; `labels` ("" or `kind="read"`) are put on every sample, and the
  // HELP and TYPE lines are left out when `header` is false (a second label
  // set of the same metric).
  std::string Render(std::string_view name, std::string_view help, std::string_view labels = "",
                     bool header = true) const;

  std::int64_t count() const { return count_.load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<std::int64_t>, kBounds.size() + 1> buckets_{};  // not cumulative
  std::atomic<std::int64_t> count_{0};
  std::atomic<std::int64_t> sum_ns_{0};
};

// A sample value as Prometheus writes it ("0.25", "3", "+Inf").
std::string PrometheusNumber(double value);
// A label value quoted and escaped as the text format wants it.
std::string PrometheusLabel(std::string_view value);

}  // namespace skyslurm
