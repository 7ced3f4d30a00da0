// `skyslurm dashboard [--port P] [--no-browser] [--stop]`: asks skyslurmd to
// serve the dashboard (docs/dashboard.md) on 127.0.0.1 (a free port unless
// --port), prints the URL with a one-time login token as the last line of
// its output, and opens it in the user's browser where one is set up
// ($BROWSER, else xdg-open under a desktop session). skyslurmd serves it
// until it stops or `skyslurm dashboard --stop`.
#pragma once

namespace skyslurm::cli {

struct DashboardOptions {
  int port = 0;  // 0: a free one
  bool no_browser = false;
  bool stop = false;
};

int RunDashboard(const DashboardOptions& options);

}  // namespace skyslurm::cli
