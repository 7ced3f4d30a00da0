#include "broker/util/line_diff.h"

#include <gtest/gtest.h>

namespace skyslurm {
namespace {

TEST(LineDiffTest, ReplacementsAndInsertions) {
  auto hunks = DiffLines("a\nb\nc\nd\n", "a\nh\nB\nc\nd\ne\n");
  ASSERT_EQ(hunks.size(), 2u);
  EXPECT_EQ(hunks[0].old_line, 2);
  EXPECT_EQ(hunks[0].removed, std::vector<std::string>{"b"});
  EXPECT_EQ(hunks[0].added, (std::vector<std::string>{"h", "B"}));
  EXPECT_EQ(hunks[1].old_line, 4);  // after line 4
  EXPECT_TRUE(hunks[1].removed.empty());
  EXPECT_EQ(FormatDiff(hunks, "  "),
            "  @@ at line 2\n  -b\n  +h\n  +B\n  @@ after line 4\n  +e\n");
}

TEST(LineDiffTest, SameTextHasNoHunks) { EXPECT_TRUE(DiffLines("x\ny\n", "x\ny\n").empty()); }

TEST(LineDiffTest, InsertionAfterTheFirstLine) {
  auto hunks = DiffLines("#!/bin/sh\ntrue\n", "#!/bin/sh\n# note\ntrue\n");
  ASSERT_EQ(hunks.size(), 1u);
  EXPECT_EQ(FormatDiff(hunks, ""), "@@ after line 1\n+# note\n");
}

}  // namespace
}  // namespace skyslurm
