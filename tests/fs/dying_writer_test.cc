// The write path's state machine at its edges: a writer that dies publishes nothing, a lost
// create race never leaves our bytes as the cache entry, and the /proc parse behind both.
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <set>
#include <vector>

#include "fs/process_state.h"
#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

constexpr pid_t kDying = 4242;
constexpr pid_t kLive = 4343;

// Records which spools the filesystem hands over as cache entries.
class AdoptRecorder : public ChunkReader {
 public:
  explicit AdoptRecorder(std::shared_ptr<ChunkReader> inner) : inner_(std::move(inner)) {}
  Result<std::unique_ptr<ReadHandle>> Open(const std::string& key,
                                           const ObjectInfo& info) override {
    return inner_->Open(key, info);
  }
  bool AdoptWritten(const std::string& key, const ObjectInfo& info, const std::string& path,
                    std::optional<uint32_t> crc) override {
    adopted.insert(key);
    return false;  // the spool stays the filesystem's to delete
  }
  std::set<std::string> adopted;

 private:
  std::shared_ptr<ChunkReader> inner_;
};

class DyingWriterTest : public FsTestBase {
 protected:
  void SetUp() override {
    FsTestBase::SetUp();
    recorder_ = std::make_shared<AdoptRecorder>(NewDirectReader(store_));
    auto fs = Filesystem::Create(store_, recorder_, options_, [this] { return now_; });
    ASSERT_TRUE(fs.ok()) << fs.status().ToString();
    fs_ = std::move(fs).value();
    fs_->set_exiting_fn([](pid_t pid) { return pid == kDying; });
  }
  uint64_t Create(const std::string& name, const std::string& data) {
    auto cr = fs_->CreateFile(1, name, O_CREAT | O_WRONLY | O_TRUNC);
    EXPECT_TRUE(cr.ok()) << cr.status().ToString();
    EXPECT_TRUE(fs_->Write(cr->second.fh, 0, data.data(), data.size()).ok());
    return cr->second.fh;
  }
  std::shared_ptr<AdoptRecorder> recorder_;
};

TEST_F(DyingWriterTest, ImplicitCloseOfADyingWriterPublishesNothing) {
  uint64_t fh = Create("c.pt", std::string(8192, 'x'));
  EXPECT_TRUE(fs_->Flush(fh, kDying).ok());
  EXPECT_TRUE(fs_->Release(fh).ok());
  EXPECT_EQ(mem_->ObjectCount(), 0u);
  EXPECT_EQ(mem_->PendingUploadCount(), 0u);
  EXPECT_EQ(fs_->LocalFileCount(), 0u);
  EXPECT_EQ(fs_->Lookup(1, "c.pt").status().code(), StatusCode::kNotFound);
  // The next full write of the name succeeds.
  EXPECT_TRUE(WriteFile("c.pt", "whole").ok());
  EXPECT_EQ(*ReadFile("c.pt"), "whole");
}

// A temp file whose writer was killed used to stay in the spool and in `ls` until unmount. It is
// removed at its last release after a dying writer's close; a live writer's stays for its rename.
TEST_F(DyingWriterTest, ATempFileOfAKilledWriterGoesAtItsLastRelease) {
  fs_->set_process_probe({.exiting = [](pid_t pid) { return pid == kDying; },
                          .killed = [](pid_t) { return true; },
                          .thread_group = [](pid_t pid) { return pid; },
                          .holds_writer = nullptr,
                          .child_holding = nullptr});
  auto spool_files = [this] {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(spool_)) n += e.is_regular_file();
    return n;
  };
  auto dead = fs_->CreateFile(1, "c.pt.tmp", O_CREAT | O_WRONLY | O_TRUNC, kDying);
  ASSERT_TRUE(dead.ok()) << dead.status().ToString();
  ASSERT_TRUE(fs_->Write(dead->second.fh, 0, "half", 4, kDying).ok());
  EXPECT_TRUE(fs_->Flush(dead->second.fh, kDying).ok());
  EXPECT_TRUE(fs_->Release(dead->second.fh).ok());
  EXPECT_EQ(fs_->LocalFileCount(), 0u);
  EXPECT_EQ(spool_files(), 0u);
  EXPECT_EQ(fs_->Lookup(1, "c.pt.tmp").status().code(), StatusCode::kNotFound);

  auto live = fs_->CreateFile(1, "d.pt.tmp", O_CREAT | O_WRONLY | O_TRUNC, kLive);
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  ASSERT_TRUE(fs_->Write(live->second.fh, 0, "whole", 5, kLive).ok());
  EXPECT_TRUE(fs_->Flush(live->second.fh, kLive).ok());
  EXPECT_TRUE(fs_->Release(live->second.fh).ok());
  EXPECT_EQ(fs_->LocalFileCount(), 1u);
  ASSERT_TRUE(fs_->Rename(1, "d.pt.tmp", 1, "d.pt", 0).ok());
  EXPECT_EQ(mem_->GetObject("p/d.pt"), "whole");
  EXPECT_EQ(mem_->ObjectCount(), 1u);
}

