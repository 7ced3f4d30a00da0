#include "broker/sync/rsync.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>

#include "broker/config/settings.h"
#include "broker/sync/remote_folder.h"
#include "broker/util/strings.h"

namespace skyslurm::sync {
namespace {

// -rlpt: the tree, symlinks as links, permissions and times (the times make
// the next copy's quick check skip what did not change); never owners or
// groups, which belong to the cluster. -s: file names reach the other side
// as they are (no shell splitting of spaces). A copy broken off (a crash)
// keeps its half-sent file aside, and the next one resumes it.
std::vector<std::string> Common(std::uint64_t bwlimit = 0) {
  std::vector<std::string> argv = {
      "rsync", "-rlpt", "-s", "--stats", "--no-human-readable", "--partial-dir=.skyslurm-partial"};
  // rsync counts in KiB per second.
  if (bwlimit != 0)
    argv.push_back(fmt::format("--bwlimit={}", std::max<std::uint64_t>(1, bwlimit >> 10)));
  return argv;
}

std::string Slash(std::string dir) {
  if (!dir.ends_with('/')) dir += '/';
  return dir;
}

// "1,234" / "1234" after `label` on its line.
std::uint64_t Number(std::string_view out, std::string_view label, bool* found) {
  const std::size_t at = out.find(label);
  if (at == std::string_view::npos) return 0;
  *found = true;
  std::uint64_t v = 0;
  for (std::size_t i = at + label.size(); i < out.size(); ++i) {
    const char c = out[i];
    if (c == ',' || c == '.' || c == ' ') {
      if (c == ' ' && v != 0) break;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

Result<RsyncStats> Run(CommandRunner& runner, std::vector<std::string> argv,
                       std::chrono::milliseconds timeout, std::string_view what,
                       const std::function<void(int)>& on_progress = {},
                       std::optional<std::string> input = std::nullopt) {
  Command c;
  c.argv = std::move(argv);
  c.stdin_data = std::move(input);
  if (on_progress) {
    c.on_output = [&](std::string_view chunk) {
      if (const int p = LastProgressPercent(chunk); p >= 0) on_progress(p);
    };
  }
  c.timeout = timeout;
  c.env_set = {{"LC_ALL", "C"}};
  auto out = runner.Run(c);
  if (!out.ok()) {
    if (out.status().code() == StatusCode::kNotFound) {
      return FailedPreconditionError(fmt::format("{}: rsync is not installed here", what));
    }
    return Status(out.status().code(), fmt::format("{}: {}", what, out.status().message()));
  }
  // 24: files vanished while rsync read the folder. A folder in use changes
  // under it (a workflow engine's temporary files come and go while it
  // submits); what vanished is not the job's, and the rest was read.
  constexpr int kSourceFilesVanished = 24;
  const bool vanished = out->term_signal == 0 && out->exit_code == kSourceFilesVanished;
  if (!out->success() && !vanished) {
    std::string err = Trim(out->err);
    if (err.empty()) err = out->DescribeEnd();
    // rsync exit 12/255 with a missing remote rsync says it in words already.
    return UnavailableError(
        fmt::format("{}: rsync failed ({}): {}", what, out->DescribeEnd(), err));
  }
  return ParseRsyncStats(out->out);
}

}  // namespace

std::string SshCommand(const RsyncRemote& remote) {
  // rsync splits -e at blanks and honours quotes: the file's path is quoted.
  std::string ssh =
      fmt::format("ssh -F {} -o BatchMode=yes -o LogLevel=ERROR -o StrictHostKeyChecking={}",
                  ShellQuote(remote.clusters_file), remote.strict_host_key_checking);
  if (!remote.proxy_command.empty()) {
    // In double quotes for rsync's own splitting of -e, which keeps the
    // single quotes inside (the ProxyCommand's shell reads them) and reads
    // a doubled double quote as one; a backslash is no escape there.
    std::string quoted = "\"";
    for (char c : "ProxyCommand=" + remote.proxy_command) {
      quoted += c;
      if (c == '"') quoted += '"';
    }
    ssh += " -o " + quoted + "\"";
  }
  if (!remote.control_dir.empty()) {
    // The master runs on in the background with its output on /dev/null,
    // so the copy that started it ends when its own work does.
    ssh += " -o ControlMaster=auto -o ControlPersist=60 -o " +
           ShellQuote("ControlPath=" + remote.control_dir + "/%C");
  }
  return ssh;
}

std::string SshControlDir() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  const std::string dir = runtime != nullptr && *runtime == '/'
                              ? std::string(runtime) + "/skyslurm-ssh"
                              : fmt::format("/tmp/skyslurm-ssh-{}", ::getuid());
  // A socket's path has room for 107 bytes; ssh adds its %C (40) and a
  // temporary suffix (17).
  if (dir.size() > 48) return "";
  (void)::mkdir(dir.c_str(), 0700);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() ||
      (st.st_mode & 077) != 0) {
    return "";
  }
  return dir;
}

std::vector<std::string> IgnoreFilters() {
  // A fetch's probe (PullChanged), were a copy to start while it is there.
  return {"--filter=:- .gitignore", "--filter=:- .skyignore",
          fmt::format("--filter=- /{}*", kProbePrefix)};
}

std::vector<std::string> PushArgv(const RsyncRemote& remote, const std::string& source,
                                  const std::string& dest, bool progress, bool private_folder) {
  std::vector<std::string> argv = Common(remote.bwlimit);
  for (auto& f : IgnoreFilters()) argv.push_back(std::move(f));
  // A file newer on the cluster (in mapped mode the user's own project
  // folder there) is never overwritten; each is named (skip1).
  argv.push_back("--update");
  argv.push_back(progress ? "--info=progress2,skip1" : "--info=skip1");
  if (private_folder) argv.push_back("--chmod=go-rwx");
  argv.push_back("-e");
  argv.push_back(SshCommand(remote));
  // The folder is made first (with its parents: rsync makes only the
  // last), private to the user, after the folders on its way are checked.
  argv.push_back("--rsync-path=" + MakePrivateFolderCommand(dest) + " && rsync");
  argv.push_back(Slash(source));
  argv.push_back(remote.host + ":" + Slash(dest));
  return argv;
}

std::vector<std::string> PullArgv(const RsyncRemote& remote, const std::string& remote_dir,
                                  const std::string& dest, const std::vector<std::string>& patterns,
                                  bool progress) {
  std::vector<std::string> argv = Common(remote.bwlimit);
  argv.push_back("--update");  // a file changed here since is not overwritten
  // The folders here keep their own modes: the job's folder there is
  // private (0700), and taking its mode would close the submit folder to
  // whoever else uses it (another cluster's jobs in a shared /tmp).
  argv.push_back("--no-perms");
  // A cluster never writes outside the job's folder here: a link that
  // points out of the tree (../../.bashrc, /etc/...) is not made.
  argv.push_back("--safe-links");
  if (!patterns.empty()) {
    argv.push_back("--include=*/");
    for (const auto& p : patterns) argv.push_back("--include=" + p);
    argv.push_back("--exclude=*");
    argv.push_back("--prune-empty-dirs");
  }
  if (progress) argv.push_back("--info=progress2");
  argv.push_back("-e");
  argv.push_back(SshCommand(remote));
  argv.push_back(remote.host + ":" + Slash(remote_dir));
  argv.push_back(Slash(dest));
  return argv;
}

std::vector<std::string> ChangedFilesArgv(const RsyncRemote& remote, const std::string& remote_dir,
                                          std::int64_t since_ns, const std::string& probe) {
  // find's -newermt takes "@seconds.fraction": the files written after the
  // copy began, to the nanosecond (a file made just before it, a workflow
  // engine's marker, was sent and is not the job's).
  constexpr std::int64_t kNs = 1'000'000'000;
  std::string listing = fmt::format(
      "find . -path ./.skyslurm-partial -prune -o -name '{}*' -o \\( -type f -o -type l \\) "
      "-newermt @{}.{:09} -printf '%P\\0'",
      kProbePrefix, since_ns / kNs, since_ns % kNs);
  if (!probe.empty()) {
    listing = fmt::format("if [ -e {} ]; then printf '{}\\0'; else {}; fi", ShellQuote(probe),
                          kSameFolder, listing);
  }
  listing = fmt::format("cd {} && {}", ShellQuote(remote_dir), listing);
  return {"sh", "-c",
          SshCommand(remote) + " " + ShellQuote(remote.host) + " " + ShellQuote(listing)};
}

std::vector<std::string> PullListedArgv(const RsyncRemote& remote, const std::string& remote_dir,
                                        const std::string& dest) {
  std::vector<std::string> argv = Common(remote.bwlimit);
  argv.push_back("--update");
  argv.push_back("--no-perms");  // as PullArgv: the folders here keep their modes
  argv.push_back("--safe-links");
  argv.push_back("--from0");
  argv.push_back("--files-from=-");
  argv.push_back("-e");
  argv.push_back(SshCommand(remote));
  argv.push_back(remote.host + ":" + Slash(remote_dir));
  argv.push_back(Slash(dest));
  return argv;
}

std::vector<std::string> NamesInside(const std::vector<std::string>& names) {
  std::vector<std::string> inside;
  for (const std::string& name : names) {
    bool up = name.empty() || name.starts_with('/');
    for (std::size_t start = 0; !up && start <= name.size();) {
      std::size_t end = name.find('/', start);
      if (end == std::string::npos) end = name.size();
      up = name.compare(start, end - start, "..") == 0;
      start = end + 1;
    }
    if (!up) inside.push_back(name);
  }
  return inside;
}

std::vector<std::string> SplitNulList(std::string_view text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\0', start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::vector<std::string> MeasureArgv(const std::string& source) {
  std::vector<std::string> argv = Common();
  for (auto& f : IgnoreFilters()) argv.push_back(std::move(f));
  argv.push_back("--dry-run");
  argv.push_back(Slash(source));
  argv.push_back("/nonexistent/skyslurm-measure/");  // never written: a dry run
  return argv;
}

Result<RsyncStats> ParseRsyncStats(std::string_view out) {
  RsyncStats s;
  bool found = false;
  bool any = false;
  s.files_transferred = Number(out, "Number of regular files transferred:", &found);
  any = found;
  // "Number of files: 7 (reg: 4, dir: 3)": the regular ones.
  found = false;
  s.files = Number(out, "reg: ", &found);
  s.total_size = Number(out, "Total file size:", &found);
  s.transferred_size = Number(out, "Total transferred file size:", &found);
  s.bytes_sent = Number(out, "Total bytes sent:", &found);
  s.bytes_received = Number(out, "Total bytes received:", &found);
  if (!any) return InternalError("rsync printed no statistics");
  // --update's "NAME is newer" (--info=skip1): left alone on the other side.
  constexpr std::string_view kNewer = " is newer";
  for (std::size_t start = 0; start < out.size();) {
    std::size_t end = out.find('\n', start);
    if (end == std::string_view::npos) end = out.size();
    std::string_view line = out.substr(start, end - start);
    // A progress line (--info=progress2) ends in '\r', not '\n': the name
    // starts after the last one.
    if (const auto cr = line.rfind('\r'); cr != std::string_view::npos) line.remove_prefix(cr + 1);
    if (line.size() > kNewer.size() && line.ends_with(kNewer)) {
      s.newer_there.emplace_back(line.substr(0, line.size() - kNewer.size()));
    }
    start = end + 1;
  }
  return s;
}

std::string DescribeStats(const RsyncStats& s, bool fetched) {
  std::string said = fmt::format("{} of {} file(s), {} ({} {})", s.files_transferred, s.files,
                                 config::DescribeBytes(s.transferred_size),
                                 config::DescribeBytes(fetched ? s.bytes_received : s.bytes_sent),
                                 fetched ? "received" : "sent");
  if (!s.newer_there.empty()) {
    std::string names;
    for (std::size_t i = 0; i < s.newer_there.size() && i < 5; ++i) {
      names += (i == 0 ? "" : ", ") + s.newer_there[i];
    }
    if (s.newer_there.size() > 5) names += fmt::format(" and {} more", s.newer_there.size() - 5);
    said += fmt::format("; {} newer {} left alone: {}", s.newer_there.size(),
                        fetched ? "here" : "there", names);
  }
  return said;
}

Result<RsyncStats> Measure(CommandRunner& runner, const std::string& source,
                           std::chrono::milliseconds timeout) {
  return Run(runner, MeasureArgv(source), timeout, "measuring " + source);
}

Result<RsyncStats> Push(CommandRunner& runner, const RsyncRemote& remote, const std::string& source,
                        const std::string& dest, std::chrono::milliseconds timeout,
                        const std::function<void(int percent)>& on_progress, bool private_folder) {
  return Run(runner, PushArgv(remote, source, dest, static_cast<bool>(on_progress), private_folder),
             timeout, fmt::format("copying {} to {}:{}", source, remote.host, dest), on_progress);
}

int LastProgressPercent(std::string_view chunk) {
  int last = -1;
  for (std::size_t at = chunk.find('%'); at != std::string_view::npos;
       at = chunk.find('%', at + 1)) {
    std::size_t start = at;
    while (start > 0 && std::isdigit(static_cast<unsigned char>(chunk[start - 1]))) --start;
    if (start == at || at - start > 3) continue;
    if (start > 0 && chunk[start - 1] != ' ') continue;
    const int p = std::stoi(std::string(chunk.substr(start, at - start)));
    if (p <= 100) last = p;
  }
  return last;
}

Result<RsyncStats> Pull(CommandRunner& runner, const RsyncRemote& remote,
                        const std::string& remote_dir, const std::string& dest,
                        const std::vector<std::string>& patterns,
                        std::chrono::milliseconds timeout) {
  return Run(runner, PullArgv(remote, remote_dir, dest, patterns, false), timeout,
             fmt::format("fetching {}:{} into {}", remote.host, remote_dir, dest));
}

Result<RsyncStats> PullChanged(CommandRunner& runner, const RsyncRemote& remote,
                               const std::string& remote_dir, const std::string& dest,
                               std::int64_t since_ns, std::chrono::milliseconds timeout,
                               bool* same_folder) {
  const std::string what = fmt::format("fetching what changed in {}:{}", remote.host, remote_dir);
  if (same_folder != nullptr) *same_folder = false;
  // A file of a name nobody else makes, here for as long as the listing
  // runs: found there, the two folders are one.
  std::string probe = fmt::format(
      "{}{}-{:x}", kProbePrefix, ::getpid(),
      static_cast<std::uint64_t>(since_ns) ^
          static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  const std::string probe_path = Slash(dest) + probe;
  const int fd = ::open(probe_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    probe.clear();  // a folder we cannot write to: rsync will say so
  } else {
    ::close(fd);
  }
  Command list;
  list.argv = ChangedFilesArgv(remote, remote_dir, since_ns, probe);
  list.timeout = timeout;
  list.env_set = {{"LC_ALL", "C"}};
  auto listed = runner.Run(list);
  if (!probe.empty()) ::unlink(probe_path.c_str());
  if (!listed.ok())
    return Status(listed.status().code(), fmt::format("{}: {}", what, listed.status().message()));
  if (!listed->success()) {
    std::string err = Trim(listed->err);
    if (err.empty()) err = listed->DescribeEnd();
    return UnavailableError(fmt::format("{}: listing the files failed: {}", what, err));
  }
  std::vector<std::string> files = SplitNulList(listed->out);
  if (files.size() == 1 && files[0] == kSameFolder) {
    if (same_folder != nullptr) *same_folder = true;
    return RsyncStats{};
  }
  files = NamesInside(files);
  if (files.empty()) return RsyncStats{};
  std::string names;
  for (const std::string& f : files) names.append(f).push_back('\0');
  return Run(runner, PullListedArgv(remote, remote_dir, dest), timeout, what, {}, std::move(names));
}

}  // namespace skyslurm::sync
