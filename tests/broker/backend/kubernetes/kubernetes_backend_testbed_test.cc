// The Kubernetes backend against kappa, the testbed's Kubernetes cluster (a
// faithful fake API server whose kubelet really runs the pods here:
// scripts/testbed/kube). Jobs are submitted as an sbatch request translated
// for kappa, as the planner does.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <thread>

#include "broker/backend/kubernetes/inventory.h"
#include "broker/backend/kubernetes/kubernetes_backend.h"
#include "broker/backend/kubernetes/manifests.h"
#include "broker/job/request.h"
#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

using backend::JobPhase;
using ::testing::HasSubstr;
using ::testing::Not;

class KubernetesBackendTest : public TestbedTest {
 protected:
  void SetUp() override {
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    settings_.name = "kappa";
    settings_.kind = "kubernetes";
    settings_.images = {{"cuda/12.1", "nvcr.io/nvidia/pytorch:24.01-py3"}};
    settings_.image_pull_timeout = 3;
    auto context = kube::LoadContext({tb_.Path("kubeconfig")}, "kappa");
    ASSERT_TRUE(context.ok()) << context.status().message();
    context_ = *context;
    kappa_ = std::make_unique<backend::KubernetesBackend>("kappa", settings_, context_, nullptr);
  }
  void TearDown() override {
    if (kappa_ == nullptr) return;
    for (const auto& id : submitted_) (void)kappa_->Cancel(id, false, std::chrono::seconds(10));
  }

