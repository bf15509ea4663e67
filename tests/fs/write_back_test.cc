// write_back: close() and rename() of a whole chunk return before its upload; the chunk is shown
// on this node at once, stored by the write-back threads, waited for by fsync(), O_SYNC opens and
// unmount; a partial chunk is still refused at close; a background upload the store fails is tried
// again (fsync reports the failure meanwhile), one it refuses drops the name; unmount waits at most
// write_back_drain_timeout and leaves the rest sealed; writers wait when write_back_bytes are
// pending. The store's PUTs are held
// at a gate (GatedStore) where "not yet uploaded" must be a state, not a race.
#include <fcntl.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "base/deadline.h"
#include "tests/fakes/fault_store.h"
#include "tests/fs/fs_test_util.h"

namespace kvfs {
namespace {

using std::chrono::milliseconds;

// PUTs wait until the test opens the gate: "an upload is running" is a state, not a race.
// PUTs wait at a gate until the test opens it. `hold_reply`: after the gate the PUT is stored,
// and its reply waits at a second gate (OpenReply) - the object is in the store while the upload
// is still under way.
class GatedStore : public StoreWrapper {
 public:
  explicit GatedStore(std::shared_ptr<ObjectStore> base, bool hold_reply = false)
      : StoreWrapper(std::move(base)), hold_reply_(hold_reply) {}
  void PutAsync(const std::string& key, const Body& body, const PutOptions& opts,
                PutCallback done) override {
    Pass(kBefore);
    if (!hold_reply_) return StoreWrapper::PutAsync(key, body, opts, std::move(done));
    StoreWrapper::PutAsync(key, body, opts, [this, done](Result<ObjectInfo> info) {
      Pass(kReply);
      done(std::move(info));
    });
  }
  void Open() { OpenGate(kBefore); }
  void OpenReply() { OpenGate(kReply); }
  // Until `n` PUTs wait at the gate: their uploads are under way.
  void WaitArrived(int n) { WaitFor(kBefore, n); }
  // hold_reply: until `n` PUTs are stored and wait for their replies.
  void WaitStored(int n) { WaitFor(kReply, n); }

 private:
  enum Which { kBefore, kReply };
  struct Gate {
    bool open = false;
    int arrived = 0;
  };
  void Pass(Which w) {
    MutexLock l(&mu_);
    ++gates_[w].arrived;
    cv_.SignalAll();
    cv_.Wait(&mu_, [this, w]() REQUIRES(mu_) { return gates_[w].open; });
  }
  void OpenGate(Which w) {
    MutexLock l(&mu_);
    gates_[w].open = true;
    cv_.SignalAll();
  }
  void WaitFor(Which w, int n) {
    MutexLock l(&mu_);
    cv_.Wait(&mu_, [this, w, n]() REQUIRES(mu_) { return gates_[w].arrived >= n; });
  }

