#include "broker/daemon/dashboard/dashboard_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <json/json.h>
#include <sys/socket.h>

#include <chrono>
#include <string_view>
#include <thread>

#include "broker/daemon/dashboard/dashboard_assets.h"

namespace skyslurm::daemon {
namespace {

// The pages are the daemon's own: nothing from elsewhere, no framing.
constexpr const char* kPolicy =
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

void Refuse(const httplib::Request& req, httplib::Response& res, const std::string& why) {
  res.status = 403;
  if (req.path.starts_with("/v1/")) {
    Json::Value v(Json::objectValue);
    v["error"] = why;
    res.set_content(Json::FastWriter().write(v), "application/json");
  } else {
    res.set_content(
        fmt::format("<!doctype html><meta charset=utf-8><title>skyslurm</title>"
                    "<p>{}</p><p>Run <code>skyslurm dashboard</code> for a new link.</p>\n",
                    why),
        "text/html; charset=utf-8");
  }
}

// Whether the Host header names this machine's loopback or the address it
// serves on, at any port (`ssh -L 8888:127.0.0.1:P` sends port 8888), and
// not a name of somebody's that was made to resolve to it (DNS rebinding).
bool OurHost(std::string_view host, const std::string& address) {
  std::string_view name = host;
  if (name.starts_with('[')) {
    name = name.substr(0, name.find(']') + 1);
  } else if (const std::size_t colon = name.rfind(':'); colon != std::string_view::npos) {
    name = name.substr(0, colon);
  }
  const std::string bracketed =
      address.find(':') != std::string::npos ? "[" + address + "]" : address;
  for (std::string_view ours : {std::string_view("127.0.0.1"), std::string_view("localhost"),
                                std::string_view("[::1]"), std::string_view(bracketed)}) {
    if (name == ours) return true;
  }
  return false;
}

}  // namespace

DashboardServer::DashboardServer(std::function<void(httplib::Server&)> add_routes,
                                 std::function<void()> touch, DashboardOptions options)
    : add_routes_(std::move(add_routes)), touch_(std::move(touch)), options_(std::move(options)) {}

DashboardServer::~DashboardServer() { Stop(); }

bool DashboardServer::serving() const { return serving_; }

Result<int> DashboardServer::Start(int port) {
  std::lock_guard lock(mu_);
  if (server_ != nullptr) {
    if (port != 0 && port != port_) {
      return FailedPreconditionError(fmt::format(
          "the dashboard is served on port {} already (skyslurm dashboard --stop first)", port_));
    }
    return port_;
  }
  auto server = std::make_unique<httplib::Server>();
  Routes(*server);
  int bound = port;
  if (port == 0) {
    bound = server->bind_to_any_port(options_.address);
  } else if (!server->bind_to_port(options_.address, port)) {
    bound = -1;
  }
  if (bound <= 0) {
    return UnavailableError(fmt::format("cannot listen on {}:{}{}", options_.address, port,
                                        port != 0 ? " (in use? --port 0 takes a free one)" : ""));
  }
  port_ = bound;
  server_ = std::move(server);
  thread_ = std::thread([s = server_.get()] { s->listen_after_bind(); });
  // httplib's stop() does nothing before its loop runs: a Stop() right after
  // this (or the daemon's exit) would otherwise wait on that loop forever.
  for (int i = 0; i < 500 && !server_->is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  serving_ = true;
  return port_;
}

void DashboardServer::Stop() {
  std::unique_ptr<httplib::Server> server;
  std::thread thread;
  {
    std::lock_guard lock(mu_);
    server = std::move(server_);
    thread = std::move(thread_);
    port_ = 0;
    serving_ = false;
  }
  if (server) server->stop();
  if (thread.joinable()) thread.join();
  auth_.Clear();  // a link or session of this serving is no good for the next
}

std::string DashboardServer::NewLoginUrl() {
  std::lock_guard lock(mu_);
  std::string host = options_.address == "0.0.0.0" || options_.address == "::"
                         ? std::string("127.0.0.1")
                         : options_.address;
  if (host.find(':') != std::string::npos) host = "[" + host + "]";  // IPv6
  return fmt::format("http://{}:{}/?token={}", host, port_, auth_.NewLoginToken());
}

void DashboardServer::Routes(httplib::Server& s) {
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    using R = httplib::Server::HandlerResponse;
    res.set_header("Content-Security-Policy", kPolicy);
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");  // the login link must not travel
    res.set_header("Cache-Control", "no-store");
    if (!OurHost(req.get_header_value("Host"), options_.address)) {
      Refuse(req, res, "This address is not the dashboard's.");
      return R::Handled;
    }
    // The login link: its token (once) opens a session. The session id goes
    // in a cookie; its second secret goes to the page in the address's
    // fragment, which no server sees, and the page sends it back as a
    // header with every API request. A page on another port of this host
    // can be sent the cookie (cookies do not tell ports apart), never the
    // secret (storage does).
    if (req.has_param("token")) {
      auto session = auth_.Login(req.get_param_value("token"));
      if (!session) {
        Refuse(req, res, "This link was used already or is no longer valid.");
        return R::Handled;
      }
      res.set_header("Set-Cookie", fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict",
                                               kSessionCookie, *session));
      res.set_redirect("/#login=" + auth_.CsrfOf(*session), 303);
      return R::Handled;
    }
    const std::string session = DashboardAuth::SessionFromCookie(req.get_header_value("Cookie"));
    if (!auth_.ValidSession(session)) {
      Refuse(req, res, "Open the dashboard with the link skyslurm dashboard printed.");
      return R::Handled;
    }
    // The pages themselves hold no secret; everything else (every answer of
    // the API, every action) needs the session's second secret too.
    const bool page = req.method == "GET" && (req.path == "/" || req.path == "/index.html" ||
                                              req.path == "/app.css" || req.path == "/app.js");
    if (!page && !auth_.ValidCsrf(session, req.get_header_value(std::string(kCsrfHeader)))) {
      Refuse(req, res, "This request did not come from the dashboard's page.");
      return R::Handled;
    }
    touch_();
    return R::Unhandled;
  });
  auto page = [](const std::string& path) {
    return [path](const httplib::Request&, httplib::Response& res) {
      auto asset = FindDashboardAsset(path);
      if (!asset) {
        res.status = 404;
        return;
      }
      res.set_content(std::string(asset->body), std::string(asset->content_type));
    };
  };
  s.Get("/", page("/index.html"));
  s.Get("/index.html", page("/index.html"));
  s.Get("/app.css", page("/app.css"));
  s.Get("/app.js", page("/app.js"));
  add_routes_(s);
}

}  // namespace skyslurm::daemon
