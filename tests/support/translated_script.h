// A hand-made job's script as translation gives it: the script, and what
// sbatch reads of it (translate/translation.h: script_options and
// heterogeneous), for tests that build a SubmitSpec without translating.
#pragma once

#include <string>

#include "broker/job/directives.h"
#include "broker/translate/translation.h"

namespace skyslurm::testing {

inline void SetScript(translate::TranslatedJob& job, std::string script) {
  job.script = std::move(script);
  job.script_options.clear();
  auto scan = job::ScanDirectives(job.script, "script");
  if (!scan.ok()) return;
  for (const job::Directive& d : scan->directives) {
    if (d.magic != "#SBATCH") continue;
    job.script_options.insert(job.script_options.end(), d.words.begin(), d.words.end());
  }
  job.heterogeneous = scan->hetjob;
}

}  // namespace skyslurm::testing