  const bool hold_reply_;
  Mutex mu_;
  CondVar cv_;
  Gate gates_[2] GUARDED_BY(mu_);
};

// Runs `op` on a thread and says whether it ended while `gate` still held every PUT: a call that
// waited for an upload's lock would not. The gate opens either way, so a wrong answer fails the
// test instead of hanging it.
template <typename Op>
bool EndsWhileTheUploadIsHeld(GatedStore& gate, Op op) {
  std::atomic<bool> done{false};
  std::thread t([&] {
    op();
    done = true;
  });
  for (int i = 0; i < 3000 && !done; ++i) std::this_thread::sleep_for(milliseconds(10));
  const bool ended = done;
  if (!ended) {
    gate.Open();
    gate.OpenReply();
  }
  t.join();
  return ended;
}

class WriteBackTest : public FsTestBase {
 protected:
  void SetUp() override {
    FsTestBase::SetUp();
    // spdlog's registry is made at its first use; made here, before the upload threads log, as
    // the daemon's main thread does (libspdlog is not instrumented: TSan cannot see its guard).
    spdlog::default_logger();
    faults_ = std::make_shared<FaultStore>(mem_);
    store_ = faults_;
    options_.subdirectories = false;
    options_.write_back = true;
  }
  bool Stored(const std::string& name) const {
    auto keys = mem_->Keys();
    return std::find(keys.begin(), keys.end(), "p/" + name) != keys.end();
  }
  void UnlinkWhileItUploads(UnlinkPolicy policy, bool stored_first, bool over_object);
  // Opens inode `ino` for reading and checks it reads `want`; returns the open handle.
  uint64_t OpenAndRead(uint64_t ino, const std::string& want) {
    auto o = fs_->Open(ino, O_RDONLY);
    EXPECT_TRUE(o.ok()) << o.status().ToString();
    if (!o.ok()) return 0;
    std::string buf(want.size() + 64, '\0');
    auto n = fs_->Read(o->fh, 0, buf.size(), buf.data());
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (n.ok()) {
      EXPECT_EQ(buf.substr(0, *n), want);
    }
    return o->fh;
  }
  // Mounts over `gate`, writes `name` and closes it (still open: returns its handle) - accepted,
  // its upload's PUT held at the gate: the transfer is under way.
  uint64_t AcceptedAndHeld(const std::shared_ptr<GatedStore>& gate, const std::string& name,
                           const std::string& bytes) {
    store_ = gate;
    Mount();
    uint64_t fh = CreateForWrite(name);
    WriteAt(fh, 0, bytes);
    EXPECT_TRUE(fs_->Flush(fh).ok());
    gate->WaitArrived(1);
    return fh;
  }
  // Opens the stored chunk `name` for reading and writing, writes `bytes` over it and closes it:
  // a new version of it, accepted (its upload follows).
  void RewriteStored(const std::string& name, const std::string& bytes) {
    auto e = fs_->Lookup(1, name);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    auto o = fs_->Open(e->attr.ino, O_RDWR);
    ASSERT_TRUE(o.ok()) << o.status().ToString();
    WriteAt(o->fh, 0, bytes);
    ASSERT_TRUE(fs_->Flush(o->fh).ok());
    ASSERT_TRUE(fs_->Release(o->fh).ok());
  }
  std::shared_ptr<FaultStore> faults_;
};

TEST_F(WriteBackTest, CloseReturnsBeforeTheUploadAndTheChunkIsShownHereAtOnce) {
  auto gate = std::make_shared<GatedStore>(mem_);
  store_ = gate;
  Mount();
  ASSERT_TRUE(WriteFile("a.bin", "whole chunk").ok());
  EXPECT_FALSE(Stored("a.bin")) << "close() waited for the upload";
  auto e = fs_->Lookup(1, "a.bin", nullptr, /*pid=*/0);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_NE(e->attr.ino, 0u);
  EXPECT_EQ(e->attr.size, 11u);
  // Opened and read while its upload waits at the gate.
  const uint64_t fh = OpenAndRead(e->attr.ino, "whole chunk");
  gate->Open();
  ASSERT_TRUE(fs_->Release(fh).ok());
  fs_->DrainWriteBack();
  EXPECT_TRUE(Stored("a.bin"));
  WriteBackStats s = fs_->WriteBackStatsNow();
  EXPECT_EQ(s.queued, 1u);
  EXPECT_EQ(s.uploaded, 1u);
  EXPECT_EQ(s.pending, 0u);
  EXPECT_EQ(fs_->LocalFileCount(), 0u) << "a stored chunk leaves the local files";
  auto again = ReadFile("a.bin");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, "whole chunk");
}

TEST_F(WriteBackTest, FsyncWaitsForTheStore) {
  faults_->SetDelay(StoreOp::kPut, milliseconds(300));
  Mount();
  uint64_t fh = CreateForWrite("b.bin");
  WriteAt(fh, 0, "bytes");
  ASSERT_TRUE(fs_->Flush(fh).ok());
  ASSERT_TRUE(fs_->Fsync(fh).ok());
  EXPECT_TRUE(Stored("b.bin")) << "fsync returned before the object was stored";
  ASSERT_TRUE(fs_->Release(fh).ok());
  fs_->DrainWriteBack();
  EXPECT_EQ(mem_->Calls(StoreOp::kPut), 1u) << "the queued upload ran again after fsync's";
}

TEST_F(WriteBackTest, AnOSyncDescriptorsCloseWaits) {
  faults_->SetDelay(StoreOp::kPut, milliseconds(300));
  Mount();
  auto cr = fs_->CreateFile(1, "s.bin", O_CREAT | O_WRONLY | O_TRUNC | O_SYNC);
  ASSERT_TRUE(cr.ok());
  WriteAt(cr->second.fh, 0, "sync");
  ASSERT_TRUE(CloseHandle(cr->second.fh).ok());
  EXPECT_TRUE(Stored("s.bin"));
  EXPECT_EQ(fs_->WriteBackStatsNow().queued, 0u);
}

TEST_F(WriteBackTest, APartialChunkIsStillRefusedAtClose) {
  options_.chunk_sizes = {8};
  Mount();
  Status st = WriteFile("p.bin", "short");
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
  fs_->DrainWriteBack();
  EXPECT_FALSE(Stored("p.bin"));
  EXPECT_FALSE(fs_->Lookup(1, "p.bin").ok());
}

TEST_F(WriteBackTest, ARenamedTempFileIsUploadedUnderItsFinalNameOnly) {
  auto gate = std::make_shared<GatedStore>(mem_);
  store_ = gate;
  Mount();
  ASSERT_TRUE(WriteFile("c.bin.tmp", "renamed").ok());
  ASSERT_TRUE(fs_->Rename(1, "c.bin.tmp", 1, "c.bin", 0).ok());
  EXPECT_FALSE(Stored("c.bin")) << "rename waited for the upload";
  auto e = fs_->Lookup(1, "c.bin");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->attr.size, 7u);
  EXPECT_FALSE(fs_->Lookup(1, "c.bin.tmp").ok());
  gate->Open();
  fs_->DrainWriteBack();
  auto r = ReadFile("c.bin");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, "renamed");
  EXPECT_TRUE(Stored("c.bin"));
  EXPECT_EQ(mem_->Keys().size(), 1u);
}

