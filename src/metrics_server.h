// MetricsServer: the Prometheus endpoint of a mount (`metrics_listen: HOST:PORT`), served by
// libmicrohttpd on its own thread: GET /metrics answers the text `render` returns; every other
// path is 404. Off unless configured; bind it to loopback or a private interface (no TLS, no
// authentication: the numbers reveal activity, never keys' contents or secrets).
//
// Thread-safe: Start and Stop from one thread; `render` runs on the server's thread and must be
// thread-safe itself.
#pragma once

#include <functional>
#include <string>

#include "base/status.h"

struct MHD_Daemon;

namespace kvfs {

class MetricsServer {
 public:
  MetricsServer() = default;
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // `listen` is "HOST:PORT" (an IPv4 address, or "localhost"); kInvalidArgument names the
  // setting when it cannot be parsed or bound.
  Status Start(const std::string& listen, std::function<std::string()> render);
  void Stop();

 private:
  MHD_Daemon* daemon_ = nullptr;
  std::function<std::string()> render_;
};

}  // namespace kvfs
