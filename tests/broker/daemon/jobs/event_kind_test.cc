#include "broker/daemon/jobs/event_kind.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace skyslurm::daemon {
namespace {

// The names are a contract: the store keeps them, the API and
// `skyslurm status` show them, docs/failover.md lists them.
TEST(EventKindTest, NamesAreTheOnesTheStoreAndTheApiShow) {
  EXPECT_EQ(EventName(EventKind::kReplaced), "re-placed");
  EXPECT_EQ(EventName(EventKind::kMoveStarted), "move-started");
  EXPECT_EQ(EventName(EventKind::kDuplicateCancelled), "duplicate-cancelled");
  EXPECT_EQ(EventName(EventKind::kClusterLost), "cluster-lost");
  std::set<std::string> names;
  for (int k = 0; k <= static_cast<int>(EventKind::kDuplicateCancelled); ++k) {
    names.insert(std::string(EventName(static_cast<EventKind>(k))));
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(EventKind::kDuplicateCancelled) + 1);
  EXPECT_FALSE(names.contains("event"));
}

}  // namespace
}  // namespace skyslurm::daemon