TEST_F(WriteBackTest, AnUploadTheStoreFailsIsTriedAgainUntilItIsStored) {
  faults_->InjectError(StoreOp::kPut, {Status::Unavailable("injected"), FaultStore::kForever});
  Mount();
  uint64_t fh = CreateForWrite("f.bin");
  WriteAt(fh, 0, "kept");
  ASSERT_TRUE(fs_->Flush(fh).ok()) << "close accepted the whole chunk";
  while (fs_->WriteBackStatsNow().retries == 0) std::this_thread::sleep_for(milliseconds(5));
  // The store is down: fsync says so, and the chunk stays accepted (shown, sealed, queued).
  EXPECT_EQ(fs_->Fsync(fh).code(), StatusCode::kIoError);
  auto e = fs_->Lookup(1, "f.bin");
  ASSERT_TRUE(e.ok()) << "a failed attempt dropped the accepted chunk: " << e.status().ToString();
  EXPECT_EQ(e->attr.size, 4u);
  faults_->ClearFaults();  // the store is back
  fs_->DrainWriteBack();
  EXPECT_TRUE(Stored("f.bin"));
  WriteBackStats s = fs_->WriteBackStatsNow();
  EXPECT_EQ(s.uploaded, 1u);
  EXPECT_EQ(s.failed, 0u);
  EXPECT_GE(s.retries, 1u);
  EXPECT_TRUE(fs_->Fsync(fh).ok());
  fs_->Release(fh);
}

TEST_F(WriteBackTest, SyncStoresEveryAcceptedChunkOrNamesWhatIsNot) {
  options_.write_back_uploads = 1;
  faults_->SetDelay(StoreOp::kPut, milliseconds(100));
  Mount();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(WriteFile("s" + std::to_string(i) + ".bin", "x").ok());
  EXPECT_EQ(fs_->SyncAccepted(), "");
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Stored("s" + std::to_string(i) + ".bin")) << i;
  faults_->InjectError(StoreOp::kPut, {Status::Unavailable("injected"), FaultStore::kForever});
  ASSERT_TRUE(WriteFile("down.bin", "y").ok());
  const std::string report = fs_->SyncAccepted();
  EXPECT_EQ(report.rfind("down.bin\t", 0), 0u) << report;
  EXPECT_NE(report.find("injected"), std::string::npos) << report;
  faults_->ClearFaults();
  EXPECT_EQ(fs_->SyncAccepted(), "");
  EXPECT_TRUE(Stored("down.bin"));
}

TEST_F(WriteBackTest, AnUploadTheStoreRefusesDropsTheNameAndFsyncReportsIt) {
  mem_->PutObject("p/f.bin", "another writer's chunk");  // another size: EEXIST
  Mount();
  auto cr = fs_->CreateFile(1, "f.bin", O_CREAT | O_WRONLY | O_TRUNC);
  ASSERT_TRUE(cr.ok()) << cr.status().ToString();
  uint64_t fh = cr->second.fh;
  WriteAt(fh, 0, "lost");
  ASSERT_TRUE(fs_->Flush(fh).ok()) << "close accepted the whole chunk";
  fs_->DrainWriteBack();
  EXPECT_EQ(fs_->WriteBackStatsNow().failed, 1u);
  EXPECT_EQ(fs_->WriteBackStatsNow().retries, 0u) << "a refusal was tried again";
  EXPECT_EQ(fs_->Fsync(fh).code(), StatusCode::kAlreadyExists);
  fs_->Release(fh);
  EXPECT_EQ(mem_->GetObject("p/f.bin"), "another writer's chunk");
}

TEST_F(WriteBackTest, UnmountPastTheDrainTimeoutLeavesTheRestSealedForTheNextMount) {
  options_.write_back_drain_timeout_ms = 300;
  faults_->InjectError(StoreOp::kPut, {Status::Unavailable("injected"), FaultStore::kForever});
  Mount();
  ASSERT_TRUE(WriteFile("late.bin", "stored by the next mount").ok());
  fs_.reset();  // unmount while the store is down: returns (the store's outage is not waited out)
  EXPECT_FALSE(Stored("late.bin"));
  EXPECT_EQ(SpoolSeal::SealedIn(spool_.string()).size(), 1u) << "the accepted chunk was lost";
  faults_->ClearFaults();
  Mount();
  fs_->RecoverSealed();
  fs_->DrainWriteBack();
  EXPECT_EQ(mem_->GetObject("p/late.bin"), "stored by the next mount");
  EXPECT_EQ(fs_->WriteBackStatsNow().recovered, 1u);
}

