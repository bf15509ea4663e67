// StoreWrapper forwards every call to another ObjectStore, so a decorator (fault injection,
// metrics, key prefixing) overrides only what it changes. Thread-safe if the wrapped store and the
// decorator's Begin are.
//
// Every operation of the list in objstore/store_ops.h passes through Begin, so a decorator that
// treats all operations alike (MeteredStore, the tests' FaultStore) overrides Begin alone and
// meets a new operation without a change of its own. A decorator that changes one operation
// overrides that method and calls the StoreWrapper method to forward it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <utility>

#include "objstore/object_store.h"
#include "objstore/store_ops.h"

namespace kvfs {

class StoreWrapper : public ObjectStore {
 public:
  explicit StoreWrapper(std::shared_ptr<ObjectStore> target) : target_(std::move(target)) {}

  ObjectStore* target() const { return target_.get(); }

  std::string Describe() const override { return target_->Describe(); }
  StoreStats Stats() const override { return target_->Stats(); }

  // --- The operations (objstore/store_ops.h), one forwarding each ---
  Status CheckAccess() override {
    return Intercepted<Status>(Call(StoreOp::kCheckAccess), [&] { return target_->CheckAccess(); });
  }
  Result<ObjectInfo> Head(const std::string& key) override {
    return Intercepted<Result<ObjectInfo>>(Call(StoreOp::kHead, key),
                                           [&] { return target_->Head(key); });
  }
  void GetAsync(const GetRequest& req, char* dst, GetCallback done) override {
    InterceptedAsync(Call(StoreOp::kGet, req.key), std::move(done),
                     [&](GetCallback d) { target_->GetAsync(req, dst, std::move(d)); });
  }
  // The same operation as GetAsync (StoreOp::kGet).
  void GetStreamAsync(const GetRequest& req, GetSink sink, GetCallback done) override {
    InterceptedAsync(Call(StoreOp::kGet, req.key), std::move(done), [&](GetCallback d) {
      target_->GetStreamAsync(req, std::move(sink), std::move(d));
    });
  }
  void PutAsync(const std::string& key, const Body& body, const PutOptions& opts,
                PutCallback done) override {
    InterceptedAsync(Call(StoreOp::kPut, key, {}, body.length), std::move(done),
                     [&](PutCallback d) { target_->PutAsync(key, body, opts, std::move(d)); });
  }
  Result<std::string> CreateMultipartUpload(const std::string& key,
                                            const MultipartOptions& opts) override {
    return Intercepted<Result<std::string>>(Call(StoreOp::kCreateMultipart, key), [&] {
      return target_->CreateMultipartUpload(key, opts);
    });
  }
  void UploadPartAsync(const std::string& key, const std::string& upload_id, int part_number,
                       const Body& body, PartCallback done) override {
    InterceptedAsync(Call(StoreOp::kUploadPart, key, {}, body.length), std::move(done),
                     [&](PartCallback d) {
                       target_->UploadPartAsync(key, upload_id, part_number, body, std::move(d));
                     });
  }
  Result<ObjectInfo> CompleteMultipartUpload(const std::string& key, const std::string& upload_id,
                                             const std::vector<CompletedPart>& parts,
                                             const PutOptions& opts) override {
    return Intercepted<Result<ObjectInfo>>(Call(StoreOp::kCompleteMultipart, key), [&] {
      return target_->CompleteMultipartUpload(key, upload_id, parts, opts);
    });
  }
  Status AbortMultipartUpload(const std::string& key, const std::string& upload_id) override {
    return Intercepted<Status>(Call(StoreOp::kAbortMultipart, key),
                               [&] { return target_->AbortMultipartUpload(key, upload_id); });
  }
  Result<ListResult> List(const ListRequest& req) override {
    return Intercepted<Result<ListResult>>(Call(StoreOp::kList, req.prefix),
                                           [&] { return target_->List(req); });
  }
  Result<std::vector<UnfinishedUpload>> ListUnfinishedUploads(const std::string& prefix) override {
    return Intercepted<Result<std::vector<UnfinishedUpload>>>(
        Call(StoreOp::kListUnfinishedUploads, prefix),
        [&] { return target_->ListUnfinishedUploads(prefix); });
  }
  Status Delete(const std::string& key, const DeleteOptions& opts = {}) override {
    return Intercepted<Status>(Call(StoreOp::kDelete, key),
                               [&] { return target_->Delete(key, opts); });
  }
  Result<ObjectInfo> Copy(const std::string& src_key, const std::string& dst_key,
                          const PutOptions& opts) override {
    return Intercepted<Result<ObjectInfo>>(Call(StoreOp::kCopy, src_key, dst_key),
                                           [&] { return target_->Copy(src_key, dst_key, opts); });
  }

 protected:
  // One call of an operation, as Begin sees it. The keys are valid only during Begin.
  struct Call {
    explicit Call(StoreOp o, std::string_view k = {}, std::string_view k2 = {}, uint64_t body = 0)
        : op(o), key(k), key2(k2), body_bytes(body) {}
    StoreOp op;
    std::string_view key;   // the object key; List, ListUnfinishedUploads: the prefix;
                            // Copy: the source; CheckAccess: ""
    std::string_view key2;  // Copy: the destination; otherwise ""
    uint64_t body_bytes;    // PUT, UploadPart: the body's length; otherwise 0
  };
  // What a decorator's Begin decides for one call.
  struct Interception {
    // Not OK: the call fails with this at once and never reaches the wrapped store.
    Status fail;
    // Set: runs once when the wrapped store has finished the call (for an ...Async call, where
    // its callback runs), with the outcome and the bytes it moved (a GET's bytes read; a PUT's or
    // part's body length). Its result is what the caller sees: OK keeps the outcome, an error
    // replaces it. Unset: the call is forwarded untouched.
    std::function<Status(const Status& outcome, uint64_t bytes)> end;
  };

  // Runs on the calling thread as every operation starts, before it is forwarded. The default
  // forwards untouched.
  virtual Interception Begin(const Call& call) { return {}; }

 private:
  static const Status& StatusOf(const Status& s) { return s; }
  template <typename T>
  static const Status& StatusOf(const Result<T>& r) {
    return r.status();
  }
  static uint64_t BytesOf(const Result<uint64_t>& r, uint64_t body_bytes) {
    return r.ok() ? *r : 0;
  }
  template <typename R>
  static uint64_t BytesOf(const R&, uint64_t body_bytes) {
    return body_bytes;
  }

  template <typename R, typename Forward>
  R Intercepted(const Call& call, Forward forward) {
    Interception ic = Begin(call);
    if (!ic.fail.ok()) return ic.fail;
    R r = forward();
    if (ic.end) {
      Status st = ic.end(StatusOf(r), BytesOf(r, call.body_bytes));
      if (!st.ok()) return st;
    }
    return r;
  }

  template <typename R, typename Forward>
  void InterceptedAsync(const Call& call, std::function<void(R)> done, Forward forward) {
    Interception ic = Begin(call);
    if (!ic.fail.ok()) return done(std::move(ic.fail));
    if (!ic.end) return forward(std::move(done));
    forward(std::function<void(R)>(
        [end = std::move(ic.end), body = call.body_bytes, done = std::move(done)](R r) {
          Status st = end(StatusOf(r), BytesOf(r, body));
          if (!st.ok()) return done(std::move(st));
          done(std::move(r));
        }));
  }

  std::shared_ptr<ObjectStore> target_;
};

}  // namespace kvfs
