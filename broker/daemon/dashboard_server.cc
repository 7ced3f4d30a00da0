#include "broker/daemon/dashboard_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <json/json.h>
#include <sys/socket.h>

#include "broker/daemon/api_server.h"
#include "broker/daemon/dashboard_assets.h"

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

// Whether the Host header names this server (not a name rebound to it).
bool OurHost(const std::string& host, const std::string& address, int port) {
  const std::string p = ":" + std::to_string(port);
  for (const std::string& name :
       {address, std::string("127.0.0.1"), std::string("localhost"), std::string("[::1]")}) {
    if (host == name + p) return true;
  }
  return false;
}

}  // namespace

DashboardServer::DashboardServer(ApiServer& api, DashboardOptions options)
    : api_(api), options_(std::move(options)) {}

DashboardServer::~DashboardServer() { Stop(); }

bool DashboardServer::serving() const {
  std::lock_guard lock(mu_);
  return server_ != nullptr;
}

Result<int> DashboardServer::Start(int port) {
  std::lock_guard lock(mu_);
  if (server_) {
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
  }
  if (server) server->stop();
  if (thread.joinable()) thread.join();
  auth_.Clear();  // a link or session of this serving is no good for the next
}

std::string DashboardServer::NewLoginUrl() {
  std::lock_guard lock(mu_);
  const std::string host = options_.address == "0.0.0.0" || options_.address == "::"
                               ? std::string("127.0.0.1")
                               : options_.address;
  return fmt::format("http://{}:{}/?token={}", host, port_, auth_.NewLoginToken());
}

void DashboardServer::Routes(httplib::Server& s) {
  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    using R = httplib::Server::HandlerResponse;
    api_.Touch();
    res.set_header("Content-Security-Policy", kPolicy);
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");  // the login link must not travel
    res.set_header("Cache-Control", "no-store");
    int port = 0;
    {
      std::lock_guard lock(mu_);
      port = port_;
    }
    if (!OurHost(req.get_header_value("Host"), options_.address, port)) {
      Refuse(req, res, "This address is not the dashboard's.");
      return R::Handled;
    }
    // The login link: its token (once) becomes the session cookie, and the
    // page is loaded again without the token in its address.
    if (req.has_param("token")) {
      auto session = auth_.Login(req.get_param_value("token"));
      if (!session) {
        Refuse(req, res, "This link was used already or is no longer valid.");
        return R::Handled;
      }
      res.set_header("Set-Cookie", fmt::format("{}={}; Path=/; HttpOnly; SameSite=Strict",
                                               kSessionCookie, *session));
      res.set_redirect(req.path.empty() ? "/" : req.path, 303);
      return R::Handled;
    }
    const std::string session = DashboardAuth::SessionFromCookie(req.get_header_value("Cookie"));
    if (!auth_.ValidSession(session)) {
      Refuse(req, res, "Open the dashboard with the link skyslurm dashboard printed.");
      return R::Handled;
    }
    if (req.method != "GET" && req.method != "HEAD") {
      // Another site's page can send a POST with the cookie (a form), but
      // not this header without a preflight, which is never allowed.
      if (!auth_.ValidCsrf(session, req.get_header_value(std::string(kCsrfHeader)))) {
        Refuse(req, res, "This action did not come from the dashboard's page.");
        return R::Handled;
      }
    }
    return R::Unhandled;
  });
  auto page = [this](const std::string& path) {
    return [this, path](const httplib::Request& req, httplib::Response& res) {
      auto asset = FindDashboardAsset(path);
      if (!asset) {
        res.status = 404;
        return;
      }
      std::string body(asset->body);
      if (path == "/index.html") {
        // The session's CSRF token, for the page's actions.
        const std::string csrf =
            auth_.CsrfOf(DashboardAuth::SessionFromCookie(req.get_header_value("Cookie")));
        if (auto at = body.find("{{CSRF}}"); at != std::string::npos) body.replace(at, 8, csrf);
      }
      res.set_content(body, std::string(asset->content_type));
    };
  };
  s.Get("/", page("/index.html"));
  s.Get("/index.html", page("/index.html"));
  s.Get("/app.css", page("/app.css"));
  s.Get("/app.js", page("/app.js"));
  api_.AddRoutes(s);
}

}  // namespace skyslurm::daemon