TEST_F(WriteBackTest, AChunkUnlinkedBeforeItsUploadIsNeverStored) {
  options_.write_back_uploads = 1;
  auto gate = std::make_shared<GatedStore>(mem_);
  store_ = gate;
  Mount();
  ASSERT_TRUE(WriteFile("first.bin", "one").ok());  // holds the only upload thread at the gate
  ASSERT_TRUE(WriteFile("second.bin", "two").ok());
  ASSERT_TRUE(fs_->Unlink(1, "second.bin").ok());
  EXPECT_EQ(fs_->Lookup(1, "second.bin").status().code(), StatusCode::kNotFound);
  gate->Open();
  fs_->DrainWriteBack();
  EXPECT_TRUE(Stored("first.bin"));
  EXPECT_FALSE(Stored("second.bin"));
}

TEST_F(WriteBackTest, WritersWaitWhileWriteBackBytesArePending) {
  options_.write_back_uploads = 4;
  options_.write_back_bytes = 1000;
  auto gate = std::make_shared<GatedStore>(mem_);
  store_ = gate;
  Mount();
  const std::string chunk(600, 'x');
  ASSERT_TRUE(WriteFile("0.bin", chunk).ok());  // pending at the gate: 600 of 1000 bytes
  Status second;
  std::thread writer([&] { second = WriteFile("1.bin", chunk); });
  while (fs_->WriteBackStatsNow().waits == 0) std::this_thread::sleep_for(milliseconds(1));
  WriteBackStats s = fs_->WriteBackStatsNow();
  EXPECT_EQ(s.pending, 1u) << "the second close queued past the bound";
  EXPECT_EQ(s.pending_bytes, 600u);
  gate->Open();
  writer.join();
  EXPECT_TRUE(second.ok()) << second.ToString();
  fs_->DrainWriteBack();
  EXPECT_TRUE(Stored("0.bin"));
  EXPECT_TRUE(Stored("1.bin"));
}

// Past the bounds a close waits within its deadline (blocking_timeout), then fails naming the
// bound - never a hang behind a store that takes nothing.
TEST_F(WriteBackTest, ACloseThatFindsNoRoomFailsWithinItsDeadline) {
  options_.write_back_bytes = 1000;
  auto gate = std::make_shared<GatedStore>(mem_);
  store_ = gate;
  Mount();
  ASSERT_TRUE(WriteFile("0.bin", std::string(600, 'x')).ok());  // pending at the gate
  uint64_t fh = CreateForWrite("1.bin");
  WriteAt(fh, 0, std::string(600, 'y'));
  Status st;
  {
    ScopedDeadline deadline(200, "blocking_timeout=0.2s");
    st = fs_->Flush(fh);
  }
  EXPECT_EQ(st.code(), StatusCode::kDeadlineExceeded) << st.ToString();
  EXPECT_NE(st.message().find("write_back_bytes"), std::string::npos) << st.message();
  EXPECT_EQ(fs_->WriteBackStatsNow().pending, 1u) << "the refused chunk took room";
  gate->Open();
  ASSERT_TRUE(fs_->Release(fh).ok());  // the last release stores what the close could not
  fs_->DrainWriteBack();
  EXPECT_TRUE(Stored("0.bin"));
  EXPECT_TRUE(Stored("1.bin"));
}

TEST_F(WriteBackTest, NoChunkIsAcceptedWhileTheOldestWaitsPastItsMaxAge) {
  options_.write_back_max_age_ms = 100;
  auto gate = std::make_shared<GatedStore>(mem_);
  store_ = gate;
  Mount();
  ASSERT_TRUE(WriteFile("old.bin", "waiting").ok());
  std::this_thread::sleep_for(milliseconds(250));
  EXPECT_GE(fs_->WriteBackStatsNow().oldest_pending_ms, 250u);
  uint64_t fh = CreateForWrite("new.bin");
  WriteAt(fh, 0, "held back");
  Status st;
  {
    ScopedDeadline deadline(200, "blocking_timeout=0.2s");
    st = fs_->Flush(fh);
  }
  EXPECT_EQ(st.code(), StatusCode::kDeadlineExceeded) << st.ToString();
  EXPECT_NE(st.message().find("write_back_max_age"), std::string::npos) << st.message();
  gate->Open();
  fs_->DrainWriteBack();
  EXPECT_EQ(fs_->WriteBackStatsNow().oldest_pending_ms, 0u);
  ASSERT_TRUE(fs_->Flush(fh).ok()) << "room again once the old chunk was stored";
  ASSERT_TRUE(fs_->Release(fh).ok());
  fs_->DrainWriteBack();
  EXPECT_TRUE(Stored("new.bin"));
}

