#include "shim/cli/dashboard_command.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "broker/util/command.h"
#include "shim/cli/cluster_views.h"
#include "shim/cli/daemon_client.h"
#include "shim/front/real_command.h"

extern char** environ;

namespace skyslurm::cli {
namespace {

// The program that opens a URL here: $BROWSER, else xdg-open when a desktop
// session is there to show it; "" when none is set up (a login node over SSH).
std::string BrowserCommand() {
  if (const char* b = std::getenv("BROWSER"); b != nullptr && *b != '\0') return b;
  const bool desktop =
      std::getenv("DISPLAY") != nullptr || std::getenv("WAYLAND_DISPLAY") != nullptr;
  if (!desktop) return "";
  const char* path = std::getenv("PATH");
  std::string why;
  return shim::FindRealCommand("xdg-open", path != nullptr ? path : "", "", &why).value_or("");
}

// A page in the user's private run folder (0700) that sends the browser on
// to `url`: the browser is given this file's path, never the link itself,
// which would be in its command line, where any user of the machine can
// read it (/proc/PID/cmdline) and use the one-time token first.
Result<std::string> WriteOpener(const std::string& run_dir, const std::string& url) {
  const std::string path = run_dir + "/dashboard-open.html";
  ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return UnavailableError("cannot write " + path);
  // The link is hex and a URL of ours: nothing in it needs escaping in HTML.
  const std::string page =
      "<!doctype html><meta charset=utf-8><meta http-equiv=refresh content=\"0;url=" + url +
      "\"><title>skyslurm</title><p><a href=\"" + url + "\">Open the dashboard</a></p>\n";
  const bool written = ::write(fd, page.data(), page.size()) == static_cast<ssize_t>(page.size());
  ::close(fd);
  if (!written) return UnavailableError("cannot write " + path);
  return path;
}

// Starts `browser target` detached (its output discarded): the command does
// not wait for a browser that may run for hours.
bool OpenBrowser(const std::string& browser, const std::string& url) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  // $BROWSER may hold arguments ("firefox --new-window"): run by the shell.
  const std::string line = browser + " " + ShellQuote(url);
  std::vector<char*> argv = {const_cast<char*>("sh"), const_cast<char*>("-c"),
                             const_cast<char*>(line.c_str()), nullptr};
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  return rc == 0;
}

}  // namespace

int RunDashboard(const DashboardOptions& options) {
  auto client = ConnectToDaemon(GlobalSettingFlags());
  if (!client) return 1;
  if (options.stop) {
    auto answer = client->Post("/v1/dashboard/stop", Json::Value(Json::objectValue));
    if (!answer.ok()) {
      std::fprintf(stderr, "skyslurm dashboard: %s\n", answer.status().message().c_str());
      return 1;
    }
    std::printf("%s\n", (*answer)["stopped"].asBool() ? "skyslurm dashboard: stopped"
                                                      : "skyslurm dashboard: it was not served");
    return 0;
  }
  Json::Value body(Json::objectValue);
  body["port"] = options.port;
  auto answer = client->Post("/v1/dashboard", body);
  if (!answer.ok()) {
    std::fprintf(stderr, "skyslurm dashboard: %s\n", answer.status().message().c_str());
    return 1;
  }
  const std::string url = (*answer)["url"].asString();
  std::printf(
      "skyslurm dashboard: served by skyslurmd on %s:%d until it stops or "
      "`skyslurm dashboard --stop`\n",
      (*answer)["address"].asString().c_str(), (*answer)["port"].asInt());
  if (!options.no_browser) {
    const std::string browser = BrowserCommand();
    if (browser.empty()) {
      std::printf(
          "No browser is set up here ($BROWSER, or a desktop session): open the link "
          "below in yours (over SSH: ssh -L %d:127.0.0.1:%d first). It works once.\n",
          (*answer)["port"].asInt(), (*answer)["port"].asInt());
    } else if (auto opener = WriteOpener(client->paths().run_dir, url);
               !opener.ok() || !OpenBrowser(browser, "file://" + *opener)) {
      std::printf("Could not start %s: open the link below yourself.\n", browser.c_str());
    }
  }
  // The URL with its token is the last line (scripts read it).
  std::printf("%s\n", url.c_str());
  return 0;
}

}  // namespace skyslurm::cli
