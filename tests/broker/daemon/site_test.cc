// `skyslurmd --site` on the testbed: two replicas (scripts/testbed/site) on
// one PostgreSQL database, serving skyuser1, skyuser2 and an admin (root,
// the admin group `root`) through the shim, each request with a MUNGE
// credential. Every job is submitted to alpha as its own user; a user sees
// and cancels only their own; a credential is good once at any replica; a
// replica killed -9 has its jobs taken over within the lease (3 s here).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <thread>

#include "broker/site/munge_identity.h"
#include "broker/util/strings.h"
#include "tests/support/testbed.h"

namespace skyslurm::testing {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const std::string kBuild = SKYSLURM_BINARY_DIR;
constexpr auto kLease = std::chrono::seconds(3);
constexpr int kPortA = 7540;
constexpr int kPortB = 7541;

class SiteTest : public TestbedTest {
 protected:
  static void SetUpTestSuite() {
    auto tb = LoadTestbed();
    if (!tb.ok()) return;
    Command up{.argv = {TestbedScript("site"), "up", kBuild, "3s"}};
    up.timeout = std::chrono::seconds(120);
    CommandOutput out = Exec(up);
    started_ = out.success();
    if (!started_) std::fprintf(stderr, "site up failed: %s\n", out.err.c_str());
  }
  static void TearDownTestSuite() {
    if (started_) (void)Exec({.argv = {TestbedScript("site"), "down"}});
  }

  void SetUp() override {
    TestbedTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_TRUE(started_) << "scripts/testbed/site up failed";
    // Both replicas serve each test from its start.
    for (const char* r : {"a", "b"}) {
      (void)Exec(
          {.argv = {TestbedScript("site"), "start", r}, .timeout = std::chrono::seconds(30)});
    }
    for (const char* user : {"skyuser1", "skyuser2"}) {
      const std::string dir = fmt::format("/home/{}/site-test-{}", user, ::getpid());
      (void)Exec({.argv = {"install", "-d", "-o", user, "-g", user, dir}});
      dirs_[user] = dir;
    }
  }
  void TearDown() override {
    if (tb_.dir.empty()) return;
    if (HasFailure()) {
      for (const char* r : {"a", "b"}) {
        std::fprintf(stderr, "--- replica %s ---\n%s\n", r,
                     ReadFile(tb_.Path(fmt::format("site/replica-{}.log", r))).c_str());
      }
    }
    for (const auto& name : names_) RunOn(tb_, "alpha", {"scancel", "-n", name});
    for (const auto& [user, dir] : dirs_) fs::remove_all(dir);
  }

  // `argv` as `user` types it: the shim first on PATH, the site's client
  // file as the site file (site: [a, b]).
  CommandOutput As(const std::string& user, std::vector<std::string> argv,
                   const std::string& client_file = "") {
    Command c;
    c.argv = {"setpriv"};
    if (user != "root") {
      c.argv.insert(c.argv.end(), {"--reuid=" + user, "--regid=" + user, "--init-groups"});
    }
    const passwd* pw = ::getpwnam(user.c_str());
    c.argv.insert(
        c.argv.end(),
        {"--", "env", "-i", "PATH=" + kBuild + "/shim/bin:" + kBuild + "/shim:/usr/bin:/bin",
         std::string("HOME=") + (pw != nullptr ? pw->pw_dir : "/"), "USER=" + user,
         "SKYSLURM_SITE_CONFIG=" +
             (client_file.empty() ? tb_.Path("site/client.yaml") : client_file),
         "SKYSLURM_MUNGE_SOCKET=" + tb_.Path("munge/munge.socket"),
         "SLURM_CONF=" + tb_.SlurmConf("alpha")});
    c.argv.insert(c.argv.end(), argv.begin(), argv.end());
    c.cwd = dirs_.contains(user) ? dirs_[user] : "/";
    c.timeout = std::chrono::seconds(90);
    return Exec(c);
  }

