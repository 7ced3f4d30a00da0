#include "broker/daemon/daemon_log.h"

#include <fmt/format.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>

namespace skyslurm::daemon {
namespace {

// "2026-12-01T13:05:07.412 skyslurmd[4242] info: ..."
constexpr const char* kPattern = "%Y-%m-%dT%H:%M:%S.%e skyslurmd[%P] %l: %v";

std::shared_ptr<spdlog::logger>& Logger() {
  static std::shared_ptr<spdlog::logger> logger = [] {
    auto l = std::make_shared<spdlog::logger>(
        "skyslurmd", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_pattern(kPattern);
    l->flush_on(spdlog::level::trace);
    return l;
  }();
  return logger;
}

}  // namespace

Status SetUpLog(const LogOptions& options) {
  const spdlog::level::level_enum level = spdlog::level::from_str(options.level);
  // from_str answers "off" for a word it does not know.
  if (level == spdlog::level::off && options.level != "off") {
    return InvalidArgumentError(fmt::format(
        "--log-level {}: expected trace, debug, info, warning, error, critical or off",
        options.level));
  }
  std::shared_ptr<spdlog::logger> logger;
  if (options.file.empty()) {
    logger = std::make_shared<spdlog::logger>(
        "skyslurmd", std::make_shared<spdlog::sinks::stderr_sink_mt>());
  } else {
    try {
      logger = std::make_shared<spdlog::logger>(
          "skyslurmd", std::make_shared<spdlog::sinks::rotating_file_sink_mt>(
                           options.file, options.max_bytes, options.max_files));
    } catch (const spdlog::spdlog_ex& e) {
      return UnavailableError(fmt::format("cannot log to {}: {}", options.file, e.what()));
    }
  }
  logger->set_pattern(kPattern);
  logger->set_level(level);
  // Every line reaches the file at once: a crash loses nothing logged.
  logger->flush_on(spdlog::level::trace);
  Logger() = std::move(logger);
  return OkStatus();
}

void LogInfo(const std::string& line) { Logger()->info(line); }
void LogWarning(const std::string& line) { Logger()->warn(line); }
void LogError(const std::string& line) { Logger()->error(line); }
void LogDebug(const std::string& line) { Logger()->debug(line); }

}  // namespace skyslurm::daemon
