// An elastic cluster's ledger: one row per node power-up, as a cloud
// provider's billing export (or the testbed's provider script) writes it.
//
//   node,requested,ready,down,partition
//   delta-n1,1796000000,1796000021,1796000110,cloud
//
// The header names the columns (any order; columns of other names are
// ignored); node, requested, ready and down are required, partition is
// optional. Times are seconds since the epoch or RFC 3339
// ("2026-12-02T20:00:00Z"); an empty field is a step not reached yet (a
// node still booting has no ready time, a node up has no down time).
#pragma once

#include <cstddef>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/util/status.h"

namespace skyslurm::cloud {

struct PowerUp {
  std::string node;
  std::string partition;  // "" when the ledger has no such column
  std::time_t requested = 0;
  std::time_t ready = 0;  // 0: still booting (or the boot failed)
  std::time_t down = 0;   // 0: still up
};

// The rows of `text`, in the file's order. A malformed row is an error that
// names `source`, its line and its column.
Result<std::vector<PowerUp>> ParseLedger(std::string_view text, std::string_view source);

// How long a node of `partition` takes to boot, measured from the ledger:
// the median of the last `window` completed boots (ready - requested) there,
// or over every partition when that one has none; nullopt when the ledger
// has no completed boot at all.
std::optional<int> MeasuredBootSeconds(const std::vector<PowerUp>& ledger,
                                       std::string_view partition, std::size_t window = 20);

}  // namespace skyslurm::cloud
