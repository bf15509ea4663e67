// The HTTP engine's fault handling against a tiny scripted HTTP server on 127.0.0.1: a GET that
// dies mid-body resumes with Range and If-Match, 503s are retried, a short body is never success,
// a stalled server hits the deadline. (The broad fault suite lives in tests/objstore.)
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "objstore/s3/s3_store.h"

namespace kvfs {
namespace {

enum class Action { kFull, kCutMidBody, kShortBody, k503, kStall };

// Serves one object; each request takes the next scripted action (then kFull). Records requests.
class ScriptedServer {
 public:
  ScriptedServer(std::string object, std::vector<Action> script)
      : object_(std::move(object)), script_(std::move(script)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    listen(fd_, 16);
    thread_ = std::thread([this] { Serve(); });
  }
  ~ScriptedServer() {
    stop_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<std::string> requests() EXCLUDES(mu_) {
    MutexLock l(&mu_);
    return requests_;
  }

 private:
  void Serve() {
    while (!stop_) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      HandleConnection(c);  // one connection at a time is enough here
      close(c);
    }
  }
  void HandleConnection(int c) {
    std::string buf;
    char tmp[4096];
    for (;;) {
      size_t end;
      while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
        ssize_t n = read(c, tmp, sizeof(tmp));
        if (n <= 0) return;
        buf.append(tmp, n);
      }
      std::string req = buf.substr(0, end);
      buf.erase(0, end + 4);
      Action a = Action::kFull;
      {
        MutexLock l(&mu_);
        requests_.push_back(req);
        if (next_ < script_.size()) a = script_[next_++];
      }
      uint64_t first = 0, last = object_.size() - 1;
      size_t r = req.find("Range: bytes=");
      if (r != std::string::npos) {
        first = std::stoull(req.substr(r + 13));
        size_t dash = req.find('-', r + 13);
        if (req[dash + 1] != '\r') last = std::stoull(req.substr(dash + 1));
      }
      const std::string body = object_.substr(first, last - first + 1);
      std::string head;
      if (a == Action::k503) {
        const std::string err = "<Error><Code>SlowDown</Code><Message>slow</Message></Error>";
        head = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: " + std::to_string(err.size()) +
               "\r\n\r\n" + err;
        if (!Send(c, head)) return;
        continue;
      }
      head = std::string(r != std::string::npos ? "HTTP/1.1 206 Partial Content\r\n"
                                                : "HTTP/1.1 200 OK\r\n") +
             "ETag: \"v1\"\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
      if (r != std::string::npos) {
        head += "Content-Range: bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" +
                std::to_string(object_.size()) + "\r\n";
      }
      head += "\r\n";
      if (a == Action::kStall) {
        Send(c, head);
        while (!stop_) usleep(10000);
        return;
      }
      if (a == Action::kCutMidBody) {
        Send(c, head + body.substr(0, body.size() / 3));
        return;  // connection closed mid-body
      }
      if (a == Action::kShortBody) {
        // Claims fewer bytes than the range asked: a server-side truncation.
        head =
            "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Length: 10\r\n"
            "Content-Range: bytes " +
            std::to_string(first) + "-" + std::to_string(first + 9) + "/" +
            std::to_string(object_.size()) + "\r\n\r\n";
        if (!Send(c, head + body.substr(0, 10))) return;
        continue;
      }
      if (!Send(c, head + body)) return;
    }
  }
  static bool Send(int c, const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = send(c, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return false;
      off += n;
    }
    return true;
  }

  const std::string object_;
  const std::vector<Action> script_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  Mutex mu_;
  size_t next_ GUARDED_BY(mu_) = 0;
  std::vector<std::string> requests_ GUARDED_BY(mu_);
};

std::string Object() {
  std::string s(300000, '\0');
  for (size_t i = 0; i < s.size(); ++i) s[i] = static_cast<char>(i * 31 + i / 977);
  return s;
}

std::shared_ptr<ObjectStore> Store(const std::string& endpoint, int timeout_ms = 20000) {
  S3Options o;
  o.bucket = "b";
  o.endpoint = endpoint;
  o.credentials = {"AKIDTEST", "secret", "", "test"};
  o.backoff_base_ms = 5;
  o.stall_timeout_ms = 1000;
  o.operation_timeout_ms = timeout_ms;
  return *NewS3Store(o);
}

GetRequest Req(uint64_t offset, uint64_t length) {
  GetRequest r;
  r.key = "k";
  r.offset = offset;
  r.length = length;
  return r;
}

TEST(S3Resume, CutMidBodyResumesWithRangeAndIfMatch) {
  const std::string obj = Object();
  ScriptedServer server(obj, {Action::kCutMidBody, Action::k503, Action::kCutMidBody});
  auto store = Store(server.endpoint());
  std::string buf(obj.size(), '\0');
  Result<uint64_t> n = store->Get(Req(0, GetRequest::kToEnd), buf.data());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, obj.size());
  EXPECT_TRUE(buf == obj);
  std::vector<std::string> reqs = server.requests();
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(reqs[0].find("Range:"), std::string::npos);
  EXPECT_NE(reqs[1].find("Range: bytes=100000-"), std::string::npos) << reqs[1];
  EXPECT_NE(reqs[1].find("If-Match: \"v1\""), std::string::npos) << reqs[1];
  EXPECT_NE(reqs[3].find("If-Match: \"v1\""), std::string::npos);
}

TEST(S3Resume, RangedGetResumesInsideTheRange) {
  const std::string obj = Object();
  ScriptedServer server(obj, {Action::kCutMidBody});
  auto store = Store(server.endpoint());
  std::string buf(90000, '\0');
  Result<uint64_t> n = store->Get(Req(1000, 90000), buf.data());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 90000u);
  EXPECT_TRUE(buf == obj.substr(1000, 90000));
  std::vector<std::string> reqs = server.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_NE(reqs[1].find("Range: bytes=31000-90999"), std::string::npos) << reqs[1];
}

TEST(S3Resume, ShortBodyIsNeverSuccess) {
  const std::string obj = Object();
  ScriptedServer server(obj, {Action::kShortBody, Action::kShortBody, Action::kShortBody,
                              Action::kShortBody, Action::kShortBody, Action::kShortBody});
  auto store = Store(server.endpoint());
  std::string buf(1000, '\0');
  Result<uint64_t> n = store->Get(Req(0, 1000), buf.data());
  EXPECT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kUnavailable) << n.status().ToString();
}

TEST(S3Resume, StalledServerHitsTheDeadline) {
  const std::string obj = Object();
  ScriptedServer server(
      obj, {Action::kStall, Action::kStall, Action::kStall, Action::kStall, Action::kStall});
  auto store = Store(server.endpoint(), 1500);
  std::string buf(obj.size(), '\0');
  Result<uint64_t> n = store->Get(Req(0, GetRequest::kToEnd), buf.data());
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kDeadlineExceeded) << n.status().ToString();
  EXPECT_NE(n.status().message().find("operation_timeout_ms"), std::string::npos);
}

TEST(S3Resume, DestroyingTheStoreCancelsWaitingRequests) {
  const std::string obj = Object();
  ScriptedServer server(obj, {Action::kStall});
  auto store = Store(server.endpoint());
  std::string buf(obj.size(), '\0');
  std::promise<Status> p;
  store->GetAsync(Req(0, GetRequest::kToEnd), buf.data(),
                  [&p](Result<uint64_t> r) { p.set_value(r.status()); });
  usleep(100000);
  store.reset();
  Status st = p.get_future().get();
  EXPECT_EQ(st.code(), StatusCode::kCancelled) << st.ToString();
}

}  // namespace
}  // namespace kvfs