// The exists policy's answer is the close's or the rename's, as without write-back, where the
// name is known to hold another chunk: EEXIST, not a background failure.
TEST_F(WriteBackTest, AChunkTheNamesObjectWouldRefuseIsRefusedAtClose) {
  mem_->PutObject("p/other.bin", "another writer's chunk");
  mem_->PutObject("p/same.bin", "12345");
  Mount();
  for (const char* name : {"other.bin", "same.bin"}) {
    auto e = fs_->Lookup(1, name);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    auto o = fs_->Open(e->attr.ino, O_WRONLY | O_TRUNC);
    ASSERT_TRUE(o.ok()) << o.status().ToString();
    WriteAt(o->fh, 0, "abcde");  // 5 bytes
    Status st = fs_->Flush(o->fh);
    EXPECT_EQ(st.code(),
              std::string(name) == "other.bin" ? StatusCode::kAlreadyExists : StatusCode::kOk)
        << name << ": " << st.ToString();
    fs_->Release(o->fh);
  }
  EXPECT_EQ(fs_->WriteBackStatsNow().queued, 1u) << "only the same-size chunk is accepted";
  // A temp file renamed onto a name that holds another chunk (the kernel looked it up first).
  ASSERT_TRUE(fs_->Lookup(1, "other.bin").ok());
  ASSERT_TRUE(WriteFile("x.bin.tmp", "abc").ok());
  EXPECT_EQ(fs_->Rename(1, "x.bin.tmp", 1, "other.bin", 0).code(), StatusCode::kAlreadyExists);
  fs_->DrainWriteBack();
  EXPECT_EQ(mem_->GetObject("p/other.bin"), "another writer's chunk");
  EXPECT_EQ(mem_->GetObject("p/same.bin"), "12345");
  EXPECT_EQ(fs_->WriteBackStatsNow().failed, 0u);
}

TEST_F(WriteBackTest, ShutdownStoresWhatCloseAccepted) {
  faults_->SetDelay(StoreOp::kPut, milliseconds(200));
  Mount();
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(WriteFile("d" + std::to_string(i) + ".bin", "x").ok());
  fs_.reset();
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(Stored("d" + std::to_string(i) + ".bin"));
}

// A queued upload lets go of the file's lock while its bytes are on their way: lookup, open,
// read, release and unlink answer at once; fsync and rename wait for the transfer within their
// deadline (blocking_timeout) and then say what they waited for - never for the lock with no
// limit (issue 43 item 5).
TEST_F(WriteBackTest, NothingWaitsForTheFilesLockWhileItsUploadIsOnItsWay) {
  auto gate = std::make_shared<GatedStore>(mem_);
  const uint64_t fh = AcceptedAndHeld(gate, "c.bin", "whole chunk");
  EXPECT_TRUE(EndsWhileTheUploadIsHeld(*gate, [&] {
    auto e = fs_->Lookup(1, "c.bin");
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    const uint64_t rfh = OpenAndRead(e->attr.ino, "whole chunk");
    {
      ScopedDeadline deadline(200, "blocking_timeout=0.2s");
      Status st = fs_->Fsync(rfh);
      EXPECT_EQ(st.code(), StatusCode::kDeadlineExceeded) << st.ToString();
      EXPECT_NE(st.message().find("c.bin"), std::string::npos) << st.ToString();
      st = fs_->Rename(1, "c.bin", 1, "moved.bin", 0);
      EXPECT_EQ(st.code(), StatusCode::kDeadlineExceeded) << st.ToString();
    }
    EXPECT_TRUE(fs_->Release(rfh).ok());
    EXPECT_TRUE(fs_->Release(fh).ok());  // the writer's own release
  })) << "an operation on the file waited for its upload";
  gate->Open();
  fs_->DrainWriteBack();
  EXPECT_TRUE(Stored("c.bin"));
  EXPECT_FALSE(Stored("moved.bin")) << "a rename that gave up changed something";
  EXPECT_EQ(fs_->LocalFileCount(), 0u);
  auto again = ReadFile("c.bin");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, "whole chunk");
}

// An unlink during the transfer returns at once; the object the upload then makes is treated as
// the unlink says (unlink_policy local: hidden on this node, the object stays; remote: deleted).
// With the object stored after the unlink and the upload's reply still to come, neither a lookup
// nor a listing shows the unlinked name (rmdir of its directory must find it empty: LMCache's
// test teardown's rmtree met EEXIST in that window).
TEST_F(WriteBackTest, AChunkUnlinkedWhileItUploadsStaysUnlinked) {
  // over_object: the new version of a stored chunk (LMCache's DAX tests: a file stored, then
  // rewritten through a shared mapping, then removed with its directory).
  for (bool over_object : {false, true}) {
    for (bool stored_first : {false, true}) {
      for (UnlinkPolicy policy : {UnlinkPolicy::kLocal, UnlinkPolicy::kRemote}) {
        SCOPED_TRACE(std::string(policy == UnlinkPolicy::kLocal ? "local" : "remote") +
                     (stored_first ? ", stored after the unlink, its reply held" : "") +
                     (over_object ? ", a new version of a stored chunk" : ""));
        UnlinkWhileItUploads(policy, stored_first, over_object);
      }
    }
  }
}

