// ThreadedStore: a test decorator that completes every GET on its own thread (as a real store's
// I/O thread would, instead of inline), streams GetStreamAsync in 64 KiB pieces, counts the bytes
// each key delivered, and can hold GETs back until the test releases them, to provoke "read
// before the whole object arrived" and "many openers while the download runs".
// Thread-safe. The destructor releases held GETs and joins all threads.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "objstore/store_wrapper.h"

namespace kvfs::testing {

class ThreadedStore : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  ~ThreadedStore() override {
    Release();
    std::vector<std::thread> ts;
    {
      std::lock_guard<std::mutex> l(mu_);
      ts.swap(threads_);
    }
    for (auto& t : ts) t.join();
  }

  // GETs whose offset is >= `offset` wait until Release(); a streamed GET that spans `offset`
  // delivers the bytes before it, then waits.
  void HoldGetsFrom(uint64_t offset) {
    std::lock_guard<std::mutex> l(mu_);
    hold_from_ = offset;
  }
  void Release() {
    std::lock_guard<std::mutex> l(mu_);
    hold_from_ = UINT64_MAX;
    cv_.notify_all();
  }
  // GETs waiting in HoldGetsFrom.
  int held() const {
    std::lock_guard<std::mutex> l(mu_);
    return held_;
  }
  uint64_t BytesServed(const std::string& key) const {
    std::lock_guard<std::mutex> l(mu_);
    auto it = bytes_.find(key);
    return it == bytes_.end() ? 0 : it->second;
  }
  uint64_t Gets() const {
    std::lock_guard<std::mutex> l(mu_);
    return gets_;
  }

  void GetAsync(const GetRequest& req, char* dst, GetCallback done) override {
    std::lock_guard<std::mutex> l(mu_);
    gets_++;
    threads_.emplace_back([this, req, dst, done = std::move(done)] {
      WaitUnlessBefore(req.offset);
      Result<uint64_t> r = target()->Get(req, dst);
      if (r.ok()) {
        std::lock_guard<std::mutex> l(mu_);
        bytes_[req.key] += *r;
      }
      done(std::move(r));
    });
  }

  void GetStreamAsync(const GetRequest& req, GetSink sink, GetCallback done) override {
    std::lock_guard<std::mutex> l(mu_);
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
        std::lock_guard<std::mutex> l(mu_);
        bytes_[req.key] += std::min(kPiece, *r - at);
      }
      done(std::move(r));
    });
  }

 private:
  // Holds the calling thread while `offset` is at or past the hold point.
  void WaitUnlessBefore(uint64_t offset) {
    std::unique_lock<std::mutex> l(mu_);
    if (offset < hold_from_) return;
    held_++;
    cv_.wait(l, [&] { return offset < hold_from_; });
    held_--;
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t hold_from_ = UINT64_MAX;
  int held_ = 0;
  uint64_t gets_ = 0;
  std::map<std::string, uint64_t> bytes_;
  std::vector<std::thread> threads_;
};

}  // namespace kvfs::testing
