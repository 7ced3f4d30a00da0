// A call's time budget shared by the steps it takes: each step gets what is
// left (at least 1 ms, so that a late step fails by its own timeout rather
// than being given none).
#pragma once

#include <algorithm>
#include <chrono>

namespace skyslurm {

class Deadline {
 public:
  explicit Deadline(std::chrono::milliseconds budget)
      : at_(std::chrono::steady_clock::now() + budget) {}
  std::chrono::milliseconds left() const {
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        at_ - std::chrono::steady_clock::now()));
  }

 private:
  std::chrono::steady_clock::time_point at_;
};

}  // namespace skyslurm
