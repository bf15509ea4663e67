// MetricsServer: the Prometheus endpoint of a mount (`metrics_listen: HOST:PORT`), served by
// libmicrohttpd with a thread per connection (at most 128 open, each closed after 5 s of silence):
// GET /metrics answers the text `render` returns, GET /healthz and /readyz the container probes'
// questions (src/health_check.h); every other path is 404. A slow request holds up only its own
// connection: /healthz answers at once and /readyz from what HealthCheck knows (it never waits on
// the store), whatever /metrics or the store do. Off unless configured; bind it to loopback or a
// private interface (no TLS, no authentication: the numbers reveal activity, never keys' contents
// or secrets).
//
// Thread-safe: Start and Stop from one thread; `render` and `health` are used on the server's
// connection threads, several at once, and must be thread-safe themselves. Stop waits for the
// requests being answered.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"
#include "src/health_check.h"

struct MHD_Daemon;

namespace kvfs {

class MetricsServer {
 public:
  // What the server's request callback answers from.
  struct Routes {
    std::function<std::string()> render;
    HealthCheck* health = nullptr;
  };

  MetricsServer() = default;
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // `listen` is "HOST:PORT" (an IPv4 address, or "localhost"); kInvalidArgument names the
  // setting when it cannot be parsed or bound. `health` must outlive the server.
  Status Start(const std::string& listen, std::function<std::string()> render, HealthCheck* health);
  void Stop();

 private:
  MHD_Daemon* daemon_ = nullptr;
  Routes routes_;
};

}  // namespace kvfs
