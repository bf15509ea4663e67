#include "src/metrics_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "tests/src/gate.h"
#include "tests/src/gated_store.h"

namespace kvfs {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

struct Reply {
  int code = 0;
  std::string body;
  milliseconds took{0};
};

// One GET over a fresh connection (as the kubelet's probes do); nullopt when no complete answer
// came within `limit`.
std::optional<Reply> Get(int port, const std::string& path, milliseconds limit) {
  const auto t0 = Clock::now();
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string got;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string req = "GET " + path + " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
    if (send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size())) {
      const auto deadline = t0 + limit;
      char buf[4096];
      while (true) {
        const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
        pollfd p{fd, POLLIN, 0};
        if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) {
          got.clear();  // no complete answer in time
          break;
        }
        const ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0) break;  // EOF: the answer is complete (Connection: close)
        got.append(buf, static_cast<size_t>(n));
      }
    }
  }
  close(fd);
  const size_t head_end = got.find("\r\n\r\n");
  if (got.rfind("HTTP/1.", 0) != 0 || got.size() < 12 || head_end == std::string::npos) {
    return std::nullopt;
  }
  return Reply{std::stoi(got.substr(9, 3)), got.substr(head_end + 4),
               std::chrono::duration_cast<milliseconds>(Clock::now() - t0)};
}

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

// A render that waits until the test lets it finish: a slow /metrics.
class SlowRender {
 public:
  std::string operator()() {
    gate_.Pass();
    return "kvfs_test_samples 1\n";
  }
  void Close() { gate_.Close(); }
  void Open() { gate_.Open(); }
  bool waiting() const { return gate_.waiting(); }

 private:
  Gate gate_;
};

class MetricsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 5 && port_ == 0; ++i) {
      const int port = FreePort();
      if (server_
              .Start(
                  "127.0.0.1:" + std::to_string(port), [this] { return (*render_)(); },
                  health_.get())
              .ok()) {
        port_ = port;
      }
    }
    ASSERT_NE(port_, 0);
  }
  // Everything held is let go before the server and the check are stopped.
  void TearDown() override {
    store_->Open();
    render_->Open();
    server_.Stop();
  }
  template <typename F>
  static void WaitFor(F f) {
    const auto deadline = Clock::now() + std::chrono::seconds(3);
    while (!f() && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(5));
  }

  std::shared_ptr<GatedStore> store_ = std::make_shared<GatedStore>();
  std::shared_ptr<SlowRender> render_ = std::make_shared<SlowRender>();
  std::unique_ptr<HealthCheck> health_ = std::make_unique<HealthCheck>(store_);
  MetricsServer server_;
  int port_ = 0;
};

constexpr milliseconds kAtOnce{1000};  // generous for a loaded machine; measured a few ms

// The store stops answering with a /readyz pending (the RGW under SIGSTOP): the probes
// and the scrape still answer at once, /readyz too (from what is known).
TEST_F(MetricsServerTest, ProbesAnswerWhileTheStoreHangs) {
  store_->Close();
  health_->SetMounted(true);
  auto readyz = std::async(std::launch::async, [this] { return Get(port_, "/readyz", kAtOnce); });
  std::this_thread::sleep_for(milliseconds(200));  // the /readyz is pending, or answered
  auto healthz = Get(port_, "/healthz", kAtOnce);
  ASSERT_TRUE(healthz.has_value()) << "/healthz did not answer while the store hangs";
  EXPECT_EQ(healthz->code, 200);
  EXPECT_EQ(healthz->body, "alive\n");
  auto metrics = Get(port_, "/metrics", kAtOnce);
  ASSERT_TRUE(metrics.has_value()) << "/metrics did not answer while the store hangs";
  EXPECT_EQ(metrics->code, 200);
  auto ready = readyz.get();
  ASSERT_TRUE(ready.has_value()) << "/readyz waited on the store";
  EXPECT_EQ(ready->code, 503);
  EXPECT_NE(ready->body.find("not ready"), std::string::npos) << ready->body;
  store_->Open();
  std::optional<Reply> r;
  WaitFor([&] { return (r = Get(port_, "/readyz", kAtOnce)) && r->code == 200; });
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->code, 200);
  EXPECT_EQ(r->body, "ready\n");
}

// A /metrics render that takes long holds up its own connection only.
TEST_F(MetricsServerTest, ProbesAnswerWhileARenderIsSlow) {
  health_->SetMounted(true);
  render_->Close();
  auto scrape = std::async(std::launch::async,
                           [this] { return Get(port_, "/metrics", std::chrono::seconds(10)); });
  WaitFor([&] { return render_->waiting(); });
  ASSERT_TRUE(render_->waiting());
  auto healthz = Get(port_, "/healthz", kAtOnce);
  ASSERT_TRUE(healthz.has_value()) << "/healthz did not answer behind a slow render";
  EXPECT_EQ(healthz->code, 200);
  std::optional<Reply> ready;
  WaitFor([&] { return (ready = Get(port_, "/readyz", kAtOnce)) && ready->code == 200; });
  ASSERT_TRUE(ready.has_value()) << "/readyz did not answer behind a slow render";
  EXPECT_EQ(ready->code, 200);
  render_->Open();
  auto scraped = scrape.get();
  ASSERT_TRUE(scraped.has_value());
  EXPECT_EQ(scraped->code, 200);
  EXPECT_EQ(scraped->body, "kvfs_test_samples 1\n");
}

// The daemon raises its descriptor limit: the server must serve sockets numbered past
// FD_SETSIZE (1024), i.e. never use select().
TEST(MetricsServerFds, SocketsPastFdSetsize) {
  rlimit lim{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
  const rlimit saved = lim;
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < 1400) GTEST_SKIP() << "hard limit too low";
  lim.rlim_cur = 1400;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
  std::vector<int> fillers;  // every descriptor below 1100 taken
  while (fillers.empty() || fillers.back() < 1100) {
    const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd < 0) break;
    fillers.push_back(fd);
  }
  auto store = std::make_shared<GatedStore>();
  HealthCheck health(store);
  MetricsServer server;
  int port = 0;
  for (int i = 0; i < 5 && port == 0; ++i) {
    const int p = FreePort();
    if (server
            .Start(
                "127.0.0.1:" + std::to_string(p), [] { return std::string("x 1\n"); }, &health)
            .ok()) {
      port = p;
    }
  }
  std::optional<Reply> r;
  if (port != 0) r = Get(port, "/healthz", kAtOnce);
  server.Stop();
  for (int fd : fillers) close(fd);
  setrlimit(RLIMIT_NOFILE, &saved);
  ASSERT_NE(port, 0);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->code, 200);
}

}  // namespace
}  // namespace kvfs
