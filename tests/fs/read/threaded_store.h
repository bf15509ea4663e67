// ThreadedStore: a test decorator that completes every GET on its own thread (as a real store's
// I/O thread would, instead of inline), streams GetStreamAsync in 64 KiB pieces, counts the bytes
// each key delivered, and can hold GETs back until the test releases them, to provoke "read
// before the whole object arrived" and "many openers while the download runs".
// Thread-safe. The destructor releases held GETs and joins all threads.
#pragma once

#include <algorithm>
#include <map>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "objstore/store_wrapper.h"

namespace kvfs::testing {

class ThreadedStore : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  ~ThreadedStore() override {
    Release();
    std::vector<std::thread> ts;
    {
      MutexLock l(&mu_);
      ts.swap(threads_);
    }
    for (auto& t : ts) t.join();
  }

  // GETs whose offset is >= `offset` wait until Release(); a streamed GET that spans `offset`
  // delivers the bytes before it, then waits.
  void HoldGetsFrom(uint64_t offset) EXCLUDES(mu_) {
    MutexLock l(&mu_);
    hold_from_ = offset;
  }
  void Release() EXCLUDES(mu_) {
    MutexLock l(&mu_);
    hold_from_ = UINT64_MAX;
    cv_.SignalAll();
  }
  // GETs waiting in HoldGetsFrom.
  int held() const EXCLUDES(mu_) {
    MutexLock l(&mu_);
    return held_;
  }
  uint64_t BytesServed(const std::string& key) const EXCLUDES(mu_) {
    MutexLock l(&mu_);
    auto it = bytes_.find(key);
    return it == bytes_.end() ? 0 : it->second;
  }
  uint64_t Gets() const EXCLUDES(mu_) {
    MutexLock l(&mu_);
    return gets_;
  }

  void GetAsync(const GetRequest& req, char* dst, GetCallback done) override {
    MutexLock l(&mu_);
    gets_++;
    threads_.emplace_back([this, req, dst, done = std::move(done)] {
      WaitUnlessBefore(req.offset);
      Result<uint64_t> r = target()->Get(req, dst);
      if (r.ok()) {
        MutexLock l(&mu_);
        bytes_[req.key] += *r;
      }
      done(std::move(r));
    });
  }

  void GetStreamAsync(const GetRequest& req, GetSink sink, GetCallback done) override {
    MutexLock l(&mu_);
    gets_++;
    threads_.emplace_back([this, req, sink = std::move(sink), done = std::move(done)] {
      if (req.length == GetRequest::kToEnd) {
        return done(Status::InvalidArgument("ThreadedStore streams only known lengths"));
      }
      WaitUnlessBefore(req.offset);
      std::vector<char> buf(req.length);
      Result<uint64_t> r = target()->Get(req, buf.data());
      if (!r.ok()) return done(std::move(r));
      constexpr uint64_t kPiece = 64 << 10;
      for (uint64_t at = 0; at < *r; at += kPiece) {
        WaitUnlessBefore(req.offset + at);
        Status st = sink(buf.data() + at, std::min(kPiece, *r - at));
        if (!st.ok()) return done(std::move(st));
        MutexLock l(&mu_);
        bytes_[req.key] += std::min(kPiece, *r - at);
      }
      done(std::move(r));
    });
  }

 private:
  // Holds the calling thread while `offset` is at or past the hold point.
  void WaitUnlessBefore(uint64_t offset) EXCLUDES(mu_) {
    MutexLock l(&mu_);
    if (offset < hold_from_) return;
    held_++;
    cv_.Wait(&mu_, [&]() REQUIRES(mu_) { return offset < hold_from_; });
    held_--;
  }

  mutable Mutex mu_;
  CondVar cv_;
  uint64_t hold_from_ GUARDED_BY(mu_) = UINT64_MAX;
  int held_ GUARDED_BY(mu_) = 0;
  uint64_t gets_ GUARDED_BY(mu_) = 0;
  std::map<std::string, uint64_t> bytes_ GUARDED_BY(mu_);
  std::vector<std::thread> threads_ GUARDED_BY(mu_);
};

}  // namespace kvfs::testing
