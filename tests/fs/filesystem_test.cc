// Filesystem logic over the in-memory store: writes, reads, policies, caches, listings.
#include <linux/fs.h>

#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

class FilesystemTest : public FsTestBase {};

TEST_F(FilesystemTest, WholeChunkWriteCloseRead) {
  Mount();
  std::string data(10000, 'x');
  data[1234] = 'y';
  ASSERT_TRUE(WriteFile("c@1@0@abc@bfloat16.pt", data).ok());
  EXPECT_EQ(mem_->GetObject("p/c@1@0@abc@bfloat16.pt"), data);
  EXPECT_EQ(fs_->LocalFileCount(), 0u);
  auto back = ReadFile("c@1@0@abc@bfloat16.pt");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, data);
  auto attr = fs_->Lookup(1, "c@1@0@abc@bfloat16.pt");
  ASSERT_TRUE(attr.ok());
  EXPECT_EQ(attr->attr.size, data.size());
  EXPECT_EQ(attr->attr.mode, static_cast<uint32_t>(S_IFREG | 0644));
}

// A tier removal batch read after the chunk was stored again (here, or elsewhere and learnt) must
// not hide the new chunk: the name is asked again, not held missing (issue 47 item 8).
TEST_F(FilesystemTest, ATierRemovalAppliedAfterTheChunkWasStoredAgainDoesNotHideIt) {
  Mount();
  const std::string data(4096, 'r');
  ASSERT_TRUE(WriteFile("again.pt", data).ok());  // stored again after the collector's removal
  ASSERT_TRUE(fs_->Lookup(1, "again.pt").ok());
  fs_->ForgetRemoved("p/again.pt");  // the older batch arrives now
  auto found = fs_->Lookup(1, "again.pt");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(found->attr.size, data.size());
  auto back = ReadFile("again.pt");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, data);
  // A name this node did not know as a file is missing, as the batch says: no request for it.
  ASSERT_TRUE(fs_->Lookup(1, "gone.pt").status().code() == StatusCode::kNotFound);
  fs_->ForgetRemoved("p/gone.pt");
  const uint64_t heads = mem_->Calls(StoreOp::kHead);
  EXPECT_EQ(fs_->Lookup(1, "gone.pt").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(mem_->Calls(StoreOp::kHead), heads);
}

TEST_F(FilesystemTest, EscapedNamesRoundTripThroughKeys) {
  Mount();
  ASSERT_TRUE(WriteFile("a b%c", "123").ok());
  EXPECT_EQ(mem_->GetObject("p/a%20b%25c"), "123");
  EXPECT_EQ(*ReadFile("a b%c"), "123");
}