  // Submits a routed job named `name` as `user`; its alpha job id and sky id.
  std::pair<std::string, std::string> Submit(const std::string& user, const std::string& name,
                                             const std::string& wrap, bool hold = false) {
    names_.push_back(name);
    std::vector<std::string> argv = {"sbatch", "--sky-any-cluster", "-J", name, "-t", "5"};
    if (hold) argv.push_back("--hold");
    argv.insert(argv.end(), {"--wrap", wrap});
    CommandOutput out = As(user, argv);
    EXPECT_TRUE(out.success()) << out.out << out.err;
    last_printed_ = out.out;
    CommandOutput q = RunOn(tb_, "alpha", {"squeue", "-h", "-n", name, "-o", "%i|%u|%k"});
    const auto fields = SplitList(Trim(q.out), '|');
    if (fields.size() != 3) {
      ADD_FAILURE() << "no job " << name << " on alpha: " << q.out;
      return {"", ""};
    }
    EXPECT_EQ(fields[1], user) << "the job runs as its user";
    EXPECT_TRUE(fields[2].starts_with("skyslurm:sky-")) << fields[2];
    return {fields[0], fields[2].substr(std::string("skyslurm:").size())};
  }

  std::string LeaseHolder(const std::string& sky_id) {
    const std::string url = tb_.env.at("SKYSLURM_POSTGRES_URL");
    const std::string site_url =
        url.substr(0, url.find("/postgres?")) + "/skyslurm_site" + url.substr(url.find('?'));
    CommandOutput out = Exec(
        {.argv = {"psql", "-tA", site_url, "-c",
                  fmt::format("SELECT lease_owner FROM jobs WHERE sky_id='{}' AND lease_until >= "
                              "(extract(epoch from clock_timestamp())*1000)::bigint",
                              sky_id)}});
    return Trim(out.out);
  }

