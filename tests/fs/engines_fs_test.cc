// The engines' disk-tier patterns (docs/engines.md) over the in-memory store, counting requests:
// deep mkdir -p, lookups in trees that do not exist yet, temporary names, rename into a new
// directory, readdir from a second mount, GDS's reopen of its temp file, Dynamo's preallocation.
#include <linux/fs.h>

#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

class EnginesFsTest : public FsTestBase {
 protected:
  uint64_t Requests() { return mem_->Requests(); }
  // What the kernel does for `mkdir -p`: per level a lookup, and mkdir where it missed.
  Result<uint64_t> MkdirP(const std::vector<std::string>& levels, uint64_t dir = 1) {
    for (const std::string& name : levels) {
      auto e = fs_->Lookup(dir, name);
      if (e.ok()) {
        dir = e->attr.ino;
        continue;
      }
      if (e.status().code() != StatusCode::kNotFound) return e.status();
      KVFS_ASSIGN_OR_RETURN(FsEntry made, fs_->Mkdir(dir, name));
      dir = made.attr.ino;
    }
    return dir;
  }
  // create + write + close of a temp name, then rename to the final name (SGLang, LMCache MP).
  Status WriteRenamed(uint64_t dir, const std::string& tmp, const std::string& final_name,
                      const std::string& data) {
    if (fs_->Lookup(dir, tmp).ok()) return Status::AlreadyExists(tmp);
    KVFS_RETURN_IF_ERROR(WriteFile(tmp, data, dir));
    return fs_->Rename(dir, tmp, dir, final_name, 0);
  }
  std::vector<std::string> Names(uint64_t dir) {
    std::vector<std::string> out;
    auto fh = fs_->OpenDir(dir);
    if (!fh.ok()) return out;
    auto entries = ReadAllDir(*fs_, *fh);
    EXPECT_TRUE(entries.ok());
    if (!entries.ok()) return out;
    for (const DirEntry& e : *entries) {
      if (e.name != "." && e.name != "..") out.push_back(e.name + (e.is_dir ? "/" : ""));
    }
    fs_->ReleaseDir(*fh);
    return out;
  }
  const std::vector<std::string> kTree = {"meta-llama",
                                          "Llama-3.1-8B",
                                          "block_size_16_blocks_per_file_4",
                                          "tp_1_pp_size_1_pcp_size_1",
                                          "rank_0",
                                          "bfloat16",
                                          "a1b",
                                          "2c"};
};

