// The plugin's hooks driven by a fake SPANK API (this executable provides
// spank_* and slurm_error/slurm_info, which the plugin binds to when loaded).
// In the ASan+UBSan tree the plugin under test is built with the sanitizers
// too (a real slurmstepd cannot load that), so every hook runs under them.
#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdint.h>

#include <cstdarg>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

extern "C" {
#include <slurm/spank.h>
}

namespace {

struct Fake {
  spank_context_t context = S_CTX_REMOTE;
  std::map<std::string, std::string> env;
  std::map<spank_item_t, uint32_t> items;
  std::vector<struct spank_option> options;
  std::vector<std::string> errors, infos;
};
Fake fake;

// Slurm 22.05 spells the error codes as plain ints.
spank_err_t Err(int code) { return static_cast<spank_err_t>(code); }

}  // namespace

extern "C" {
spank_err_t spank_option_register(spank_t, struct spank_option* opt) {
  fake.options.push_back(*opt);
  return Err(ESPANK_SUCCESS);
}
spank_context_t spank_context(void) { return fake.context; }
int spank_remote(spank_t) { return fake.context == S_CTX_REMOTE ? 1 : 0; }
spank_err_t spank_getenv(spank_t, const char* var, char* buf, int len) {
  auto it = fake.env.find(var);
  if (it == fake.env.end()) return Err(ESPANK_ENV_NOEXIST);
  if (static_cast<int>(it->second.size()) >= len) return Err(ESPANK_NOSPACE);
  std::snprintf(buf, static_cast<std::size_t>(len), "%s", it->second.c_str());
  return Err(ESPANK_SUCCESS);
}
spank_err_t spank_setenv(spank_t, const char* var, const char* val, int overwrite) {
  if (!overwrite && fake.env.count(var) != 0) return Err(ESPANK_ENV_EXISTS);
  fake.env[var] = val;
  return Err(ESPANK_SUCCESS);
}
// spank.h puts an enum before the "...", so clang warns that va_start after
// a parameter that undergoes promotion is undefined; slurmstepd's own
// spank_get_item does the same, and the ABIs Slurm runs on pass it as an int.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wvarargs"
#endif
spank_err_t spank_get_item(spank_t, spank_item_t item, ...) {
  va_list ap;
  va_start(ap, item);
  uint32_t* out = va_arg(ap, uint32_t*);
  va_end(ap);
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
  auto it = fake.items.find(item);
  if (it == fake.items.end()) return Err(ESPANK_NOT_AVAIL);
  *out = it->second;
  return Err(ESPANK_SUCCESS);
}
__attribute__((format(printf, 2, 0))) static void Log(std::vector<std::string>* to, const char* fmt,
                                                      va_list ap) {
  char buf[2048];
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  to->emplace_back(buf);
}
void slurm_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Log(&fake.errors, fmt, ap);
  va_end(ap);
}
void slurm_info(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  Log(&fake.infos, fmt, ap);
  va_end(ap);
}
}

namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

using Hook = int (*)(spank_t, int, char**);

class PluginHarnessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake = Fake();
    handle_ = dlopen(SKYSLURM_HARNESS_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
  }
  void TearDown() override {
    if (handle_ != nullptr) dlclose(handle_);
  }
  int Call(const char* hook, std::vector<std::string> args = {}) {
    auto fn = reinterpret_cast<Hook>(dlsym(handle_, hook));
    EXPECT_NE(fn, nullptr) << hook;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    return fn(reinterpret_cast<spank_t>(&fake), static_cast<int>(argv.size()), argv.data());
  }
  void* handle_ = nullptr;
};

TEST_F(PluginHarnessTest, RegistersTheSkyOptions) {
  fake.context = S_CTX_ALLOCATOR;
  ASSERT_EQ(Call("slurm_spank_init", {"shim=/nonexistent/bin"}), 0);
  ASSERT_EQ(fake.options.size(), 8u);
  EXPECT_STREQ(fake.options[6].name, "sky-workdir");
  EXPECT_STREQ(fake.options[7].name, "sky-sync-back");
  EXPECT_STREQ(fake.options[0].name, "sky-any-cluster");
  EXPECT_EQ(fake.options[0].has_arg, 2);
  // The option callback: bad values refused with the reason, good ones kept.
  EXPECT_EQ(fake.options[0].cb(fake.options[0].val, "a;b", 0), -1);
  EXPECT_THAT(fake.errors.back(), HasSubstr("invalid --sky-any-cluster list 'a;b'"));
  EXPECT_EQ(fake.options[0].cb(fake.options[0].val, "beta", 0), 0);
  EXPECT_EQ(fake.options[0].cb(fake.options[0].val, "(null)", 1), 0);
}

TEST_F(PluginHarnessTest, UnknownPlugstackArgumentFailsTheLoad) {
  EXPECT_EQ(Call("slurm_spank_init", {"bogus=1"}), -1);
  EXPECT_THAT(fake.errors.back(), HasSubstr("unknown plugstack.conf argument 'bogus=1'"));
}