TEST_F(DyingWriterTest, EarlyPartsOfADyingWriterAreAborted) {
  options_.multipart_part_size = 256;
  options_.multipart_threshold = 1024;
  options_.max_chunk_bytes = 1 << 20;
  SetUp();                                                 // again, with small parts
  uint64_t fh = Create("big.pt", std::string(2000, 'y'));  // parts went out while written
  EXPECT_TRUE(fs_->Flush(fh, kDying).ok());
  EXPECT_TRUE(fs_->Release(fh).ok());
  EXPECT_EQ(mem_->ObjectCount(), 0u);
  EXPECT_EQ(mem_->PendingUploadCount(), 0u);
}

TEST_F(DyingWriterTest, ALiveCloseAfterTheDyingOneCommits) {
  // A descriptor shared with a live process (dup, fork): the dying one's close publishes
  // nothing, the live one's close publishes the file.
  uint64_t fh = Create("shared.pt", "abc");
  auto e = fs_->Lookup(1, "shared.pt");
  ASSERT_TRUE(e.ok());
  auto o = fs_->Open(e->attr.ino, O_WRONLY);  // another open of the same file being written
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_TRUE(fs_->Flush(fh, kDying).ok());
  EXPECT_TRUE(fs_->Release(fh).ok());
  EXPECT_EQ(mem_->ObjectCount(), 0u);
  EXPECT_TRUE(fs_->Write(o->fh, 3, "def", 3).ok());
  EXPECT_TRUE(fs_->Flush(o->fh, kLive).ok());
  EXPECT_TRUE(fs_->Release(o->fh).ok());
  EXPECT_EQ(*ReadFile("shared.pt"), "abcdef");
}

TEST_F(DyingWriterTest, CommittedBeforeDyingStays) {
  uint64_t fh = Create("f.pt", "done");
  EXPECT_TRUE(fs_->Fsync(fh).ok());  // durable: fsync returned 0
  EXPECT_TRUE(fs_->Flush(fh, kDying).ok());
  EXPECT_TRUE(fs_->Release(fh).ok());
  EXPECT_EQ(*ReadFile("f.pt"), "done");
}

TEST_F(DyingWriterTest, LostCreateRaceNeverAdoptsOurBytes) {
  // Another node stored the name first, same size, other bytes (the exists policy accepts it).
  ASSERT_TRUE(store_->Put("p/race.pt", Body::FromMemory("AAAA", 4), PutOptions{}).ok());
  EXPECT_TRUE(WriteFile("race.pt", "BBBB").ok());
  EXPECT_EQ(recorder_->adopted.count("p/race.pt"), 0u);
  EXPECT_EQ(*ReadFile("race.pt"), "AAAA");
  // Our own new object is adopted as the cache entry.
  EXPECT_TRUE(WriteFile("mine.pt", "CCCC").ok());
  EXPECT_EQ(recorder_->adopted.count("p/mine.pt"), 1u);
}

TEST(ProcessState, ParsesStatus) {
  const std::string live =
      "Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t77\n"
      "Pid:\t78\nVmPeak:\t  100 kB\nVmSize:\t  100 kB\n";
  EXPECT_EQ(StatusSaysExiting(live), std::optional(false));
  EXPECT_EQ(StatusSaysTgid(live), std::optional<pid_t>(77));  // thread 78 of process 77
  // Past exit_mm(): no Vm* lines; a zombie.
  EXPECT_EQ(StatusSaysExiting("Name:\tx\nState:\tR (running)\nTgid:\t5\n"), std::optional(true));
  EXPECT_EQ(StatusSaysExiting("Name:\tx\nState:\tZ (zombie)\nTgid:\t5\n"), std::optional(true));
  EXPECT_EQ(StatusSaysExiting("garbage"), std::nullopt);
  EXPECT_EQ(StatusSaysTgid("garbage"), std::nullopt);
}

TEST(ProcessState, ParsesTheExitCode) {
  // Field 52 (exit_code) is a wait status: a signal in the low 7 bits, else the exit status.
  std::string fields;
  for (int f = 4; f <= 51; ++f) fields += " 0";
  EXPECT_EQ(StatSaysKilled("12 (py thon) R" + fields + " 9"), std::optional(true));  // SIGKILL
  EXPECT_EQ(StatSaysKilled("12 (a) b)) R" + fields + " 139"), std::optional(true));  // core
  EXPECT_EQ(StatSaysKilled("12 (x) R" + fields + " 256"), std::optional(false));     // exit(1)
  EXPECT_EQ(StatSaysKilled("12 (x) R" + fields + " 0"), std::optional(false));       // exit(0)
  EXPECT_EQ(StatSaysKilled("12 (x) R 1 2"), std::nullopt);
}

