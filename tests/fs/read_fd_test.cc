// Filesystem::ReadFd: file-backed (spliceable) reads of uploaded objects through the cached
// reader, and kNotSupported wherever the adapter must copy instead.
#include <fcntl.h>
#include <unistd.h>

#include <string>

#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

class ReadFdTest : public CachedFsTestBase {
 protected:
  OpenResult Open(const std::string& name, int flags) {
    auto e = fs_->Lookup(1, name);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    auto o = fs_->Open(e->attr.ino, flags);
    EXPECT_TRUE(o.ok()) << o.status().ToString();
    return o.ok() ? *o : OpenResult{};
  }
  uint64_t OpenRead(const std::string& name) {
    OpenResult o = Open(name, O_RDONLY);
    EXPECT_TRUE(o.keep_cache) << "uploaded objects do not change: keep the page cache";
    return o.fh;
  }

  static std::string PreadAll(const FdRange& r) {
    std::string buf(r.length, '\0');
    ssize_t n = pread(r.fd, buf.data(), buf.size(), static_cast<off_t>(r.offset));
    EXPECT_EQ(n, static_cast<ssize_t>(r.length));
    return buf;
  }
};

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  return s;
}

TEST_F(ReadFdTest, CachedObjectGivesFileRangesClippedToTheObject) {
  MountCached();
  const std::string data = Pattern(300 << 10);
  // Put into the store by another node: the first open is a miss (a download), the second a
  // hit; both are file-backed.
  mem_->PutObject("p/c.bin", data);
  for (int round = 0; round < 2; ++round) {
    uint64_t fh = OpenRead("c.bin");
    auto r = fs_->ReadFd(fh, 1000, 70000);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_GE(r->fd, 0);
    EXPECT_EQ(r->length, 70000u);
    EXPECT_EQ(PreadAll(*r), data.substr(1000, 70000));
    auto tail = fs_->ReadFd(fh, data.size() - 10, 4096);
    ASSERT_TRUE(tail.ok());
    EXPECT_EQ(tail->length, 10u);
    EXPECT_EQ(PreadAll(*tail), data.substr(data.size() - 10));
    auto past = fs_->ReadFd(fh, data.size() + 5, 4096);
    ASSERT_TRUE(past.ok());
    EXPECT_EQ(past->length, 0u);
    EXPECT_TRUE(fs_->Release(fh).ok());
  }
}

TEST_F(ReadFdTest, KeepAliveHoldsTheFdPastRelease) {
  MountCached();
  const std::string data = Pattern(128 << 10);
  ASSERT_TRUE(WriteFile("k.bin", data).ok());
  uint64_t fh = OpenRead("k.bin");
  std::shared_ptr<const void> keep;
  auto r = fs_->ReadFd(fh, 0, data.size(), &keep);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_NE(keep, nullptr);
  EXPECT_TRUE(fs_->Release(fh).ok());
  // A release racing a reply must not close the fd under it.
  EXPECT_NE(fcntl(r->fd, F_GETFD), -1);
  EXPECT_EQ(PreadAll(*r), data);
  keep.reset();
}

TEST_F(ReadFdTest, ReplacedObjectIsStaleOnceThenTheNewObjectIsRead) {
  // Without prefetch: the lookup would download the old version at once, and serve it as the
  // version it looked up; this test is about the GET that meets the replacement.
  reader_options_.prefetch.enabled = false;
  MountCached();
  const std::string old_bytes = Pattern(100 << 10), new_bytes(100 << 10, 'n');
  mem_->PutObject("p/s.bin", old_bytes);      // another node's object
  ASSERT_TRUE(fs_->Lookup(1, "s.bin").ok());  // its ETag is now in the metadata cache
  mem_->PutObject("p/s.bin", new_bytes);      // replaced in the store: the cached ETag is stale
  OpenResult o = Open("s.bin", O_RDONLY);
  EXPECT_EQ(fs_->ReadFd(o.fh, 0, 4096).status().code(), StatusCode::kPreconditionFailed);
  ASSERT_TRUE(fs_->Release(o.fh).ok());
  // The 412 dropped the stale metadata: the next open sees the object as it is now.
  o = Open("s.bin", O_RDONLY);
  auto r = fs_->ReadFd(o.fh, 0, new_bytes.size());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(PreadAll(*r) == new_bytes);
  ASSERT_TRUE(fs_->Release(o.fh).ok());
}

