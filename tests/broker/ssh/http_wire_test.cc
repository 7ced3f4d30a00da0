// HTTP/1.1 framing as slurmrestd writes it (answers captured from Slurm
// 22.05.8's slurmrestd on the testbed, bodies shortened).
#include "broker/ssh/http_wire.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::ssh {
namespace {

TEST(HttpWireTest, ARequestCarriesItsLengthAndKeepsTheConnection) {
  EXPECT_EQ(HttpRequestText("GET", "/slurm/v0.0.38/ping", ""),
            "GET /slurm/v0.0.38/ping HTTP/1.1\r\nHost: slurmrestd\r\nAccept: application/json\r\n"
            "Content-Length: 0\r\n\r\n");
  EXPECT_EQ(HttpRequestText("POST", "/x", "{}"),
            "POST /x HTTP/1.1\r\nHost: slurmrestd\r\nAccept: application/json\r\n"
            "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
}

TEST(HttpWireTest, PipelinedAnswersAreTakenOneByOne) {
  std::string buffer =
      "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nContent-Type: application/json\r\n\r\n"
      "{\"pings\":1}"
      "HTTP/1.1 500 INTERNAL ERROR\r\nConnection: Close\r\ncontent-length: 2\r\n\r\n{}HTTP/1.1 2";
  auto first = TakeHttpAnswer(buffer);
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->status, 200);
  EXPECT_EQ((*first)->body, "{\"pings\":1}");
  EXPECT_FALSE((*first)->close);
  auto second = TakeHttpAnswer(buffer);
  ASSERT_TRUE(second.ok() && second->has_value());
  EXPECT_EQ((*second)->status, 500);
  EXPECT_EQ((*second)->body, "{}");
  EXPECT_TRUE((*second)->close);  // slurmrestd ends the stream after an error
  // The start of a third: not yet whole, and left in place.
  auto third = TakeHttpAnswer(buffer);
  ASSERT_TRUE(third.ok());
  EXPECT_FALSE(third->has_value());
  EXPECT_EQ(buffer, "HTTP/1.1 2");
}

TEST(HttpWireTest, ABodyArrivingInPiecesWaitsForItsLastByte) {
  std::string whole = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
  for (std::size_t cut = 0; cut < whole.size(); ++cut) {
    std::string buffer = whole.substr(0, cut);
    auto a = TakeHttpAnswer(buffer);
    ASSERT_TRUE(a.ok()) << cut;
    EXPECT_FALSE(a->has_value()) << cut;
  }
  std::string buffer = whole;
  auto a = TakeHttpAnswer(buffer);
  ASSERT_TRUE(a.ok() && a->has_value());
  EXPECT_EQ((*a)->body, "hello");
  EXPECT_TRUE(buffer.empty());
}

TEST(HttpWireTest, ChunkedBodiesAreJoined) {
  std::string buffer =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: "
      "chunked\r\n\r\n4\r\n{\"a\"\r\n3;x=y\r\n:1}\r\n0\r\n\r\nrest";
  auto a = TakeHttpAnswer(buffer);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(a->has_value());
  EXPECT_EQ((*a)->body, "{\"a\":1}");
  EXPECT_EQ(buffer, "rest");
  std::string partial = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n";
  auto p = TakeHttpAnswer(partial);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->has_value());
}

TEST(HttpWireTest, WhatCannotBeFollowedIsAnError) {
  for (std::string bad : {std::string("slurmrestd: fatal: bad things\r\n\r\n"),
                          std::string("HTTP/1.1 200 OK\r\n\r\n{}"),
                          std::string("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"),
                          std::string("HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n")}) {
    EXPECT_FALSE(TakeHttpAnswer(bad).ok()) << bad;
  }
}

// A broken or hostile slurmrestd: sizes near 2^64 (a chunk's end would
// wrap around and the reader wait for ever, growing), a Content-Length or
// chunks past the cap, a chunk-size line without end: each an error at
// once, never a wait.
TEST(HttpWireTest, SizesPastTheCapAreErrorsNotWaits) {
  std::string huge_chunk =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffe\r\nab";
  auto a = TakeHttpAnswer(huge_chunk);
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.status().message(), ::testing::HasSubstr("over the"));
  std::string huge_length = "HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\n";
  EXPECT_FALSE(TakeHttpAnswer(huge_length).ok());
  std::string past_cap =
      "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(kMaxHttpBody + 1) + "\r\n\r\n";
  EXPECT_FALSE(TakeHttpAnswer(past_cap).ok());
  std::string endless =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + std::string(2000, '1');
  EXPECT_FALSE(TakeHttpAnswer(endless).ok());
  std::string bad_size = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1zz\r\n";
  EXPECT_FALSE(TakeHttpAnswer(bad_size).ok());
}

}  // namespace
}  // namespace skyslurm::ssh
