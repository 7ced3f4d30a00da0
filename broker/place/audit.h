// The record a placement decision leaves: one line per decision appended to
// <state dir>/decisions.log (the shim's, skyslurmd's and explain's alike),
// and the message a job that no cluster can run gets.
#pragma once

#include <ctime>
#include <string>

#include "broker/place/planner.h"

namespace skyslurm::place {

// "2026-11-30T07:03:21Z".
std::string FormatUtc(std::time_t t);

// Time, user, sky id, the job, the choice, each candidate with its verdict
// and estimate, how long the decision took.
std::string AuditLine(const Plan& plan, const std::string& user, const std::string& sky_id,
                      const std::string& job);

// Appends `line` to <state_dir>/decisions.log (the folder made private);
// a failure to write is a warning on stderr, never fatal.
void AppendAudit(const std::string& state_dir, const std::string& line);

// "no cluster can run this job (skyslurm explain shows why):" and a line
// per candidate: "  cluster/partition: verdict: reason".
std::string NoClusterMessage(const Plan& plan);

}  // namespace skyslurm::place
