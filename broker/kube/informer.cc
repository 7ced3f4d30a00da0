#include "broker/kube/informer.h"

#include <algorithm>

namespace skyslurm::kube {

using Clock = std::chrono::steady_clock;

template <typename T>
Informer<T>::Informer(ApiClient& api, std::string path, Decode decode,
                      std::chrono::seconds watch_timeout)
    : api_(api), path_(std::move(path)), decode_(std::move(decode)), watch_timeout_(watch_timeout) {
  thread_ = std::thread([this] { Run(); });
}

template <typename T>
Informer<T>::~Informer() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

template <typename T>
std::optional<ObjectsOf<T>> Informer<T>::Snapshot(std::chrono::seconds fresh) const {
  std::lock_guard lock(mu_);
  if (!synced_ || Clock::now() - heard_ > fresh) return std::nullopt;
  ObjectsOf<T> out;
  out.reserve(objects_.size());
  for (const auto& [key, object] : objects_) out.push_back(object);
  return out;
}

template <typename T>
bool Informer<T>::WaitSynced(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return synced_cv_.wait_for(lock, timeout, [this] { return synced_; });
}

template <typename T>
bool Informer<T>::Watching() const {
  std::lock_guard lock(mu_);
  return synced_ && watching_;
}

template <typename T>
void Informer<T>::Heard() {
  std::lock_guard lock(mu_);
  heard_ = Clock::now();
}

template <typename T>
InformerStats Informer<T>::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

template <typename T>
void Informer<T>::Run() {
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
      std::map<std::string, std::shared_ptr<const T>> fresh;
      auto list = api_.ListEach(path_, std::chrono::seconds(60), [&](JsonCursor& item) -> Status {
        SKY_ASSIGN_OR_RETURN(T object, decode_(item));
        std::string key = KeyOf(object);
        fresh[std::move(key)] = std::make_shared<const T>(std::move(object));
        return OkStatus();
      });
      if (!list.ok()) {
        {
          std::lock_guard lock(mu_);
          stats_.last_error = list.status().message();
        }
        wait(pause);
        pause = std::min(pause * 2, std::chrono::milliseconds(10'000));
        continue;
      }
      std::lock_guard lock(mu_);
      objects_ = std::move(fresh);
      version = *list;
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
        [&](const std::string& type, std::string_view text) {
          JsonCursor cursor(text);
          auto object = decode_(cursor);
          std::lock_guard lock(mu_);
          heard_ = Clock::now();
          ++stats_.events;
          if (!object.ok()) {
            // The cache would part from the server's: list again.
            stats_.last_error = object.status().message();
            listed = false;
            return false;
          }
          if (const std::string& v = VersionOf(*object); !v.empty()) version = v;
          if (type == "ADDED" || type == "MODIFIED") {
            std::string key = KeyOf(*object);
            objects_[std::move(key)] = std::make_shared<const T>(std::move(*object));
          } else if (type == "DELETED") {
            objects_.erase(KeyOf(*object));
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

Informer<Json::Value>::Decode MaskedDecoder(const JsonMask& mask) {
  return [&mask](JsonCursor& cursor) { return cursor.Value(mask); };
}

template class Informer<Json::Value>;
template class Informer<NodeFacts>;
template class Informer<PodFacts>;

}  // namespace skyslurm::kube
