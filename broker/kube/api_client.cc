#include "broker/kube/api_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <thread>

#include "broker/util/deadline.h"
#include "broker/util/json_cursor.h"
#include "broker/util/json_read.h"
#include "broker/util/trace.h"

namespace skyslurm::kube {
namespace {

using std::chrono::milliseconds;

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

Result<Json::Value> ParseJson(std::string_view text) {
  Json::Value root;
  if (text.empty()) return Json::Value(Json::objectValue);
  std::string errors;
  if (!ReadJson(text, &root, &errors)) {
    return InvalidArgumentError("the API server answered with no JSON: " + errors);
  }
  return root;
}

std::string Escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

}  // namespace

struct ApiClient::Handle {
  CURL* curl = nullptr;
  char error[CURL_ERROR_SIZE] = {};
  Handle() : curl(curl_easy_init()) {}
  ~Handle() {
    if (curl != nullptr) curl_easy_cleanup(curl);
  }
};

std::string WithQuery(std::string path,
                      const std::vector<std::pair<std::string, std::string>>& query) {
  char sep = path.find('?') == std::string::npos ? '?' : '&';
  for (const auto& [k, v] : query) {
    path += sep;
    path += Escape(k) + "=" + Escape(v);
    sep = '&';
  }
  return path;
}

ApiClient::ApiClient(std::string cluster, KubeContext context, CommandRunner* exec_runner)
    : cluster_(std::move(cluster)), context_(std::move(context)), exec_runner_(exec_runner) {
  GlobalInit();
  token_ = context_.token;
  cert_pem_ = context_.client_cert_pem;
  key_pem_ = context_.client_key_pem;
}

ApiClient::~ApiClient() = default;

Status ApiClient::Credentials(bool renew) {
  if (!context_.exec) return OkStatus();
  {
    std::lock_guard lock(mu_);
    const bool fresh = exec_ran_ && (!expires_ || *expires_ - 60 > std::time(nullptr));
    if (fresh && !renew) return OkStatus();
  }
  if (exec_runner_ == nullptr) {
    return FailedPreconditionError(fmt::format(
        "{}: context {} authenticates through the exec plugin {}, and no runner was given",
        cluster_, context_.context, context_.exec->command));
  }
  auto got = RunExecPlugin(*context_.exec, *exec_runner_, std::chrono::seconds(30));
  if (!got.ok()) return got.status().WithContext(cluster_);
  std::lock_guard lock(mu_);
  token_ = got->token;
  if (!got->client_cert_pem.empty()) {
    cert_pem_ = got->client_cert_pem;
    key_pem_ = got->client_key_pem;
  }
  expires_ = got->expires;
  exec_ran_ = true;
  return OkStatus();
}

namespace {

struct ClientCredentials {
  std::string token;
  std::string cert_pem;
  std::string key_pem;
};

// Where to, how long, and who we are: the context's server, CA and client
// certificate or basic credentials.
void SetConnection(CURL* c, const KubeContext& context, const ClientCredentials& creds,
                   const std::string& url, milliseconds timeout) {
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  // An API server is spoken to in HTTP(S) alone, and never redirected to
  // anything else (file://, a proxy's scheme).
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https,http");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "https,http");
  curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(kMaxReplyBody));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  const long total_ms = std::max<long>(1, static_cast<long>(timeout.count()));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, total_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, std::min<long>(10'000, total_ms));
  curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(c, CURLOPT_USERAGENT, "skyslurm");
  if (!context.ca_pem.empty()) {
    curl_blob ca{const_cast<char*>(context.ca_pem.data()), context.ca_pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
  }
  if (context.insecure_skip_tls_verify) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!creds.cert_pem.empty()) {
    curl_blob cb{const_cast<char*>(creds.cert_pem.data()), creds.cert_pem.size(), CURL_BLOB_COPY};
    curl_blob kb{const_cast<char*>(creds.key_pem.data()), creds.key_pem.size(), CURL_BLOB_COPY};
    curl_easy_setopt(c, CURLOPT_SSLCERT_BLOB, &cb);
    curl_easy_setopt(c, CURLOPT_SSLCERTTYPE, "PEM");
    curl_easy_setopt(c, CURLOPT_SSLKEY_BLOB, &kb);
    curl_easy_setopt(c, CURLOPT_SSLKEYTYPE, "PEM");
  }
  if (!context.username.empty()) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERNAME, context.username.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, context.password.c_str());
  }
}

