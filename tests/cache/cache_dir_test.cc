// The cache directory against another local user (kvfs often runs as root): planted symlinks are
// never followed, directories another user controls are refused with a message naming the path
// and the fix, and nothing kvfs did not create is deleted.
#include "cache/cache_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cache/entry_format.h"
#include "tests/cache/test_util.h"

namespace kvfs {
namespace {

using testing::TempDir;
using testing::WriteFile;

constexpr uid_t kNobody = 65534;  // another user; needs no passwd entry to own a file

std::string ReadFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) return "<missing>";
  struct stat st;
  fstat(fd, &st);
  std::string s = testing::ReadAll(fd, static_cast<uint64_t>(st.st_size));
  close(fd);
  return s;
}

bool IsSymlink(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// Expects Open to fail with `code` and a message holding each of `parts`.
void ExpectRefused(const std::string& dir, StatusCode code, std::vector<std::string> parts) {
  auto cd = CacheDir::Open(dir);
  ASSERT_FALSE(cd.ok()) << dir;
  EXPECT_EQ(cd.status().code(), code) << cd.status().ToString();
  for (const std::string& p : parts) {
    EXPECT_NE(cd.status().message().find(p), std::string::npos)
        << "'" << p << "' not in: " << cd.status().message();
  }
}

class CacheDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path() + "/cache";
    victim_ = tmp_.path() + "/victim";
    WriteFile(victim_, "precious");
  }
  void ExpectVictimUntouched() {
    EXPECT_EQ(ReadFile(victim_), "precious");
    struct stat st;
    ASSERT_EQ(stat(victim_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
  }
  TempDir tmp_;
  std::string dir_;
  std::string victim_;
};

TEST_F(CacheDirTest, PlantedLockSymlinkIsNotFollowed) {
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(symlink(victim_.c_str(), (dir_ + "/lock").c_str()), 0);
  ExpectRefused(dir_, StatusCode::kInvalidArgument, {dir_ + "/lock", "symbolic link", "remove it"});
  ExpectVictimUntouched();
  EXPECT_TRUE(IsSymlink(dir_ + "/lock"));  // not removed either: kvfs did not make it
}

TEST_F(CacheDirTest, DanglingLockSymlinkCreatesNothing) {
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  const std::string target = tmp_.path() + "/created-through-link";
  ASSERT_EQ(symlink(target.c_str(), (dir_ + "/lock").c_str()), 0);
  ExpectRefused(dir_, StatusCode::kInvalidArgument, {"symbolic link"});
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST_F(CacheDirTest, HardLinkedLockIsRefused) {
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(link(victim_.c_str(), (dir_ + "/lock").c_str()), 0);
  ExpectRefused(dir_, StatusCode::kInvalidArgument, {dir_ + "/lock", "hard links"});
  ExpectVictimUntouched();
}

TEST_F(CacheDirTest, CacheDirThatIsASymlinkIsRefused) {
  const std::string target = tmp_.path() + "/elsewhere";
  ASSERT_EQ(mkdir(target.c_str(), 0755), 0);
  ASSERT_EQ(symlink(target.c_str(), dir_.c_str()), 0);
  ExpectRefused(dir_, StatusCode::kInvalidArgument, {dir_, "symbolic link"});
  EXPECT_TRUE(std::filesystem::is_empty(target));
  struct stat st;
  ASSERT_EQ(stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);  // not chmod'ed through the link
}

TEST_F(CacheDirTest, SymlinkedDataDirIsRefused) {
  const std::string target = tmp_.path() + "/elsewhere";
  ASSERT_EQ(mkdir(target.c_str(), 0755), 0);
  WriteFile(target + "/not-an-entry", "x");
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(symlink(target.c_str(), (dir_ + "/data").c_str()), 0);
  ExpectRefused(dir_, StatusCode::kInvalidArgument, {dir_ + "/data", "symbolic link"});
  EXPECT_TRUE(std::filesystem::exists(target + "/not-an-entry"));
}

TEST_F(CacheDirTest, DirectoryOfAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(chown(dir_.c_str(), kNobody, kNobody), 0);
  ExpectRefused(dir_, StatusCode::kPermissionDenied,
                {dir_, "belongs to uid 65534", "not to uid 0", "remove it"});
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/lock"));
}

TEST_F(CacheDirTest, DataDirOfAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  ASSERT_EQ(mkdir((dir_ + "/data").c_str(), 0700), 0);
  ASSERT_EQ(chown((dir_ + "/data").c_str(), kNobody, kNobody), 0);
  ExpectRefused(dir_, StatusCode::kPermissionDenied, {dir_ + "/data", "belongs to uid 65534"});
}

TEST_F(CacheDirTest, GroupOrOtherWritableDirectoryIsRefused) {
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  for (mode_t mode : {0770, 0707, 0777}) {
    ASSERT_EQ(chmod(dir_.c_str(), mode), 0);
    ExpectRefused(dir_, StatusCode::kPermissionDenied,
                  {dir_, "writable by group or others", "chmod 0700"});
    struct stat st;
    ASSERT_EQ(stat(dir_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, mode);  // refused, not silently fixed
  }
}

TEST_F(CacheDirTest, ReadableDirectoryIsMadePrivate) {
  ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
  auto cd = CacheDir::Open(dir_);
  ASSERT_TRUE(cd.ok()) << cd.status().ToString();
  for (const std::string& d : {dir_, dir_ + "/data", dir_ + "/spool"}) {
    struct stat st;
    ASSERT_EQ(stat(d.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0700u) << d;
  }
}

TEST_F(CacheDirTest, ParentWritableByOthersIsRefusedUnlessSticky) {
  const std::string parent = tmp_.path() + "/shared";
  ASSERT_EQ(mkdir(parent.c_str(), 0777), 0);
  ASSERT_EQ(chmod(parent.c_str(), 0777), 0);  // past the umask
  const std::string dir = parent + "/cache";
  ExpectRefused(dir, StatusCode::kPermissionDenied,
                {dir, parent + " (a directory above it)", "sticky", "chmod go-w"});
  ASSERT_EQ(chmod(parent.c_str(), 01777), 0);  // like /tmp and /dev/shm
  auto cd = CacheDir::Open(dir);
  EXPECT_TRUE(cd.ok()) << cd.status().ToString();
}

TEST_F(CacheDirTest, ParentOfAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to chown";
  const std::string parent = tmp_.path() + "/theirs";
  ASSERT_EQ(mkdir(parent.c_str(), 0755), 0);
  ASSERT_EQ(chown(parent.c_str(), kNobody, kNobody), 0);
  ExpectRefused(parent + "/cache", StatusCode::kPermissionDenied,
                {parent + " (a directory above it)", "belongs to uid 65534"});
}

TEST_F(CacheDirTest, SymlinkAboveIsResolvedOnce) {
  const std::string real = tmp_.path() + "/real";
  ASSERT_EQ(mkdir(real.c_str(), 0755), 0);
  ASSERT_EQ(symlink(real.c_str(), (tmp_.path() + "/link").c_str()), 0);
  auto cd = CacheDir::Open(tmp_.path() + "/link/cache");
  ASSERT_TRUE(cd.ok()) << cd.status().ToString();
  // Later path-based access goes through the resolved path, not the link someone could swap.
  const std::string canonical = std::filesystem::canonical(real).string() + "/cache";
  EXPECT_EQ((*cd)->dir(), canonical);
  EXPECT_TRUE(std::filesystem::is_directory(real + "/cache/data"));
}

TEST_F(CacheDirTest, UnknownFilesInDataAreKept) {
  { ASSERT_TRUE(CacheDir::Open(dir_).ok()); }
  const std::string data = dir_ + "/data";
  WriteFile(data + "/notes.txt", "mine");
  ASSERT_EQ(mkdir((data + "/subdir").c_str(), 0700), 0);
  WriteFile(data + "/subdir/inner", "mine too");
  // Named like kvfs's own files, but a symlink and a directory: kvfs did not create them.
  const std::string link_name = data + "/" + EntryFileName(1, 1);
  ASSERT_EQ(symlink(victim_.c_str(), link_name.c_str()), 0);
  const std::string fill_dir = data + "/" + FillFileName(2, 2);
  ASSERT_EQ(mkdir(fill_dir.c_str(), 0700), 0);
  // kvfs's own leftovers: a partial fill and an entry with no valid trailer.
  WriteFile(data + "/" + FillFileName(3, 3), "partial");
  WriteFile(data + "/" + EntryFileName(4, 4), "truncated");

  auto cd = CacheDir::Open(dir_);
  ASSERT_TRUE(cd.ok()) << cd.status().ToString();
  ScanResult scan = (*cd)->Scan();
  EXPECT_EQ(scan.entries.size(), 0u);
  EXPECT_EQ(scan.dropped, 2u);
  EXPECT_EQ(scan.foreign, 4u);
  EXPECT_EQ(ReadFile(data + "/notes.txt"), "mine");
  EXPECT_EQ(ReadFile(data + "/subdir/inner"), "mine too");
  EXPECT_TRUE(IsSymlink(link_name));
  EXPECT_TRUE(std::filesystem::is_directory(fill_dir));
  EXPECT_FALSE(std::filesystem::exists(data + "/" + FillFileName(3, 3)));
  EXPECT_FALSE(std::filesystem::exists(data + "/" + EntryFileName(4, 4)));
  ExpectVictimUntouched();
}

TEST_F(CacheDirTest, OnlySpoolFilesAreRemovedFromTheSpool) {
  { ASSERT_TRUE(CacheDir::Open(dir_).ok()); }
  const std::string spool = dir_ + "/spool";
  WriteFile(spool + "/spool-123-4", "unfinished write");
  WriteFile(spool + "/notes.txt", "mine");
  ASSERT_EQ(symlink(victim_.c_str(), (spool + "/spool-5-6").c_str()), 0);
  ASSERT_EQ(mkdir((spool + "/spool-7-8").c_str(), 0700), 0);
  ASSERT_TRUE(CacheDir::Open(dir_).ok());
  EXPECT_FALSE(std::filesystem::exists(spool + "/spool-123-4"));
  EXPECT_EQ(ReadFile(spool + "/notes.txt"), "mine");
  EXPECT_TRUE(IsSymlink(spool + "/spool-5-6"));
  EXPECT_TRUE(std::filesystem::is_directory(spool + "/spool-7-8"));
  ExpectVictimUntouched();
}

TEST_F(CacheDirTest, PrepareSpoolDirChecksLikeTheCacheDir) {
  const std::string spool = tmp_.path() + "/spool";
  ASSERT_TRUE(PrepareSpoolDir(spool, "spool_dir").ok());
  WriteFile(spool + "/spool-1-2", "x");
  WriteFile(spool + "/keep", "x");
  ASSERT_TRUE(PrepareSpoolDir(spool, "spool_dir").ok());
  EXPECT_FALSE(std::filesystem::exists(spool + "/spool-1-2"));
  EXPECT_TRUE(std::filesystem::exists(spool + "/keep"));

  const std::string linked = tmp_.path() + "/spool-link";
  ASSERT_EQ(symlink(spool.c_str(), linked.c_str()), 0);
  Status st = PrepareSpoolDir(linked, "spool_dir");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("spool_dir"), std::string::npos) << st.message();
  ASSERT_EQ(chmod(spool.c_str(), 0777), 0);
  EXPECT_EQ(PrepareSpoolDir(spool, "spool_dir").code(), StatusCode::kPermissionDenied);
}

// A sealed spool file is a chunk a crashed run acknowledged (write-back): it stays, with its seal,
// for the filesystem to upload; what has no seal, or seals nothing, goes.
TEST_F(CacheDirTest, PrepareSpoolDirKeepsSealedSpoolFilesOnly) {
  const std::string spool = tmp_.path() + "/spool";
  ASSERT_TRUE(PrepareSpoolDir(spool, "spool_dir").ok());
  WriteFile(spool + "/spool-1-1", "sealed");
  WriteFile(spool + "/spool-1-1.seal", "its seal");
  WriteFile(spool + "/spool-1-2", "unsealed");
  WriteFile(spool + "/spool-1-3.seal", "a seal whose spool is gone");
  WriteFile(spool + "/spool-1-4", "sealing when the daemon died");
  WriteFile(spool + "/spool-1-4.seal.tmp", "half a seal");
  WriteFile(spool + "/other.seal", "not kvfs's");
  ASSERT_TRUE(PrepareSpoolDir(spool, "spool_dir").ok());
  EXPECT_TRUE(std::filesystem::exists(spool + "/spool-1-1"));
  EXPECT_TRUE(std::filesystem::exists(spool + "/spool-1-1.seal"));
  for (const char* gone : {"spool-1-2", "spool-1-3.seal", "spool-1-4", "spool-1-4.seal.tmp"}) {
    EXPECT_FALSE(std::filesystem::exists(spool + "/" + gone)) << gone;
  }
  EXPECT_TRUE(std::filesystem::exists(spool + "/other.seal"));
}

TEST(SpoolFileNameTest, MatchesOnlyTheSpoolPattern) {
  EXPECT_TRUE(IsSpoolFileName("spool-1-0"));
  EXPECT_TRUE(IsSpoolFileName("spool-4242-17"));
  for (const char* n : {"spool-", "spool-1", "spool-1-", "spool--1", "spool-a-1", "spool-1-2-3",
                        "spool-1-2.tmp", "xspool-1-2", "leftover", ""}) {
    EXPECT_FALSE(IsSpoolFileName(n)) << n;
  }
}

}  // namespace
}  // namespace kvfs
