// The Kubernetes backend's speed, against the native client in the same run:
//
//   kube_bench [nodes pods submissions]      (defaults 5000 50000 20)
//
// 1. Probe: a second fake API server (scripts/testbed/kube, its synthetic
//    cluster of `nodes` nodes and `pods` running pods of about 3.5 KB each,
//    on port 7399) is listed the way a probe lists it (nodes and pods in
//    pages of 500, side by side): cold, three times; then kept current from
//    watches (the daemon's way): the first probe (the informers' lists) and
//    twenty more answered from the watched view. Aim: a cold probe <= 1 s.
// 2. Submission to kappa (the testbed's): KubernetesBackend::Submit of a
//    one-pod job against `kubectl create -f` of the same Job (kubectl with a
//    warm discovery cache, as a user's is), each `submissions` times; the
//    median of each and their ratio. Aim: <= 0.25x kubectl.
// Needs the testbed up (kappa) and root (the fake server's setup).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <future>
#include <thread>

#include "bench/bench_support.h"
#include "broker/backend/kubernetes/kubernetes_backend.h"
#include "broker/job/request.h"
#include "broker/kube/kubeconfig.h"
#include "broker/backend/kubernetes/manifests.h"
#include "broker/util/command.h"

using namespace skyslurm;
using bench::Clock;
using bench::Ms;