TEST_F(PluginHarnessTest, RemoteContextSetsSkypilotVariables) {
  ASSERT_EQ(Call("slurm_spank_init"), 0);
  fake.env = {{"SLURM_JOB_NODELIST", "node-a,node-b"},
              {"SLURM_JOB_NUM_NODES", "2"},
              {"SLURM_GPUS_ON_NODE", "4"},
              {"SLURM_CLUSTER_NAME", "beta"},
              {"SLURM_JOB_PARTITION", "h100-cluster"}};
  fake.items = {{S_JOB_NODEID, 1}, {S_JOB_ID, 42}, {S_JOB_NNODES, 0}};
  ASSERT_EQ(Call("slurm_spank_user_init"), 0);
  // A job skyslurm did not route: the names (nothing is looked up).
  EXPECT_EQ(fake.env["SKYPILOT_NODE_IPS"], "node-a\nnode-b");
  EXPECT_EQ(fake.env["SKYPILOT_NUM_NODES"], "2");
  EXPECT_EQ(fake.env["SKYPILOT_NODE_RANK"], "1");
  EXPECT_EQ(fake.env["SKYPILOT_NUM_GPUS_PER_NODE"], "4");
  EXPECT_EQ(fake.env["SKYPILOT_TASK_ID"], "sky-beta_42");
  EXPECT_THAT(fake.env["SKYPILOT_CLUSTER_INFO"], HasSubstr("\"zone\": \"h100-cluster\""));
  EXPECT_THAT(fake.env["SKYSLURM_SKYPILOT_VARS"], HasSubstr("SKYPILOT_NODE_RANK:"));
  // A step inside the job: our values replaced, the user's kept.
  fake.items[S_JOB_NODEID] = 0;
  fake.env["SKYPILOT_NUM_NODES"] = "99";  // changed by the user
  ASSERT_EQ(Call("slurm_spank_user_init"), 0);
  EXPECT_EQ(fake.env["SKYPILOT_NODE_RANK"], "0");
  EXPECT_EQ(fake.env["SKYPILOT_NUM_NODES"], "99");
  ASSERT_EQ(Call("slurm_spank_task_init"), 0);
  EXPECT_TRUE(fake.errors.empty()) << fake.errors.front();
}

TEST_F(PluginHarnessTest, RoutedJobsKeepTheirTaskId) {
  ASSERT_EQ(Call("slurm_spank_init"), 0);
  fake.env = {{"SKYPILOT_TASK_ID", "sky-20261130-043925-abcdef"}, {"SLURM_JOB_NODELIST", "n1"}};
  ASSERT_EQ(Call("slurm_spank_user_init"), 0);
  EXPECT_EQ(fake.env["SKYPILOT_TASK_ID"], "sky-20261130-043925-abcdef");
}

// A routed array's tasks: each its own id, the job's with its index; a step
// inside the task keeps it.
TEST_F(PluginHarnessTest, ARoutedArraysTaskGetsTheJobsTaskIdWithItsIndex) {
  ASSERT_EQ(Call("slurm_spank_init"), 0);
  fake.env = {{"SKYPILOT_TASK_ID", "sky-20261130-043925-abcdef"},
              {"SLURM_ARRAY_TASK_ID", "12"},
              {"SLURM_JOB_NODELIST", "n1"}};
  ASSERT_EQ(Call("slurm_spank_user_init"), 0);
  EXPECT_EQ(fake.env["SKYPILOT_TASK_ID"], "sky-20261130-043925-abcdef_12");
  ASSERT_EQ(Call("slurm_spank_user_init"), 0);  // an srun step of the task
  EXPECT_EQ(fake.env["SKYPILOT_TASK_ID"], "sky-20261130-043925-abcdef_12");
  EXPECT_TRUE(fake.errors.empty()) << fake.errors.front();
}

TEST_F(PluginHarnessTest, EnvOffSetsNothing) {
  ASSERT_EQ(Call("slurm_spank_init", {"env=no"}), 0);
  fake.env = {{"SLURM_JOB_NODELIST", "n1"}};
  ASSERT_EQ(Call("slurm_spank_user_init"), 0);
  EXPECT_EQ(fake.env.count("SKYPILOT_NODE_IPS"), 0u);
}

TEST_F(PluginHarnessTest, SrunInsideAnAllocationIsNotHandedOver) {
  fake.context = S_CTX_LOCAL;
  ASSERT_EQ(Call("slurm_spank_init"), 0);
  EXPECT_EQ(fake.options[0].cb(fake.options[0].val, "beta", 0), 0);
  setenv("SLURM_JOB_ID", "7", 1);
  EXPECT_EQ(Call("slurm_spank_init_post_opt"), 0);  // returns: no exec happened
  unsetenv("SLURM_JOB_ID");
}

TEST_F(PluginHarnessTest, MissingShimIsSaidAndTheJobGoesOn) {
  fake.context = S_CTX_ALLOCATOR;
  ASSERT_EQ(Call("slurm_spank_init", {"shim=/nonexistent/bin"}), 0);
  EXPECT_EQ(fake.options[0].cb(fake.options[0].val, nullptr, 0), 0);
  // This test binary is no sbatch: nothing to hand over, nothing said.
  EXPECT_EQ(Call("slurm_spank_init_post_opt"), 0);
  EXPECT_TRUE(fake.errors.empty());
}

}  // namespace
