// Whom a thread works for: scopes that nest and restore, and the carrying
// of both into a thread started for the work.
#include "broker/util/acting_user.h"

#include <gtest/gtest.h>

#include <thread>

namespace skyslurm {
namespace {

TEST(ActingUserTest, ScopesNestAndRestore) {
  EXPECT_EQ(ActingUser(), "");
  EXPECT_FALSE(CurrentViewer().has_value());
  EXPECT_TRUE(MaySee("anyone"));
  {
    ViewerScope viewer(Viewer{"alice", false});
    ActingFor acting("alice");
    EXPECT_TRUE(MaySee("alice"));
    EXPECT_FALSE(MaySee("bob"));
    {
      ActingFor owner("bob");  // alice's request acts on bob's job as its owner
      EXPECT_EQ(ActingUser(), "bob");
    }
    EXPECT_EQ(ActingUser(), "alice");
    // Carried into a thread started for the request.
    const WorkingFor w = WorkingFor::Current();
    std::thread([w] {
      WorkingForScope same(w);
      EXPECT_EQ(ActingUser(), "alice");
      EXPECT_FALSE(MaySee("bob"));
    }).join();
    std::thread([] { EXPECT_EQ(ActingUser(), ""); }).join();
  }
  EXPECT_EQ(ActingUser(), "");
  ViewerScope admin(Viewer{"root", true});
  EXPECT_TRUE(MaySee("bob"));
}

}  // namespace
}  // namespace skyslurm
