#include "broker/util/json_cursor.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace skyslurm {
namespace {

TEST(JsonCursorTest, ReadsScalarsAsTheCallerAsksAndSkipsTheRest) {
  const std::string text = R"({"s":"a\"b","n":-12,"q":2,"f":1.5,"t":true,"z":null,
                               "big":{"x":[1,{"y":"}]"}]},"esc\u0061ped":"k","arr":[1,2,3]})";
  JsonCursor c(text);
  std::string s, q, f, escaped, missing = "x";
  std::int64_t n = 0, count = 0;
  bool t = false;
  std::vector<std::string> keys;
  Status st = c.Object([&](std::string_view key) {
    keys.emplace_back(key);
    if (key == "s") return c.String(&s);
    if (key == "n") return c.Int(&n);
    if (key == "q") return c.String(&q);  // a number read as text
    if (key == "f") return c.String(&f);
    if (key == "t") return c.Bool(&t);
    if (key == "z") return c.String(&missing);  // null reads as ""
    if (key == "escaped") return c.String(&escaped);
    if (key == "arr") {
      return c.Array([&] {
        ++count;
        return c.Skip();
      });
    }
    return c.Skip();
  });
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(c.End().ok());
  EXPECT_EQ(s, "a\"b");
  EXPECT_EQ(n, -12);
  EXPECT_EQ(q, "2");
  EXPECT_EQ(f, "1.5");
  EXPECT_TRUE(t);
  EXPECT_EQ(missing, "");
  EXPECT_EQ(escaped, "k");  // an escaped key is decoded
  EXPECT_EQ(count, 3);
  EXPECT_EQ(keys.size(), 9u);
}

TEST(JsonCursorTest, KindMismatchesAreErrorsWithTheirOffset) {
  {
    JsonCursor c(R"({"a":{"b":1}})");
    std::string out;
    Status st = c.Object([&](std::string_view) { return c.String(&out); });
    EXPECT_NE(st.message().find("at byte 5: a scalar was expected"), std::string::npos)
        << st.message();
  }
  {
    JsonCursor c(R"([1.5])");
    std::int64_t v = 0;
    Status st = c.Array([&] { return c.Int(&v); });
    EXPECT_NE(st.message().find("an integer was expected"), std::string::npos) << st.message();
  }
  {
    JsonCursor c(R"("not an object")");
    Status st = c.Object([&](std::string_view) { return c.Skip(); });
    EXPECT_NE(st.message().find("an object was expected"), std::string::npos) << st.message();
  }
}

// Whole numbers in any JSON spelling are integers, exactly (no double in
// between: the shim's static front must not need libm).
TEST(JsonCursorTest, AWholeNumberInAnySpellingIsAnExactInteger) {
  const std::vector<std::pair<std::string, std::int64_t>> whole = {
      {"12", 12},
      {"-3", -3},
      {"2.0", 2},
      {"1e3", 1000},
      {"1.5e1", 15},
      {"-3E+2", -300},
      {"0.0e-5", 0},
      {"-0", 0},
      {"1500e-2", 15},
      {"9223372036854775807", 9223372036854775807},
      {"-9223372036854775808", std::numeric_limits<std::int64_t>::min()},
      {"9007199254740993.0", 9007199254740993},
      {"0e999999999999", 0}};
  for (const auto& [text, expected] : whole) {
    JsonCursor c(text);
    std::int64_t v = 0;
    Status st = c.Int(&v);
    EXPECT_TRUE(st.ok()) << text << ": " << st.message();
    EXPECT_EQ(v, expected) << text;
  }
  for (const char* text : {"2.5", "1.50e-1", "9223372036854775808", "-9223372036854775809", "1e19",
                           "1e99999999999999999999", "1e-999999999999"}) {
    JsonCursor c(text);
    std::int64_t v = 0;
    EXPECT_FALSE(c.Int(&v).ok()) << text;
  }
}

// Looking for a null that is not there records no failure: a later error
// names its own cause (a regression: "an unknown literal" was reported).
TEST(JsonCursorTest, ALaterErrorNamesItsOwnCauseAfterANullWasLookedFor) {
  JsonCursor c(R"({"a":nope,"b":{]})");
  std::string a;
  Status st = c.Object([&](std::string_view key) { return key == "a" ? c.String(&a) : c.Skip(); });
  EXPECT_EQ(a, "nope");
  EXPECT_NE(st.message().find("a bracket does not match"), std::string::npos) << st.message();
}

TEST(JsonCursorTest, StopLeavesTheRestUnscannedAndRawGivesAValuesText) {
  // Broken after the head: never reached once the head is read.
  JsonCursor c(R"({"metadata":{"continue":"tok"},"items":[{"a":1}, BROKEN)");
  std::string token;
  Status st = c.Object([&](std::string_view key) {
    if (key != "metadata") return c.Skip();
    Status got =
        c.Object([&](std::string_view k) { return k == "continue" ? c.String(&token) : c.Skip(); });
    c.Stop();
    return got;
  });
  EXPECT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(token, "tok");

  JsonCursor r(R"({"type":"ADDED","object":{"k":[1,"]"]}})");
  std::string_view raw;
  ASSERT_TRUE(r.Object([&](std::string_view key) {
                 return key == "object" ? r.Raw(&raw) : r.Skip();
               }).ok());
  EXPECT_EQ(raw, R"({"k":[1,"]"]})");
}

}  // namespace
}  // namespace skyslurm
