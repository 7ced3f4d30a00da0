#include "broker/util/spawn.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

namespace skyslurm {
namespace {

int WaitFor(pid_t pid) {
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(OwnedFdTest, ClosesOnceAndHandsOver) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  OwnedFd read_end(fds[0]);
  {
    OwnedFd write_end(fds[1]);
    OwnedFd moved = std::move(write_end);
    EXPECT_FALSE(write_end.open());
    EXPECT_EQ(moved.get(), fds[1]);
  }
  EXPECT_EQ(fcntl(fds[1], F_GETFD), -1);  // closed with its last owner
  const int raw = read_end.Release();
  EXPECT_FALSE(read_end.open());
  EXPECT_NE(fcntl(raw, F_GETFD), -1);  // released, not closed
  close(raw);
}

TEST(EnvironmentWithTest, UnsetsThenSetsSortedByName) {
  setenv("SKYSLURM_SPAWN_TEST_B", "old", 1);
  setenv("SKYSLURM_SPAWN_TEST_GONE", "x", 1);
  auto env = EnvironmentWith({{"SKYSLURM_SPAWN_TEST_B", "new"}, {"SKYSLURM_SPAWN_TEST_A", "1"}},
                             {"SKYSLURM_SPAWN_TEST_GONE"});
  unsetenv("SKYSLURM_SPAWN_TEST_B");
  unsetenv("SKYSLURM_SPAWN_TEST_GONE");
  EXPECT_TRUE(std::is_sorted(env.begin(), env.end()));
  auto a = std::find(env.begin(), env.end(), "SKYSLURM_SPAWN_TEST_A=1");
  auto b = std::find(env.begin(), env.end(), "SKYSLURM_SPAWN_TEST_B=new");
  ASSERT_NE(a, env.end());
  ASSERT_NE(b, env.end());
  EXPECT_EQ(b - a, 1);
  EXPECT_EQ(std::count_if(
                env.begin(), env.end(),
                [](const std::string& e) { return e.starts_with("SKYSLURM_SPAWN_TEST_GONE="); }),
            0);
}

TEST(SpawnTest, PipesAreOursAndNonBlocking) {
  auto p = Spawn({.argv = {"cat"}, .env = EnvironmentWith({})});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  for (const OwnedFd* fd : {&p->in, &p->out, &p->err}) {
    ASSERT_TRUE(fd->open());
    EXPECT_TRUE(fcntl(fd->get(), F_GETFL) & O_NONBLOCK);
  }
  ASSERT_EQ(write(p->in.get(), "hi", 2), 2);
  p->in.Close();
  const int status = WaitFor(p->pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  char got[8] = {};
  EXPECT_EQ(read(p->out.get(), got, sizeof got), 2);
  EXPECT_STREQ(got, "hi");
}

TEST(SpawnTest, WithoutAPipedStdinItReadsDevNull) {
  auto p = Spawn({.argv = {"cat"}, .env = EnvironmentWith({}), .stdin_piped = false});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_FALSE(p->in.open());
  const int status = WaitFor(p->pid);  // cat ends at once: /dev/null is empty
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(SpawnTest, ErrorsNameTheProgram) {
  auto missing = Spawn({.argv = {"/nonexistent/skyslurm-no-such-program"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("cannot run /nonexistent/skyslurm-no-such-program"),
            std::string::npos);
  EXPECT_EQ(Spawn({}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace skyslurm
