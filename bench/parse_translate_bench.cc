// Parse + translate throughput: every script of tests/data/scripts (and a
// few inline ones) parsed into a request and translated for the testbed's
// three clusters (their description fixtures), on one thread. Prints
// scripts/s; the aim is >= 100,000 scripts/s on one core.
//
//   build/bench/parse_translate_bench [seconds]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "broker/cluster/description.h"
#include "broker/job/request.h"
#include "broker/backend/slurm/slurm_translator.h"

namespace {

std::string Read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace skyslurm;
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  const std::string data = std::string(SKYSLURM_SOURCE_DIR) + "/tests/data/";
  std::vector<std::string> scripts;
  for (const auto& e : std::filesystem::directory_iterator(data + "scripts")) {
    scripts.push_back(Read(e.path()));
  }
  scripts.push_back(
      "#!/bin/bash\n#SBATCH -p gpu\n#SBATCH --gres=gpu:h100:2 -t 30\nmodule load cuda/12.1\n"
      "srun python train.py\n");
  std::vector<cluster::Description> clusters;
  for (const char* c : {"alpha", "beta", "gamma"}) {
    auto d = cluster::ReadDescriptionFile(data + "clusters/" + c + ".yaml");
    if (!d.ok()) {
      std::fprintf(stderr, "%s\n", d.status().message().c_str());
      return 1;
    }
    clusters.push_back(std::move(*d));
  }
  catalog::AcceleratorCatalog catalog;
  config::ClusterSettings settings;
  settings.modules.renames["cuda"] = "CUDA";
  translate::TranslateContext ctx{"alpha", &catalog, &settings};

  std::size_t scripts_done = 0, translations = 0, feasible = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    for (int round = 0; round < 64; ++round) {
      for (const auto& script : scripts) {
        job::RequestInput in;
        in.args = {"job.sh"};
        in.script_text = script;
        in.spank_options = {{"container-image", job::Arg::kRequired},
                            {"container-mounts", job::Arg::kRequired}};
        auto request = job::ParseRequest(in);
        ++scripts_done;
        if (!request.ok()) continue;
        for (const auto& c : clusters) {
          if (translate::TranslateForSlurm(*request, c, ctx).ok()) ++feasible;
          ++translations;
        }
      }
    }
  }
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("parse+translate: %zu scripts in %.2f s = %.0f scripts/s (each parsed once and "
              "translated for 3 clusters; %zu translations, %zu feasible)\n",
              scripts_done, elapsed, static_cast<double>(scripts_done) / elapsed, translations,
              feasible);
  std::printf("aim: >= 100000 scripts/s on one core: %s\n",
              static_cast<double>(scripts_done) / elapsed >= 100000 ? "met" : "NOT met");
  return 0;
}