void WriteBackTest::UnlinkWhileItUploads(UnlinkPolicy policy, bool stored_first, bool over_object) {
  fs_.reset();
  mem_ = std::make_shared<MemoryStore>();
  auto gate = std::make_shared<GatedStore>(mem_, stored_first);
  store_ = gate;
  options_.unlink_policy = policy;
  Mount();
  if (over_object) {
    mem_->PutObject("p/u.bin", "WHOLE CHUNK");
    RewriteStored("u.bin", "whole chunk");
  } else {
    ASSERT_TRUE(WriteFile("u.bin", "whole chunk").ok());
  }
  gate->WaitArrived(1);
  EXPECT_TRUE(EndsWhileTheUploadIsHeld(*gate, [&] {
    Status st = fs_->Unlink(1, "u.bin");
    EXPECT_TRUE(st.ok()) << st.ToString();
  })) << "unlink waited for the upload";
  if (stored_first) {
    // The PUT goes on after the unlink and stores the object; its reply is held.
    gate->Open();
    gate->WaitStored(1);
    EXPECT_TRUE(Stored("u.bin"));
  }
  EXPECT_EQ(fs_->Lookup(1, "u.bin").status().code(), StatusCode::kNotFound);
  auto dh = fs_->OpenDir(1);
  ASSERT_TRUE(dh.ok()) << dh.status().ToString();
  auto listed = ReadAllDir(*fs_, *dh);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  for (const DirEntry& e : *listed) EXPECT_NE(e.name, "u.bin") << "listed while unlinked";
  fs_->ReleaseDir(*dh);
  gate->Open();
  gate->OpenReply();
  fs_->DrainWriteBack();
  EXPECT_EQ(fs_->Lookup(1, "u.bin").status().code(), StatusCode::kNotFound)
      << "the upload's end showed an unlinked chunk again";
  EXPECT_EQ(Stored("u.bin"), policy == UnlinkPolicy::kLocal);
  if (policy == UnlinkPolicy::kLocal) {
    EXPECT_EQ(mem_->GetObject("p/u.bin"), "whole chunk");
  }
  EXPECT_EQ(fs_->WriteBackStatsNow().pending, 0u);
}

// A new version of a stored chunk, unlinked while its upload is on its way, and that upload then
// fails: the older object the name held is unlinked too (hidden here, or deleted with remote),
// never shown again.
TEST_F(WriteBackTest, AnUnlinkedVersionWhoseUploadFailsLeavesTheOlderObjectUnlinked) {
  for (UnlinkPolicy policy : {UnlinkPolicy::kLocal, UnlinkPolicy::kRemote}) {
    SCOPED_TRACE(policy == UnlinkPolicy::kLocal ? "local" : "remote");
    fs_.reset();
    mem_ = std::make_shared<MemoryStore>();
    faults_ = std::make_shared<FaultStore>(mem_);
    auto gate = std::make_shared<GatedStore>(faults_);
    store_ = gate;
    options_.unlink_policy = policy;
    Mount();
    mem_->PutObject("p/u.bin", "WHOLE CHUNK");
    RewriteStored("u.bin", "whole chunk");
    gate->WaitArrived(1);  // the new version's upload is on its way
    faults_->InjectError(StoreOp::kPut, {Status::Unavailable("injected"), FaultStore::kForever});
    ASSERT_TRUE(fs_->Unlink(1, "u.bin").ok());
    gate->Open();
    fs_->DrainWriteBack();
    EXPECT_EQ(fs_->Lookup(1, "u.bin").status().code(), StatusCode::kNotFound)
        << "the older object showed again";
    EXPECT_EQ(Stored("u.bin"), policy == UnlinkPolicy::kLocal);
  }
}

// A write to a chunk whose upload is on its way waits for the transfer (the bytes sent stay the
// bytes accepted), then makes a new version that replaces the object.
TEST_F(WriteBackTest, AWriteDuringTheUploadWaitsThenReplacesTheObject) {
  auto gate = std::make_shared<GatedStore>(mem_);
  const uint64_t fh = AcceptedAndHeld(gate, "r.bin", "version one");
  {
    ScopedDeadline deadline(100, "blocking_timeout=0.1s");
    auto w = fs_->Write(fh, 0, "VERSION", 7);
    EXPECT_EQ(w.status().code(), StatusCode::kDeadlineExceeded) << w.status().ToString();
  }
  std::thread writer([&] { WriteAt(fh, 0, "version two"); });
  gate->Open();
  writer.join();
  ASSERT_TRUE(fs_->Flush(fh).ok());
  ASSERT_TRUE(fs_->Release(fh).ok());
  fs_->DrainWriteBack();
  EXPECT_EQ(mem_->GetObject("p/r.bin"), "version two");
}

