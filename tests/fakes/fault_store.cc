#include "tests/fakes/fault_store.h"

#include <string_view>
#include <thread>
#include <utility>

namespace kvfs {
namespace {

bool Matches(const std::string& filter, std::string_view key, std::string_view key2) {
  return filter.empty() || key.find(filter) != std::string_view::npos ||
         (!key2.empty() && key2.find(filter) != std::string_view::npos);
}

}  // namespace

FaultStore::FaultStore(std::shared_ptr<ObjectStore> target) : StoreWrapper(std::move(target)) {}

void FaultStore::InjectError(Op op, Fault fault) {
  if (fault.status.ok()) fault.status = Status::Internal("FaultStore: fault injected with OK");
  MutexLock l(&mu_);
  faults_[OpIndex(op)].push_back(std::move(fault));
}

void FaultStore::SetDelay(Op op, std::chrono::milliseconds delay) {
  MutexLock l(&mu_);
  delays_[OpIndex(op)] = delay;
}

void FaultStore::TruncateGets(int count, uint64_t keep_bytes, std::string key_contains) {
  MutexLock l(&mu_);
  get_mangles_.push_back({count, keep_bytes, false, std::move(key_contains)});
}

void FaultStore::CorruptGets(int count, std::string key_contains) {
  MutexLock l(&mu_);
  get_mangles_.push_back({count, UINT64_MAX, true, std::move(key_contains)});
}

void FaultStore::ClearFaults() {
  MutexLock l(&mu_);
  for (auto& q : faults_) q.clear();
  delays_.fill(std::chrono::milliseconds(0));
  get_mangles_.clear();
}

uint64_t FaultStore::Calls(Op op) const { return calls_[OpIndex(op)].load(); }

void FaultStore::ResetCalls() {
  for (auto& c : calls_) c.store(0);
}

StoreWrapper::Interception FaultStore::Begin(const Call& call) {
  calls_[OpIndex(call.op)].fetch_add(1);
  Interception ic;
  std::chrono::milliseconds delay;
  {
    MutexLock l(&mu_);
    delay = delays_[OpIndex(call.op)];
    auto& q = faults_[OpIndex(call.op)];
    for (auto it = q.begin(); it != q.end(); ++it) {
      if (!Matches(it->key_contains, call.key, call.key2)) continue;
      if (it->after_target) {
        ic.end = [error = it->status](const Status&, uint64_t) { return error; };
      } else {
        ic.fail = it->status;
      }
      if (it->count != kForever && --it->count <= 0) q.erase(it);
      break;
    }
  }
  if (delay.count() > 0) std::this_thread::sleep_for(delay);
  return ic;
}

std::optional<FaultStore::GetMangle> FaultStore::TakeGetMangle(const std::string& key) {
  MutexLock l(&mu_);
  for (auto it = get_mangles_.begin(); it != get_mangles_.end(); ++it) {
    if (!Matches(it->key_contains, key, "")) continue;
    GetMangle m = *it;
    if (it->count != kForever && --it->count <= 0) get_mangles_.erase(it);
    return m;
  }
  return std::nullopt;
}

void FaultStore::GetAsync(const GetRequest& req, char* dst, GetCallback done) {
  StoreWrapper::GetAsync(req, dst,
                         [this, key = req.key, dst, done = std::move(done)](Result<uint64_t> r) {
                           if (!r.ok())
                             return done(std::move(r));  // a fault, or the store's own failure
                           uint64_t n = *r;
                           // Consumed only by a successful GET, so a truncation is not wasted on a
                           // missing key.
                           if (auto m = TakeGetMangle(key)) {
                             if (m->corrupt) {
                               for (uint64_t i = 0; i < n; ++i) dst[i] ^= 0x5A;
                             } else if (n > m->keep_bytes) {
                               n = m->keep_bytes;
                             }
                           }
                           done(n);
                         });
}

}  // namespace kvfs
