// libFuzzer target: any bytes as what a login node's processes write back
// (the agent's answer header and the batch script's frames, slurmrestd's
// HTTP answers, rsync's statistics and a cluster's file listing), the
// JSON reader every answer goes through, and skyslurmd's JSON API input.
// Nothing may crash, hang, trip the sanitizers or allocate past its cap.
#include <cstddef>
#include <cstdint>
#include <string>

#include "broker/daemon/jobs/job_input.h"
#include "broker/ssh/agent_script.h"
#include "broker/ssh/command_batch.h"
#include "broker/ssh/http_wire.h"
#include "broker/sync/rsync.h"
#include "broker/util/json_cursor.h"
#include "broker/util/json_mask.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  using namespace skyslurm;
  (void)ssh::ParseAgentAnswerHeader(text.substr(0, text.find('\n')));
  (void)ssh::ParseBatchOutput(text, size % 4, {64, 1 << 20, 0, 7});
  // An answer arriving in pieces, as reads return them.
  std::string buffer;
  for (std::size_t at = 0; at < size; at += 1 + size / 7) {
    buffer.append(text, at, 1 + size / 7);
    auto taken = ssh::TakeHttpAnswer(buffer);
    if (!taken.ok()) break;
  }
  (void)sync::ParseRsyncStats(text);
  (void)sync::NamesInside(sync::SplitNulList(text));
  (void)ParseMasked(text, JsonMask::All());
  (void)ParseMasked(text, JsonMask::Of({"metadata.name", "items.status"}));
  (void)ReadFlatJsonObject(text);
  (void)daemon::JobInputFromText(text);  // skyslurmd's API: a job's input
  return 0;
}
