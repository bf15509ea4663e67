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

// Unlinked while this node's upload of it was on its way: any object of the name is hidden until
// the upload ends - with the object it made (Hide), or none (ForgetPending).
TEST(UnlinkedNamesTest, APendingNameHidesAnyObjectUntilTheUploadEnds) {
  UnlinkedNames names(10);
  names.HidePending("a");
  EXPECT_TRUE(names.Hides(Obj("a", "e1")));
  EXPECT_TRUE(names.Hides(Obj("a", "e2")));
  names.Hide(Obj("a", "made"));  // the upload made this one
  names.ForgetPending("a");      // not pending any more: no effect
  EXPECT_TRUE(names.Hides(Obj("a", "made")));
  EXPECT_FALSE(names.Hides(Obj("b", "x")));
  names.HidePending("b");
  names.ForgetGone("b");  // a lookup that found nothing yet: the upload may still make it
  EXPECT_TRUE(names.Hides(Obj("b", "x")));
  names.ForgetPending("b");  // the upload made nothing
  EXPECT_FALSE(names.Hides(Obj("b", "x")));
  names.Hide(Obj("c", "old"));
  names.HidePending("c");  // hidden already, and now a new version's upload is on its way
  EXPECT_TRUE(names.Hides(Obj("c", "new")));
  names.ForgetPending("c");  // that upload made nothing: the old object stays hidden
  EXPECT_TRUE(names.Hides(Obj("c", "old")));
  EXPECT_FALSE(names.Hides(Obj("c", "new")));
}

// LMCache's DAX tests: a chunk stored, rewritten through a mapping (a new version, its upload on
// its way), then unlinked. The unlink finds the older object; the new one must not show while
// its upload ends (a directory listed then would not be empty: rmdir EEXIST).
TEST(UnlinkedNamesTest, AnUnlinkThatFindsTheOlderObjectKeepsTheUploadPending) {
  UnlinkedNames names(10);
  names.HidePending("a");
  names.Hide(Obj("a", "v1"));                // what the name held when it was unlinked
  EXPECT_TRUE(names.Hides(Obj("a", "v2")));  // the upload's object, before its end is recorded
  EXPECT_TRUE(names.Hides(Obj("a", "v1")));
  names.Hide(Obj("a", "v2"));  // the upload ended: it made v2
  names.ForgetPending("a");
  EXPECT_TRUE(names.Hides(Obj("a", "v2")));
  EXPECT_FALSE(names.Hides(Obj("a", "v3")));  // another node's, later: shown
  names.HidePending("b");
  names.Hide(Obj("b", "v1"));
  names.ForgetPending("b");  // the upload made nothing: the older object stays hidden
  EXPECT_TRUE(names.Hides(Obj("b", "v1")));
  EXPECT_EQ(names.size(), 1u);
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