  // What the last Submit's sbatch printed ("Submitted batch job <id>").
  std::string last_printed_;
  static inline bool started_ = false;
  std::map<std::string, std::string> dirs_;
  std::vector<std::string> names_;
};

// Replica a started again with a fault point: it kills itself with SIGKILL
// there (fault_points.h) the first time it passes it.
void RestartWithFault(const std::string& point, const std::string& mark) {
  ASSERT_TRUE(Exec({.argv = {TestbedScript("site"), "kill", "a"}}).success());
  Command start{.argv = {TestbedScript("site"), "start", "a"}, .timeout = std::chrono::seconds(30)};
  start.env_set = {{"SKYSLURM_FAULT_POINT", point}, {"SKYSLURM_FAULT_MARK", mark}};
  ASSERT_TRUE(Exec(start).success());
}

TEST_F(SiteTest, EachUsersJobRunsAsThemOnAlpha) {
  const std::string tag = std::to_string(::getpid());
  auto one = std::async(std::launch::async, [&] {
    return Submit("skyuser1", "site-one-" + tag, "id -un > who.txt; id -u >> who.txt");
  });
  auto two = std::async(std::launch::async, [&] {
    return Submit("skyuser2", "site-two-" + tag, "id -un > who.txt; id -u >> who.txt");
  });
  const auto [id1, sky1] = one.get();
  const auto [id2, sky2] = two.get();
  ASSERT_FALSE(id1.empty() || id2.empty());
  EXPECT_NE(sky1, sky2);
  WaitForJobEnd(tb_, "alpha", id1);
  WaitForJobEnd(tb_, "alpha", id2);
  for (const auto& [user, dir] : dirs_) {
    const std::string who = ReadFileWhenReady(dir + "/who.txt");
    const passwd* pw = ::getpwnam(user.c_str());
    ASSERT_NE(pw, nullptr);
    EXPECT_EQ(who, fmt::format("{}\n{}\n", user, pw->pw_uid));
    struct stat st {};
    ASSERT_EQ(::stat((dir + "/who.txt").c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, pw->pw_uid) << "the file its job wrote is " << user << "'s";
  }
  // The site keeps their owners: each sees their own.
  EXPECT_THAT(As("skyuser1", {"skyslurm", "status", sky1}).out, HasSubstr(sky1));
  EXPECT_THAT(As("skyuser2", {"skyslurm", "status", sky2}).out, HasSubstr(sky2));
}

TEST_F(SiteTest, AUserSeesAndCancelsOnlyTheirOwnJobsAndAnAdminSeesAll) {
  const std::string name = "site-own-" + std::to_string(::getpid());
  const auto [id, sky] = Submit("skyuser1", name, "sleep 60", /*hold=*/true);
  ASSERT_FALSE(id.empty());
  CommandOutput status = As("skyuser2", {"skyslurm", "status", sky});
  EXPECT_FALSE(status.success());
  EXPECT_THAT(status.err, HasSubstr("not a job skyslurm tracks"));
  EXPECT_FALSE(As("skyuser2", {"skyslurm", "cancel", sky}).success());
  EXPECT_THAT(As("skyuser2", {"skyslurm", "queue"}).out, ::testing::Not(HasSubstr(sky)));
  EXPECT_EQ(JobState(tb_, "alpha", id), "PENDING");
  // Slurm's commands through the shim run as the user who typed them, each
  // cluster's on a thread of its own: the owner's update lands, another
  // user's is Slurm's to refuse.
  const std::string global_id = Trim(last_printed_.substr(last_printed_.rfind(' ') + 1));
  ASSERT_FALSE(global_id.empty()) << last_printed_;
  CommandOutput update =
      As("skyuser1", {"scontrol", "update", "JobId=" + global_id, "TimeLimit=4"});
  EXPECT_TRUE(update.success()) << update.out << update.err;
  EXPECT_EQ(Trim(RunOn(tb_, "alpha", {"squeue", "-h", "-j", id, "-o", "%l"}).out), "4:00");
  EXPECT_FALSE(
      As("skyuser2", {"scontrol", "update", "JobId=" + global_id, "TimeLimit=3"}).success());
  // The admin group's member sees every user's job.
  EXPECT_THAT(As("root", {"skyslurm", "queue"}).out, HasSubstr(sky));
  EXPECT_THAT(As("skyuser1", {"skyslurm", "queue"}).out, HasSubstr(sky));
  CommandOutput cancel = As("skyuser1", {"skyslurm", "cancel", sky});
  EXPECT_TRUE(cancel.success()) << cancel.err;
  EXPECT_EQ(WaitForJobEnd(tb_, "alpha", id), "CANCELLED");
}

TEST_F(SiteTest, ACredentialIsGoodForItsRequestOnceAtAnyReplica) {
  const passwd* site_user = ::getpwnam("skyslurm");
  ASSERT_NE(site_user, nullptr);
  const site::MungeOptions munge{tb_.Path("munge/munge.socket"), 0};
  auto credential = site::MakeMungeCredential(site::RequestBinding("GET", "/v1/queue", ""),
                                              site_user->pw_uid, munge);
  ASSERT_TRUE(credential.ok()) << credential.status().message();
  const httplib::Headers with = {{std::string(site::kMungeHeader), *credential}};
  httplib::Client a("127.0.0.1", kPortA), b("127.0.0.1", kPortB);
  auto first = a.Get("/v1/queue", with);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->status, 200) << first->body;
  // Another replica, whose own munged has not seen it: the site's record has.
  auto again = b.Get("/v1/queue", with);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 403);
  EXPECT_THAT(again->body, HasSubstr("used before (a replay)"));
  // The same credential with a blank inside (munged's decoder skips it) is
  // still the one used before.
  std::string spaced = *credential;
  spaced.insert(12, " ");
  auto replayed = b.Get("/v1/queue", {{std::string(site::kMungeHeader), spaced}});
  ASSERT_TRUE(replayed);
  EXPECT_EQ(replayed->status, 403) << replayed->body;
  auto same = a.Get("/v1/queue", with);  // and the first's munged refuses it
  ASSERT_TRUE(same);
  EXPECT_EQ(same->status, 403);
  // Its health needs none: it names no job and no user.
  auto health = b.Get("/v1/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  auto elsewhere = site::MakeMungeCredential(site::RequestBinding("GET", "/v1/health", ""),
                                             site_user->pw_uid, munge);
  ASSERT_TRUE(elsewhere.ok());
  auto other = a.Get("/v1/queue", {{std::string(site::kMungeHeader), *elsewhere}});
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 403);
  EXPECT_THAT(other->body, HasSubstr("another request"));
  auto none = a.Get("/v1/queue");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 403);
  EXPECT_THAT(none->body, HasSubstr("MUNGE credential"));
}

