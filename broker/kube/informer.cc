#include "broker/kube/informer.h"

#include <algorithm>

namespace skyslurm::kube {

using Clock = std::chrono::steady_clock;

Informer::Informer(ApiClient& api, std::string path, Trim trim, std::chrono::seconds watch_timeout)
    : api_(api), path_(std::move(path)), trim_(std::move(trim)), watch_timeout_(watch_timeout) {
  thread_ = std::thread([this] { Run(); });
}

Informer::~Informer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::string Informer::KeyOf(const Json::Value& object) {
  const Json::Value& meta = object["metadata"];
  return meta["namespace"].asString() + "/" + meta["name"].asString();
}

std::optional<Objects> Informer::Snapshot(std::chrono::seconds fresh) const {
  std::lock_guard lock(mu_);
  if (!synced_ || Clock::now() - heard_ > fresh) return std::nullopt;
  Objects out;
  out.reserve(objects_.size());
  for (const auto& [key, object] : objects_) out.push_back(object);
  return out;
}

bool Informer::WaitSynced(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return synced_cv_.wait_for(lock, timeout, [this] { return synced_; });
}

bool Informer::Watching() const {
  std::lock_guard lock(mu_);
  return synced_ && watching_;
}

void Informer::Heard() {
  std::lock_guard lock(mu_);
  heard_ = Clock::now();
}

InformerStats Informer::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void Informer::Run() {
  std::string version;
  bool listed = false;
  auto pause = std::chrono::milliseconds(500);
  auto wait = [&](std::chrono::milliseconds d) {
    for (auto end = Clock::now() + d; !stop_ && Clock::now() < end;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  };
  while (!stop_) {
    if (!listed) {
      auto list = api_.ListAll(path_, std::chrono::seconds(60));
      if (!list.ok()) {
        {
          std::lock_guard lock(mu_);
          stats_.last_error = list.status().message();
        }
        wait(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(10'000));
        continue;
      }
      std::map<std::string, std::shared_ptr<const Json::Value>> fresh;
      for (const auto& item : list->items) {
        fresh[KeyOf(item)] = std::make_shared<const Json::Value>(trim_(item));
      }
      std::lock_guard lock(mu_);
      objects_ = std::move(fresh);
      version = list->resource_version;
      synced_ = true;
      heard_ = Clock::now();
      ++stats_.lists;
      synced_cv_.notify_all();
      listed = true;
      pause = std::chrono::milliseconds(500);
    }
    {
      std::lock_guard lock(mu_);
      ++stats_.watches;
      watching_ = true;
    }
    auto ended = api_.Watch(
        path_, version,
        [&](const std::string& type, const Json::Value& object) {
          const std::string v = object["metadata"]["resourceVersion"].asString();
          std::lock_guard lock(mu_);
          heard_ = Clock::now();
          ++stats_.events;
          if (!v.empty()) version = v;
          if (type == "ADDED" || type == "MODIFIED") {
            objects_[KeyOf(object)] = std::make_shared<const Json::Value>(trim_(object));
          } else if (type == "DELETED") {
            objects_.erase(KeyOf(object));
          }
          return true;
        },
        watch_timeout_, &stop_);
    if (!ended.ok()) {
      // Lost (the server stopped, the stream cut): try again from the same
      // version; the snapshot goes stale meanwhile.
      {
        std::lock_guard lock(mu_);
        stats_.last_error = ended.status().message();
        watching_ = false;
      }
      wait(pause);
      pause = std::min(pause * 2, std::chrono::milliseconds(10'000));
      continue;
    }
    pause = std::chrono::milliseconds(500);
    if (*ended == WatchEnd::kGone) {
      std::lock_guard lock(mu_);
      ++stats_.gone;
      listed = false;  // too old: list again
    } else if (*ended == WatchEnd::kClosed) {
      std::lock_guard lock(mu_);
      heard_ = Clock::now();  // the server ended it: it is there
    }
  }
}

}  // namespace skyslurm::kube
