// ScanTracker: a thread's lookups in a directory it listed are a scan's while they keep coming;
// other threads, other directories and lookups after the window are not.
#include "fs/scan_tracker.h"

#include <gtest/gtest.h>

namespace kvfs {
namespace {

TEST(ScanTrackerTest, LookupsAfterAListingAreTheScansWhileTheyKeepComing) {
  auto now = std::chrono::steady_clock::time_point{};
  ScanTracker t([&] { return now; }, std::chrono::seconds(2), 8);
  EXPECT_FALSE(t.Scanning(7, 1)) << "a lookup without a listing is an engine's";
  t.Listed(7, 1);
  EXPECT_TRUE(t.Scanning(7, 1));
  EXPECT_FALSE(t.Scanning(8, 1)) << "another thread";
  EXPECT_FALSE(t.Scanning(7, 2)) << "another directory";
  for (int i = 0; i < 10; i++) {  // a long scan: each lookup extends it
    now += std::chrono::seconds(1);
    EXPECT_TRUE(t.Scanning(7, 1));
  }
  now += std::chrono::seconds(3);
  EXPECT_FALSE(t.Scanning(7, 1)) << "the scan ended";
  EXPECT_FALSE(t.Scanning(0, 1)) << "unknown thread";
}

TEST(ScanTrackerTest, RemembersAtMostMaxThreads) {
  auto now = std::chrono::steady_clock::time_point{};
  ScanTracker t([&] { return now; }, std::chrono::seconds(2), 2);
  t.Listed(1, 1);
  now += std::chrono::milliseconds(1);
  t.Listed(2, 1);
  now += std::chrono::milliseconds(1);
  t.Listed(3, 1);  // forgets thread 1, the oldest
  EXPECT_FALSE(t.Scanning(1, 1));
  EXPECT_TRUE(t.Scanning(2, 1));
  EXPECT_TRUE(t.Scanning(3, 1));
}

}  // namespace
}  // namespace kvfs
