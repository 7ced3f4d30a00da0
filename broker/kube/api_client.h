// The Kubernetes API over HTTPS, with libcurl and jsoncpp: kept-alive
// connections (a pool of handles, one request each at a time), TLS with the
// context's CA, a bearer token or a client certificate from the kubeconfig or
// its exec plugin (kubeconfig.h). No kubectl. Every call has a deadline; the
// server's Status objects become errors in its own words, prefixed with the
// cluster's name. 429 Too Many Requests is waited out (Retry-After) within
// the deadline; a 401 with an exec plugin's credential asks the plugin again
// once.
#pragma once

#include <json/json.h>

#include <atomic>
#include <chrono>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/kube/kubeconfig.h"
#include "broker/util/command.h"
#include "broker/util/json_cursor.h"
#include "broker/util/json_mask.h"
#include "broker/util/status.h"

namespace skyslurm::kube {

struct ListResult {
  std::vector<Json::Value> items;
  std::string resource_version;
};

// How a watch ended.
enum class WatchEnd {
  kClosed,   // the server ended the stream (its timeout): watch again from the last version
  kStopped,  // the callback asked to stop
  kGone,     // 410: the version is too old; list again
};

// The largest reply body kept from an API server (a cluster's pods and
// nodes as JSON are a few MiB); a larger one is an error saying so. Watch
// streams are read piece by piece and are not bounded by it.
inline constexpr std::size_t kMaxReplyBody = std::size_t{256} << 20;

class ApiClient {
 public:
  // `exec_runner` runs an exec credential plugin (null: refused).
  ApiClient(std::string cluster, KubeContext context, CommandRunner* exec_runner);
  ~ApiClient();
  ApiClient(const ApiClient&) = delete;
  ApiClient& operator=(const ApiClient&) = delete;

  const KubeContext& context() const { return context_; }

  // A JSON request: `body` null for none. The answer's JSON (an empty object
  // for an empty body).
  Result<Json::Value> Call(std::string_view method, const std::string& path,
                           const Json::Value* body, std::chrono::milliseconds timeout,
                           std::string_view content_type = "application/json");
  // A text answer (pod logs).
  Result<std::string> GetText(const std::string& path, std::chrono::milliseconds timeout);

  // Every item of a list (`path` may carry a query), in pages of 500 as
  // kubectl reads them, to `on_item` at a cursor on its JSON, which it must
  // read or skip (in order, on a thread of the call's own, a page while the
  // next is fetched; an error from it ends the list); the list's
  // resourceVersion.
  Result<std::string> ListEach(const std::string& path, std::chrono::milliseconds timeout,
                               const std::function<Status(JsonCursor&)>& on_item);
  // The same as values, each parsed through `item_mask` when given (the rest
  // of an item is skipped, never built).
  Result<ListResult> ListAll(const std::string& path, std::chrono::milliseconds timeout,
                             const JsonMask* item_mask = nullptr);

  // Watches `path` (a list path, with a query or not) from `resource_version`:
  // each event's type (ADDED, MODIFIED, DELETED, BOOKMARK) and its object's
  // JSON text go to `on_event`, which returns false to stop. Errors: the connection lost
  // (a cut stream is an error, not kClosed), or the server's refusal.
  // `stop`, when set and true, ends the watch within about a second even
  // while no event comes (kStopped).
  Result<WatchEnd> Watch(const std::string& path, const std::string& resource_version,
                         const std::function<bool(const std::string&, std::string_view)>& on_event,
                         std::chrono::milliseconds timeout,
                         const std::atomic<bool>* stop = nullptr);

  // Streams a text answer (pod logs with follow=true) to `on_chunk`, which
  // returns false to stop.
  Status StreamText(const std::string& path, const std::function<bool(std::string_view)>& on_chunk,
                    std::chrono::milliseconds timeout);

  // One HTTP exchange's answer.
  struct Reply {
    long status = 0;
    std::string body;
    std::string content_type;
    std::optional<long> retry_after;
    bool stopped = false;  // the caller's stop flag ended it
  };

 private:
  struct Handle;
  // One HTTP exchange; `sink` (when set) gets the body as it comes instead
  // of it being kept.
  Result<Reply> Exchange(std::string_view method, const std::string& path, const std::string* body,
                         std::string_view content_type, std::string_view accept,
                         std::chrono::milliseconds timeout,
                         const std::function<bool(std::string_view)>* sink,
                         const std::atomic<bool>* stop);
  // The exchange, with 429 waited out and a stale exec credential renewed.
  Result<Reply> Send(std::string_view method, const std::string& path, const std::string* body,
                     std::string_view content_type, std::string_view accept,
                     std::chrono::milliseconds timeout,
                     const std::function<bool(std::string_view)>* sink = nullptr,
                     const std::atomic<bool>* stop = nullptr);
  Status ErrorOf(const Reply& reply, std::string_view method, const std::string& path) const;
  // The credential to send now: the context's, or the exec plugin's (run when
  // none is held or it expires within a minute).
  Status Credentials(bool renew);

  std::string cluster_;
  KubeContext context_;
  CommandRunner* exec_runner_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Handle>> idle_;
  std::string token_;                   // under mu_
  std::string cert_pem_, key_pem_;      // under mu_
  std::optional<std::time_t> expires_;  // the exec credential's
  bool exec_ran_ = false;
};

// "/api/v1/namespaces/default/pods" + "?labelSelector=..." with the query's
// values escaped.
std::string WithQuery(std::string path,
                      const std::vector<std::pair<std::string, std::string>>& query);

}  // namespace skyslurm::kube
