// Copying a job's folder to a cluster and its results back, with rsync over
// the user's own SSH settings for that cluster (ssh -F ~/.slurm/config, the
// file's StrictHostKeyChecking, batch mode: no prompt nobody sees). What is
// sent: the folder, less what its .gitignore and .skyignore files exclude
// (rsync's dir-merge rules: each folder's files apply below it), never
// deleting anything there (a job's earlier results stay). Incremental by
// rsync's quick check: a second copy sends only the files that changed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/util/command.h"
#include "broker/util/status.h"

namespace skyslurm::sync {

struct RsyncRemote {
  std::string host;           // the cluster's Host in the clusters file
  std::string clusters_file;  // ~/.slurm/config
  std::string strict_host_key_checking = "yes";
  std::uint64_t bwlimit = 0;  // bytes per second (sync_bwlimit); 0 = any
  // A private folder for OpenSSH's connection sharing ("" = none): the
  // first copy to a cluster opens a connection that the next ones reuse for
  // a minute (ControlMaster/ControlPersist), instead of a handshake each.
  std::string control_dir;
};

// The user's private folder for shared SSH connections: $XDG_RUNTIME_DIR/
// skyslurm-ssh, else /tmp/skyslurm-ssh-<uid>, made 0700; "" when it cannot
// be made or is not the user's own and private (then each copy connects).
std::string SshControlDir();

// What rsync --stats says (bytes are the real sizes, whatever the locale).
struct RsyncStats {
  std::uint64_t files = 0;              // regular files considered
  std::uint64_t files_transferred = 0;  // regular files sent (changed or new)
  std::uint64_t total_size = 0;         // of the files considered
  std::uint64_t transferred_size = 0;   // of the files sent
  std::uint64_t bytes_sent = 0;         // over the wire, protocol included
  std::uint64_t bytes_received = 0;
};

// The ssh command rsync runs (its -e).
std::string SshCommand(const RsyncRemote& remote);
// The --filter rules for .gitignore and .skyignore.
std::vector<std::string> IgnoreFilters();

// `rsync` copying `source` (a local folder) into `dest` on the remote (made
// when missing; relative = under the home there). `progress`: rsync's
// overall progress line on stderr.
std::vector<std::string> PushArgv(const RsyncRemote& remote, const std::string& source,
                                  const std::string& dest, bool progress);
// `rsync` fetching the remote folder `remote_dir` into `dest` here (made
// when missing), only files matching `patterns` when any are given (rsync
// patterns relative to the folder: out/*.txt). Files newer here are kept.
std::vector<std::string> PullArgv(const RsyncRemote& remote, const std::string& remote_dir,
                                  const std::string& dest, const std::vector<std::string>& patterns,
                                  bool progress);
// A dry run over `source` alone: what a copy would consider, after the
// ignore files (its total_size is what sync_limit is checked against).
std::vector<std::string> MeasureArgv(const std::string& source);

Result<RsyncStats> ParseRsyncStats(std::string_view out);
// "2 of 40 file(s), 1.2 MiB (1.3 MiB sent)"; a fetch says "received".
std::string DescribeStats(const RsyncStats& stats, bool fetched = false);

// Running them: an error names what failed with rsync's own words.
Result<RsyncStats> Measure(CommandRunner& runner, const std::string& source,
                           std::chrono::milliseconds timeout);
// `on_progress`: called with the share sent so far (0-100) as rsync tells it.
Result<RsyncStats> Push(CommandRunner& runner, const RsyncRemote& remote, const std::string& source,
                        const std::string& dest, std::chrono::milliseconds timeout,
                        const std::function<void(int percent)>& on_progress = {});
// The last share (0-100) a piece of rsync's --info=progress2 output tells,
// or -1 ("    1234567  45%  1.23MB/s  0:00:01 (xfr#1, to-chk=0/4)\r").
int LastProgressPercent(std::string_view chunk);
Result<RsyncStats> Pull(CommandRunner& runner, const RsyncRemote& remote,
                        const std::string& remote_dir, const std::string& dest,
                        const std::vector<std::string>& patterns,
                        std::chrono::milliseconds timeout);

}  // namespace skyslurm::sync
