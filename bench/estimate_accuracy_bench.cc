// How far the start estimates are from when jobs really start, on the
// testbed's gamma (24 A100s): all GPUs held by a job that ends at its 1-minute
// limit, a pending 16-GPU job ahead (1 minute), then the measured job (16
// GPUs). Prints Slurm's own --test-only estimate, skyslurm's (with the work
// pending ahead), and the real start. Takes about 3 minutes.
//
//   build/bench/estimate_accuracy_bench
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "broker/backend/slurm/slurm_local.h"
#include "broker/job/request.h"
#include "broker/place/start_estimate.h"
#include "broker/backend/slurm/slurm_translator.h"

namespace {

using namespace skyslurm;

std::string Conf() {
  const char* dir = std::getenv("SKYSLURM_TESTBED_DIR");
  return std::string(dir != nullptr ? dir : "/tmp/skyslurm-testbed") + "/clusters/gamma/etc/slurm.conf";
}

std::string Sbatch(LocalCommandRunner& run, std::vector<std::string> args) {
  std::vector<std::string> argv = {"sbatch", "--parsable", "-o", "/dev/null"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run.Run({.argv = argv, .env_set = {{"SLURM_CONF", Conf()}}});
  if (!r.ok() || !r->success()) {
    std::fprintf(stderr, "sbatch failed: %s\n", r.ok() ? r->err.c_str() : r.status().message().c_str());
    std::exit(1);
  }
  return r->out.substr(0, r->out.find_first_of(";\n"));
}

std::time_t StartOf(LocalCommandRunner& run, const std::string& id) {
  for (int i = 0; i < 600; ++i) {
    auto r = run.Run({.argv = {"squeue", "-h", "-t", "all", "-j", id, "-o", "%T %S"},
                      .env_set = {{"SLURM_CONF", Conf()}, {"TZ", "UTC"}}});
    if (r.ok() && (r->out.starts_with("RUNNING") || r->out.starts_with("COMPLETED"))) {
      std::tm tm{};
      strptime(r->out.substr(r->out.find(' ') + 1).c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
      return timegm(&tm);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return 0;
}

}  // namespace

int main() {
  LocalCommandRunner run;
  backend::SlurmLocalBackend gamma("gamma", Conf(), "");
  const std::string a = Sbatch(run, {"-N3", "--gres=gpu:A100:8", "-t", "1", "--wrap", "sleep 600"});
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const std::string b = Sbatch(run, {"-N2", "--gres=gpu:A100:8", "-t", "1", "--wrap", "sleep 600"});
  std::this_thread::sleep_for(std::chrono::seconds(3));

  job::RequestInput in;
  in.args = {"-N2", "--gres=gpu:A100:8", "-t", "1", "--wrap", "sleep 5"};
  auto request = job::ParseRequest(in);
  auto inv = gamma.Probe(std::chrono::seconds(15));
  if (!request.ok() || !inv.ok()) {
    std::fprintf(stderr, "setup failed\n");
    return 1;
  }
  catalog::AcceleratorCatalog catalog;
  config::ClusterSettings settings;
  auto t = translate::TranslateForSlurm(*request, inv->description, {"gamma", &catalog, &settings});
  auto raw = gamma.EstimateStart(*t.job, std::chrono::seconds(15));
  if (!raw.ok()) {
    std::fprintf(stderr, "%s\n", raw.status().message().c_str());
    return 1;
  }
  place::EstimateInput e;
  e.now = std::time(nullptr);
  e.test_only_start = raw->start;
  e.partitions = place::OverlappingPartitions(inv->description, "batch");
  e.gpu_type = "A100";
  e.gpus = 16;
  e.minutes = 1;
  e.nodes = place::GpuNodes(inv->description, "batch", "A100");
  e.capacity = place::GpuCapacity(inv->description, "batch", "A100");
  e.job_nodes = 2;
  const auto adjusted = place::AccountForPendingWork(e, inv->jobs, catalog);
  const std::time_t submitted = std::time(nullptr);
  const std::string c = Sbatch(run, {"-N2", "--gres=gpu:A100:8", "-t", "1", "--wrap", "sleep 5"});
  const std::time_t actual = StartOf(run, c);
  (void)run.Run({.argv = {"scancel", a, b, c}, .env_set = {{"SLURM_CONF", Conf()}}});
  std::printf("estimate accuracy on gamma (a 16-GPU job behind a running 24-GPU job and a pending "
              "16-GPU job, 1-minute limits):\n");
  std::printf("  submitted at t=0; really started at t=%+lds\n", static_cast<long>(actual - submitted));
  std::printf("  sbatch --test-only said t=%+lds (error %+lds)\n",
              static_cast<long>(raw->start - submitted), static_cast<long>(raw->start - actual));
  std::printf("  skyslurm (with %d pending job(s) ahead) said t=%+lds (error %+lds)\n",
              adjusted.pending_ahead, static_cast<long>(adjusted.start - submitted),
              static_cast<long>(adjusted.start - actual));
  return 0;
}
