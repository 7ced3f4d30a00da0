// A list kept current by a watch, as client-go's informers keep theirs: one
// LIST (in pages), then a WATCH from its resourceVersion on a thread of its
// own; events update the cache; a watch the server ends is resumed from the
// last version seen (bookmarks included); 410 Gone (the version is too old)
// lists again; a lost connection is retried with a growing pause. Each
// object is decoded from its JSON text into only what the reader needs (the
// facts of facts.h, or a value through a mask), so a cluster of 50,000 pods
// costs little time and memory. A snapshot is answered only while the
// informer is in sync and has heard from the server lately: otherwise the
// caller asks the server itself, and learns that it does not answer.
#pragma once

#include <json/json.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "broker/kube/api_client.h"
#include "broker/kube/facts.h"
#include "broker/util/json_mask.h"

namespace skyslurm::kube {

struct InformerStats {
  int lists = 0;    // full lists (the first, and one per 410 Gone)
  int watches = 0;  // watches begun
  int gone = 0;     // 410s
  long events = 0;
  std::string last_error;
};

// Objects shared, never copied: a snapshot of 50,000 pods is pointers.
template <typename T>
using ObjectsOf = std::vector<std::shared_ptr<const T>>;
using Objects = ObjectsOf<Json::Value>;

// T is what is kept of each object: a Json::Value (through a mask), or the
// facts a probe reads (facts.h), with KeyOf(T) and VersionOf(T) defined.
template <typename T>
class Informer {
 public:
  // Makes the kept object from its JSON at the cursor (moving past it).
  using Decode = std::function<Result<T>(JsonCursor&)>;
  // `path`: a list path with its selectors. The thread starts at once.
  Informer(ApiClient& api, std::string path, Decode decode,
           std::chrono::seconds watch_timeout = std::chrono::seconds(30));
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // The objects, when in sync and heard from within `fresh`; nullopt else.
  std::optional<ObjectsOf<T>> Snapshot(std::chrono::seconds fresh) const;
  // Waits until the first list is in (or `timeout`); whether it is.
  bool WaitSynced(std::chrono::milliseconds timeout) const;
  // In sync with a watch open (not lost and retrying): a quiet watch means a
  // quiet cluster, once the server is known to be there (Heard).
  bool Watching() const;
  // The server answered the caller just now.
  void Heard();
  InformerStats stats() const;

 private:
  void Run();

  ApiClient& api_;
  const std::string path_;
  const Decode decode_;
  const std::chrono::seconds watch_timeout_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  mutable std::condition_variable synced_cv_;
  std::map<std::string, std::shared_ptr<const T>> objects_;  // under mu_
  bool synced_ = false;
  bool watching_ = false;  // under mu_
  std::chrono::steady_clock::time_point heard_{};
  InformerStats stats_;
  std::thread thread_;
};

// A decoder of values kept by `mask` (which outlives it).
Informer<Json::Value>::Decode MaskedDecoder(const JsonMask& mask);

}  // namespace skyslurm::kube