// The request's headers, freed with it.
class Headers {
 public:
  Headers(const std::string& token, std::string_view accept, std::string_view content_type,
          bool has_body) {
    if (!token.empty()) Add("Authorization: Bearer " + token);
    Add("Accept: " + std::string(accept));
    if (has_body) Add("Content-Type: " + std::string(content_type));
    Add("Expect:");  // no 100-continue round trip
  }
  ~Headers() { curl_slist_free_all(list_); }
  Headers(const Headers&) = delete;
  Headers& operator=(const Headers&) = delete;
  curl_slist* get() const { return list_; }

 private:
  void Add(const std::string& line) { list_ = curl_slist_append(list_, line.c_str()); }
  curl_slist* list_ = nullptr;
};

void SetMethod(CURL* c, const std::string& verb, const std::string* body) {
  if (verb == "GET") {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, verb.c_str());
  }
  if (body != nullptr) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  }
}

// Where the answer goes as it arrives.
struct Sink {
  CURL* curl;
  ApiClient::Reply* reply;
  const std::function<bool(std::string_view)>* stream;
  bool stopped = false;
  bool too_large = false;  // the reply passed kMaxReplyBody
};

std::size_t OnBody(char* data, std::size_t size, std::size_t n, void* user) {
  auto* s = static_cast<Sink*>(user);
  const std::size_t len = size * n;
  long code = 0;
  curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &code);
  // Only a success is streamed; an error's Status is kept to be read.
  if (s->stream != nullptr && code >= 200 && code < 300) {
    if (!(*s->stream)(std::string_view(data, len))) {
      s->stopped = true;
      return 0;  // ends the transfer (CURLE_WRITE_ERROR)
    }
    return len;
  }
  if (s->reply->body.size() + len > kMaxReplyBody) {
    s->too_large = true;
    return 0;  // ends the transfer (CURLE_WRITE_ERROR)
  }
  s->reply->body.append(data, len);
  return len;
}

std::size_t OnHeader(char* data, std::size_t size, std::size_t n, void* user) {
  auto* s = static_cast<Sink*>(user);
  const std::size_t len = size * n;
  std::string line(data, len);
  const auto colon = line.find(':');
  if (colon == std::string::npos) return len;
  std::string name = line.substr(0, colon);
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  std::string value = line.substr(colon + 1);
  while (!value.empty() && (value.front() == ' ')) value.erase(0, 1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) value.pop_back();
  if (name == "retry-after") {
    try {
      s->reply->retry_after = std::stol(value);
    } catch (...) {
    }
  } else if (name == "content-type") {
    s->reply->content_type = value;
  }
  return len;
}

// Called about once a second even while nothing arrives.
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(user)->load() ? 1 : 0;
}

void SetCallbacks(CURL* c, Sink& sink, const std::atomic<bool>* stop) {
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &sink);
  if (stop != nullptr) {
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, &OnProgress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(stop));
  }
}

// Why a transfer failed, as the user can act on it.
Status TransferError(CURLcode rc, const std::string& said, const std::string& cluster,
                     const KubeContext& context, std::string_view method, const std::string& path,
                     milliseconds timeout) {
  switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
      return DeadlineExceededError(fmt::format("{}: {} {}{}: no answer within {} s ({})", cluster,
                                               method, context.server, path, timeout.count() / 1000,
                                               said));
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
      return UnauthenticatedError(fmt::format(
          "{}: the API server's certificate is not trusted with the CA of context {} in {} ({})",
          cluster, context.context, context.source, said));
    case CURLE_SSL_CERTPROBLEM:
      return InvalidArgumentError(
          fmt::format("{}: the client certificate of context {} in {} cannot be used ({})", cluster,
                      context.context, context.source, said));
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
      return UnavailableError(fmt::format("{}: the API server {} cut the answer to {} ({})",
                                          cluster, context.server, path, said));
    default:
      return UnavailableError(
          fmt::format("{}: cannot reach the API server {} ({})", cluster, context.server, said));
  }
}

}  // namespace