TEST_F(SiteTest, AReplicaKilledHasItsJobsTakenOverWithinTheLease) {
  const std::string name = "site-kill-" + std::to_string(::getpid());
  const auto [id, sky] = Submit("skyuser1", name, "sleep 60", /*hold=*/true);
  ASSERT_FALSE(id.empty());
  const std::string first = LeaseHolder(sky);
  ASSERT_TRUE(first == "replica-a" || first == "replica-b") << first;
  const std::string killed = first == "replica-a" ? "a" : "b";
  ASSERT_TRUE(Exec({.argv = {TestbedScript("site"), "kill", killed}}).success());
  const auto killed_at = std::chrono::steady_clock::now();
  std::string holder;
  while (std::chrono::steady_clock::now() - killed_at < 4 * kLease) {
    holder = LeaseHolder(sky);
    if (!holder.empty() && holder != first) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  const auto took = std::chrono::steady_clock::now() - killed_at;
  EXPECT_EQ(holder, first == "replica-a" ? "replica-b" : "replica-a");
  // The lease, and a poll (1 s) to see it lapsed.
  EXPECT_LE(took, kLease + std::chrono::seconds(2))
      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
  // The shim finds the live replica (whichever is first in client.yaml), and
  // the job is cancelled as its user; still one job on alpha.
  CommandOutput q = RunOn(tb_, "alpha", {"squeue", "-h", "-n", name, "-o", "%i"});
  EXPECT_EQ(Trim(q.out), id);
  CommandOutput cancel = As("skyuser1", {"skyslurm", "cancel", sky});
  EXPECT_TRUE(cancel.success()) << cancel.err;
  EXPECT_EQ(WaitForJobEnd(tb_, "alpha", id), "CANCELLED");
}

// The kill -9 matrix against replicas: replica a (first in the clients'
// list) dies at each point of a submission and of a cancel; the client goes
// on at b, which takes a's jobs over once a's lease lapses. Each job is on
// alpha exactly once, never lost, never doubled; each cancel is carried out.
TEST_F(SiteTest, AReplicaKilledAtEachFaultPointLosesNoJobAndDoublesNone) {
  const std::string tag = std::to_string(::getpid());
  for (const char* point : {"submit.recorded", "submit.intent", "submit.sent", "submit.done"}) {
    SCOPED_TRACE(point);
    const std::string mark = tb_.Path(fmt::format("site/state-a/fault-{}-{}", point, tag));
    RestartWithFault(point, mark);
    if (HasFatalFailure()) return;
    const std::string name = fmt::format("site-{}-{}", point, tag);
    names_.push_back(name);
    CommandOutput out = As("skyuser1", {"sbatch", "--sky-any-cluster", "-J", name, "-t", "5",
                                        "--hold", "--wrap", "sleep 60"});
    EXPECT_TRUE(fs::exists(mark)) << "replica a did not die at " << point;
    // b takes the job over within the lease and finishes what a left.
    std::string ids;
    const auto deadline = std::chrono::steady_clock::now() + 4 * kLease + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      ids = Trim(RunOn(tb_, "alpha", {"squeue", "-h", "-n", name, "-o", "%i"}).out);
      if (!ids.empty()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));  // and no second copy comes
    ids = Trim(RunOn(tb_, "alpha", {"squeue", "-h", "-n", name, "-o", "%i|%u"}).out);
    EXPECT_EQ(SplitList(ids, '\n').size(), 1u) << "on alpha: " << ids << "\n" << out.err;
    EXPECT_THAT(ids, HasSubstr("|skyuser1")) << ids;
    EXPECT_THAT(As("skyuser1", {"skyslurm", "queue"}).out, HasSubstr(name.substr(0, 8)));
  }
  for (const char* point : {"cancel.intent", "cancel.sent"}) {
    SCOPED_TRACE(point);
    (void)Exec({.argv = {TestbedScript("site"), "kill", "a"}});
    (void)Exec(
        {.argv = {TestbedScript("site"), "start", "a"}, .timeout = std::chrono::seconds(30)});
    const auto [id, sky] = Submit("skyuser1", fmt::format("site-{}-{}", point, tag), "sleep 60",
                                  /*hold=*/true);
    ASSERT_FALSE(id.empty());
    // a holds it (it took the submission); a dies while cancelling it.
    ASSERT_EQ(LeaseHolder(sky), "replica-a");
    const std::string mark = tb_.Path(fmt::format("site/state-a/fault-{}-{}", point, tag));
    RestartWithFault(point, mark);
    if (HasFatalFailure()) return;
    CommandOutput cancel = As("skyuser1", {"skyslurm", "cancel", sky});
    EXPECT_TRUE(cancel.success()) << cancel.err;
    EXPECT_TRUE(fs::exists(mark)) << "replica a did not die at " << point;
    EXPECT_EQ(WaitForJobEnd(tb_, "alpha", id), "CANCELLED");
    std::string state;
    for (int i = 0; i < 60 && state != "CANCELLED"; ++i) {
      const std::string status = As("skyuser1", {"skyslurm", "status", sky}).out;
      state = status.find("CANCELLED") != std::string::npos ? "CANCELLED" : status;
      if (state != "CANCELLED") std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
    EXPECT_EQ(state, "CANCELLED");
  }
  (void)Exec({.argv = {TestbedScript("site"), "kill", "a"}});
  (void)Exec({.argv = {TestbedScript("site"), "start", "a"}, .timeout = std::chrono::seconds(30)});
}

// PostgreSQL restarted under a burst of submissions from two users: the
// replicas reconnect, and every submission the shim reported accepted is
// exactly one job on alpha, its user's. What the outage refused is said to
// the user as an error (naming how to ask whether it was submitted); none of
// those runs twice either.
TEST_F(SiteTest, PostgresRestartedUnderLoadLosesNothingAccepted) {
  const std::string tag = std::to_string(::getpid());
  constexpr int kJobs = 24;
  std::vector<std::future<std::pair<std::string, bool>>> submitted;
  for (int i = 0; i < kJobs; ++i) {
    const std::string user = i % 2 == 0 ? "skyuser1" : "skyuser2";
    const std::string name = fmt::format("site-pg-{}-{}", tag, i);
    names_.push_back(name);
    submitted.push_back(std::async(std::launch::async, [this, user, name, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(250 * i));  // before, during, after
      CommandOutput out = As(user, {"sbatch", "--sky-any-cluster", "-J", name, "-t", "5", "--hold",
                                    "--wrap", "sleep 60"});
      return std::make_pair(name + "|" + user, out.success());
    }));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  ASSERT_TRUE(Exec({.argv = {TestbedScript("postgres"), "down"}}).success());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_TRUE(Exec({.argv = {TestbedScript("postgres"), "up"}, .timeout = std::chrono::seconds(60)})
                  .success());
  int accepted = 0, refused = 0, refused_but_ran = 0;
  std::vector<std::pair<std::string, bool>> results;
  for (auto& f : submitted) results.push_back(f.get());
  std::this_thread::sleep_for(kLease + std::chrono::seconds(2));  // anything left is settled
  for (const auto& [name_user, ok] : results) {
    const auto parts = SplitList(name_user, '|');
    const std::string ids =
        Trim(RunOn(tb_, "alpha", {"squeue", "-h", "-n", parts[0], "-o", "%i|%u"}).out);
    const std::size_t copies = ids.empty() ? 0 : SplitList(ids, '\n').size();
    EXPECT_LE(copies, 1u) << parts[0] << ": " << ids;
    if (ok) {
      ++accepted;
      EXPECT_EQ(copies, 1u) << parts[0] << " was accepted";
      EXPECT_THAT(ids, HasSubstr("|" + parts[1]));
    } else {
      ++refused;
      if (copies == 1) ++refused_but_ran;
    }
  }
  std::printf(
      "PostgreSQL restarted under %d submissions: %d accepted, %d refused (%d of them ran)\n",
      kJobs, accepted, refused, refused_but_ran);
  // A refusal during the outage says `skyslurm status <sky id>` tells whether
  // the job was submitted (it may have been recorded before the outage, then
  // placed once the database came back): never twice (checked above).
  EXPECT_GT(accepted, 0);
  // Both replicas serve again.
  for (int port : {kPortA, kPortB}) {
    auto metrics = httplib::Client("127.0.0.1", port).Get("/metrics");
    ASSERT_TRUE(metrics);
    EXPECT_THAT(metrics->body, HasSubstr("skyslurm_jobs{"));
  }
  const auto [id, sky] = Submit("skyuser2", "site-pg-after-" + tag, "sleep 60", /*hold=*/true);
  EXPECT_FALSE(id.empty());
}

// `skyslurm site adopt`: a job routed by skyuser1's own skyslurmd moves into
// the site's store; the user's daemon stops and its store is set aside; the
// site drives the job on as the user (its cancel lands), never a second copy.
TEST_F(SiteTest, SiteAdoptMovesAUsersOwnJobsIntoTheSite) {
  const std::string state = "/home/skyuser1/.local/state/skyslurm";
  fs::remove_all(state);
  const std::string own = tb_.Path("site/own-" + std::to_string(::getpid()) + ".yaml");
  WriteFile(own, fmt::format("home: alpha\nclusters:\n  alpha:\n    slurm_conf: {}\n",
                             tb_.SlurmConf("alpha")));
  ::chmod(own.c_str(), 0644);
  const std::string name = "site-adopt-" + std::to_string(::getpid());
  names_.push_back(name);
  CommandOutput routed = As(
      "skyuser1",
      {"sbatch", "--sky-any-cluster", "-J", name, "-t", "5", "--hold", "--wrap", "sleep 60"}, own);
  ASSERT_TRUE(routed.success()) << routed.err;
  CommandOutput q = RunOn(tb_, "alpha", {"squeue", "-h", "-n", name, "-o", "%i|%k"});
  const auto fields = SplitList(Trim(q.out), '|');
  ASSERT_EQ(fields.size(), 2u) << q.out;
  const std::string id = fields[0];
  const std::string sky = fields[1].substr(std::string("skyslurm:").size());
  const int own_daemon = UserDaemonPid("/home/skyuser1");
  EXPECT_GT(own_daemon, 0) << "the user's own skyslurmd routed it";

  CommandOutput adopt = As("skyuser1", {"skyslurm", "site", "adopt"});
  EXPECT_TRUE(adopt.success()) << adopt.out << adopt.err;
  EXPECT_THAT(adopt.out, HasSubstr("1 adopted"));
  EXPECT_FALSE(ProcessAlive(own_daemon)) << "the user's own skyslurmd stopped";
  EXPECT_TRUE(fs::exists(state + "/skyslurmd.db.adopted"));
  EXPECT_FALSE(fs::exists(state + "/skyslurmd.db"));
  EXPECT_THAT(As("skyuser1", {"skyslurm", "queue"}).out, HasSubstr(sky));
  EXPECT_THAT(As("skyuser2", {"skyslurm", "queue"}).out, ::testing::Not(HasSubstr(sky)));
  EXPECT_THAT(As("skyuser1", {"skyslurm", "site", "adopt"}).out, HasSubstr("no jobs"));
  // The site drives it as its user: one job on alpha, cancelled as asked.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(Trim(RunOn(tb_, "alpha", {"squeue", "-h", "-n", name, "-o", "%i"}).out), id);
  CommandOutput cancel = As("skyuser1", {"skyslurm", "cancel", sky});
  EXPECT_TRUE(cancel.success()) << cancel.err;
  EXPECT_EQ(WaitForJobEnd(tb_, "alpha", id), "CANCELLED");
  fs::remove(own);
}

// /metrics passes Debian's promtool, and Debian's Prometheus scrapes both
// replicas: each sees alpha up, and the job just routed is counted.
TEST_F(SiteTest, MetricsAreCheckedByPromtoolAndScrapedByPrometheus) {
  const auto [id, sky] =
      Submit("skyuser1", "site-metrics-" + std::to_string(::getpid()), "sleep 60", /*hold=*/true);
  ASSERT_FALSE(id.empty());
  for (int port : {kPortA, kPortB}) {
    auto metrics = httplib::Client("127.0.0.1", port).Get("/metrics");
    ASSERT_TRUE(metrics);
    ASSERT_EQ(metrics->status, 200);
    Command check{.argv = {"promtool", "check", "metrics"}, .stdin_data = metrics->body};
    CommandOutput checked = Exec(check);
    EXPECT_TRUE(checked.success()) << checked.out << checked.err << metrics->body;
  }
  TempDir dir;
  WriteFile(dir.File("prometheus.yml"),
            fmt::format("global: {{scrape_interval: 1s}}\n"
                        "scrape_configs:\n"
                        "  - job_name: skyslurm\n"
                        "    static_configs: [{{targets: ['127.0.0.1:{}', '127.0.0.1:{}']}}]\n",
                        kPortA, kPortB));
  // Everything the child needs is made before the fork: a threaded process's
  // child may not allocate.
  const std::string config = "--config.file=" + dir.File("prometheus.yml");
  const std::string storage = "--storage.tsdb.path=" + dir.File("data");
  const pid_t prometheus = ::fork();
  if (prometheus == 0) {
    ::setsid();
    ::execlp("prometheus", "prometheus", config.c_str(), storage.c_str(),
             "--web.listen-address=127.0.0.1:7549", "--log.level=warn",
             static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ASSERT_GT(prometheus, 0);
  httplib::Client api("127.0.0.1", 7549);
  std::string up, jobs;
  for (int i = 0; i < 200; ++i) {
    auto r = api.Get("/api/v1/query?query=sum(skyslurm_cluster_up%7Bcluster%3D%22alpha%22%7D)");
    auto j = api.Get("/api/v1/query?query=sum(skyslurm_jobs%7Bstate%3D%22PENDING%22%7D)");
    if (r && j) {
      up = r->body;
      jobs = j->body;
      // Both replicas scraped (alpha up at each), the pending job counted.
      if (up.find("\"2\"]") != std::string::npos && jobs.find("\"0\"]") == std::string::npos &&
          jobs.find("\"value\"") != std::string::npos) {
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::kill(-prometheus, SIGTERM);
  ::kill(prometheus, SIGTERM);
  ::waitpid(prometheus, nullptr, 0);
  EXPECT_THAT(up, HasSubstr("\"2\"]")) << up;
  EXPECT_THAT(jobs, HasSubstr("\"value\"")) << jobs;
  EXPECT_THAT(jobs, ::testing::Not(HasSubstr("\"0\"]"))) << jobs;
}

TEST_F(SiteTest, TheRunasStepActsOnlyForPeopleAndOnlyWithSlurmsCommands) {
  const std::string runas = tb_.Path("site/skyslurmd-runas");
  auto as_site = [&](std::vector<std::string> args) {
    Command c{
        .argv = {"setpriv", "--reuid=skyslurm", "--regid=skyslurm", "--init-groups", "--", runas}};
    c.argv.insert(c.argv.end(), args.begin(), args.end());
    c.env_set = {{"SLURM_CONF", tb_.SlurmConf("alpha")}};
    return Exec(c);
  };
  CommandOutput ok = as_site({"--user", "skyuser1", "--", "squeue", "-h", "-u", "skyuser1"});
  EXPECT_TRUE(ok.success()) << ok.err;
  for (const char* who : {"root", "daemon", "nobody"}) {
    CommandOutput r = as_site({"--user", who, "--", "squeue"});
    EXPECT_EQ(r.exit_code, 126) << who;
    EXPECT_THAT(r.err, HasSubstr("never acts as")) << who;
  }
  CommandOutput sh = as_site({"--user", "skyuser1", "--", "sh", "-c", "id"});
  EXPECT_EQ(sh.exit_code, 126);
  EXPECT_THAT(sh.err, HasSubstr("Slurm's client commands only"));
  CommandOutput path = as_site({"--user", "skyuser1", "--", "/bin/sh"});
  EXPECT_EQ(path.exit_code, 126);
  // A slurm.conf the caller could have written (its plugins would run as
  // the user) is refused.
  TempDir own;
  WriteFile(own.File("slurm.conf"), ReadFile(tb_.SlurmConf("alpha")));
  Command crafted{.argv = {"setpriv", "--reuid=skyslurm", "--regid=skyslurm", "--init-groups", "--",
                           runas, "--user", "skyuser1", "--", "squeue"}};
  crafted.env_set = {{"SLURM_CONF", own.File("slurm.conf")}};
  CommandOutput refused = Exec(crafted);
  EXPECT_EQ(refused.exit_code, 126);
  EXPECT_THAT(refused.err, HasSubstr("is not root's alone"));
  // Only the site's group may run it at all.
  Command other{.argv = {"setpriv", "--reuid=skyuser1", "--regid=skyuser1", "--init-groups", "--",
                         runas, "--user", "skyuser2", "--", "squeue"}};
  auto denied = LocalCommandRunner().Run(other);
  EXPECT_TRUE(!denied.ok() || !denied->success());
}

}  // namespace
}  // namespace skyslurm::testing
