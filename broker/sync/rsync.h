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
  // How ssh reaches it through its bastion (config/login_session.h), over
  // the file's ProxyJump ("" = as the file says).
  std::string proxy_command;
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
  // Files left alone because the receiving side's copy is newer (--update).
  std::vector<std::string> newer_there;
};

// The ssh command rsync runs (its -e).
std::string SshCommand(const RsyncRemote& remote);
// The --filter rules for .gitignore and .skyignore.
std::vector<std::string> IgnoreFilters();

// `rsync` copying `source` (a local folder) into `dest` on the remote (made
// when missing; relative = under the home there). `progress`: rsync's
// overall progress line on stderr.
// `private_folder` (a job's folder of its own): its files and folders keep
// group and others out there, whatever their modes here (-p would give
// the folder the source's mode).
std::vector<std::string> PushArgv(const RsyncRemote& remote, const std::string& source,
                                  const std::string& dest, bool progress,
                                  bool private_folder = false);
// `rsync` fetching the remote folder `remote_dir` into `dest` here (made
// when missing), only files matching `patterns` when any are given (rsync
// patterns relative to the folder: out/*.txt). Files newer here are kept,
// and links pointing out of the folder are not made (--safe-links).
std::vector<std::string> PullArgv(const RsyncRemote& remote, const std::string& remote_dir,
                                  const std::string& dest, const std::vector<std::string>& patterns,
                                  bool progress);
// The command (ssh to the remote) that lists the files under `remote_dir`
// there modified after `since_ns` (ns since the epoch): their paths
// relative to the folder, each ended by a NUL. rsync's half-sent files and
// probes are not listed. When the folder there holds `probe` (a file name
// made here just before, "" for none), it is this very folder (a filesystem
// both mount, not named in shared_fs) and the answer is kSameFolder alone.
inline constexpr std::string_view kSameFolder = "/same";  // never a relative path
inline constexpr std::string_view kProbePrefix = ".skyslurm-probe-";
std::vector<std::string> ChangedFilesArgv(const RsyncRemote& remote, const std::string& remote_dir,
                                          std::int64_t since_ns, const std::string& probe = "");
// `rsync` fetching the files named on its stdin (NUL-separated, relative to
// `remote_dir`) into `dest` here; files newer here are kept.
std::vector<std::string> PullListedArgv(const RsyncRemote& remote, const std::string& remote_dir,
                                        const std::string& dest);
// A NUL-separated list as its names (empty ones dropped).
std::vector<std::string> SplitNulList(std::string_view text);
// The names of a cluster's listing that stay inside the folder: relative
// and without a ".." component (a hostile or broken login node's others
// are dropped: a fetch never writes outside the job's folder here).
std::vector<std::string> NamesInside(const std::vector<std::string>& names);
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
                        const std::function<void(int percent)>& on_progress = {},
                        bool private_folder = false);
// The last share (0-100) a piece of rsync's --info=progress2 output tells,
// or -1 ("    1234567  45%  1.23MB/s  0:00:01 (xfr#1, to-chk=0/4)\r").
int LastProgressPercent(std::string_view chunk);
Result<RsyncStats> Pull(CommandRunner& runner, const RsyncRemote& remote,
                        const std::string& remote_dir, const std::string& dest,
                        const std::vector<std::string>& patterns,
                        std::chrono::milliseconds timeout);
// What a job wrote in its folder there: the files changed since `since_ns`
// (the time sending the folder began), fetched into `dest`. Files the copy
// sent and that were since removed here stay removed. Zero files when it
// wrote none, and when the folder there is `dest` itself (*same_folder set:
// a filesystem both mount; copying a file onto itself while another job
// writes it would lose what that job wrote). Nothing is run but the listing
// then.
Result<RsyncStats> PullChanged(CommandRunner& runner, const RsyncRemote& remote,
                               const std::string& remote_dir, const std::string& dest,
                               std::int64_t since_ns, std::chrono::milliseconds timeout,
                               bool* same_folder = nullptr);

}  // namespace skyslurm::sync