Result<ApiClient::Reply> ApiClient::Exchange(std::string_view method, const std::string& path,
                                             const std::string* body, std::string_view content_type,
                                             std::string_view accept, milliseconds timeout,
                                             const std::function<bool(std::string_view)>* sink,
                                             const std::atomic<bool>* stop) {
  std::unique_ptr<Handle> h;
  ClientCredentials creds;
  {
    std::lock_guard lock(mu_);
    if (!idle_.empty()) {
      h = std::move(idle_.back());
      idle_.pop_back();
    }
    creds = {token_, cert_pem_, key_pem_};
  }
  if (h == nullptr) h = std::make_unique<Handle>();
  if (h->curl == nullptr) return InternalError("curl_easy_init failed");
  CURL* c = h->curl;
  // A reset keeps the handle's live connection (and TLS session): the next
  // request to the same server reuses it.
  curl_easy_reset(c);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->error);
  h->error[0] = '\0';
  SetConnection(c, context_, creds, context_.server + path, timeout);
  const Headers headers(creds.token, accept, content_type, body != nullptr);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  SetMethod(c, std::string(method), body);
  Reply reply;
  Sink state{c, &reply, sink};
  SetCallbacks(c, state, stop);

  const CURLcode rc = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply.status);
  reply.stopped = rc == CURLE_ABORTED_BY_CALLBACK;
  if (rc == CURLE_OK || reply.stopped || (rc == CURLE_WRITE_ERROR && state.stopped)) {
    std::lock_guard lock(mu_);
    idle_.push_back(std::move(h));
    return reply;
  }
  // A failed handle is dropped with its connection.
  if (state.too_large || rc == CURLE_FILESIZE_EXCEEDED) {
    return UnavailableError(
        fmt::format("{}: {} {}: the API server's answer is over the {} bytes "
                    "taken",
                    cluster_, method, path, kMaxReplyBody));
  }
  const std::string said = h->error[0] != '\0' ? h->error : curl_easy_strerror(rc);
  return TransferError(rc, said, cluster_, context_, method, path, timeout);
}

Status ApiClient::ErrorOf(const Reply& reply, std::string_view method,
                          const std::string& path) const {
  std::string message, reason;
  if (auto status = ParseJson(reply.body); status.ok() && status->isObject()) {
    message = (*status)["message"].asString();
    reason = (*status)["reason"].asString();
  }
  if (message.empty()) message = reply.body.substr(0, 200);
  const std::string text =
      fmt::format("{}: {}{}", cluster_, message, reason.empty() ? "" : " (" + reason + ")");
  switch (reply.status) {
    case 401:
      return UnauthenticatedError(fmt::format(
          "{}: the API server refused the credentials of context {} in {} (Unauthorized)", cluster_,
          context_.context, context_.source));
    case 403:
      return PermissionDeniedError(text);
    case 404:
      return NotFoundError(text);
    case 409:
      return reason == "AlreadyExists" ? AlreadyExistsError(text) : FailedPreconditionError(text);
    case 400:
    case 422:
      return InvalidArgumentError(text);
    case 410:
      return FailedPreconditionError(text);
    default:
      if (reply.status >= 500 || reply.status == 429) return UnavailableError(text);
      return InternalError(
          fmt::format("{}: {} {} answered {}: {}", cluster_, method, path, reply.status, message));
  }
}

