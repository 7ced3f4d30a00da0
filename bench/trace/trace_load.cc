// ShapeLoad (trace_load.h): the rules are stated in the header; this says
// how they are computed.
#include "bench/trace/trace_load.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

namespace skyslurm::trace {
namespace {

// [0, 1) from the generator's bits: the same on every standard library
// (std::uniform_real_distribution's algorithm is not fixed by the standard).
double Uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

}  // namespace

Load ShapeLoad(const std::vector<TraceJob>& window, const std::vector<ModelCluster>& clusters,
               const LoadOptions& options) {
  Load load;
  int largest_node = 0, total_gpus = 0;
  const ModelCluster* largest = nullptr;  // the most GPUs in one cluster
  std::map<std::string, int> gpus_of_type;
  for (const ModelCluster& c : clusters) {
    largest_node = std::max(largest_node, c.gpus_per_node);
    total_gpus += c.nodes * c.gpus_per_node;
    gpus_of_type[c.gpu_type] += c.nodes * c.gpus_per_node;
    if (largest == nullptr || c.nodes * c.gpus_per_node > largest->nodes * largest->gpus_per_node) {
      largest = &c;
    }
  }
  std::mt19937_64 rng(options.seed);
  for (const TraceJob& t : window) {
    // Every job draws the same number of times, used or not: one job's
    // shape never shifts another's draws.
    const double type_draw = Uniform(rng), pick_draw = Uniform(rng), limit_draw = Uniform(rng);
    if (!t.runtime_s) {
      ++load.never_ran;
      continue;
    }
    ReplayJob j;
    j.id = t.id;
    j.submit_s = t.submit_s;
    j.runtime_s = *t.runtime_s;
    if (t.gpus > 0 && largest_node > 0) {
      const bool trace_nodes_fit =
          t.nodes && *t.nodes > 1 && t.gpus % *t.nodes == 0 && t.gpus / *t.nodes <= largest_node;
      if (trace_nodes_fit) {
        j.nodes = *t.nodes;
        j.gpus_per_node = t.gpus / *t.nodes;
      } else if (t.gpus <= largest_node) {
        j.gpus_per_node = t.gpus;
      } else {
        j.nodes = (t.gpus + largest_node - 1) / largest_node;
        j.gpus_per_node = largest_node;
      }
      if (j.gpus() > largest->nodes * largest->gpus_per_node) {
        j.nodes = largest->nodes;
        j.gpus_per_node = largest->gpus_per_node;
        j.capped = true;
        ++load.capped;
      }
      if (!t.gpu_type.empty() && gpus_of_type.contains(t.gpu_type)) {
        j.gpu_type = t.gpu_type;
      } else if (type_draw >= 0.5) {
        double at = pick_draw * total_gpus;
        for (const auto& [type, gpus] : gpus_of_type) {
          j.gpu_type = type;
          if (at < gpus) break;
          at -= gpus;
        }
      }
    }
    const double limit_s = std::max(j.runtime_s * (1 + 3 * limit_draw), j.runtime_s + 60);
    j.time_limit_min = static_cast<int>(std::ceil(limit_s / 60));
    load.jobs.push_back(std::move(j));
  }
  // The GPU load within the window with arrivals scaled by `scale`: it
  // never grows with the scale, so a bisection finds the one asked for.
  const double span = options.window_s;
  auto load_at = [&](double scale) {
    if (total_gpus <= 0 || span <= 0) return 0.0;
    double offered = 0;
    for (const ReplayJob& j : load.jobs) {
      offered += j.gpus() * std::min(j.runtime_s, scale * (span - j.submit_s));
    }
    return offered / (total_gpus * span * scale);
  };
  load.offered_load = load_at(1);
  if (load.offered_load > 0 && options.load > 0) {
    double lo = 0.1, hi = 100;  // load_at(lo) >= load_at(hi)
    if (load_at(lo) <= options.load) {
      hi = lo;
    } else if (load_at(hi) >= options.load) {
      lo = hi;
    }
    for (int i = 0; i < 60 && hi / lo > 1 + 1e-12; ++i) {
      const double mid = std::sqrt(lo * hi);
      (load_at(mid) > options.load ? lo : hi) = mid;
    }
    load.arrival_scale = std::sqrt(lo * hi);
  }
  load.replay_load = load_at(load.arrival_scale);
  const double f = options.time_factor > 0 ? options.time_factor : 1;
  for (ReplayJob& j : load.jobs) {
    j.submit_s = j.submit_s * load.arrival_scale / f;
    j.runtime_s /= f;
    j.time_limit_min = std::max(1, static_cast<int>(std::ceil(j.time_limit_min / f)));
  }
  load.window_s = options.window_s * load.arrival_scale / f;
  return load;
}

bool CanRun(const ReplayJob& job, const ModelCluster& cluster) {
  return (job.gpu_type.empty() || job.gpu_type == cluster.gpu_type) && job.nodes >= 1 &&
         job.nodes <= cluster.nodes && job.gpus_per_node <= cluster.gpus_per_node;
}

std::vector<std::size_t> AbleClusters(const ReplayJob& job,
                                      const std::vector<ModelCluster>& clusters) {
  std::vector<std::size_t> out;
  for (std::size_t c = 0; c < clusters.size(); ++c) {
    if (CanRun(job, clusters[c])) out.push_back(c);
  }
  return out;
}

std::optional<std::size_t> NextAble(const ReplayJob& job, const std::vector<ModelCluster>& clusters,
                                    std::size_t from) {
  for (std::size_t k = 0; k < clusters.size(); ++k) {
    const std::size_t c = (from + k) % clusters.size();
    if (CanRun(job, clusters[c])) return c;
  }
  return std::nullopt;
}

}  // namespace skyslurm::trace