TEST_F(EnginesFsTest, DeepMkdirPCostsTheFirstMissedLookupAndAMarkerPerLevel) {
  Mount();
  auto dir = MkdirP(kTree);
  ASSERT_TRUE(dir.ok()) << dir.status().ToString();
  // The first level's lookup asked the store (one LIST); the levels below were known missing
  // from it; each mkdir wrote its marker (so the directory outlives its chunks).
  EXPECT_EQ(Requests(), 1u + kTree.size());
  EXPECT_EQ(mem_->ObjectCount(), kTree.size());
  // Lookups of missing names in the new directories are answered from that first miss.
  EXPECT_EQ(fs_->Lookup(*dir, "a1b2c3.bin").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(fs_->Lookup(*dir, "a1b2c4.bin").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Requests(), 1u + kTree.size());
  // mkdir -p again: every level is known.
  ASSERT_TRUE(MkdirP(kTree).ok());
  EXPECT_EQ(Requests(), 1u + kTree.size());
}

TEST_F(EnginesFsTest, LookupsBelowAMissingDirectoryCostNothing) {
  Mount();
  // exists("<root>/<model>/.../<hhh>/<hh>/<hash>.bin") on a tree that is not there: the kernel
  // looks up level by level and stops at the first miss; the next walk below another missing
  // level of the same tree is answered from the first.
  EXPECT_EQ(fs_->Lookup(1, "meta-llama").status().code(), StatusCode::kNotFound);
  const uint64_t after_first = Requests();
  EXPECT_EQ(after_first, 1u);  // one LIST: no object, nothing under it
  EXPECT_EQ(fs_->Lookup(1, "meta-llama").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Requests(), after_first);
}

TEST_F(EnginesFsTest, TemporaryNamesAreNeverLookedUpInTheStore) {
  Mount();
  for (const char* tmp : {"k.bin.tmp.1234.5678.0123456789abcdef", "k.data.tmp",
                          "k.kvcache.safetensors.tmp1a2b3c4d", "k.bin_12345.tmp"}) {
    EXPECT_EQ(fs_->Lookup(1, tmp).status().code(), StatusCode::kNotFound) << tmp;
  }
  EXPECT_EQ(Requests(), 0u);
}

TEST_F(EnginesFsTest, SglangTempFileIsUploadedOnlyUnderItsFinalName) {
  Mount();
  const std::string final_name = std::string(64, 'e') + "_Qwen-Qwen3-32B_0_8.bin";
  const std::string tmp = final_name + ".tmp.4242.139912345.0123456789abcdef0123456789abcdef";
  std::string page(1 << 20, 'p');
  ASSERT_TRUE(WriteRenamed(1, tmp, final_name, page).ok());
  EXPECT_EQ(mem_->Keys(), std::vector<std::string>{"p/" + final_name});
  EXPECT_EQ(mem_->Calls(StoreOp::kPut), 1u);  // one request: no multipart, no copy
  EXPECT_EQ(mem_->Calls(StoreOp::kCopy), 0u);
  EXPECT_EQ(mem_->Calls(StoreOp::kCreateMultipart), 0u);
  EXPECT_EQ(*ReadFile(final_name), page);
  // The engine's cleanup of the temp name after the rename costs nothing.
  const uint64_t before = Requests();
  EXPECT_EQ(fs_->Lookup(1, tmp).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(Requests(), before);
}

TEST_F(EnginesFsTest, RenameIntoADirectoryMadeAMomentAgo) {
  Mount();
  auto dir = MkdirP(kTree);
  ASSERT_TRUE(dir.ok());
  const std::string final_name = "a1b2c3d4e5f6.bin";
  const std::string tmp = final_name + "_3141592653.tmp";  // llm-d: <target>_<random>.tmp
  std::string data(3 << 20, 'd');
  // llm-d renames before it closes its temp file.
  auto cr = fs_->CreateFile(*dir, tmp, O_RDWR | O_CREAT);
  ASSERT_TRUE(cr.ok());
  ASSERT_TRUE(fs_->Write(cr->second.fh, 0, data.data(), data.size()).ok());
  ASSERT_TRUE(fs_->Rename(*dir, tmp, *dir, final_name, 0).ok());
  ASSERT_TRUE(fs_->Flush(cr->second.fh).ok());
  ASSERT_TRUE(fs_->Release(cr->second.fh).ok());
  std::string key = "p/";
  std::vector<std::string> keys;
  for (const auto& level : kTree) keys.push_back(key += level + "/");  // the markers
  keys.push_back(key + final_name);
  EXPECT_EQ(mem_->Keys(), keys);
  EXPECT_EQ(mem_->Calls(StoreOp::kPut), kTree.size() + 1);
  EXPECT_EQ(*ReadFile(final_name, *dir), data);

  // A second mount of the same bucket sees the whole tree by listing.
  FsOptions other_options = options_;
  other_options.spool_dir = (spool_ / "other").string();
  auto other = Filesystem::Create(store_, NewDirectReader(store_), other_options);
  ASSERT_TRUE(other.ok());
  uint64_t ino = 1;
  for (const auto& level : kTree) {
    auto fh = (*other)->OpenDir(ino);
    ASSERT_TRUE(fh.ok());
    bool found = false;
    auto entries = ReadAllDir(**other, *fh);
    ASSERT_TRUE(entries.ok());
    for (const DirEntry& e : *entries) found |= e.name == level && e.is_dir;
    (*other)->ReleaseDir(*fh);
    EXPECT_TRUE(found) << level;
    auto e = (*other)->Lookup(ino, level);
    ASSERT_TRUE(e.ok()) << level;
    ino = e->attr.ino;
  }
  auto e = (*other)->Lookup(ino, final_name);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->attr.size, data.size());
}

TEST_F(EnginesFsTest, DirectoriesShowInReaddirAndRmdir) {
  Mount();
  auto d = fs_->Mkdir(1, "empty");
  ASSERT_TRUE(d.ok());
  auto sub = fs_->Mkdir(d->attr.ino, "sub");
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(Names(1), std::vector<std::string>{"empty/"});
  EXPECT_EQ(Names(d->attr.ino), std::vector<std::string>{"sub/"});
  EXPECT_EQ(ToErrno(fs_->Mkdir(1, "empty").status()), EEXIST);
  EXPECT_EQ(ToErrno(fs_->Rmdir(1, "empty")), EEXIST);  // "sub" is in it
  const uint64_t del = mem_->Calls(StoreOp::kDelete);
  ASSERT_TRUE(fs_->Rmdir(d->attr.ino, "sub").ok());
  ASSERT_TRUE(fs_->Rmdir(1, "empty").ok());
  EXPECT_EQ(mem_->Calls(StoreOp::kDelete), del + 2);  // the two markers
  EXPECT_EQ(fs_->Lookup(1, "empty").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Names(1).empty());
}

TEST_F(EnginesFsTest, GdsTempFileReopenedAndWrittenAtAnOffset) {
  Mount();
  auto dir = MkdirP({"12", "34"});
  ASSERT_TRUE(dir.ok());
  const std::string final_name = "m%40bfloat16.kvcache.safetensors";
  const std::string tmp = final_name + ".tmp1a2b3c4d";
  // open(tmp, "wb").write(4 KiB header); close
  std::string header(4096, 'h');
  ASSERT_TRUE(WriteFile(tmp, header, *dir).ok());
  EXPECT_EQ(mem_->ObjectCount(), 2u);  // the directories' markers
  // CuFile(tmp, "r+"): open O_RDWR, write the data at offset 4096, close
  auto e = fs_->Lookup(*dir, tmp);
  ASSERT_TRUE(e.ok());
  auto o = fs_->Open(e->attr.ino, O_RDWR);
  ASSERT_TRUE(o.ok());
  std::string data(1 << 20, 'k');
  ASSERT_TRUE(fs_->Write(o->fh, 4096, data.data(), data.size()).ok());
  ASSERT_TRUE(fs_->Flush(o->fh).ok());
  ASSERT_TRUE(fs_->Release(o->fh).ok());
  EXPECT_EQ(mem_->ObjectCount(), 2u);
  ASSERT_TRUE(fs_->Rename(*dir, tmp, *dir, final_name, 0).ok());
  EXPECT_EQ(mem_->Keys(), (std::vector<std::string>{"p/12/", "p/12/34/",
                                                    "p/12/34/m%2540bfloat16.kvcache.safetensors"}));
  EXPECT_EQ(*ReadFile(final_name, *dir), header + data);
  // The small metadata file, temp then rename.
  ASSERT_TRUE(
      WriteRenamed(*dir, final_name + ".metadata.tmp1a2b3c4d", final_name + ".metadata", header)
          .ok());
  EXPECT_EQ(mem_->ObjectCount(), 4u);
  EXPECT_EQ(mem_->Calls(StoreOp::kCopy), 0u);
}

TEST_F(EnginesFsTest, DynamoPreallocationIsEfbig) {
  Mount();
  // mkostemp("dynamo-kvbm-disk-cache-XXXXXX"), then ftruncate to the tier's size (GiBs).
  auto cr = fs_->CreateFile(1, "dynamo-kvbm-disk-cache-Ab12Cd", O_RDWR | O_CREAT | O_EXCL);
  ASSERT_TRUE(cr.ok());
  SetAttrRequest grow;
  grow.size = 8ull << 30;
  EXPECT_EQ(ToErrno(fs_->SetAttr(cr->first.attr.ino, grow, cr->second.fh).status()), EFBIG);
  ASSERT_TRUE(fs_->Unlink(1, "dynamo-kvbm-disk-cache-Ab12Cd").ok());
  fs_->Release(cr->second.fh);
  EXPECT_EQ(mem_->ObjectCount(), 0u);
}

TEST_F(EnginesFsTest, TimesAreAcceptedAndIgnored) {
  Mount();
  ASSERT_TRUE(WriteFile("c.bin", "abc").ok());
  auto e = fs_->Lookup(1, "c.bin");
  ASSERT_TRUE(e.ok());
  // utimensat(UTIME_NOW, UTIME_OMIT): a setattr with only times.
  auto a = fs_->SetAttr(e->attr.ino, SetAttrRequest{});
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->size, 3u);
}

TEST_F(EnginesFsTest, EvictorUnlinkFollowsUnlinkPolicy) {
  options_.unlink_policy = UnlinkPolicy::kLocal;
  Mount();
  ASSERT_TRUE(WriteFile("c.bin", "abc").ok());
  ASSERT_TRUE(fs_->Unlink(1, "c.bin").ok());
  EXPECT_EQ(mem_->ObjectCount(), 1u);  // shared with other nodes: stays
}

}  // namespace
}  // namespace kvfs
