#include "broker/backend/slurm/local_rest.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

namespace skyslurm::backend {
namespace {

using ::testing::HasSubstr;

// While one lives, this process may open no descriptor more: its limit is
// the lowest free one.
class NoDescriptorsLeft {
 public:
  NoDescriptorsLeft() {
    getrlimit(RLIMIT_NOFILE, &saved_);
    const int lowest_free = dup(0);
    close(lowest_free);
    rlimit limit = saved_;
    limit.rlim_cur = static_cast<rlim_t>(lowest_free);
    set_ = setrlimit(RLIMIT_NOFILE, &limit) == 0;
  }
  ~NoDescriptorsLeft() { setrlimit(RLIMIT_NOFILE, &saved_); }
  bool set() const { return set_; }

 private:
  rlimit saved_{};
  bool set_ = false;
};

TEST(LocalRestTest, NoDescriptorsLeftFailsTheRequestNotSlurmrestdForGood) {
  LocalRest rest("", "/nonexistent/skyslurm-test/slurmrestd", 1);
  Status short_of_descriptors;
  bool limited = false;
  {
    // Nothing else here while the limit holds: the sanitizers' checks open
    // files too.
    NoDescriptorsLeft limit;
    limited = limit.set();
    short_of_descriptors =
        rest.Request("GET", "/slurm/v0.0.38/ping", "", std::chrono::seconds(5)).status();
  }
  ASSERT_TRUE(limited);
  ASSERT_FALSE(short_of_descriptors.ok());
  EXPECT_NE(short_of_descriptors.code(), StatusCode::kUnavailable)
      << short_of_descriptors.ToString();
  EXPECT_THAT(short_of_descriptors.message(), HasSubstr("cannot create pipes"));
  EXPECT_FALSE(rest.unavailable());
  // A program that cannot be started is unavailable for good.
  auto answer = rest.Request("GET", "/slurm/v0.0.38/ping", "", std::chrono::seconds(5));
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.status().code(), StatusCode::kUnavailable) << answer.status().ToString();
  EXPECT_THAT(answer.status().message(), HasSubstr("cannot run /nonexistent/skyslurm-test"));
  EXPECT_TRUE(rest.unavailable());
}

}  // namespace
}  // namespace skyslurm::backend
