// A GPU-cluster job trace in the shared schema (../shared/traces/README.md):
// one job per line, `job_id,submit_s,runtime_s,gpus,nodes,gpu_type,vc,status`
// after a header naming those columns; an empty field is one the trace does
// not record. The replayer (issue 18) and its simulator read any such file at
// run time; nothing of a trace is kept in this project.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm::trace {

struct TraceJob {
  std::string id;
  double submit_s = 0;              // from the trace's first job
  std::optional<double> runtime_s;  // none: it never ran (a pod never scheduled)
  int gpus = 0;
  std::optional<int> nodes;  // none: not recorded (Philly)
  std::string gpu_type;      // "" when not recorded
  std::string vc;            // virtual cluster, or Alibaba's QoS class
  std::string status;
};

// Errors name the file (`name`), the line and the column.
Result<std::vector<TraceJob>> ParseTrace(std::string_view text, std::string_view name);
Result<std::vector<TraceJob>> ReadTrace(const std::string& path);

// The jobs submitted in [start_h, start_h + hours) hours of the trace, their
// submit times counted from the window's start, in submission order.
std::vector<TraceJob> TraceWindow(const std::vector<TraceJob>& jobs, double start_h, double hours);

}  // namespace skyslurm::trace
