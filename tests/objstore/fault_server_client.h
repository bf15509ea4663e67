// FaultServer: runs tests/objstore/fault_server.py (a scriptable fake S3) as a child process
// and talks to its control API. Not thread-safe: one test thread drives it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "base/status.h"

namespace kvfs::testing {

class FaultServer {
 public:
  struct LogEntry {
    std::string method, path, query, range, if_match, action;
  };

  FaultServer() = default;
  ~FaultServer();  // closes the child's stdin (it exits) and reaps it
  FaultServer(const FaultServer&) = delete;
  FaultServer& operator=(const FaultServer&) = delete;

  // Starts `python3 script --bucket bucket [extra_args]` and waits for its "PORT n" line.
  Status Start(const std::string& script, const std::string& bucket,
               const std::vector<std::string>& extra_args = {});
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Appends rules (a JSON list, see fault_server.py).
  Status AddRules(const std::string& json);
  // Drops rules, the request log and all objects.
  Status Reset();
  // Stores an object directly, bypassing the log and the rules.
  Status PutObject(const std::string& bucket, const std::string& key, const std::string& data);
  Result<std::vector<LogEntry>> Log();
  // GET of a control path (e.g. "/__fault/sessions"): the body.
  Result<std::string> Get(const std::string& path) { return Call("GET", path, ""); }

 private:
  Result<std::string> Call(const std::string& method, const std::string& path,
                           const std::string& body);

  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int port_ = 0;
};

}  // namespace kvfs::testing
