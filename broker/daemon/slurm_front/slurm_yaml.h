// `squeue --yaml` and `sacct --yaml` over several clusters: the clusters are
// asked for --json, the documents merged as for --json (slurm_json.h), and
// the one document written back in the YAML Slurm's serializer/yaml plugin
// prints (libyaml's emitter, every node tagged: "!!str job_id: !!int 12",
// "!!seq []", a float as "%f", the document ended by "..."). Keys keep the
// order the JSON reader gives them (sorted), but the top: meta, errors,
// warnings, jobs. Pure, tested on fixtures and on the testbed's output.
#pragma once

#include <string>

#include "broker/util/status.h"

namespace skyslurm::daemon {

// How an empty string of the JSON is written: squeue's JSON has "" for a
// string the job does not have, which its YAML prints as null; sacct's
// data holds empty strings, printed as a bare "!!str".
enum class EmptyString { kNull, kEmpty };

// `json` is one JSON document (an object); an error when it is not.
Result<std::string> SlurmYamlFromJson(const std::string& json, EmptyString empty);

}  // namespace skyslurm::daemon
