// UnlinkedNames: which objects a node's local unlinks hide, and its bound.
#include "fs/unlinked_names.h"

#include <gtest/gtest.h>

namespace kvfs {
namespace {

ObjectInfo Obj(const std::string& key, const std::string& etag, uint64_t size = 3,
               int64_t mtime = 100) {
  ObjectInfo o;
  o.key = key;
  o.etag = etag;
  o.size = size;
  o.mtime_sec = mtime;
  return o;
}

TEST(UnlinkedNamesTest, HidesTheObjectUnlinkedUntilItChanges) {
  UnlinkedNames names(10);
  names.Hide(Obj("a", "e1"));
  EXPECT_TRUE(names.Hides(Obj("a", "e1")));
  EXPECT_TRUE(names.Hides(Obj("a", "e1")));
  EXPECT_FALSE(names.Hides(Obj("b", "e1")));
  EXPECT_FALSE(names.Hides(Obj("a", "e2")));  // another object: shown, and no longer hidden
  EXPECT_FALSE(names.Hides(Obj("a", "e1")));
  EXPECT_EQ(names.size(), 0u);
}

TEST(UnlinkedNamesTest, WithoutEtagsSizeAndTimeMustMatch) {
  UnlinkedNames names(10);
  names.Hide(Obj("a", ""));
  EXPECT_TRUE(names.Hides(Obj("a", "")));
  EXPECT_FALSE(names.Hides(Obj("a", "", 3, 101)));
}

TEST(UnlinkedNamesTest, ForgetShowsTheNameAgain) {
  UnlinkedNames names(10);
  names.Hide(Obj("a", "e1"));
  names.Forget("a");
  EXPECT_FALSE(names.Hides(Obj("a", "e1")));
}

TEST(UnlinkedNamesTest, TheOldestAreForgottenBeyondTheBound) {
  UnlinkedNames names(3);
  for (const char* k : {"a", "b", "c", "a", "d"}) names.Hide(Obj(k, "e"));
  EXPECT_EQ(names.size(), 3u);
  EXPECT_FALSE(names.Hides(Obj("b", "e")));  // the oldest: forgotten
  EXPECT_TRUE(names.Hides(Obj("c", "e")));
  EXPECT_TRUE(names.Hides(Obj("a", "e")));  // hidden again later: younger than c
  EXPECT_TRUE(names.Hides(Obj("d", "e")));
}

}  // namespace
}  // namespace kvfs
