// Placement decision time on a synthetic inventory: 100 clusters x 10,000
// nodes (10 partitions of 1,000 nodes each, four GPU types, some nodes down
// or busy), a request translated for every cluster and placed, with the
// schedulers' estimates given (the decision itself, not the probes). Prints
// p50/p99/max; the aim is p99 <= 5 ms.
//
//   build/bench/placement_bench [decisions]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "broker/job/request.h"
#include "broker/place/placement.h"
#include "broker/backend/slurm/slurm_translator.h"

namespace {

using namespace skyslurm;

cluster::Description Synthetic(int c) {
  static const char* kTypes[] = {"nvidia_h100_80gb_hbm3", "A100", "l40s", "nvidia_a100-sxm4-80gb"};
  cluster::Description d;
  d.name = "c" + std::to_string(c);
  d.modules_known = true;
  d.modules = {"cuda/12.1", "cuda/12.4", "cuda/12.6", "gcc/12.2", "openmpi/4.1.5"};
  d.nodes.reserve(10'000);
  for (int p = 0; p < 10; ++p) {
    cluster::Partition part;
    part.name = "p" + std::to_string(p);
    part.is_default = p == 0;
    part.max_time_minutes = (p % 3 + 1) * 1440;
    part.default_time_minutes = 60;
    const char* type = kTypes[(c + p) % 4];
    for (int n = 0; n < 1000; ++n) {
      cluster::Node node;
      node.name = d.name + "-p" + std::to_string(p) + "-n" + std::to_string(n);
      node.cpus = 64;
      node.memory_mb = 512'000;
      node.gres = {{"gpu", type, 8}};
      node.features = {"gpu", "ib"};
      node.partitions = {part.name};
      node.state = n % 50 == 0 ? "down" : (n % 3 == 0 ? "mixed" : "idle");
      part.nodes.push_back(node.name);
      d.nodes.push_back(std::move(node));
    }
    d.partitions.push_back(std::move(part));
  }
  d.BuildIndex();
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  const int decisions = argc > 1 ? std::atoi(argv[1]) : 200;
  std::vector<cluster::Description> clusters;
  for (int c = 0; c < 100; ++c) clusters.push_back(Synthetic(c));
  job::RequestInput in;
  in.args = {"-N", "4", "--gres=gpu:h100:8", "-t", "12:00:00", "job.sh"};
  in.script_text = "#!/bin/bash\n#SBATCH --ntasks-per-node=8\nmodule load cuda/12.1\nsrun ./a.out\n";
  auto request = job::ParseRequest(in);
  if (!request.ok()) {
    std::fprintf(stderr, "%s\n", request.status().message().c_str());
    return 1;
  }
  catalog::AcceleratorCatalog catalog;
  config::ClusterSettings settings;
  std::vector<double> ms;
  std::size_t feasible = 0;
  for (int i = 0; i < decisions; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<place::Candidate> candidates;
    for (std::size_t c = 0; c < clusters.size(); ++c) {
      translate::TranslateContext ctx{"c0", &catalog, &settings};
      auto t = translate::TranslateForSlurm(*request, clusters[c], ctx);
      place::Candidate cand;
      cand.cluster = clusters[c].name;
      cand.home = c == 0;
      if (!t.ok()) {
        cand.infeasible = t.reasons;
      } else {
        for (const auto& p : t.job->fitting_partitions) {
          place::Candidate per = cand;
          per.partition = p;
          per.start = 1'800'000'000 + static_cast<std::time_t>((c * 37 + p.size()) % 3600);
          candidates.push_back(per);
        }
        continue;
      }
      candidates.push_back(cand);
    }
    const auto d = place::Place(candidates, {}, 1'800'000'000);
    feasible = candidates.size();
    if (!d.chosen) std::fprintf(stderr, "no choice?\n");
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  auto pct = [&](double q) { return ms[static_cast<std::size_t>(q * static_cast<double>(ms.size() - 1))]; };
  std::printf("placement decision over 100 clusters x 10,000 nodes (%zu candidates): "
              "p50 %.2f ms, p99 %.2f ms, max %.2f ms over %d decisions\n",
              feasible, pct(0.5), pct(0.99), ms.back(), decisions);
  std::printf("aim: p99 <= 5 ms: %s\n", pct(0.99) <= 5.0 ? "met" : "NOT met");
  return 0;
}
