#include "src/metrics_server.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>

#include <cstring>

namespace kvfs {
namespace {

struct Reply {
  unsigned code;
  std::string body;
  const char* type;
};

Reply Route(const std::string& url, const std::function<std::string()>& render,
            HealthCheck* health) {
  constexpr const char* kText = "text/plain; charset=utf-8";
  if (url == "/metrics") return {MHD_HTTP_OK, render(), "text/plain; version=0.0.4; charset=utf-8"};
  // Liveness: answering at all is the answer.
  if (url == "/healthz") return {MHD_HTTP_OK, "alive\n", kText};
  if (url == "/readyz") {
    Status st = health->Ready();
    if (st.ok()) return {MHD_HTTP_OK, "ready\n", kText};
    return {MHD_HTTP_SERVICE_UNAVAILABLE, "not ready: " + st.ToString() + "\n", kText};
  }
  return {MHD_HTTP_NOT_FOUND, "not found: try /metrics, /healthz or /readyz\n", kText};
}

MHD_Result Answer(void* cls, MHD_Connection* conn, const char* url, const char* method, const char*,
                  const char*, size_t*, void**) {
  const auto* routes = static_cast<const MetricsServer::Routes*>(cls);
  const Reply reply = std::strcmp(method, "GET") == 0
                          ? Route(url, routes->render, routes->health)
                          : Reply{MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n", "text/plain"};
  MHD_Response* resp = MHD_create_response_from_buffer(
      reply.body.size(), const_cast<char*>(reply.body.data()), MHD_RESPMEM_MUST_COPY);
  MHD_add_response_header(resp, "Content-Type", reply.type);
  const MHD_Result r = MHD_queue_response(conn, reply.code, resp);
  MHD_destroy_response(resp);
  return r;
}

}  // namespace

MetricsServer::~MetricsServer() { Stop(); }

Status MetricsServer::Start(const std::string& listen, std::function<std::string()> render,
                            HealthCheck* health) {
  const size_t colon = listen.rfind(':');
  const auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("metrics_listen '" + listen + "': " + why);
  };
  if (colon == std::string::npos) return bad("expected HOST:PORT, e.g. 127.0.0.1:9464");
  std::string host = listen.substr(0, colon);
  const std::string port_text = listen.substr(colon + 1);
  char* end = nullptr;
  const long port = std::strtol(port_text.c_str(), &end, 10);
  if (port_text.empty() || *end != '\0' || port < 1 || port > 65535) {
    return bad("the port must be 1..65535");
  }
  if (host == "localhost") host = "127.0.0.1";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return bad("the host must be an IPv4 address (e.g. 127.0.0.1 or 0.0.0.0)");
  }
  routes_ = Routes{std::move(render), health};
  // One thread per connection, not libmicrohttpd's single internal thread: a handler that takes
  // long (a slow `render`) then holds up its own connection only, and /healthz and /readyz - which
  // never wait on the store (src/health_check.h) - answer whatever any other request does. A
  // thread pool (MHD_OPTION_THREAD_POOL_SIZE) would not do: each pool thread serves all the
  // connections it accepted, so one slow render stalls the probes that landed beside it, and as
  // many slow renders as threads stall them all. A scrape is one short request, so the threads
  // are few and short-lived; idle connections (a port scanner, a client that never sends) are
  // closed after 5 s of silence, and at most 128 are open at once - room for Prometheus, the
  // probes and several scrapers, while a flood cannot spend a container's pid limit (pids.max)
  // on threads the FUSE loop needs. Each connection's thread poll()s its socket (MHD_USE_AUTO
  // chooses poll with threads per connection), never select(): the daemon raises its descriptor
  // limit far past FD_SETSIZE, and select cannot watch a socket numbered above 1023.
  daemon_ = MHD_start_daemon(
      MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG,
      static_cast<uint16_t>(port), nullptr, nullptr, &Answer, &routes_, MHD_OPTION_SOCK_ADDR,
      reinterpret_cast<sockaddr*>(&addr), MHD_OPTION_CONNECTION_LIMIT, 128u,
      MHD_OPTION_CONNECTION_TIMEOUT, 5u, MHD_OPTION_END);
  if (daemon_ == nullptr) return bad("cannot listen there (address in use or not local?)");
  return Status::OK();
}

void MetricsServer::Stop() {
  if (daemon_ != nullptr) MHD_stop_daemon(daemon_);
  daemon_ = nullptr;
}

}  // namespace kvfs
