#include "tests/fakes/fault_store.h"

#include <thread>
#include <utility>

namespace kvfs {
namespace {

bool Matches(const std::string& filter, const std::string& key, const std::string& key2) {
  return filter.empty() || key.find(filter) != std::string::npos ||
         (!key2.empty() && key2.find(filter) != std::string::npos);
}

size_t Index(FaultStore::Op op) { return static_cast<size_t>(op); }

}  // namespace

FaultStore::FaultStore(std::shared_ptr<ObjectStore> target) : StoreWrapper(std::move(target)) {}

void FaultStore::InjectError(Op op, Fault fault) {
  if (fault.status.ok()) fault.status = Status::Internal("FaultStore: fault injected with OK");
  MutexLock l(&mu_);
  faults_[Index(op)].push_back(std::move(fault));
}

void FaultStore::SetDelay(Op op, std::chrono::milliseconds delay) {
  MutexLock l(&mu_);
  delays_[Index(op)] = delay;
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

uint64_t FaultStore::Calls(Op op) const { return calls_[Index(op)].load(); }

void FaultStore::ResetCalls() {
  for (auto& c : calls_) c.store(0);
}

FaultStore::Decision FaultStore::Begin(Op op, const std::string& key, const std::string& key2) {
  calls_[Index(op)].fetch_add(1);
  Decision d;
  std::chrono::milliseconds delay;
  {
    MutexLock l(&mu_);
    delay = delays_[Index(op)];
    auto& q = faults_[Index(op)];
    for (auto it = q.begin(); it != q.end(); ++it) {
      if (!Matches(it->key_contains, key, key2)) continue;
      d.error = it->status;
      d.after_target = it->after_target;
      if (it->count != kForever && --it->count <= 0) q.erase(it);
      break;
    }
  }
  if (delay.count() > 0) std::this_thread::sleep_for(delay);
  return d;
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

Status FaultStore::CheckAccess() {
  Decision d = Begin(Op::kCheckAccess, "");
  if (d.error && !d.after_target) return *d.error;
  Status st = StoreWrapper::CheckAccess();
  return d.error ? *d.error : st;
}

Result<ObjectInfo> FaultStore::Head(const std::string& key) {
  Decision d = Begin(Op::kHead, key);
  if (d.error && !d.after_target) return *d.error;
  return Finish(d, StoreWrapper::Head(key));
}

void FaultStore::GetAsync(const GetRequest& req, char* dst, GetCallback done) {
  Decision d = Begin(Op::kGet, req.key);
  if (d.error && !d.after_target) return done(*d.error);
  std::string key = req.key;
  StoreWrapper::GetAsync(req, dst, [this, d, key, dst, done = std::move(done)](Result<uint64_t> r) {
    if (d.error) return done(*d.error);
    if (!r.ok()) return done(std::move(r));
    uint64_t n = *r;
    // Consumed only by a successful GET, so a truncation is not wasted on a missing key.
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

void FaultStore::PutAsync(const std::string& key, const Body& body, const PutOptions& opts,
                          PutCallback done) {
  Decision d = Begin(Op::kPut, key);
  if (d.error && !d.after_target) return done(*d.error);
  StoreWrapper::PutAsync(key, body, opts, [d, done = std::move(done)](Result<ObjectInfo> r) {
    done(Finish(d, std::move(r)));
  });
}

Result<std::string> FaultStore::CreateMultipartUpload(const std::string& key) {
  Decision d = Begin(Op::kCreateMultipart, key);
  if (d.error && !d.after_target) return *d.error;
  return Finish(d, StoreWrapper::CreateMultipartUpload(key));
}

void FaultStore::UploadPartAsync(const std::string& key, const std::string& upload_id,
                                 int part_number, const Body& body, PartCallback done) {
  Decision d = Begin(Op::kUploadPart, key);
  if (d.error && !d.after_target) return done(*d.error);
  StoreWrapper::UploadPartAsync(
      key, upload_id, part_number, body,
      [d, done = std::move(done)](Result<std::string> r) { done(Finish(d, std::move(r))); });
}

Result<ObjectInfo> FaultStore::CompleteMultipartUpload(const std::string& key,
                                                       const std::string& upload_id,
                                                       const std::vector<CompletedPart>& parts,
                                                       const PutOptions& opts) {
  Decision d = Begin(Op::kCompleteMultipart, key);
  if (d.error && !d.after_target) return *d.error;
  return Finish(d, StoreWrapper::CompleteMultipartUpload(key, upload_id, parts, opts));
}

Status FaultStore::AbortMultipartUpload(const std::string& key, const std::string& upload_id) {
  Decision d = Begin(Op::kAbortMultipart, key);
  if (d.error && !d.after_target) return *d.error;
  Status st = StoreWrapper::AbortMultipartUpload(key, upload_id);
  return d.error ? *d.error : st;
}

Result<ListResult> FaultStore::List(const ListRequest& req) {
  Decision d = Begin(Op::kList, req.prefix);
  if (d.error && !d.after_target) return *d.error;
  return Finish(d, StoreWrapper::List(req));
}

Status FaultStore::Delete(const std::string& key) {
  Decision d = Begin(Op::kDelete, key);
  if (d.error && !d.after_target) return *d.error;
  Status st = StoreWrapper::Delete(key);
  return d.error ? *d.error : st;
}

Result<ObjectInfo> FaultStore::Copy(const std::string& src_key, const std::string& dst_key,
                                    const PutOptions& opts) {
  Decision d = Begin(Op::kCopy, src_key, dst_key);
  if (d.error && !d.after_target) return *d.error;
  return Finish(d, StoreWrapper::Copy(src_key, dst_key, opts));
}

}  // namespace kvfs
