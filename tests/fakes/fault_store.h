// FaultStore: an ObjectStore decorator that injects failures, for unit tests of the layers above
// the object store (filesystem, cache, upload and read paths).
//
// Usage:
//   auto mem = NewMemoryStore();
//   auto faults = std::make_shared<FaultStore>(mem);
//   faults->InjectError(FaultStore::Op::kGet, {Status::Unavailable("injected"), /*count=*/2});
//   faults->SetDelay(FaultStore::Op::kPut, std::chrono::milliseconds(50));
//   faults->TruncateGets(1, /*keep_bytes=*/100);     // next GET reports only 100 bytes
//   faults->CorruptGets(1);                           // next GET delivers flipped bytes, OK status
//   ... exercise code that holds `faults` as its ObjectStore ...
//   EXPECT_EQ(faults->Calls(FaultStore::Op::kGet), 3u);
//
// Rules:
//  - Error faults of one op are consumed in the order they were injected; a call uses the first
//    one whose key filter matches. A fault with count N applies to the next N matching calls;
//    count kForever applies until ClearFaults().
//  - By default a failed call never reaches the wrapped store. With `after_target` the call runs
//    on the wrapped store first and then reports the error: a "lost reply" (the PUT happened but
//    the caller saw a failure), to test idempotent retries.
//  - Keys matched by `key_contains`: the object key of the call; the prefix for List and
//    ListUnfinishedUploads; either the
//    source or the destination key for Copy; "" for CheckAccess.
//  - Delays sleep on the calling thread before the call is forwarded (also for ...Async calls);
//    they are for provoking races and time limits, never for asserting timings.
//  - Truncation and corruption apply to successful GETs only: a truncated GET completes with at
//    most keep_bytes (as if the object ended early); a corrupted GET XORs every delivered byte
//    with 0x5A and still reports success (as silent corruption on the wire or disk would).
//  - Calls() counts every call of an op, failed or not.
// Thread-safe: one mutex guards the rules; it is never held while the wrapped store runs.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include "base/mutex.h"
#include "base/thread_annotations.h"
#include "objstore/store_wrapper.h"

namespace kvfs {

class FaultStore : public StoreWrapper {
 public:
  // The operations of objstore/store_ops.h (FaultStore::Op::kGet): every one of them can be
  // faulted, delayed and counted, a new one with no change here.
  using Op = StoreOp;
  static constexpr int kForever = -1;

  struct Fault {
    // A constructor (not an aggregate) so {status, count} compiles without
    // -Wmissing-field-initializers.
    Fault(Status s, int n = 1, std::string key = "", bool after = false)
        : status(std::move(s)), count(n), key_contains(std::move(key)), after_target(after) {}
    Status status;              // the error returned (must not be OK)
    int count = 1;              // matching calls it applies to; kForever: until ClearFaults()
    std::string key_contains;   // only keys containing this; "" matches every key
    bool after_target = false;  // forward the call first, then report the error
  };

  explicit FaultStore(std::shared_ptr<ObjectStore> target);

  void InjectError(Op op, Fault fault);
  // Every call of `op` first sleeps `delay` (zero removes it).
  void SetDelay(Op op, std::chrono::milliseconds delay);
  // The next `count` successful GETs (kForever: all) whose key contains key_contains complete
  // with at most keep_bytes.
  void TruncateGets(int count, uint64_t keep_bytes, std::string key_contains = "");
  // The next `count` successful GETs (kForever: all) deliver corrupted bytes.
  void CorruptGets(int count, std::string key_contains = "");
  // Removes all faults, delays, truncations and corruptions; keeps the call counters.
  void ClearFaults();

  uint64_t Calls(Op op) const;
  void ResetCalls();

  // --- ObjectStore: what differs from StoreWrapper's forwarding ---
  // Truncates and corrupts GETs (the faults and delays of every operation are applied in Begin).
  void GetAsync(const GetRequest& req, char* dst, GetCallback done) override;
  // Through GetAsync (buffered), so that the faults and mangles above apply to streamed GETs too.
  void GetStreamAsync(const GetRequest& req, GetSink sink, GetCallback done) override {
    ObjectStore::GetStreamAsync(req, std::move(sink), std::move(done));
  }

 protected:
  // Counts the call, sleeps its delay and applies the fault, if any, for its key(s).
  Interception Begin(const Call& call) override EXCLUDES(mu_);

 private:
  struct GetMangle {
    int count;
    uint64_t keep_bytes;  // truncation; max for corruption only
    bool corrupt;
    std::string key_contains;
  };

  // The truncation / corruption for a GET of key, consumed now; nullopt if none.
  std::optional<GetMangle> TakeGetMangle(const std::string& key) EXCLUDES(mu_);

  mutable Mutex mu_;
  std::array<std::deque<Fault>, kNumStoreOps> faults_ GUARDED_BY(mu_);
  std::array<std::chrono::milliseconds, kNumStoreOps> delays_ GUARDED_BY(mu_){};
  std::deque<GetMangle> get_mangles_ GUARDED_BY(mu_);
  std::array<std::atomic<uint64_t>, kNumStoreOps> calls_{};
};

}  // namespace kvfs
