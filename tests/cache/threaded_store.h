// ThreadedStore: a test decorator that completes every GET on its own thread (as a real store's
// I/O thread would, instead of inline), counts the bytes each key delivered, and can hold GETs
// back until the test releases them, to provoke "read before the whole object arrived" and
// "many openers while the download runs".
// Thread-safe. The destructor releases held GETs and joins all threads.
#pragma once

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

  // GETs whose offset is >= `offset` wait until Release().
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
      {
        std::unique_lock<std::mutex> l(mu_);
        if (req.offset >= hold_from_) {
          held_++;
          cv_.wait(l, [&] { return req.offset < hold_from_; });
          held_--;
        }
      }
      Result<uint64_t> r = target()->Get(req, dst);
      if (r.ok()) {
        std::lock_guard<std::mutex> l(mu_);
        bytes_[req.key] += *r;
      }
      done(std::move(r));
    });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t hold_from_ = UINT64_MAX;
  int held_ = 0;
  uint64_t gets_ = 0;
  std::map<std::string, uint64_t> bytes_;
  std::vector<std::thread> threads_;
};

}  // namespace kvfs::testing
