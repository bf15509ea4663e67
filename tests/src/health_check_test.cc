#include "src/health_check.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "tests/src/gated_store.h"

namespace kvfs {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// "Answers at once": Ready() itself, timed on its own thread (not the thread's start-up).
constexpr milliseconds kAtOnce{100};

class HealthCheckTest : public ::testing::Test {
 protected:
  void Make(milliseconds interval, milliseconds stall_bound) {
    health_ = std::make_unique<HealthCheck>(store_, interval, stall_bound);
  }
  // The gate opens before the check (and its thread) go away, whatever the test did.
  void TearDown() override {
    store_->Open();
    health_.reset();
  }

  struct Timed {
    Status status;
    milliseconds took{0};
  };
  // Ready() on another thread, waited for at most 2 s: a Ready() that blocks on the store fails
  // the test (the gate is opened to let it finish) instead of hanging it.
  Timed TimedReady() {
    auto f = std::async(std::launch::async, [this] {
      const auto t0 = Clock::now();
      Status st = health_->Ready();
      return Timed{std::move(st), std::chrono::duration_cast<milliseconds>(Clock::now() - t0)};
    });
    if (f.wait_for(std::chrono::seconds(2)) != std::future_status::ready) {
      ADD_FAILURE() << "Ready() waited on the store";
      store_->Open();
    }
    Timed t = f.get();
    EXPECT_LT(t.took, kAtOnce) << t.status.ToString();
    return t;
  }
  // Polls Ready() until `pred` holds (at most 3 s); the last answer.
  template <typename Pred>
  Status ReadyUntil(Pred pred) {
    const auto deadline = Clock::now() + std::chrono::seconds(3);
    Status st = TimedReady().status;
    while (!pred(st) && Clock::now() < deadline) {
      std::this_thread::sleep_for(milliseconds(10));
      st = TimedReady().status;
    }
    return st;
  }
  void WaitHeld() {
    const auto deadline = Clock::now() + std::chrono::seconds(3);
    while (!store_->held() && Clock::now() < deadline) std::this_thread::sleep_for(milliseconds(5));
  }
  static bool Says(const Status& st, const std::string& what) {
    return !st.ok() && st.message().find(what) != std::string::npos;
  }

  std::shared_ptr<GatedStore> store_ = std::make_shared<GatedStore>();
  std::unique_ptr<HealthCheck> health_;
};

TEST_F(HealthCheckTest, NotMountedAsksNothing) {
  Make(milliseconds(10'000), milliseconds(300));
  EXPECT_TRUE(Says(TimedReady().status, "not mounted"));
  health_->SetMounted(true);
  EXPECT_TRUE(ReadyUntil([](const Status& st) { return st.ok(); }).ok());
  health_->SetMounted(false);
  EXPECT_TRUE(Says(TimedReady().status, "not mounted"));
  EXPECT_EQ(store_->calls(), 1);
}

// The first check never answers: "not yet known" at once, then the stall once the bound passed -
// and one request, however often the probe asks.
TEST_F(HealthCheckTest, FirstCheckStuck) {
  Make(milliseconds(10'000), milliseconds(300));
  store_->Close();
  health_->SetMounted(true);
  Timed first = TimedReady();
  EXPECT_TRUE(Says(first.status, "not answered yet")) << first.status.ToString();
  WaitHeld();
  ASSERT_TRUE(store_->held());
  std::this_thread::sleep_for(milliseconds(350));
  Timed stalled = TimedReady();
  EXPECT_EQ(stalled.status.code(), StatusCode::kUnavailable);
  EXPECT_TRUE(Says(stalled.status, "the store has not answered for")) << stalled.status.ToString();
  for (int i = 0; i < 20; ++i) TimedReady();
  EXPECT_EQ(store_->calls(), 1);
  store_->Open();
  EXPECT_TRUE(ReadyUntil([](const Status& st) { return st.ok(); }).ok());
}

// A check due after a good answer hangs: the last answer until the bound, then the stall; the
// answer comes back when the store does.
TEST_F(HealthCheckTest, LaterCheckStuck) {
  Make(milliseconds(100), milliseconds(400));
  health_->SetMounted(true);
  ASSERT_TRUE(ReadyUntil([](const Status& st) { return st.ok(); }).ok());
  store_->Close();
  std::this_thread::sleep_for(milliseconds(150));  // the answer is due again
  const auto asked = Clock::now();
  EXPECT_TRUE(TimedReady().status.ok());  // starts the check; the last answer meanwhile
  WaitHeld();
  ASSERT_TRUE(store_->held());
  if (Clock::now() - asked < milliseconds(300)) {
    EXPECT_TRUE(TimedReady().status.ok());  // still the last answer, the bound not yet passed
  }
  Status st = ReadyUntil([](const Status& s) { return !s.ok(); });
  EXPECT_GE(Clock::now() - asked, milliseconds(400));
  EXPECT_TRUE(Says(st, "the store has not answered for")) << st.ToString();
  EXPECT_EQ(store_->calls(), 2);
  store_->Open();
  EXPECT_TRUE(ReadyUntil([](const Status& s) { return s.ok(); }).ok());
}

TEST_F(HealthCheckTest, ErrorsAnsweredAndAskedOncePerInterval) {
  Make(milliseconds(10'000), milliseconds(300));
  store_->SetAnswer(Status::PermissionDenied("access denied to bucket b"));
  health_->SetMounted(true);
  Status st = ReadyUntil([](const Status& s) { return Says(s, "access denied"); });
  EXPECT_EQ(st.code(), StatusCode::kPermissionDenied) << st.ToString();
  for (int i = 0; i < 50; ++i) EXPECT_EQ(TimedReady().status.code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(store_->calls(), 1);
}

}  // namespace
}  // namespace kvfs
