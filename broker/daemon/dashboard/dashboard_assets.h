// The dashboard's pages (broker/daemon/dashboard/pages/: index.html, app.css,
// app.js), built into skyslurmd by embed.cmake: nothing is read from disk
// or fetched from elsewhere at run time.
#pragma once

#include <optional>
#include <string_view>

namespace skyslurm::daemon {

struct DashboardAsset {
  std::string_view path;  // "/app.js"
  std::string_view content_type;
  std::string_view body;
};

// The page served at `path` ("/index.html", "/app.css", "/app.js").
std::optional<DashboardAsset> FindDashboardAsset(std::string_view path);

}  // namespace skyslurm::daemon
