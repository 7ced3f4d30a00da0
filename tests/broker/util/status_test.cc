#include "broker/util/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace skyslurm {
namespace {

TEST(StatusTest, DefaultIsOkAndHasNoMessage) {
  Status status;
  EXPECT_TRUE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kOk);
  EXPECT_EQ(status.message(), "");
  EXPECT_EQ(status.ToString(), "ok");
  EXPECT_EQ(Status(StatusCode::kOk, "ignored").message(), "");
}

TEST(StatusTest, ErrorKeepsCodeAndMessage) {
  Status status = InvalidArgumentError("job.sh:3: --gres: 'gpu:h100:x' is not a count");
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.ToString(), "job.sh:3: --gres: 'gpu:h100:x' is not a count");
}

TEST(StatusTest, ErrorWithoutMessageSaysItsCode) {
  EXPECT_EQ(Status(StatusCode::kUnavailable, "").message(), "unavailable");
}

TEST(StatusTest, WithContextPrefixesErrorsOnly) {
  EXPECT_EQ(UnavailableError("connection refused").WithContext("beta").message(),
            "beta: connection refused");
  EXPECT_EQ(UnavailableError("x").WithContext("beta").code(), StatusCode::kUnavailable);
  EXPECT_TRUE(OkStatus().WithContext("beta").ok());
  // Said once: a message already about the cluster is kept as it is.
  EXPECT_EQ(FailedPreconditionError("epsilon needs a one-time code: run skyslurm login epsilon")
                .WithContext("epsilon")
                .message(),
            "epsilon needs a one-time code: run skyslurm login epsilon");
  EXPECT_EQ(UnavailableError("beta: down").WithContext("beta").message(), "beta: down");
  EXPECT_EQ(UnavailableError("betamax").WithContext("beta").message(), "beta: betamax");
}

TEST(StatusTest, EveryCodeHasAName) {
  for (int c = 0; c <= static_cast<int>(StatusCode::kInternal); ++c) {
    EXPECT_NE(StatusCodeName(static_cast<StatusCode>(c)), "unknown") << c;
  }
}

TEST(ResultTest, HoldsValue) {
  Result<std::string> r = std::string("beta:42");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(*r, "beta:42");
  EXPECT_EQ(r->size(), 7u);
  EXPECT_EQ(r.value_or("none"), "beta:42");
}

TEST(ResultTest, HoldsError) {
  Result<int> r = NotFoundError("no such job");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.value_or(7), 7);
}

TEST(ResultTest, OkStatusIsNotAValue) {
  Result<int> r = OkStatus();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

TEST(ResultTest, MoveOnlyValues) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> taken = std::move(r).value();
  EXPECT_EQ(*taken, 5);
}

Result<int> Half(int n) {
  if (n % 2 != 0) return InvalidArgumentError(std::to_string(n) + " is odd");
  return n / 2;
}

Result<int> Quarter(int n) {
  SKY_ASSIGN_OR_RETURN(int half, Half(n));
  SKY_ASSIGN_OR_RETURN(int quarter, Half(half));
  return quarter;
}

Status CheckEven(int n) {
  SKY_RETURN_IF_ERROR(Half(n).status());
  return OkStatus();
}

TEST(ResultTest, MacrosPropagateTheFirstError) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_EQ(Quarter(6).status().message(), "3 is odd");
  EXPECT_EQ(Quarter(5).status().message(), "5 is odd");
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_EQ(CheckEven(3).code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace skyslurm
