#include "tests/objstore/fault_server_client.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <sstream>

extern char** environ;

namespace kvfs::testing {
namespace {

size_t Collect(char* p, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(p, size * n);
  return size * n;
}

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> out(1);
  for (char c : line) {
    if (c == '\t') {
      out.emplace_back();
    } else {
      out.back().push_back(c);
    }
  }
  return out;
}

}  // namespace

FaultServer::~FaultServer() {
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  if (pid_ > 0) {
    // It exits on EOF of stdin; a kill is the fallback for a stuck interpreter.
    for (int i = 0; i < 50; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      ::usleep(20000);
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

Status FaultServer::Start(const std::string& script, const std::string& bucket,
                          const std::vector<std::string>& extra_args) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    return Status::FromErrno(errno, "pipe");
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  std::vector<std::string> args = {"python3", script, "--bucket", bucket};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int rc = ::posix_spawnp(&pid_, "python3", &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  stdin_fd_ = in[1];
  if (rc != 0) {
    ::close(out[0]);
    pid_ = -1;
    return Status::FromErrno(rc, "start python3 " + script);
  }
  // Read "PORT <n>\n"; a generous limit: the interpreter may start slowly on a loaded machine.
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd p{out[0], POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    char buf[64];
    ssize_t n = ::read(out[0], buf, sizeof(buf));
    if (n <= 0) break;
    line.append(buf, n);
  }
  ::close(out[0]);
  if (line.rfind("PORT ", 0) != 0) {
    return Status::Internal("fault server " + script + " did not print its port (got '" + line +
                            "')");
  }
  port_ = std::stoi(line.substr(5));
  return Status::OK();
}

Result<std::string> FaultServer::Call(const std::string& method, const std::string& path,
                                      const std::string& body) {
  CURL* c = curl_easy_init();
  if (c == nullptr) return Status::Internal("curl_easy_init");
  std::string url = endpoint() + path, response;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method != "GET") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &response);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
  CURLcode rc = curl_easy_perform(c);
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK) return Status::Unavailable(url + ": " + curl_easy_strerror(rc));
  if (code != 200) return Status::Internal(url + ": HTTP " + std::to_string(code));
  return response;
}

Status FaultServer::AddRules(const std::string& json) {
  return Call("POST", "/__fault/rules", json).status();
}

Status FaultServer::Reset() { return Call("POST", "/__fault/reset", "").status(); }

Status FaultServer::PutObject(const std::string& bucket, const std::string& key,
                              const std::string& data) {
  char* b = curl_escape(bucket.c_str(), static_cast<int>(bucket.size()));
  char* k = curl_escape(key.c_str(), static_cast<int>(key.size()));
  std::string path = std::string("/__fault/object?bucket=") + b + "&key=" + k;
  curl_free(b);
  curl_free(k);
  return Call("PUT", path, data).status();
}

Result<std::vector<FaultServer::LogEntry>> FaultServer::Log() {
  KVFS_ASSIGN_OR_RETURN(std::string text, Call("GET", "/__fault/log?format=lines", ""));
  std::vector<LogEntry> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto f = SplitTabs(line);
    f.resize(6);
    out.push_back({f[0], f[1], f[2], f[3], f[4], f[5]});
  }
  return out;
}

}  // namespace kvfs::testing
