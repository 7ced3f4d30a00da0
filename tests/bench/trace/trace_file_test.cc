#include "bench/trace/trace_file.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace skyslurm::trace {
namespace {

// A trace file: the header, then `lines`.
std::string Csv(std::string_view lines) {
  std::string text = "job_id,submit_s,runtime_s,gpus,nodes,gpu_type,vc,status\n";
  text.append(lines.data(), lines.size());
  return text;
}

TEST(TraceFileTest, ReadsEveryColumnAndLeavesUnrecordedOnesEmpty) {
  auto jobs = ParseTrace(Csv("ee9e8c-1,336541,1294506,8,,,ee9e8c,\n"
                             "openb-pod-0007,42.5,,1,1,V100M16,LS,Pending\r\n"),
                         "t.csv");
  ASSERT_TRUE(jobs.ok()) << jobs.status().message();
  ASSERT_EQ(jobs->size(), 2u);
  const TraceJob& a = (*jobs)[0];
  EXPECT_EQ(a.id, "ee9e8c-1");
  EXPECT_EQ(a.submit_s, 336541);
  EXPECT_EQ(a.runtime_s, 1294506);
  EXPECT_EQ(a.gpus, 8);
  EXPECT_FALSE(a.nodes.has_value());
  EXPECT_EQ(a.gpu_type, "");
  EXPECT_EQ(a.vc, "ee9e8c");
  const TraceJob& b = (*jobs)[1];
  EXPECT_EQ(b.submit_s, 42.5);
  EXPECT_FALSE(b.runtime_s.has_value());  // never scheduled
  EXPECT_EQ(b.nodes, 1);
  EXPECT_EQ(b.gpu_type, "V100M16");
  EXPECT_EQ(b.status, "Pending");
}

TEST(TraceFileTest, BadLinesAreErrorsNamingTheLineAndTheColumn) {
  EXPECT_EQ(ParseTrace("job,submit_s,runtime_s,gpus,nodes,gpu_type,vc,status\n", "t.csv")
                .status()
                .message(),
            "t.csv:1: column 1 is 'job', not 'job_id'");
  EXPECT_EQ(
      ParseTrace(Csv("a,1,2,3,,,\n"), "t.csv").status().message(),
      "t.csv:2: 7 fields, not the 8 of job_id,submit_s,runtime_s,gpus,nodes,gpu_type,vc,status");
  EXPECT_EQ(ParseTrace(Csv("a,1,2,3,,,v,\nb,soon,2,3,,,v,\n"), "t.csv").status().message(),
            "t.csv:3: submit_s 'soon' is not a time");
  EXPECT_EQ(ParseTrace(Csv("a,1,2,-3,,,v,\n"), "t.csv").status().message(),
            "t.csv:2: gpus '-3' is not a count");
  EXPECT_EQ(ParseTrace("", "t.csv").status().message(), "t.csv: no header line");
  EXPECT_EQ(ReadTrace("/nonexistent/jobs.csv").status().message(),
            "cannot read the trace /nonexistent/jobs.csv");
}

TEST(TraceFileTest, AWindowKeepsItsJobsInOrderTimedFromItsStart) {
  auto jobs = ParseTrace(Csv("a,3500,1,1,,,v,\nb,7300,1,1,,,v,\nc,3600,1,1,,,v,\n"
                             "d,10800,1,1,,,v,\n"),
                         "t.csv");
  ASSERT_TRUE(jobs.ok());
  const auto window = TraceWindow(*jobs, 1, 2);  // [3600 s, 10800 s)
  ASSERT_EQ(window.size(), 2u);
  EXPECT_EQ(window[0].id, "c");
  EXPECT_EQ(window[0].submit_s, 0);
  EXPECT_EQ(window[1].id, "b");
  EXPECT_EQ(window[1].submit_s, 3700);
}

}  // namespace
}  // namespace skyslurm::trace