// A whole new version accepted here is what the name shows on this node, over the older object
// too: LMCache's DEVDAX L1 rewrites a file through a shared mapping right after its first close,
// then reads it back - the older object's bytes would be the mapping's writes lost.
TEST_F(WriteBackTest, AVersionAcceptedHereIsShownOverTheOlderObject) {
  mem_->PutObject("p/v.bin", "version one");
  auto gate = std::make_shared<GatedStore>(mem_);
  store_ = gate;
  Mount();
  auto e = fs_->Lookup(1, "v.bin");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto o = fs_->Open(e->attr.ino, O_RDWR);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  WriteAt(o->fh, 0, "VERSION TWO");
  ASSERT_TRUE(fs_->Flush(o->fh).ok());
  ASSERT_TRUE(fs_->Release(o->fh).ok());
  gate->WaitArrived(1);  // accepted; its upload held
  const uint64_t fh = OpenAndRead(e->attr.ino, "VERSION TWO");
  gate->Open();
  ASSERT_TRUE(fs_->Release(fh).ok());
  fs_->DrainWriteBack();
  EXPECT_EQ(mem_->GetObject("p/v.bin"), "VERSION TWO");
}

// A rename onto a name whose chunk this node accepted and has not stored yet: that chunk is
// stored first, so the exists policy answers at the rename (SGLang's fast_file os.replace over
// a page of another size), not in the background after it returned 0.
TEST_F(WriteBackTest, ARenameOntoAChunkAcceptedHereIsAnsweredAtTheRename) {
  faults_->SetDelay(StoreOp::kPut, milliseconds(200));
  Mount();
  ASSERT_TRUE(WriteFile("page.bin", "page one").ok());
  EXPECT_FALSE(Stored("page.bin"));
  ASSERT_TRUE(fs_->Lookup(1, "page.bin").ok());
  ASSERT_TRUE(WriteFile("page.bin.tmp", "a page of another size").ok());
  EXPECT_EQ(fs_->Rename(1, "page.bin.tmp", 1, "page.bin", 0).code(), StatusCode::kAlreadyExists);
  fs_->DrainWriteBack();
  EXPECT_EQ(mem_->GetObject("p/page.bin"), "page one");
  EXPECT_EQ(fs_->WriteBackStatsNow().failed, 0u);
}

// A rewrite of a chunk accepted here and not stored yet is judged against it, as against a stored
// one: another size is EEXIST at the rewrite's close, and the accepted chunk is what is stored.
TEST_F(WriteBackTest, ARewriteOfAnAcceptedChunkIsJudgedAgainstItAtItsClose) {
  faults_->SetDelay(StoreOp::kPut, milliseconds(200));
  Mount();
  ASSERT_TRUE(WriteFile("r.bin", "one").ok());
  EXPECT_FALSE(Stored("r.bin"));
  auto e = fs_->Lookup(1, "r.bin");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  auto o = fs_->Open(e->attr.ino, O_WRONLY | O_TRUNC);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  WriteAt(o->fh, 0, "another size");
  EXPECT_EQ(CloseHandle(o->fh).code(), StatusCode::kAlreadyExists);
  fs_->DrainWriteBack();
  EXPECT_EQ(mem_->GetObject("p/r.bin"), "one");
  EXPECT_EQ(fs_->WriteBackStatsNow().failed, 0u);
}

// A writer whose file another process renames a chunk onto while it is still writing gets the
// store's answer at its own close (EEXIST: other bytes), not a 0 for a chunk then refused.
TEST_F(WriteBackTest, AWriterRenamedOverGetsTheStoresAnswerAtItsClose) {
  Mount();
  const uint64_t writer = CreateForWrite("x.bin");
  WriteAt(writer, 0, "writer A's");
  ASSERT_TRUE(WriteFile("x.bin.tmp", "B's chunk").ok());
  ASSERT_TRUE(fs_->Rename(1, "x.bin.tmp", 1, "x.bin", 0).ok());
  WriteAt(writer, 10, " chunk");
  EXPECT_EQ(CloseHandle(writer).code(), StatusCode::kAlreadyExists);
  fs_->DrainWriteBack();
  EXPECT_EQ(mem_->GetObject("p/x.bin"), "B's chunk");
}

// The publication rule's /proc walk of the writer's descriptors (one system call per descriptor:
// thousands in a GPU engine) is not paid at a write-back close: the upload applies the rule after
// the writer's RELEASE, which follows at once when the close was its last descriptor (issue 43
// item 6). `held` is what the walk would find: another writable descriptor of the writer's.
class PublicationWalkTest : public WriteBackTest {
 protected:
  static constexpr pid_t kWriter = 4242;
  void MountWithProbe() {
    Mount();
    fs_->set_process_probe(
        {.exiting = [](pid_t) { return false; },
         .killed = [](pid_t) { return false; },
         .thread_group = [](pid_t pid) { return pid; },
         .holds_writer = [this](pid_t, uint64_t, const std::string&) { return held_.load(); },
         .child_holding = nullptr});
  }
  uint64_t Walks() const { return fs_->WriteStatsNow().publication_walks; }
  uint64_t Create(const std::string& name) {
    auto cr = fs_->CreateFile(1, name, O_CREAT | O_WRONLY | O_TRUNC, kWriter);
    EXPECT_TRUE(cr.ok()) << cr.status().ToString();
    return cr.ok() ? cr->second.fh : 0;
  }
  void Write(uint64_t fh, uint64_t off, const std::string& data) {
    ASSERT_TRUE(fs_->Write(fh, off, data.data(), data.size(), kWriter).ok());
  }
  std::atomic<bool> held_{false};
};

