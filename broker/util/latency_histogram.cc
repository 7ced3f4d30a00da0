#include "broker/util/latency_histogram.h"

#include <fmt/format.h>

#include <cmath>

namespace skyslurm {

void LatencyHistogram::Observe(std::chrono::nanoseconds elapsed) {
  const double seconds = std::chrono::duration<double>(elapsed).count();
  std::size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_ns_.fetch_add(elapsed.count(), std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

std::string PrometheusNumber(double value) {
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", value);
}

std::string PrometheusLabel(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string LatencyHistogram::Render(std::string_view name, std::string_view help,
                                     std::string_view labels, bool header) const {
  std::string out;
  if (header) {
    out += fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  }
  const std::string sep = labels.empty() ? "" : ",";
  std::int64_t cumulative = 0;
  for (std::size_t i = 0; i <= kBounds.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    const std::string le = i < kBounds.size() ? PrometheusNumber(kBounds[i]) : std::string("+Inf");
    out += fmt::format("{}_bucket{{{}{}le=\"{}\"}} {}\n", name, labels, sep, le, cumulative);
  }
  const std::string braces = labels.empty() ? "" : fmt::format("{{{}}}", labels);
  out += fmt::format("{}_sum{} {}\n", name, braces,
                     PrometheusNumber(static_cast<double>(sum_ns_.load()) / 1e9));
  // The count is the +Inf bucket's, read once, so that the two agree.
  out += fmt::format("{}_count{} {}\n", name, braces, cumulative);
  return out;
}

}  // namespace skyslurm