TEST_F(FilesystemTest, PartialChunkIsEinvalAndLeavesNothing) {
  options_.chunk_sizes = {8, 16};
  Mount();
  Status st = WriteFile("part", "12345");
  EXPECT_EQ(ToErrno(st), EINVAL) << st.ToString();
  EXPECT_NE(st.message().find("part"), std::string::npos);
  EXPECT_EQ(mem_->ObjectCount(), 0u);
  EXPECT_EQ(fs_->LocalFileCount(), 0u);
  EXPECT_EQ(fs_->Lookup(1, "part").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(WriteFile("whole", std::string(16, 'a')).ok());
  // An empty file is a file, whatever chunk_sizes says (touch, markers, NIXL's pool files).
  EXPECT_TRUE(WriteFile("empty", "").ok());
  EXPECT_EQ(mem_->GetObject("p/empty"), "");
}

TEST_F(FilesystemTest, WritePastLimitIsEfbig) {
  options_.max_chunk_bytes = 16;
  Mount();
  auto cr = fs_->CreateFile(1, "big", O_CREAT | O_WRONLY);
  ASSERT_TRUE(cr.ok());
  EXPECT_TRUE(fs_->Write(cr->second.fh, 0, "0123456789", 10).ok());
  auto w = fs_->Write(cr->second.fh, 10, "0123456789", 10);
  EXPECT_EQ(ToErrno(w.status()), EFBIG);
  EXPECT_TRUE(fs_->Flush(cr->second.fh).ok());  // the 10 bytes written are a whole file
  fs_->Release(cr->second.fh);
}

TEST_F(FilesystemTest, ExistingNameSameSizeIsSuccessWithoutOverwrite) {
  Mount();
  mem_->PutObject("p/k", "AAAA");
  EXPECT_TRUE(WriteFile("k", "BBBB").ok());
  EXPECT_EQ(mem_->GetObject("p/k"), "AAAA");
  Status st = WriteFile("k", "BBBBBB");
  EXPECT_EQ(ToErrno(st), EEXIST) << st.ToString();
  EXPECT_EQ(mem_->GetObject("p/k"), "AAAA");
  // The rejected write does not leave a visible local file behind.
  EXPECT_EQ(fs_->Lookup(1, "k")->attr.size, 4u);
}

TEST_F(FilesystemTest, ExistsPolicyEexist) {
  options_.exists_policy = ExistsPolicy::kEexist;
  Mount();
  mem_->PutObject("p/k", "AAAA");
  EXPECT_EQ(ToErrno(WriteFile("k", "BBBB")), EEXIST);
  EXPECT_EQ(mem_->GetObject("p/k"), "AAAA");
}

TEST_F(FilesystemTest, OpenExistingForWriteWithoutTruncWorks) {
  Mount();
  mem_->PutObject("p/k", std::string(4096, 'a'));
  auto e = fs_->Lookup(1, "k");
  ASSERT_TRUE(e.ok());
  // LMCache O_DIRECT path: os.open(O_CREAT|O_WRONLY|O_DIRECT), one write, close.
  auto o = fs_->Open(e->attr.ino, O_WRONLY | O_DIRECT);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  std::string data(4096, 'a');
  ASSERT_TRUE(fs_->Write(o->fh, 0, data.data(), data.size()).ok());
  EXPECT_TRUE(fs_->Flush(o->fh).ok());
  EXPECT_TRUE(fs_->Release(o->fh).ok());
  EXPECT_EQ(mem_->GetObject("p/k"), data);
  // Opened for writing and closed without writing: the object stays as it is.
  o = fs_->Open(e->attr.ino, O_WRONLY);
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(fs_->Flush(o->fh).ok());
  EXPECT_TRUE(fs_->Release(o->fh).ok());
  EXPECT_EQ(mem_->GetObject("p/k"), data);
  EXPECT_EQ(fs_->LocalFileCount(), 0u);
}

TEST_F(FilesystemTest, TempFileRenamedIsUploadedUnderFinalName) {
  Mount();
  ASSERT_TRUE(WriteFile("x.data.tmp", "payload").ok());
  EXPECT_EQ(mem_->ObjectCount(), 0u);  // never uploaded under the temp name
  EXPECT_EQ(*ReadFile("x.data.tmp"), "payload");
  ASSERT_TRUE(fs_->Lookup(1, "x.data.tmp").ok());
  ASSERT_TRUE(fs_->Rename(1, "x.data.tmp", 1, "x.data", 0).ok());
  EXPECT_EQ(mem_->GetObject("p/x.data"), "payload");
  EXPECT_EQ(mem_->ObjectCount(), 1u);
  EXPECT_EQ(fs_->LocalFileCount(), 0u);
  EXPECT_EQ(fs_->Lookup(1, "x.data.tmp").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*ReadFile("x.data"), "payload");
  // RENAME_NOREPLACE onto an existing name: EEXIST, the temp file stays.
  ASSERT_TRUE(WriteFile("y.tmp", "payload").ok());
  EXPECT_EQ(ToErrno(fs_->Rename(1, "y.tmp", 1, "x.data", RENAME_NOREPLACE)), EEXIST);
  EXPECT_TRUE(fs_->Lookup(1, "y.tmp").ok());
  EXPECT_TRUE(fs_->Unlink(1, "y.tmp").ok());
  EXPECT_EQ(fs_->LocalFileCount(), 0u);
}

TEST_F(FilesystemTest, RenameOfUploadedFileIsCopyAndDelete) {
  Mount();
  ASSERT_TRUE(WriteFile("a", "bytes").ok());
  ASSERT_TRUE(fs_->Lookup(1, "a").ok());
  ASSERT_TRUE(fs_->Rename(1, "a", 1, "b", 0).ok());
  EXPECT_EQ(mem_->Keys(), std::vector<std::string>{"p/b"});
  EXPECT_EQ(fs_->Lookup(1, "a").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(*ReadFile("b"), "bytes");
}

TEST_F(FilesystemTest, UnlinkPolicies) {
  options_.unlink_policy = UnlinkPolicy::kRemote;
  Mount();
  mem_->PutObject("p/a", "1");
  EXPECT_TRUE(fs_->Unlink(1, "a").ok());
  EXPECT_EQ(mem_->ObjectCount(), 0u);
  EXPECT_EQ(fs_->Lookup(1, "a").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ToErrno(fs_->Unlink(1, "a")), ENOENT);

  options_.unlink_policy = UnlinkPolicy::kLocal;
  Mount();
  mem_->PutObject("p/b", "1");
  EXPECT_TRUE(fs_->Unlink(1, "b").ok());
  EXPECT_EQ(mem_->ObjectCount(), 1u);  // shared object stays

  options_.unlink_policy = UnlinkPolicy::kDeny;
  Mount();
  EXPECT_EQ(ToErrno(fs_->Unlink(1, "b")), EPERM);
  EXPECT_EQ(mem_->ObjectCount(), 1u);
}

// The default, local: an engine's delete (its LRU, vLLM after a short read) removes the name on
// this node only; the object stays for the other nodes. The name stays missing here, past the
// metadata TTL and in listings, until the object changes or this node stores the name again.
TEST_F(FilesystemTest, UnlinkLocalHidesTheNameOnThisNodeOnly) {
  ASSERT_EQ(options_.unlink_policy, UnlinkPolicy::kLocal);  // the default
  Mount();
  mem_->PutObject("p/a", "1");
  mem_->PutObject("p/b", "2");
  ASSERT_EQ(*ReadFile("a"), "1");
  ASSERT_TRUE(fs_->Unlink(1, "a").ok());
  EXPECT_EQ(mem_->ObjectCount(), 2u);  // the shared object stays
  EXPECT_EQ(fs_->Lookup(1, "a").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ToErrno(fs_->Unlink(1, "a")), ENOENT);
  auto listed = [&] {
    auto dh = fs_->OpenDir(1);
    EXPECT_TRUE(dh.ok());
    std::vector<std::string> names;
    auto entries = ReadAllDir(*fs_, *dh);
    EXPECT_TRUE(entries.ok());
    for (const auto& e : *entries) names.push_back(e.name);
    fs_->ReleaseDir(*dh);
    return names;
  };
  EXPECT_EQ(listed(), (std::vector<std::string>{".", "..", "b"}));
  // Past the TTL (and after the listing cached the object) it is still missing here.
  now_ += std::chrono::seconds(options_.metadata_ttl_secs + 1);
  EXPECT_EQ(fs_->Lookup(1, "a").status().code(), StatusCode::kNotFound);

  // Another node deleted it and stored it again: another object, shown after the TTL.
  mem_->PutObject("p/a", "3");
  now_ += std::chrono::seconds(options_.metadata_ttl_secs + 1);
  EXPECT_EQ(*ReadFile("a"), "3");

  // This node stores the name again (the engine's next store of that chunk): shown at once.
  ASSERT_TRUE(fs_->Unlink(1, "a").ok());
  EXPECT_EQ(fs_->Lookup(1, "a").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(WriteFile("a", "3").ok());  // exists already, same size: success
  EXPECT_EQ(*ReadFile("a"), "3");
  EXPECT_EQ(mem_->GetObject("p/a"), "3");

  // A write in progress that never reached the store is dropped as before.
  uint64_t fh = CreateForWrite("c");
  WriteAt(fh, 0, "abc");
  ASSERT_TRUE(fs_->Unlink(1, "c").ok());
  EXPECT_TRUE(CloseHandle(fh).ok());
  EXPECT_EQ(mem_->GetObject("p/c"), std::nullopt);
}

// deny protects a chunk being written as it protects a stored one: the writer's unlink is
// refused and its close still publishes (before, the unlink succeeded and the close returned 0 with
// nothing stored). Temp files are local and stay removable.
TEST_F(FilesystemTest, UnlinkDenyRefusesAWriteInProgress) {
  options_.unlink_policy = UnlinkPolicy::kDeny;
  Mount();
  auto f = fs_->CreateFile(1, "c", O_CREAT | O_WRONLY);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(fs_->Write(f->second.fh, 0, "abc", 3).ok());
  EXPECT_EQ(ToErrno(fs_->Unlink(1, "c")), EPERM);
  EXPECT_TRUE(fs_->Flush(f->second.fh).ok());
  EXPECT_TRUE(fs_->Release(f->second.fh).ok());
  EXPECT_EQ(mem_->GetObject("p/c"), "abc");

  auto t = fs_->CreateFile(1, "c.tmp", O_CREAT | O_WRONLY);
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(fs_->Write(t->second.fh, 0, "abc", 3).ok());
  EXPECT_TRUE(fs_->Unlink(1, "c.tmp").ok());
  EXPECT_TRUE(fs_->Release(t->second.fh).ok());
  EXPECT_EQ(mem_->ObjectCount(), 1u);
}

TEST_F(FilesystemTest, NegativeLookupsAreCachedForTheTtl) {
  options_.metadata_ttl_secs = 30;
  Mount();
  uint64_t lists0 = mem_->Calls(StoreOp::kList);
  EXPECT_EQ(fs_->Lookup(1, "missing").status().code(), StatusCode::kNotFound);
  uint64_t heads1 = mem_->Calls(StoreOp::kHead);
  uint64_t lists1 = mem_->Calls(StoreOp::kList);
  EXPECT_EQ(lists1, lists0 + 1);  // one LIST of "missing": neither a file nor a directory
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(fs_->Lookup(1, "missing").status().code(), StatusCode::kNotFound);
  }
  EXPECT_EQ(mem_->Calls(StoreOp::kHead), heads1);
  EXPECT_EQ(mem_->Calls(StoreOp::kList), lists1);
  // Another node uploads the chunk: visible once the TTL has passed.
  mem_->PutObject("p/missing", "now here");
  EXPECT_EQ(fs_->Lookup(1, "missing").status().code(), StatusCode::kNotFound);
  now_ += std::chrono::seconds(31);
  auto e = fs_->Lookup(1, "missing");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->attr.size, 8u);
  // A file written through this mount is visible at once despite a cached miss.
  EXPECT_EQ(fs_->Lookup(1, "mine").status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(WriteFile("mine", "abc").ok());
  EXPECT_TRUE(fs_->Lookup(1, "mine").ok());
}

TEST_F(FilesystemTest, ReadDirPagesAndShowsForeignKeys) {
  Mount();
  for (int i = 0; i < 2500; ++i) mem_->PutObject("p/chunk" + std::to_string(i), "x");
  mem_->PutObject("p/sub/inner", "x");
  mem_->PutObject("p/not canonical", "x");  // written by another tool, not decodable: hidden
  mem_->PutObject("p/foreign.bin", "x");    // written by another tool, decodable: shown
  mem_->PutObject("other/zzz", "x");        // outside the prefix
  ASSERT_TRUE(WriteFile("local.tmp", "t").ok());
  auto fh = fs_->OpenDir(1);
  ASSERT_TRUE(fh.ok()) << fh.status().ToString();
  auto entries = ReadAllDir(*fs_, *fh);
  ASSERT_TRUE(entries.ok());
  fs_->ReleaseDir(*fh);
  std::set<std::string> names;
  for (const auto& e : *entries) names.insert(e.name);
  EXPECT_EQ(entries->size(), 2 + 2500 + 3u);
  EXPECT_TRUE(names.count("sub"));
  EXPECT_TRUE(names.count("foreign.bin"));
  EXPECT_TRUE(names.count("local.tmp"));
  EXPECT_FALSE(names.count("not canonical"));
  // Listing filled the cache: stat after scandir costs no request.
  uint64_t heads = mem_->Calls(StoreOp::kHead);
  EXPECT_TRUE(fs_->Lookup(1, "chunk77").ok());
  EXPECT_EQ(mem_->Calls(StoreOp::kHead), heads);
}

TEST_F(FilesystemTest, DirectoriesMkdirRmdir) {
  options_.unlink_policy = UnlinkPolicy::kRemote;  // rmdir needs the store's directory empty
  Mount();
  auto d = fs_->Mkdir(1, "d");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(mem_->Keys(), std::vector<std::string>{"p/d/"});  // its marker: it stays until rmdir
  EXPECT_EQ(ToErrno(fs_->Mkdir(1, "d").status()), EEXIST);
  uint64_t dino = d->attr.ino;
  ASSERT_TRUE(WriteFile("f", "abc", dino).ok());
  EXPECT_EQ(mem_->GetObject("p/d/f"), "abc");
  EXPECT_EQ(*ReadFile("f", dino), "abc");
  EXPECT_EQ(ToErrno(fs_->Rmdir(1, "d")), EEXIST);
  ASSERT_TRUE(fs_->Unlink(dino, "f").ok());
  EXPECT_TRUE(fs_->Rmdir(1, "d").ok());
  EXPECT_EQ(mem_->ObjectCount(), 0u);
  EXPECT_EQ(fs_->Lookup(1, "d").status().code(), StatusCode::kNotFound);
}

TEST_F(FilesystemTest, FanoutHidesHashDirectories) {
  options_.fanout_hex_chars = 2;
  Mount();
  ASSERT_TRUE(WriteFile("chunk.pt", "abc").ok());
  auto keys = mem_->Keys();
  ASSERT_EQ(keys.size(), 1u);
  EXPECT_EQ(keys[0].size(), std::string("p/xx/chunk.pt").size());
  EXPECT_EQ(*ReadFile("chunk.pt"), "abc");
  auto fh = fs_->OpenDir(1);
  ASSERT_TRUE(fh.ok());
  auto entries = *ReadAllDir(*fs_, *fh);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[2].name, "chunk.pt");
  EXPECT_EQ(ToErrno(fs_->Mkdir(1, "d").status()), ENOTSUP);
}

TEST_F(FilesystemTest, LongNamesWorkAndOverlongAreEnametoolong) {
  Mount();
  std::string name = std::string(200, 'm') + "@1@0@1a2b3c4d5e6f7081@bfloat16.pt";
  ASSERT_TRUE(WriteFile(name, "abc").ok());
  EXPECT_EQ(*ReadFile(name), "abc");
  EXPECT_EQ(ToErrno(fs_->Lookup(1, std::string(256, 'a')).status()), ENAMETOOLONG);
  EXPECT_EQ(ToErrno(WriteFile(std::string(256, 'a'), "x")), ENAMETOOLONG);
}

TEST_F(FilesystemTest, MultipartWithSmallThresholds) {
  options_.multipart_threshold = 1000;
  options_.multipart_part_size = 256;
  options_.max_chunk_bytes = 1 << 20;
  options_.upload_parallelism = 3;
  Mount();
  std::string data;
  for (int i = 0; i < 2000; ++i) data.push_back(static_cast<char>('a' + i % 26));
  ASSERT_TRUE(WriteFile("mp", data).ok());
  EXPECT_EQ(mem_->GetObject("p/mp"), data);
  EXPECT_EQ(mem_->Calls(StoreOp::kUploadPart), 8u);
  EXPECT_EQ(mem_->PendingUploadCount(), 0u);
  // Same name, same size, again: success without a second object version.
  EXPECT_TRUE(WriteFile("mp", data).ok());
  EXPECT_EQ(mem_->PendingUploadCount(), 0u);
}

TEST_F(FilesystemTest, StatFsAndUnsupportedAttrChanges) {
  Mount();
  FsStat s = fs_->StatFs();
  EXPECT_EQ(s.bsize, 4096u);
  EXPECT_EQ(s.namemax, 255u);
  ASSERT_TRUE(WriteFile("f", "abc").ok());
  auto e = fs_->Lookup(1, "f");
  SetAttrRequest chmod;
  chmod.mode = 0600;
  EXPECT_EQ(ToErrno(fs_->SetAttr(e->attr.ino, chmod).status()), EPERM);
  SetAttrRequest same;
  same.mode = 0644;
  EXPECT_TRUE(fs_->SetAttr(e->attr.ino, same).ok());
  SetAttrRequest trunc;
  trunc.size = 1;
  EXPECT_EQ(ToErrno(fs_->SetAttr(e->attr.ino, trunc).status()), EPERM);
}

TEST_F(FilesystemTest, TruncateOfFileBeingWritten) {
  Mount();
  auto cr = fs_->CreateFile(1, "t", O_CREAT | O_WRONLY);
  ASSERT_TRUE(cr.ok());
  ASSERT_TRUE(fs_->Write(cr->second.fh, 0, "abcdef", 6).ok());
  SetAttrRequest trunc;
  trunc.size = 3;
  ASSERT_TRUE(fs_->SetAttr(cr->first.attr.ino, trunc, cr->second.fh).ok());
  ASSERT_TRUE(fs_->Flush(cr->second.fh).ok());
  fs_->Release(cr->second.fh);
  EXPECT_EQ(mem_->GetObject("p/t"), "abc");
}

}  // namespace
}  // namespace kvfs

namespace kvfs {
namespace {

TEST_F(FilesystemTest, FlatNamespaceMissCostsOneHead) {
  options_.subdirectories = false;
  Mount();
  mem_->PutObject("p/d/x", "1");
  uint64_t lists = mem_->Calls(StoreOp::kList);
  EXPECT_EQ(fs_->Lookup(1, "nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_->Lookup(1, "d").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(mem_->Calls(StoreOp::kList), lists);
  EXPECT_EQ(ToErrno(fs_->Mkdir(1, "e").status()), ENOTSUP);
  auto fh = fs_->OpenDir(1);
  ASSERT_TRUE(fh.ok());
  EXPECT_EQ(ReadAllDir(*fs_, *fh)->size(), 2u);  // "." and ".." only
}

}  // namespace
}  // namespace kvfs