Result<ApiClient::Reply> ApiClient::Send(std::string_view method, const std::string& path,
                                         const std::string* body, std::string_view content_type,
                                         std::string_view accept, milliseconds timeout,
                                         const std::function<bool(std::string_view)>* sink,
                                         const std::atomic<bool>* stop) {
  const Deadline deadline(timeout);
  SKY_RETURN_IF_ERROR(Credentials(false));
  bool renewed = false;
  while (true) {
    SKY_ASSIGN_OR_RETURN(Reply reply, Exchange(method, path, body, content_type, accept,
                                               deadline.left(), sink, stop));
    if (reply.status == 429) {
      // Too many requests: wait as asked, if the deadline allows.
      const milliseconds wait(std::max<long>(1, reply.retry_after.value_or(1)) * 1000);
      if (wait < deadline.left()) {
        std::this_thread::sleep_for(wait);
        continue;
      }
    }
    if (reply.status == 401 && context_.exec && !renewed) {
      renewed = true;
      SKY_RETURN_IF_ERROR(Credentials(true));
      continue;
    }
    return reply;
  }
}

Result<Json::Value> ApiClient::Call(std::string_view method, const std::string& path,
                                    const Json::Value* body, milliseconds timeout,
                                    std::string_view content_type) {
  trace::Span span(fmt::format("{} {} {}", cluster_, method, path.substr(0, path.find('?'))));
  std::string text;
  if (body != nullptr) {
    Json::StreamWriterBuilder w;
    w["indentation"] = "";
    text = Json::writeString(w, *body);
  }
  SKY_ASSIGN_OR_RETURN(Reply reply, Send(method, path, body != nullptr ? &text : nullptr,
                                         content_type, "application/json", timeout));
  if (reply.status < 200 || reply.status >= 300) return ErrorOf(reply, method, path);
  auto parsed = ParseJson(reply.body);
  if (!parsed.ok()) return parsed.status().WithContext(cluster_);
  return parsed;
}

Result<std::string> ApiClient::GetText(const std::string& path, milliseconds timeout) {
  SKY_ASSIGN_OR_RETURN(Reply reply, Send("GET", path, nullptr, "", "*/*", timeout));
  if (reply.status < 200 || reply.status >= 300) return ErrorOf(reply, "GET", path);
  return reply.body;
}

Result<std::string> ApiClient::ListEach(const std::string& path, milliseconds timeout,
                                        const std::function<Status(JsonCursor&)>& on_item) {
  trace::Span span(fmt::format("{} LIST {}", cluster_, path.substr(0, path.find('?'))));
  const Deadline deadline(timeout);
  std::string version;
  // A page is read on a thread of its own while the next is asked for and
  // received: the server makes page k+1 while page k is read. Only the
  // continue token is read before the next request (a scan, not a parse).
  std::future<Status> reading;
  auto read = [&]() -> Status { return reading.valid() ? reading.get() : OkStatus(); };
  std::string next;
  do {
    std::vector<std::pair<std::string, std::string>> query = {{"limit", "500"}};
    if (!next.empty()) query.emplace_back("continue", next);
    const std::string url = WithQuery(path, query);
    auto reply = Send("GET", url, nullptr, "", "application/json", deadline.left());
    Status failed = !reply.ok()                                   ? reply.status()
                    : reply->status < 200 || reply->status >= 300 ? ErrorOf(*reply, "GET", url)
                                                                  : OkStatus();
    std::string page_version;
    if (failed.ok()) {
      next.clear();
      JsonCursor head(reply->body);
      failed = head.Object([&](std::string_view key) {
        if (key != "metadata") return head.Skip();
        Status got = head.Object([&](std::string_view k) {
          if (k == "continue") return head.String(&next);
          if (k == "resourceVersion") return head.String(&page_version);
          return head.Skip();
        });
        head.Stop();  // the items after it are the reading thread's
        return got;
      });
      if (!failed.ok()) failed = failed.WithContext(cluster_ + ": the API server's list");
    }
    const Status earlier = read();
    if (!failed.ok()) return failed;
    SKY_RETURN_IF_ERROR(earlier);
    version = page_version;
    reading = std::async(std::launch::async, [&on_item, this, body = std::move(reply->body)] {
      JsonCursor page(body);
      Status s = page.Object([&](std::string_view key) {
        if (key != "items") return page.Skip();
        return page.Array([&] { return on_item(page); });
      });
      return s.ok() ? s : s.WithContext(cluster_ + ": the API server's list");
    });
  } while (!next.empty());
  SKY_RETURN_IF_ERROR(read());
  return version;
}

