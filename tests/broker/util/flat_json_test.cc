#include <gtest/gtest.h>

#include "broker/util/json_cursor.h"
#include "broker/util/json_string.h"

namespace skyslurm {
namespace {

TEST(FlatJsonTest, ReadsTopLevelScalarsAndSkipsTheRest) {
  auto m = ReadFlatJsonObject(
      R"({"stdout":"Submitted batch job 4 on cluster gamma\n","exit_code":0,"home":false,)"
      R"("job":{"sky_id":"sky-1","n":[1,2,{"x":null}]},"notes":[],"none":null,)"
      R"("u":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/","neg":-1.5e3})");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ((*m)["stdout"], "Submitted batch job 4 on cluster gamma\n");
  EXPECT_EQ((*m)["exit_code"], "0");
  EXPECT_EQ((*m)["home"], "false");
  EXPECT_EQ((*m)["u"], "caf\xc3\xa9 \xf0\x9f\x98\x80 \"q\" \\ /");
  EXPECT_EQ((*m)["neg"], "-1.5e3");
  EXPECT_FALSE(m->contains("job"));
  EXPECT_FALSE(m->contains("none"));
}

TEST(FlatJsonTest, AnythingMalformedIsNothing) {
  for (const char* bad : {"", "[]", "{", R"({"a":})", R"({"a":1,})", R"({"a":"\x"})",
                          R"({"a":"\ud800"})", R"({"a":1} x)", R"({"a":tru})", "{\"a\":\"\n\"}",
                          R"({"a":[1,]})", R"({a:1})", R"({"a":01x})"}) {
    EXPECT_FALSE(ReadFlatJsonObject(bad).has_value()) << bad;
  }
  EXPECT_TRUE(ReadFlatJsonObject(" { } ").has_value());
}

TEST(FlatJsonTest, QuotesWhatItWritesSoThatItReadsBack) {
  const std::string odd = "tab\there \"q\" back\\slash \x01 nl\n é";
  auto m = ReadFlatJsonObject("{\"k\":" + JsonQuote(odd) + "}");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ((*m)["k"], odd);
}

}  // namespace
}  // namespace skyslurm
