// libFuzzer target: any bytes as a batch script (and as #SBATCH words)
// through the directive scanner, the option parser, the request builder
// (hetjob components included), the steps' reader and the image converter.
// Nothing may crash, hang or trip the sanitizers; errors are fine.
#include <cstddef>
#include <cstdint>
#include <string>

#include "broker/job/container_image.h"
#include "broker/job/request.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto scan = skyslurm::job::ScanDirectives(text, "fuzz.sh");
  if (scan.ok()) {
    skyslurm::job::OptionTable table(skyslurm::job::Tool::kSbatch);
    for (const auto& d : scan->directives) {
      (void)skyslurm::job::ParseArgs(table, d.words, skyslurm::job::OperandPolicy::kReject, "x");
    }
  }
  skyslurm::job::RequestInput in;
  in.args = {"fuzz.sh"};
  in.script_text = "#!/bin/sh\n" + text;
  (void)skyslurm::job::ParseRequest(in);
  (void)skyslurm::job::FindModuleLoads(text);
  (void)skyslurm::job::FindStepPluginOptions(text, 1);
  (void)skyslurm::job::ImageReferenceOf(text);
  return 0;
}