  backend::SubmitSpec Spec(const std::string& sky_id, std::vector<std::string> args,
                           const std::string& script) {
    job::RequestInput in;
    in.args = std::move(args);
    in.args.push_back("job.sh");
    in.script_text = script;
    auto request = job::ParseRequest(in);
    EXPECT_TRUE(request.ok()) << request.status().message();
    auto inventory = kappa_->Probe(std::chrono::seconds(10));
    EXPECT_TRUE(inventory.ok()) << inventory.status().message();
    catalog::AcceleratorCatalog catalog;
    auto t = kappa_->Translate(*request, inventory->description,
                               {"alpha", &catalog, &settings_, "", nullptr});
    EXPECT_TRUE(t.ok()) << (t.reasons.empty() ? "" : t.reasons.front());
    backend::SubmitSpec spec;
    spec.sky_id = sky_id;
    spec.job = *t.job;
    spec.first_attempt = true;
    spec.export_env = {{"SKYPILOT_TASK_ID", sky_id}, {"SKYSLURM_CLUSTER", "kappa"}};
    return spec;
  }
  std::string MustSubmit(const backend::SubmitSpec& spec) {
    auto key = kappa_->Submit(spec, std::chrono::seconds(20));
    EXPECT_TRUE(key.ok()) << key.status().message();
    if (!key.ok()) return "";
    submitted_.push_back(key->job_id);
    return key->job_id;
  }
  // The job as the queue shows it, once `done` says so (or the last seen).
  backend::JobInfo WaitFor(const std::string& id,
                           const std::function<bool(const backend::JobInfo&)>& done,
                           int seconds = 60) {
    backend::JobInfo last;
    for (int i = 0; i < seconds * 5; ++i) {
      auto queue = kappa_->Queue(std::chrono::seconds(10));
      if (queue.ok()) {
        for (const auto& j : *queue) {
          if (j.key.job_id == id) last = j;
        }
        if (last.key.job_id == id && done(last)) return last;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    ADD_FAILURE() << "job " << id << " last seen " << last.state << ": " << last.reason;
    return last;
  }
  Json::Value List(const std::string& path) {
    auto list = kappa_->api().ListAll(path, std::chrono::seconds(10));
    EXPECT_TRUE(list.ok()) << list.status().message();
    Json::Value items(Json::arrayValue);
    if (list.ok()) {
      for (auto& i : list->items) items.append(i);
    }
    return items;
  }

  config::ClusterSettings settings_;
  kube::KubeContext context_;
  std::unique_ptr<backend::KubernetesBackend> kappa_;
  std::vector<std::string> submitted_;
};

TEST_F(KubernetesBackendTest, ProbeAndCheckSeeTheNodesAndTheirGpus) {
  auto inv = kappa_->Probe(std::chrono::seconds(10));
  ASSERT_TRUE(inv.ok()) << inv.status().message();
  ASSERT_EQ(inv->description.nodes.size(), 3u);
  EXPECT_EQ(inv->description.nodes[0].name, "kappa-n1");
  EXPECT_EQ(inv->description.nodes[0].gres[0].type, "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(inv->description.nodes[2].gres[0].type, "NVIDIA-L4");
  const backend::CheckAnswer check = kappa_->Check(std::chrono::seconds(10));
  EXPECT_TRUE(check.ok()) << check.detail;
  EXPECT_THAT(check.detail, HasSubstr("Kubernetes v1.32"));
}

TEST_F(KubernetesBackendTest, ATwoPodJobRunsEveryRankWithItsAddressesAndNothingOfTheHost) {
  const std::string sky_id = "sky-20261202-020000-a0a0a0";
  const std::string id = MustSubmit(Spec(sky_id, {"--nodes=2", "--gres=gpu:h100:8", "-t", "5"},
                                         "#!/bin/bash\nmodule load cuda/12.1\n"
                                         "echo \"rank=$SKYPILOT_NODE_RANK of $SKYPILOT_NUM_NODES "
                                         "slurm=$SLURM_NODEID/$SLURM_NNODES id=$SLURM_JOB_ID "
                                         "task=$SKYPILOT_TASK_ID conf=${SLURM_CONF:-none}\"\n"
                                         "echo ips=$(echo $SKYPILOT_NODE_IPS)\n"
                                         "ls " +
                                             tb_.Path("home") +
                                             " >/dev/null 2>&1 || echo home-hidden\n"
                                             "srun -N1 hostname\n"));
  ASSERT_FALSE(id.empty());
  // A retry of the same submission finds the job it made.
  backend::SubmitSpec again =
      Spec(sky_id, {"--nodes=2", "--gres=gpu:h100:8", "-t", "5", "--sky-image=ubuntu:22.04"},
           "#!/bin/sh\n");
  again.first_attempt = false;
  auto retried = kappa_->Submit(again, std::chrono::seconds(20));
  ASSERT_TRUE(retried.ok());
  EXPECT_EQ(retried->job_id, id);
  const backend::JobInfo done =
      WaitFor(id, [](const auto& j) { return backend::IsFinal(j.phase); });
  EXPECT_EQ(done.phase, JobPhase::kCompleted) << done.state << ": " << done.reason;
  EXPECT_EQ(done.sky_id, sky_id);
  auto out = kappa_->Output(id, std::chrono::seconds(10));
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_THAT(*out, HasSubstr("rank=0 of 2 slurm=0/2 id=" + id + " task=" + sky_id + " conf=none"));
  EXPECT_THAT(*out, HasSubstr("rank=1 of 2 slurm=1/2"));
  EXPECT_THAT(*out, HasSubstr("==> rank 1"));
  // (kappa gives pods 127.0.1.x, then 127.0.2.x once a testbed has run
  // 250 of them.)
  EXPECT_THAT(*out,
              ::testing::ContainsRegex("ips=127\\.0\\.[0-9]+\\.[0-9]+ 127\\.0\\.[0-9]+\\.[0-9]+\n"));
  EXPECT_THAT(*out, HasSubstr("home-hidden"));
  EXPECT_THAT(*out, HasSubstr("skyslurm-" + id + "-0\n"));  // srun ran hostname in the pod
  // Exactly one Job carries the sky id.
  EXPECT_EQ(
      List(kube::WithQuery("/apis/batch/v1/namespaces/default/jobs",
                           {{"labelSelector", std::string(kube::kSkyIdLabel) + "=" + sky_id}}))
          .size(),
      1u);
  // Only skyslurm's own values (the task id): no Secret was needed.
  EXPECT_TRUE(
      List(kube::WithQuery("/api/v1/namespaces/default/secrets",
                           {{"labelSelector", std::string(kube::kSkyIdLabel) + "=" + sky_id}}))
          .empty());
}

// A job's own values (a task's secret) reach its pods from a Secret the
// Job owns, never as a plain value in the pod's spec; it goes with the Job.
TEST_F(KubernetesBackendTest, ASecretReachesThePodsFromASecretTheJobOwns) {
  const std::string sky_id = "sky-20261202-020000-5e5e5e";
  backend::SubmitSpec spec = Spec(
      sky_id, {"--gres=gpu:h100:1", "-t", "5", "--sky-image=ubuntu:22.04"},
      "#!/bin/sh\necho \"token=$(printf %s \"$API_TOKEN\" | wc -c) task=$SKYPILOT_TASK_ID\"\n");
  spec.export_env.emplace_back("API_TOKEN", "k8s-secret-value-31");
  const std::string id = MustSubmit(spec);
  ASSERT_FALSE(id.empty());
  const backend::JobInfo done =
      WaitFor(id, [](const auto& j) { return backend::IsFinal(j.phase); });
  EXPECT_EQ(done.phase, JobPhase::kCompleted) << done.state << ": " << done.reason;
  auto out = kappa_->Output(id, std::chrono::seconds(10));
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_THAT(*out, HasSubstr("token=19 task=" + sky_id));
  const std::string by_sky_id = std::string(kube::kSkyIdLabel) + "=" + sky_id;
  const Json::Value secrets =
      List(kube::WithQuery("/api/v1/namespaces/default/secrets", {{"labelSelector", by_sky_id}}));
  ASSERT_EQ(secrets.size(), 1u);
  EXPECT_EQ(secrets[0]["metadata"]["ownerReferences"][0]["kind"].asString(), "Job");
  const Json::Value pods =
      List(kube::WithQuery("/api/v1/namespaces/default/pods", {{"labelSelector", by_sky_id}}));
  ASSERT_FALSE(pods.empty());
  EXPECT_EQ(Json::FastWriter().write(pods).find("k8s-secret-value-31"), std::string::npos);
}

TEST_F(KubernetesBackendTest, AnL4JobRunsOnlyOnTheL4NodeAndCancelRemovesEverything) {
  const std::string id =
      MustSubmit(Spec("sky-20261202-020000-b1b1b1", {"--gres=gpu:l4:1", "--sky-image=ubuntu:22.04"},
                      "#!/bin/sh\necho started\nsleep 300\n"));
  ASSERT_FALSE(id.empty());
  WaitFor(id, [](const auto& j) { return j.phase == JobPhase::kRunning; });
  const Json::Value pods =
      List(kube::WithQuery("/api/v1/namespaces/default/pods",
                           {{"labelSelector", std::string(kube::kJobIdLabel) + "=" + id}}));
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0]["spec"]["nodeName"].asString(), "kappa-n3");
  // Pending only: a running job is left running.
  ASSERT_TRUE(kappa_->Cancel(id, true, std::chrono::seconds(10)).ok());
  EXPECT_EQ(List("/apis/batch/v1/namespaces/default/jobs/").size() > 0, true);
  ASSERT_TRUE(kappa_->Cancel(id, false, std::chrono::seconds(10)).ok());
  const std::string selector = std::string(kube::kJobIdLabel) + "=" + id;
  for (int i = 0; i < 50; ++i) {
    if (List(kube::WithQuery("/api/v1/namespaces/default/pods", {{"labelSelector", selector}}))
            .empty())
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  for (const char* path :
       {"/apis/batch/v1/namespaces/default/jobs", "/api/v1/namespaces/default/pods",
        "/api/v1/namespaces/default/services", "/api/v1/namespaces/default/configmaps"}) {
    EXPECT_EQ(List(kube::WithQuery(path, {{"labelSelector", selector}})).size(), 0u) << path;
  }
  EXPECT_FALSE(kappa_->Cancel(id, false, std::chrono::seconds(10)).ok());  // gone
}

TEST_F(KubernetesBackendTest, AnImageThatCannotBePulledFailsTheJobAfterTheBoundSayingWhy) {
  const std::string id =
      MustSubmit(Spec("sky-20261202-020000-c2c2c2",
                      {"--gres=gpu:l4:1", "--sky-image=example.org/nope:1"}, "#!/bin/sh\ntrue\n"));
  ASSERT_FALSE(id.empty());
  const backend::JobInfo stuck = WaitFor(
      id, [](const auto& j) { return j.state == "ImagePullBackOff" || j.state == "ErrImagePull"; });
  EXPECT_EQ(stuck.phase == JobPhase::kPending || stuck.phase == JobPhase::kFailed, true);
  const backend::JobInfo failed = WaitFor(
      id, [](const auto& j) { return j.phase == JobPhase::kFailed; }, 30);
  EXPECT_THAT(failed.reason, HasSubstr("image_pull_timeout 3 s"));
  EXPECT_THAT(failed.reason, HasSubstr("example.org/nope:1"));
  EXPECT_EQ(List(kube::WithQuery("/apis/batch/v1/namespaces/default/jobs",
                                 {{"labelSelector", std::string(kube::kJobIdLabel) + "=" + id}}))
                .size(),
            0u);
}

// Numbers held by ConfigMaps whose Jobs were never made (a submitter killed
// between the two) are passed over, as many as there are: the number given
// (the daemon's next) and the number found alike. Regression: the next free
// number was looked for among Jobs only, five tries one apart, and every
// submission failed with `configmaps "skyslurm-N" already exists`.
TEST_F(KubernetesBackendTest, NumbersHeldByOrphanedConfigMapsArePassedOver) {
  const std::string configmaps = "/api/v1/namespaces/default/configmaps";
  long highest = 0;
  for (const char* path : {"/apis/batch/v1/namespaces/default/jobs", configmaps.c_str()}) {
    for (const auto& o : List(path)) {
      const std::string n = o["metadata"]["labels"][kube::kJobIdLabel].asString();
      if (!n.empty()) highest = std::max(highest, std::stol(n));
    }
  }
  const long first = highest + 1;
  std::vector<std::string> orphans;
  for (long n = first; n < first + 8; ++n) {
    Json::Value cm(Json::objectValue);
    cm["apiVersion"] = "v1";
    cm["kind"] = "ConfigMap";
    cm["metadata"]["name"] = kube::ObjectName(std::to_string(n));
    cm["metadata"]["labels"][kube::kManagedByLabel] = "skyslurm";
    cm["metadata"]["labels"][kube::kSkyIdLabel] = "sky-20261202-000000-0a0a0a";
    cm["metadata"]["labels"][kube::kJobIdLabel] = std::to_string(n);
    auto made = kappa_->api().Call("POST", configmaps, &cm, std::chrono::seconds(10));
    ASSERT_TRUE(made.ok()) << made.status().message();
    orphans.push_back(kube::ObjectName(std::to_string(n)));
  }
  backend::SubmitSpec given =
      Spec("sky-20261202-030000-d3d3d3", {"--gres=gpu:l4:1", "--sky-image=ubuntu:22.04"},
           "#!/bin/sh\necho given\n");
  given.native_id = std::to_string(first);
  const std::string a = MustSubmit(given);
  const std::string b =
      MustSubmit(Spec("sky-20261202-030000-e4e4e4", {"--gres=gpu:l4:1", "--sky-image=ubuntu:22.04"},
                      "#!/bin/sh\necho found\n"));
  for (const auto& name : orphans) {
    (void)kappa_->api().Call("DELETE", configmaps + "/" + name, nullptr, std::chrono::seconds(10));
  }
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  EXPECT_GE(std::stol(a), first + 8);
  EXPECT_GT(std::stol(b), std::stol(a));
  // Each job's own ConfigMap, under its own sky id.
  for (const auto& [id, sky] :
       {std::pair{a, "sky-20261202-030000-d3d3d3"}, std::pair{b, "sky-20261202-030000-e4e4e4"}}) {
    const Json::Value mine = List(kube::WithQuery(
        configmaps, {{"labelSelector", std::string(kube::kJobIdLabel) + "=" + id}}));
    ASSERT_EQ(mine.size(), 1u) << id;
    EXPECT_EQ(mine[0]["metadata"]["labels"][kube::kSkyIdLabel].asString(), sky);
  }
}

// A number is never given twice in a namespace, even once its job and every
// object of it are deleted, and whoever asks (another user's skyslurmd starts
// its numbers at 1): the old job's pods may still be terminating, still
// selected by their job's label. Regression: a number freed by the garbage
// collector was given again, and the new job's ranks resolved the old pods.
TEST_F(KubernetesBackendTest, ANumberIsNeverGivenTwiceEvenAfterItsJobIsDeleted) {
  const std::string first =
      MustSubmit(Spec("sky-20261202-040000-f5f5f5", {"--gres=gpu:l4:1", "--sky-image=ubuntu:22.04"},
                      "#!/bin/sh\nsleep 30\n"));
  ASSERT_FALSE(first.empty());
  ASSERT_TRUE(kappa_->Cancel(first, false, std::chrono::seconds(10)).ok());
  // Another daemon, another store: its floor is 1.
  backend::KubernetesBackend other("kappa", settings_, context_, nullptr);
  backend::SubmitSpec spec =
      Spec("sky-20261202-040000-a6a6a6", {"--gres=gpu:l4:1", "--sky-image=ubuntu:22.04"},
           "#!/bin/sh\ntrue\n");
  spec.native_id = "1";
  auto second = other.Submit(spec, std::chrono::seconds(20));
  ASSERT_TRUE(second.ok()) << second.status().message();
  submitted_.push_back(second->job_id);
  EXPECT_GT(std::stol(second->job_id), std::stol(first));
  // This backend's view of the counter is now stale: it reads it again.
  const std::string third =
      MustSubmit(Spec("sky-20261202-040000-b7b7b7", {"--gres=gpu:l4:1", "--sky-image=ubuntu:22.04"},
                      "#!/bin/sh\ntrue\n"));
  ASSERT_FALSE(third.empty());
  EXPECT_GT(std::stol(third), std::stol(second->job_id));
}

TEST_F(KubernetesBackendTest, AWrongTokenIsRefusedInWords) {
  kube::KubeContext wrong = context_;
  wrong.token = "not-the-token";
  backend::KubernetesBackend refused("kappa", settings_, wrong, nullptr);
  auto probe = refused.Probe(std::chrono::seconds(10));
  ASSERT_FALSE(probe.ok());
  EXPECT_EQ(probe.status().code(), StatusCode::kUnauthenticated);
  EXPECT_THAT(probe.status().message(), HasSubstr("refused the credentials of context kappa"));
  EXPECT_EQ(refused.Check(std::chrono::seconds(10)).verdict, "refused");
}

// The watches keep a daemon's view current through 410 Gone, a cut stream
// and a stopped server: a stale view is never answered.
TEST_F(KubernetesBackendTest, WatchesSurviveGoneAndCutStreamsAndAStoppedServerIsNoAnswer) {
  backend::KubernetesBackend watching("kappa", settings_, context_, nullptr, /*watch=*/true);
  ASSERT_TRUE(watching.Probe(std::chrono::seconds(20)).ok());
  auto inject = [&](const std::string& what) {
    Json::Value body(Json::objectValue);
    body["inject"] = what;
    auto r = watching.api().Call("POST", "/_fake/inject", &body, std::chrono::seconds(10));
    ASSERT_TRUE(r.ok()) << r.status().message();
  };
  inject("gone");
  inject("cut-watches");
  // A job made now shows in the watched queue.
  const std::string id =
      MustSubmit(Spec("sky-20261202-020000-d3d3d3", {"--gres=gpu:l4:1", "--sky-image=ubuntu:22.04"},
                      "#!/bin/sh\nsleep 30\n"));
  bool seen = false;
  for (int i = 0; i < 100 && !seen; ++i) {
    auto q = watching.Queue(std::chrono::seconds(10));
    ASSERT_TRUE(q.ok()) << q.status().message();
    for (const auto& j : *q) seen = seen || j.key.job_id == id;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_TRUE(seen);
  // The server stopped (SIGSTOP): no answer, never the old view for long.
  const int pid = std::stoi(ReadFile(tb_.Path("kube/apiserver.pid")));
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  backend::KubernetesBackend fresh("kappa", settings_, context_, nullptr);
  auto probe = fresh.Probe(std::chrono::seconds(3));
  // The watched view is not answered for once it is a few seconds old: the
  // quiet watch is checked with one question, which gets no answer.
  std::this_thread::sleep_for(std::chrono::seconds(6));
  auto watched = watching.Queue(std::chrono::seconds(3));
  ::kill(pid, SIGCONT);
  EXPECT_FALSE(probe.ok());
  EXPECT_THAT(probe.status().message(), HasSubstr("kappa"));
  EXPECT_FALSE(watched.ok());
  // Back: the watched view answers again.
  bool back = false;
  for (int i = 0; i < 50 && !back; ++i) {
    back = watching.Queue(std::chrono::seconds(5)).ok();
    if (!back) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_TRUE(back);
}

}  // namespace
}  // namespace skyslurm::testing
