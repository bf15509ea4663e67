#include "base/executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "base/deadline.h"
#include "base/mutex.h"

namespace kvfs {
namespace {

TEST(ExecutorTest, RunsEveryTaskOnItsOwnThreads) {
  std::atomic<int> ran{0};
  std::atomic<bool> on_caller{false};
  const std::thread::id caller = std::this_thread::get_id();
  {
    Executor e(3);
    for (int i = 0; i < 100; i++) {
      ASSERT_TRUE(e.Schedule([&] {
        if (std::this_thread::get_id() == caller) on_caller = true;
        ran++;
      }));
    }
  }  // kRunQueued: the destructor runs what is left
  EXPECT_EQ(ran, 100);
  EXPECT_FALSE(on_caller);
}

// A gate the test opens: tasks queued behind a blocked one are still queued at Shutdown.
class Gate {
 public:
  void Wait() EXCLUDES(mu_) {
    MutexLock l(&mu_);
    entered_ = true;
    cv_.SignalAll();
    cv_.Wait(&mu_, [this]() REQUIRES(mu_) { return open_; });
  }
  void AwaitEntered() EXCLUDES(mu_) {
    MutexLock l(&mu_);
    cv_.Wait(&mu_, [this]() REQUIRES(mu_) { return entered_; });
  }
  void Open() EXCLUDES(mu_) {
    MutexLock l(&mu_);
    open_ = true;
    cv_.SignalAll();
  }

 private:
  Mutex mu_;
  CondVar cv_;
  bool entered_ GUARDED_BY(mu_) = false;
  bool open_ GUARDED_BY(mu_) = false;
};

TEST(ExecutorTest, DropQueuedRunsTheCurrentTaskOnlyAndRefusesNewOnes) {
  Gate gate;
  std::atomic<int> ran{0};
  Executor e(1, Executor::kDropQueued);
  e.Schedule([&] {
    gate.Wait();
    ran++;
  });
  for (int i = 0; i < 5; i++) e.Schedule([&] { ran++; });
  gate.AwaitEntered();
  EXPECT_EQ(e.queued(), 5u);
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate.Open();
  });
  e.Shutdown();
  opener.join();
  EXPECT_EQ(ran, 1);
  EXPECT_FALSE(e.Schedule([&] { ran++; }));
  e.Shutdown();  // idempotent
  EXPECT_EQ(ran, 1);
}

TEST(ExecutorTest, RunQueuedRunsWhatWaitsAndTasksMayScheduleMore) {
  std::atomic<int> ran{0};
  Executor e(2);
  e.Schedule([&] {
    ran++;
    e.Schedule([&] { ran++; });
  });
  // Shutdown may begin before the inner Schedule: then it is refused, never lost in silence.
  e.Shutdown();
  EXPECT_GE(ran, 1);
  EXPECT_LE(ran, 2);
}

TEST(KeepingDeadlineTest, RunsUnderTheCallersDeadlineOrLate) {
  Executor e(1);
  std::atomic<int64_t> seen{-1};
  std::atomic<bool> late{false};
  {
    const ScopedDeadline d(60'000, "test_timeout");
    e.Schedule(KeepingDeadline([&] { seen = ThreadDeadlineMs(); }, [&] { late = true; }));
  }
  std::atomic<bool> late2{false};
  std::atomic<bool> ran2{false};
  {
    const ScopedDeadline d(1, "test_timeout");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    e.Schedule(KeepingDeadline([&] { ran2 = true; }, [&] { late2 = true; }));
  }
  std::atomic<int64_t> none{-1};
  e.Schedule(KeepingDeadline([&] { none = ThreadDeadlineMs(); }, [] {}));
  e.Shutdown();
  EXPECT_GT(seen, MonotonicMs());
  EXPECT_FALSE(late);
  EXPECT_TRUE(late2);
  EXPECT_FALSE(ran2);
  EXPECT_EQ(none, 0);
}

}  // namespace
}  // namespace kvfs