Result<ListResult> ApiClient::ListAll(const std::string& path, milliseconds timeout,
                                      const JsonMask* item_mask) {
  ListResult out;
  static const JsonMask everything = JsonMask::All();
  const JsonMask& mask = item_mask != nullptr ? *item_mask : everything;
  SKY_ASSIGN_OR_RETURN(out.resource_version,
                       ListEach(path, timeout, [&](JsonCursor& item) -> Status {
                         SKY_ASSIGN_OR_RETURN(Json::Value v, item.Value(mask));
                         out.items.push_back(std::move(v));
                         return OkStatus();
                       }));
  return out;
}

Result<WatchEnd> ApiClient::Watch(
    const std::string& path, const std::string& resource_version,
    const std::function<bool(const std::string&, std::string_view)>& on_event, milliseconds timeout,
    const std::atomic<bool>* stop) {
  // The server ends the stream a little before our own deadline, cleanly.
  const long seconds = std::max<long>(1, static_cast<long>(timeout.count() / 1000) - 1);
  const std::string url = WithQuery(path, {{"watch", "true"},
                                           {"resourceVersion", resource_version},
                                           {"allowWatchBookmarks", "true"},
                                           {"timeoutSeconds", std::to_string(seconds)}});
  std::string pending;
  std::optional<WatchEnd> ended;
  Status failed;
  const std::function<bool(std::string_view)> sink = [&](std::string_view chunk) {
    pending.append(chunk);
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      const std::string_view line(pending.data() + start, nl - start);
      if (line.empty()) continue;
      std::string type;
      std::string_view object;
      JsonCursor event(line);
      Status read = event.Object([&](std::string_view key) {
        if (key == "type") return event.String(&type);
        if (key == "object") return event.Raw(&object);
        return event.Skip();
      });
      if (!read.ok()) {
        failed = read.WithContext(cluster_ + ": watch " + path);
        return false;
      }
      if (type == "ERROR") {
        const Json::Value status = ParseJson(object).value_or(Json::Value());
        if (status["code"].asInt() == 410) {
          ended = WatchEnd::kGone;
        } else {
          failed = UnavailableError(
              fmt::format("{}: watch {}: {}", cluster_, path, status["message"].asString()));
        }
        return false;
      }
      if (!on_event(type, object)) {
        ended = WatchEnd::kStopped;
        return false;
      }
    }
    pending.erase(0, start);
    return true;
  };
  SKY_ASSIGN_OR_RETURN(Reply reply, Send("GET", url, nullptr, "", "application/json",
                                         timeout + std::chrono::seconds(5), &sink, stop));
  if (!failed.ok()) return failed;
  if (ended) return *ended;
  if (reply.stopped) return WatchEnd::kStopped;
  if (reply.status == 410) return WatchEnd::kGone;
  if (reply.status < 200 || reply.status >= 300) return ErrorOf(reply, "GET", path);
  return WatchEnd::kClosed;
}

Status ApiClient::StreamText(const std::string& path,
                             const std::function<bool(std::string_view)>& on_chunk,
                             milliseconds timeout) {
  SKY_ASSIGN_OR_RETURN(Reply reply, Send("GET", path, nullptr, "", "*/*", timeout, &on_chunk));
  if (reply.status < 200 || reply.status >= 300) return ErrorOf(reply, "GET", path);
  return OkStatus();
}

}  // namespace skyslurm::kube