TEST_F(ReadFdTest, NotSupportedWhereTheAdapterMustCopy) {
  MountCached();
  const std::string data = Pattern(64 << 10);
  // A file open for writing: its bytes are local and may still change.
  auto cr = fs_->CreateFile(1, "w.bin", O_CREAT | O_WRONLY);
  ASSERT_TRUE(cr.ok());
  ASSERT_TRUE(fs_->Write(cr->second.fh, 0, data.data(), data.size()).ok());
  EXPECT_EQ(fs_->ReadFd(cr->second.fh, 0, 100).status().code(), StatusCode::kNotSupported);
  // A reader opening it while it is being written (no object yet) reads the local file.
  auto e = fs_->Lookup(1, "w.bin");
  ASSERT_TRUE(e.ok());
  auto o = fs_->Open(e->attr.ino, O_RDONLY);
  ASSERT_TRUE(o.ok());
  EXPECT_FALSE(o->keep_cache);
  EXPECT_EQ(fs_->ReadFd(o->fh, 0, 100).status().code(), StatusCode::kNotSupported);
  EXPECT_TRUE(fs_->Release(o->fh).ok());
  EXPECT_TRUE(fs_->Release(cr->second.fh).ok());
  // A temp file is never uploaded.
  auto t = fs_->CreateFile(1, "x.tmp", O_CREAT | O_RDWR);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(fs_->ReadFd(t->second.fh, 0, 100).status().code(), StatusCode::kNotSupported);
  EXPECT_TRUE(fs_->Release(t->second.fh).ok());
  EXPECT_EQ(fs_->ReadFd(987654, 0, 100).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(ReadFdTest, BufferedOpensOfLocalCopiesBypassThePageCache) {
  MountCached(1 << 20);
  const std::string data = Pattern(300 << 10);
  mem_->PutObject("p/c.bin", data);
  // Miss (a download into the cache), then hit: the bytes are in a cache file, so the kernel's
  // page cache would be a second copy.
  for (int round = 0; round < 2; ++round) {
    OpenResult o = Open("c.bin", O_RDONLY);
    EXPECT_TRUE(o.direct_io) << "round " << round;
    std::string buf(data.size(), '\0');
    auto n = fs_->Read(o.fh, 0, buf.size(), buf.data());
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(buf, data);
    EXPECT_TRUE(fs_->Release(o.fh).ok());
  }
  // O_DIRECT opens bypass it anyway; FOPEN_DIRECT_IO would only serialize their requests.
  OpenResult d = Open("c.bin", O_RDONLY | O_DIRECT);
  EXPECT_FALSE(d.direct_io);
  EXPECT_TRUE(fs_->Release(d.fh).ok());
  // Too large for the cache: streamed with ranged GETs, and the kernel's read-ahead keeps
  // several of them in flight only through the page cache.
  mem_->PutObject("p/big.bin", Pattern(2 << 20));
  OpenResult big = Open("big.bin", O_RDONLY);
  EXPECT_FALSE(big.direct_io);
  EXPECT_TRUE(fs_->Release(big.fh).ok());
  // A file being written is read from its spool, which changes; its write-only open puts the
  // writer's bytes straight into the requests (Filesystem::WritesBypassPageCache).
  auto cr = fs_->CreateFile(1, "w.bin", O_CREAT | O_WRONLY);
  ASSERT_TRUE(cr.ok());
  EXPECT_TRUE(cr->second.direct_io);
  auto rw = fs_->CreateFile(1, "rw.bin", O_CREAT | O_RDWR);
  ASSERT_TRUE(rw.ok());
  EXPECT_FALSE(rw->second.direct_io) << "an O_RDWR open may be mapped shared and writable";
  EXPECT_TRUE(fs_->Release(rw->second.fh).ok());
  ASSERT_TRUE(fs_->Write(cr->second.fh, 0, "w", 1).ok());
  OpenResult w = Open("w.bin", O_RDONLY);
  EXPECT_FALSE(w.direct_io);
  EXPECT_TRUE(fs_->Release(w.fh).ok());
  EXPECT_TRUE(fs_->Release(cr->second.fh).ok());
}

TEST_F(ReadFdTest, PageCacheOptionKeepsThePageCache) {
  options_.page_cache = true;
  MountCached();
  mem_->PutObject("p/c.bin", Pattern(100 << 10));
  for (int round = 0; round < 2; ++round) {
    OpenResult o = Open("c.bin", O_RDONLY);
    EXPECT_FALSE(o.direct_io);
    EXPECT_TRUE(o.keep_cache);
    EXPECT_TRUE(fs_->Release(o.fh).ok());
  }
}

TEST_F(ReadFdTest, DirectReaderHasNoFileBackedReads) {
  Mount();
  const std::string data = Pattern(64 << 10);
  ASSERT_TRUE(WriteFile("d.bin", data).ok());
  uint64_t fh = OpenRead("d.bin");
  EXPECT_EQ(fs_->ReadFd(fh, 0, 100).status().code(), StatusCode::kNotSupported);
  std::string buf(100, '\0');
  auto n = fs_->Read(fh, 0, buf.size(), buf.data());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(buf, data.substr(0, 100));
  EXPECT_TRUE(fs_->Release(fh).ok());
}

}  // namespace
}  // namespace kvfs
