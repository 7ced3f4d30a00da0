#include "broker/kube/quantity.h"

#include <cmath>
#include <string>
#include <utility>

namespace skyslurm::kube {
namespace {

// The value as a double times its suffix's multiplier.
std::optional<double> Scaled(std::string_view q) {
  if (q.empty()) return std::nullopt;
  std::size_t end = 0;
  while (end < q.size() && (std::isdigit(static_cast<unsigned char>(q[end])) || q[end] == '.' ||
                            (end == 0 && (q[end] == '+' || q[end] == '-')))) {
    ++end;
  }
  double mantissa = 0;
  try {
    mantissa = std::stod(std::string(q.substr(0, end)));
  } catch (...) {
    return std::nullopt;
  }
  const std::string_view suffix = q.substr(end);
  static const std::pair<std::string_view, double> kSuffixes[] = {
      {"", 1},
      {"m", 1e-3},
      {"k", 1e3},
      {"M", 1e6},
      {"G", 1e9},
      {"T", 1e12},
      {"P", 1e15},
      {"E", 1e18},
      {"Ki", 1024.0},
      {"Mi", 1048576.0},
      {"Gi", 1073741824.0},
      {"Ti", 1099511627776.0},
      {"Pi", 1125899906842624.0},
      {"Ei", 1152921504606846976.0},
      {"n", 1e-9},
      {"u", 1e-6},
  };
  for (const auto& [s, m] : kSuffixes) {
    if (suffix == s) return mantissa * m;
  }
  if (suffix.size() > 1 && (suffix[0] == 'e' || suffix[0] == 'E')) {
    try {
      return mantissa * std::pow(10.0, std::stoi(std::string(suffix.substr(1))));
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::int64_t> Millicores(std::string_view quantity) {
  auto v = Scaled(quantity);
  if (!v) return std::nullopt;
  return static_cast<std::int64_t>(std::ceil(*v * 1000 - 1e-6));
}

std::optional<std::int64_t> Bytes(std::string_view quantity) {
  auto v = Scaled(quantity);
  if (!v) return std::nullopt;
  return static_cast<std::int64_t>(std::ceil(*v - 1e-6));
}

std::optional<std::int64_t> Count(std::string_view quantity) { return Bytes(quantity); }

}  // namespace skyslurm::kube