TEST_F(PublicationWalkTest, AWriteBackCloseWalksNothingWhenItWasTheWritersLastDescriptor) {
  MountWithProbe();
  for (int i = 0; i < 3; ++i) {
    const uint64_t fh = Create("w" + std::to_string(i) + ".bin");
    Write(fh, 0, "whole chunk");
    ASSERT_TRUE(fs_->Flush(fh, kWriter).ok());
    ASSERT_TRUE(fs_->Release(fh).ok());
  }
  fs_->DrainWriteBack();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(Stored("w" + std::to_string(i) + ".bin"));
  EXPECT_EQ(Walks(), 0u) << "a write-back close walked the writer's descriptors";
}

TEST_F(PublicationWalkTest, AChunkWhoseWriterHoldsAnotherDescriptorWaitsForItsRelease) {
  MountWithProbe();
  held_ = true;  // `exec 3>f; ... >&3`: the shell still holds the file on another descriptor
  const uint64_t fh = Create("held.bin");
  Write(fh, 0, "whole chunk");
  ASSERT_TRUE(fs_->Flush(fh, kWriter).ok());
  EXPECT_EQ(Walks(), 0u) << "the close walked";
  while (Walks() == 0) std::this_thread::sleep_for(milliseconds(10));  // the upload's walk
  EXPECT_FALSE(Stored("held.bin")) << "uploaded while the writer holds another descriptor";
  held_ = false;
  ASSERT_TRUE(fs_->Release(fh).ok());  // the last descriptor's close: RELEASE
  fs_->DrainWriteBack();
  EXPECT_EQ(mem_->GetObject("p/held.bin"), "whole chunk");
}

// kvfs sync stores what was accepted; a chunk whose writer still holds another descriptor of it
// is not accepted until that descriptor's close, and sync does not publish it ahead of it.
TEST_F(PublicationWalkTest, SyncDoesNotPublishAChunkWhoseWriterHoldsAnotherDescriptor) {
  MountWithProbe();
  held_ = true;
  const uint64_t fh = Create("dup.bin");
  Write(fh, 0, "whole chunk");
  ASSERT_TRUE(fs_->Flush(fh, kWriter).ok());
  EXPECT_EQ(fs_->SyncAccepted(), "");
  EXPECT_FALSE(Stored("dup.bin")) << "sync published it while the writer holds another descriptor";
  held_ = false;
  ASSERT_TRUE(fs_->Release(fh).ok());
  EXPECT_EQ(fs_->SyncAccepted(), "");
  EXPECT_EQ(mem_->GetObject("p/dup.bin"), "whole chunk");
}

TEST_F(PublicationWalkTest, APartialChunkIsRefusedOnlyAfterTheWalk) {
  options_.chunk_sizes = {11};
  MountWithProbe();
  held_ = true;
  const uint64_t fh = Create("part.bin");
  Write(fh, 0, "whole");
  // Another descriptor of the writer's may still write the rest: nothing is refused yet.
  EXPECT_TRUE(fs_->Flush(fh, kWriter).ok());
  EXPECT_EQ(Walks(), 1u);
  Write(fh, 5, " chunk");
  held_ = false;
  ASSERT_TRUE(fs_->Flush(fh, kWriter).ok());
  ASSERT_TRUE(fs_->Release(fh).ok());
  fs_->DrainWriteBack();
  EXPECT_EQ(mem_->GetObject("p/part.bin"), "whole chunk");
}

TEST_F(PublicationWalkTest, WithoutWriteBackTheCloseWalks) {
  options_.write_back = false;
  MountWithProbe();
  const uint64_t fh = Create("sync.bin");
  Write(fh, 0, "whole chunk");
  ASSERT_TRUE(fs_->Flush(fh, kWriter).ok());
  EXPECT_EQ(Walks(), 1u);
  EXPECT_TRUE(Stored("sync.bin"));
  ASSERT_TRUE(fs_->Release(fh).ok());
}

TEST_F(WriteBackTest, OnByDefaultAndCloseIsDurableWhenTurnedOff) {
  EXPECT_TRUE(DefaultFsOptions().write_back);
  options_.write_back = false;
  faults_->SetDelay(StoreOp::kPut, milliseconds(200));
  Mount();
  ASSERT_TRUE(WriteFile("w.bin", "durable").ok());
  EXPECT_TRUE(Stored("w.bin")) << "close() returned before the object was durable";
}

}  // namespace
}  // namespace kvfs
