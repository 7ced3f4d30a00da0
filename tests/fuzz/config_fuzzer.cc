// libFuzzer target: any bytes as skyslurm.yaml, as ~/.slurm/config and as a
// cluster description. Nothing may crash, hang or trip the sanitizers.
#include <cstddef>
#include <cstdint>
#include <string>

#include "broker/cluster/description.h"
#include "broker/config/settings.h"
#include "broker/config/ssh_config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  skyslurm::config::Settings settings;
  (void)skyslurm::config::MergeSettingsYaml(text, "fuzz.yaml", size % 2 == 0, &settings);
  (void)settings.Catalog();
  (void)skyslurm::config::ParseSshConfig(text, "fuzz-config", {"/home/f", "f"});
  (void)skyslurm::cluster::ParseDescriptionYaml(text, "fuzz-cluster.yaml");
  (void)skyslurm::cluster::ParseScontrolPartitions(text);
  (void)skyslurm::cluster::ParseModuleAvail(text);
  return 0;
}
