#include "broker/daemon/dashboard/job_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::daemon {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TableRow Row(std::string key, std::string cluster, std::string state, std::int64_t wait,
             std::string name = "job") {
  TableRow r;
  r.key = key;
  r.native_id = key.substr(key.find(':') + 1);
  r.cluster = std::move(cluster);
  r.state = std::move(state);
  r.wait = wait;
  r.name = std::move(name);
  return r;
}

std::vector<std::string> Keys(const TablePage& page) {
  std::vector<std::string> keys;
  for (const auto& r : page.rows) keys.push_back(r.key);
  return keys;
}

std::vector<TableRow> Sample() {
  TableRow array = Row("beta:40", "beta", "PENDING", 30, "sweep");
  array.tasks = {{"PENDING", 6}, {"RUNNING", 2}};
  return {Row("alpha:10", "alpha", "RUNNING", 5, "train"), Row("alpha:9", "alpha", "PENDING", 90),
          array, Row("gamma:100", "gamma", "COMPLETED", 0, "eval")};
}

TEST(JobTableTest, DefaultsToTheLongestWaitFirstAndCountsEveryState) {
  const TablePage page = QueryTable(Sample(), TableQuery{});
  EXPECT_THAT(Keys(page), ElementsAre("alpha:9", "beta:40", "alpha:10", "gamma:100"));
  EXPECT_EQ(page.total, 4u);
  EXPECT_EQ(page.all, 4u);
  // An array counts its tasks by state, not itself.
  EXPECT_EQ(page.states.at("PENDING"), 7);
  EXPECT_EQ(page.states.at("RUNNING"), 3);
  EXPECT_THAT(page.clusters, ElementsAre("alpha", "beta", "gamma"));
}

TEST(JobTableTest, FiltersByStateClusterAndTextInAnyCase) {
  TableQuery q;
  q.state = "RUNNING";  // the array has running tasks
  EXPECT_THAT(Keys(QueryTable(Sample(), q)), ElementsAre("beta:40", "alpha:10"));
  q = {};
  q.cluster = "alpha";
  EXPECT_THAT(Keys(QueryTable(Sample(), q)), ElementsAre("alpha:9", "alpha:10"));
  q = {};
  q.text = "SWE";
  const TablePage page = QueryTable(Sample(), q);
  EXPECT_THAT(Keys(page), ElementsAre("beta:40"));
  EXPECT_EQ(page.total, 1u);
  EXPECT_EQ(page.all, 4u);
}

TEST(JobTableTest, IdsSortAsNumbersAndPagesAreStable) {
  TableQuery q;
  q.sort = "id";
  q.descending = false;
  EXPECT_THAT(Keys(QueryTable(Sample(), q)),
              ElementsAre("alpha:9", "alpha:10", "beta:40", "gamma:100"));
  q.offset = 1;
  q.limit = 2;
  const TablePage page = QueryTable(Sample(), q);
  EXPECT_THAT(Keys(page), ElementsAre("alpha:10", "beta:40"));
  EXPECT_EQ(page.total, 4u);
  q.offset = 10;  // past the end: an empty page, not an error
  EXPECT_TRUE(QueryTable(Sample(), q).rows.empty());
}

// A spread array's ids ("34,21") beside Slurm's: numbers by value first,
// then text, one order whatever the mix (a cycle made pages repeat rows).
TEST(JobTableTest, IdsOfEveryKindHaveOneOrder) {
  std::vector<TableRow> rows = {
      Row("a:10", "alpha", "PENDING", 0), Row("b:5,6", "beta", "PENDING", 0),
      Row("c:9", "gamma", "PENDING", 0), Row("d:x", "delta", "PENDING", 0)};
  TableQuery q;
  q.sort = "id";
  q.descending = false;
  EXPECT_THAT(Keys(QueryTable(rows, q)), ElementsAre("c:9", "a:10", "b:5,6", "d:x"));
  q.descending = true;
  EXPECT_THAT(Keys(QueryTable(rows, q)), ElementsAre("d:x", "b:5,6", "a:10", "c:9"));
}

TEST(JobTableTest, ASpreadArrayIsOnEachOfItsClusters) {
  std::vector<TableRow> rows = {Row("sky-1", "alpha,beta", "SPREAD", 0),
                                Row("gamma:9", "gamma", "PENDING", 0)};
  TableQuery q;
  q.cluster = "beta";
  const TablePage page = QueryTable(rows, q);
  EXPECT_THAT(Keys(page), ElementsAre("sky-1"));
  EXPECT_THAT(page.clusters, ElementsAre("alpha", "beta", "gamma"));
}

TEST(JobTableTest, TenThousandRowsGiveOnePage) {
  std::vector<TableRow> rows;
  for (int i = 0; i < 10'000; ++i) {
    rows.push_back(Row("alpha:" + std::to_string(i), "alpha", i % 3 ? "COMPLETED" : "PENDING", i));
  }
  TableQuery q;
  q.limit = 50;
  const TablePage page = QueryTable(std::move(rows), q);
  ASSERT_EQ(page.rows.size(), 50u);
  EXPECT_EQ(page.rows.front().key, "alpha:9999");
  EXPECT_EQ(page.all, 10'000u);
}

TEST(JobTableTest, ABadQuerySaysWhichParameter) {
  EXPECT_THAT(ParseTableQuery({{"sort", "colour"}}).status().message(), HasSubstr("'sort'"));
  EXPECT_THAT(ParseTableQuery({{"order", "up"}}).status().message(), HasSubstr("'order'"));
  EXPECT_THAT(ParseTableQuery({{"limit", "0"}}).status().message(), HasSubstr("'limit'"));
  EXPECT_THAT(ParseTableQuery({{"offset", "-1"}}).status().message(), HasSubstr("'offset'"));
  auto q = ParseTableQuery({{"sort", "gpus"}, {"order", "asc"}, {"limit", "10"}, {"q", "x"}});
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->sort, "gpus");
  EXPECT_FALSE(q->descending);
  EXPECT_EQ(q->limit, 10u);
  EXPECT_EQ(q->text, "x");
}

}  // namespace
}  // namespace skyslurm::daemon