namespace {

Result<CommandOutput> Run(const std::vector<std::string>& argv, int timeout_s = 600) {
  LocalCommandRunner runner;
  Command c{.argv = argv};
  c.timeout = std::chrono::seconds(timeout_s);
  return runner.Run(c);
}

config::ClusterSettings Settings() {
  config::ClusterSettings s;
  s.name = "kappa";
  s.kind = "kubernetes";
  s.default_image = "ubuntu:22.04";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::atoi(argv[1]) : 5000;
  const int pods = argc > 2 ? std::atoi(argv[2]) : 50000;
  const int submissions = argc > 3 ? std::atoi(argv[3]) : 20;
  const std::string tb = bench::TestbedDir();
  const std::string server =
      std::string(SKYSLURM_SOURCE_DIR) + "/scripts/testbed/kube/fake_apiserver.py";
  std::printf("process start: %.2f ms (fork+exec+wait of /bin/true, mean of 200)\n",
              bench::ProcessStartMs());

  // ---------------------------------------------------------------- probe
  const std::string dir = fmt::format("/tmp/kube-bench-{}", ::getpid());
  auto setup =
      Run({"python3", server, "setup", "--dir", dir, "--port", "7399", "--user", "skyuser1"});
  if (!setup.ok() || !setup->success()) {
    std::fprintf(stderr, "kube_bench: setup failed: %s\n",
                 setup.ok() ? setup->err.c_str() : setup.status().message().c_str());
    return 1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    const std::string config = dir + "/config.json", n = std::to_string(nodes),
                      p = std::to_string(pods);
    freopen((dir + "/server.log").c_str(), "w", stderr);
    execlp("python3", "python3", server.c_str(), "serve", "--config", config.c_str(),
           "--synthetic-nodes", n.c_str(), "--synthetic-pods", p.c_str(), nullptr);
    _exit(127);
  }
  const auto generating = Clock::now();
  bool ready = false;
  for (int i = 0; i < 1200 && !ready; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    auto r = Run({"curl", "-sk", "--max-time", "2", "https://127.0.0.1:7399/readyz"}, 5);
    ready = r.ok() && r->out.find("ok") != std::string::npos;
  }
  auto stop_server = [&] {
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    (void)Run({"rm", "-rf", dir});
  };
  if (!ready) {
    std::fprintf(stderr, "kube_bench: the synthetic server did not come up; see %s/server.log\n",
                 dir.c_str());
    stop_server();
    return 1;
  }
  std::printf("synthetic cluster: %d nodes, %d pods, made in %.1f s\n", nodes, pods,
              Ms(Clock::now() - generating) / 1000);
  auto context = kube::LoadContext({dir + "/kubeconfig"}, "kappa");
  if (!context.ok()) {
    std::fprintf(stderr, "kube_bench: %s\n", context.status().message().c_str());
    stop_server();
    return 1;
  }
  {
    std::vector<double> cold;
    std::size_t seen_nodes = 0, seen_jobs = 0;
    for (int i = 0; i < 3; ++i) {
      backend::KubernetesBackend k("big", Settings(), *context, nullptr);
      const auto t0 = Clock::now();
      auto inv = k.Probe(std::chrono::seconds(120));
      cold.push_back(Ms(Clock::now() - t0));
      if (!inv.ok()) {
        std::fprintf(stderr, "kube_bench: probe: %s\n", inv.status().message().c_str());
        break;
      }
      seen_nodes = inv->description.nodes.size();
      seen_jobs = inv->jobs.size();
    }
    std::printf(
        "probe, cold (list nodes and pods, pages of 500): median %.0f ms of %zu (%zu nodes, "
        "%zu unfinished pods) [aim <= 1000 ms]\n",
        bench::Median(cold), cold.size(), seen_nodes, seen_jobs);
    // The floor: the same pages fetched the same way, each item only found
    // (no facts read, no inventory): the fake server's own pace.
    {
      kube::ApiClient api("big", *context, nullptr);
      std::vector<double> floor;
      std::size_t bytes = 0;
      for (int i = 0; i < 3; ++i) {
        const auto t0 = Clock::now();
        bytes = 0;
        auto nodes_listed = std::async(std::launch::async, [&] {
          return api.ListEach("/api/v1/nodes", std::chrono::seconds(120),
                              [](JsonCursor& item) { return item.Skip(); });
        });
        auto pods_listed = api.ListEach(
            kube::WithQuery("/api/v1/pods",
                            {{"fieldSelector", "status.phase!=Succeeded,status.phase!=Failed"}}),
            std::chrono::seconds(120), [&](JsonCursor& item) {
              std::string_view text;
              SKY_RETURN_IF_ERROR(item.Raw(&text));
              bytes += text.size();
              return OkStatus();
            });
        (void)nodes_listed.get();
        floor.push_back(Ms(Clock::now() - t0));
        if (!pods_listed.ok()) break;
      }
      std::printf(
          "  the same lists, items only found (the server's pace, the floor): median %.0f ms "
          "(%.0f MB of pods)\n",
          bench::Median(floor), static_cast<double>(bytes) / 1e6);
    }
    backend::KubernetesBackend watched("big", Settings(), *context, nullptr, /*watch=*/true);
    const auto t0 = Clock::now();
    auto first = watched.Probe(std::chrono::seconds(120));
    const double sync = Ms(Clock::now() - t0);
    std::vector<double> warm;
    for (int i = 0; i < 20 && first.ok(); ++i) {
      const auto t1 = Clock::now();
      (void)watched.Probe(std::chrono::seconds(30));
      warm.push_back(Ms(Clock::now() - t1));
    }
    std::printf(
        "probe, watched: first (the informers' lists) %.0f ms, then median %.1f ms of %zu "
        "from the watched view\n",
        sync, bench::Median(warm), warm.size());
  }
  stop_server();

  // ------------------------------------------------------------ submission
  auto kappa_context = kube::LoadContext({tb + "/kubeconfig"}, "kappa");
  if (!kappa_context.ok()) {
    std::fprintf(stderr, "kube_bench: %s (is the testbed up?)\n",
                 kappa_context.status().message().c_str());
    return 1;
  }
  backend::KubernetesBackend kappa("kappa", Settings(), *kappa_context, nullptr);
  job::RequestInput in;
  in.args = {"--gres=gpu:h100:1", "--sky-image=ubuntu:22.04", "-t", "1", "job.sh"};
  in.script_text = "#!/bin/sh\ntrue\n";
  auto request = job::ParseRequest(in);
  auto inv = kappa.Probe(std::chrono::seconds(10));
  catalog::AcceleratorCatalog catalog;
  config::ClusterSettings settings = Settings();
  auto t = request.ok() && inv.ok() ? kappa.Translate(*request, inv->description,
                                                      {"alpha", &catalog, &settings, "", nullptr})
                                    : translate::Translation{};
  if (!t.ok()) {
    std::fprintf(stderr, "kube_bench: the job does not translate for kappa\n");
    return 1;
  }
  std::vector<double> ours, theirs;
  std::vector<std::string> made;
  const std::string cache = fmt::format("/tmp/kube-bench-cache-{}", ::getpid());
  const std::string kubeconfig = tb + "/kubeconfig";
  (void)Run({"kubectl", "--kubeconfig", kubeconfig, "--cache-dir", cache, "get", "nodes"});  // warm
  for (int i = 0; i < submissions; ++i) {
    backend::SubmitSpec spec;
    spec.sky_id = fmt::format("sky-20261202-000000-{:06x}", (::getpid() * 64 + i) & 0xffffff);
    spec.job = *t.job;
    spec.first_attempt = true;
    spec.restartable = false;
    const auto t0 = Clock::now();
    auto key = kappa.Submit(spec, std::chrono::seconds(30));
    ours.push_back(Ms(Clock::now() - t0));
    if (key.ok()) made.push_back(key->job_id);

    // The same Job for kubectl, under a name of its own.
    kube::ManifestInput m;
    m.shape = *kube::ShapeOf(*t.job);
    m.script = t.job->script;
    m.sky_id = spec.sky_id;
    m.native_id = fmt::format("kc{}-{}", ::getpid(), i);
    m.cluster = "kappa";
    m.namespace_name = "default";
    const kube::Manifests manifests = kube::BuildManifests(m);
    const std::string file = fmt::format("/tmp/kube-bench-job-{}.json", ::getpid());
    std::ofstream(file) << manifests.job.toStyledString();
    const auto t1 = Clock::now();
    auto created =
        Run({"kubectl", "--kubeconfig", kubeconfig, "--cache-dir", cache, "create", "-f", file});
    theirs.push_back(Ms(Clock::now() - t1));
    if (!created.ok() || !created->success()) {
      std::fprintf(stderr, "kube_bench: kubectl create: %s\n",
                   created.ok() ? created->err.c_str() : "");
    }
    (void)Run({"kubectl", "--kubeconfig", kubeconfig, "--cache-dir", cache, "delete", "-f", file,
               "--wait=false"});
    std::remove(file.c_str());
  }
  for (const auto& id : made) (void)kappa.Cancel(id, false, std::chrono::seconds(10));
  (void)Run({"rm", "-rf", cache});
  const double a = bench::Median(ours), b = bench::Median(theirs);
  std::printf(
      "submit to kappa: skyslurm %.1f ms (ConfigMap, Service, Job, 2 owner patches on one "
      "kept-alive connection) vs kubectl create -f %.1f ms (median of %d): %.3fx [aim <= 0.25x]\n",
      a, b, submissions, b > 0 ? a / b : 0);
  return 0;
}
