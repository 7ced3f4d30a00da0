// Found by wire_fuzzer: jsoncpp's reader throws past its nesting limit, and
// the exception left skyslurmd's JSON input (and every reader of what
// clusters and API servers answer) through std::terminate.
#include "broker/util/json_read.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm {
namespace {

TEST(ReadJsonTest, DeepNestingIsAnErrorNotAnException) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  Json::Value v;
  std::string errors;
  EXPECT_FALSE(ReadJson(deep, &v, &errors));
  EXPECT_THAT(errors, ::testing::HasSubstr("nested too deep"));
  EXPECT_TRUE(ReadJson(R"({"a":[1,{"b":"c"}]})", &v, &errors));
  EXPECT_EQ(v["a"][1]["b"].asString(), "c");
  EXPECT_FALSE(ReadJson("\"s\"", &v, &errors, /*strict_root=*/true));
  EXPECT_FALSE(ReadJson("{", &v, &errors));
}

}  // namespace
}  // namespace skyslurm
