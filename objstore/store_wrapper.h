// StoreWrapper forwards every call to another ObjectStore, so a decorator (fault injection,
// metrics, key prefixing) overrides only what it changes. Thread-safe if the wrapped store is.
#pragma once

#include <memory>
#include <utility>

#include "objstore/object_store.h"

namespace kvfs {

class StoreWrapper : public ObjectStore {
 public:
  explicit StoreWrapper(std::shared_ptr<ObjectStore> target) : target_(std::move(target)) {}

  ObjectStore* target() const { return target_.get(); }

  std::string Describe() const override { return target_->Describe(); }
  Status CheckAccess() override { return target_->CheckAccess(); }
  StoreStats Stats() const override { return target_->Stats(); }
  Result<ObjectInfo> Head(const std::string& key) override { return target_->Head(key); }
  void GetAsync(const GetRequest& req, char* dst, GetCallback done) override {
    target_->GetAsync(req, dst, std::move(done));
  }
  void GetStreamAsync(const GetRequest& req, GetSink sink, GetCallback done) override {
    target_->GetStreamAsync(req, std::move(sink), std::move(done));
  }
  void PutAsync(const std::string& key, const Body& body, const PutOptions& opts,
                PutCallback done) override {
    target_->PutAsync(key, body, opts, std::move(done));
  }
  Result<std::string> CreateMultipartUpload(const std::string& key) override {
    return target_->CreateMultipartUpload(key);
  }
  void UploadPartAsync(const std::string& key, const std::string& upload_id, int part_number,
                       const Body& body, PartCallback done) override {
    target_->UploadPartAsync(key, upload_id, part_number, body, std::move(done));
  }
  Result<ObjectInfo> CompleteMultipartUpload(const std::string& key, const std::string& upload_id,
                                             const std::vector<CompletedPart>& parts,
                                             const PutOptions& opts) override {
    return target_->CompleteMultipartUpload(key, upload_id, parts, opts);
  }
  Status AbortMultipartUpload(const std::string& key, const std::string& upload_id) override {
    return target_->AbortMultipartUpload(key, upload_id);
  }
  Result<ListResult> List(const ListRequest& req) override { return target_->List(req); }
  Result<std::vector<UnfinishedUpload>> ListUnfinishedUploads(const std::string& prefix) override {
    return target_->ListUnfinishedUploads(prefix);
  }
  Status Delete(const std::string& key) override { return target_->Delete(key); }
  Result<ObjectInfo> Copy(const std::string& src_key, const std::string& dst_key,
                          const PutOptions& opts) override {
    return target_->Copy(src_key, dst_key, opts);
  }

 private:
  std::shared_ptr<ObjectStore> target_;
};

}  // namespace kvfs
