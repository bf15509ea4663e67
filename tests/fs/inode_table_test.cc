#include "fs/inode_table.h"

#include <gtest/gtest.h>

namespace kvfs {
namespace {

using Path = std::vector<std::string>;

TEST(InodeTableTest, LinkGivesTheSameInodeAnotherName) {
  InodeTable t;
  const uint64_t a = t.Ref(InodeTable::kRootIno, "a", false);
  EXPECT_EQ(t.Names(a), 1u);
  ASSERT_TRUE(t.Link(a, InodeTable::kRootIno, "b"));
  EXPECT_EQ(t.Find(InodeTable::kRootIno, "b"), a);
  EXPECT_EQ(t.Ref(InodeTable::kRootIno, "b", false), a);  // a lookup of the new name
  EXPECT_EQ(t.Names(a), 2u);
  EXPECT_EQ(t.Path(a), Path{"a"});
  // Unlinking the first name leaves the inode with the other, which becomes its path.
  t.Detach(InodeTable::kRootIno, "a");
  EXPECT_EQ(t.Names(a), 1u);
  EXPECT_EQ(t.Path(a), Path{"b"});
  EXPECT_FALSE(t.Find(InodeTable::kRootIno, "a"));
  t.Detach(InodeTable::kRootIno, "b");
  EXPECT_EQ(t.Names(a), 0u);
  EXPECT_FALSE(t.Path(a));
  EXPECT_FALSE(t.Link(12345, InodeTable::kRootIno, "c"));  // unknown inode
}

TEST(InodeTableTest, RenameMovesTheNameItIsGiven) {
  InodeTable t;
  const uint64_t a = t.Ref(InodeTable::kRootIno, "a", false);
  ASSERT_TRUE(t.Link(a, InodeTable::kRootIno, "b"));
  t.Move(InodeTable::kRootIno, "b", InodeTable::kRootIno, "c");  // the second name
  EXPECT_EQ(t.Find(InodeTable::kRootIno, "c"), a);
  EXPECT_FALSE(t.Find(InodeTable::kRootIno, "b"));
  EXPECT_EQ(t.Path(a), Path{"a"});
  EXPECT_EQ(t.Names(a), 2u);
  // One name of an inode renamed over another of its names: one name is left.
  t.Move(InodeTable::kRootIno, "a", InodeTable::kRootIno, "c");
  EXPECT_EQ(t.Names(a), 1u);
  EXPECT_EQ(t.Path(a), Path{"c"});
  // Renamed over another inode's name: that inode is detached.
  const uint64_t d = t.Ref(InodeTable::kRootIno, "d", false);
  t.Move(InodeTable::kRootIno, "c", InodeTable::kRootIno, "d");
  EXPECT_EQ(t.Find(InodeTable::kRootIno, "d"), a);
  EXPECT_EQ(t.Names(d), 0u);
}

TEST(InodeTableTest, ForgetDropsEveryName) {
  InodeTable t;
  const uint64_t a = t.Ref(InodeTable::kRootIno, "a", false);
  ASSERT_TRUE(t.Link(a, InodeTable::kRootIno, "b"));  // one more kernel reference
  t.Forget(a, 2);
  EXPECT_FALSE(t.Find(InodeTable::kRootIno, "a"));
  EXPECT_FALSE(t.Find(InodeTable::kRootIno, "b"));
  EXPECT_NE(t.Ref(InodeTable::kRootIno, "b", false), a);  // numbers are never reused
}

}  // namespace
}  // namespace kvfs
