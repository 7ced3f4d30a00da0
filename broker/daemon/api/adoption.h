// `skyslurm site adopt` (docs/site.md): a user's own store moved into the
// site's, each job with its copies, history and open intents, as JSON
// (POST /v1/adopt). The job's input travels opened (the user's key sealed
// it; the site seals it again with its own); its owner is the user the
// request's credential names, whatever the JSON says.
#pragma once

#include <json/json.h>

#include <vector>

#include "broker/daemon/jobs/job_input.h"
#include "broker/store/job_store.h"
#include "broker/util/status.h"

namespace skyslurm::daemon {

struct AdoptedJob {
  store::SkyJob job;  // input_json: the input opened, as ToJson writes it
  std::vector<store::Copy> copies;
  std::vector<store::Event> events;
  std::vector<store::Intent> intents;  // open ones
};

Json::Value AdoptedJobJson(const AdoptedJob& adopted);
// Errors name the field that is missing or of the wrong type.
Result<AdoptedJob> AdoptedJobFromJson(const Json::Value& value);

}  // namespace skyslurm::daemon