TEST(ProcessState, ThreadGroupAndDescriptors) {
  EXPECT_EQ(ThreadGroupOf(getpid()), getpid());
  EXPECT_EQ(ThreadGroupOf(0), 0);
  // A writable descriptor of a file is found by inode number and name; a read-only one is not.
  char path[] = "/tmp/kvfs-holds-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  const std::string name = std::string(path).substr(5);
  EXPECT_TRUE(HoldsWritableFd(getpid(), st.st_ino, name));
  EXPECT_FALSE(HoldsWritableFd(getpid(), st.st_ino + 1, name));
  EXPECT_FALSE(HoldsWritableFd(getpid(), st.st_ino, "other-name"));
  close(fd);
  EXPECT_FALSE(HoldsWritableFd(getpid(), st.st_ino, name));
  int ro = open(path, O_RDONLY);
  EXPECT_FALSE(HoldsWritableFd(getpid(), st.st_ino, name));
  close(ro);
  unlink(path);
}

TEST(ProcessState, ADescendantHoldingTheDescriptor) {
  // passthrough_writes: the opener's close defers to a descendant that still holds the file
  // for writing (found through /proc/PID/task/*/children, children of children too).
  char path[] = "/tmp/kvfs-child-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  const std::string name = std::string(path).substr(5);
  EXPECT_EQ(DescendantHoldingWritableFd(getpid(), st.st_ino, name), 0);  // the opener's own fd
  int go[2], ready[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    // The child hands the descriptor on to a grandchild and closes its own copy. Neither keeps
    // the write end of `go`: if the test dies first, their reads end (EOF) and so do they.
    close(go[1]);
    close(ready[0]);
    const pid_t grandchild = fork();
    if (grandchild == 0) {
      char c;
      (void)!write(ready[1], "r", 1);
      (void)!read(go[0], &c, 1);  // holds fd until the test says go
      _exit(0);
    }
    close(fd);
    char c;
    (void)!read(go[0], &c, 1);
    waitpid(grandchild, nullptr, 0);
    _exit(0);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  close(fd);
  // The grandchild holds it; the child, which closed its copy, does not (the child may not have
  // closed it yet when first looked at).
  pid_t holder = 0;
  for (int i = 0; i < 5000; i++) {
    holder = DescendantHoldingWritableFd(getpid(), st.st_ino, name);
    if (holder != 0 && holder != child) break;
    usleep(1000);
  }
  EXPECT_NE(holder, 0);
  EXPECT_NE(holder, child);
  EXPECT_FALSE(HoldsWritableFd(getpid(), st.st_ino, name));
  EXPECT_EQ(DescendantHoldingWritableFd(getpid(), st.st_ino, "other-name"), 0);
  (void)!write(go[1], "gg", 2);
  waitpid(child, nullptr, 0);
  EXPECT_EQ(DescendantHoldingWritableFd(getpid(), st.st_ino, name), 0);  // all gone
  EXPECT_EQ(DescendantHoldingWritableFd(0, st.st_ino, name), 0);
  for (int p : {go[0], go[1], ready[0], ready[1]}) close(p);
  unlink(path);
}

TEST(ProcessState, AWriterWithThousandsOfGroupsIsLive) {
  // Users from a directory service have hundreds or thousands of supplementary groups, and
  // /proc/PID/status lists them (Groups:) before the Vm* lines that tell a live task: with a 4 KiB
  // read a live writer looked like a dying one and its close() stored nothing (issue 47 item 2).
  if (geteuid() != 0) GTEST_SKIP() << "setgroups needs root";
  for (int groups : {1000, 4000}) {
    int ready[2], go[2];
    ASSERT_EQ(pipe(ready), 0);
    ASSERT_EQ(pipe(go), 0);
    const pid_t child = fork();
    if (child == 0) {
      std::vector<gid_t> list;
      for (int g = 0; g < groups; ++g) list.push_back(static_cast<gid_t>(100000 + g));
      const char ok = setgroups(list.size(), list.data()) == 0 ? 'y' : 'n';
      (void)!write(ready[1], &ok, 1);
      char c;
      (void)!read(go[0], &c, 1);
      _exit(0);
    }
    char ok = 0;
    ASSERT_EQ(read(ready[0], &ok, 1), 1);
    ASSERT_EQ(ok, 'y') << groups << " groups";
    EXPECT_FALSE(ProcessIsExiting(child)) << groups << " groups";
    EXPECT_EQ(ThreadGroupOf(child), child) << groups << " groups";
    (void)!write(go[1], "g", 1);
    waitpid(child, nullptr, 0);
    for (int p : {go[0], go[1], ready[0], ready[1]}) close(p);
  }
}

TEST(ProcessState, LiveAndGoneProcesses) {
  EXPECT_TRUE(ProcMatchesOwnPid());
  EXPECT_FALSE(ProcessIsExiting(getpid()));
  EXPECT_FALSE(ProcessIsExiting(0));  // unknown pid: treated as live
  pid_t child = fork();
  if (child == 0) _exit(0);
  // Until reaped, the child is a zombie; after, it is gone: both count as exiting.
  for (int i = 0; i < 5000 && !ProcessIsExiting(child); i++) usleep(1000);  // at most 5 s
  EXPECT_TRUE(ProcessIsExiting(child));
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(ProcessIsExiting(child));
}

}  // namespace
}  // namespace kvfs
