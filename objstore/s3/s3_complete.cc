// CompleteMultipartUpload: the one non-idempotent step. A failed attempt (dropped connection, 5xx,
// an error document inside a 200) is not blindly repeated: a HEAD first checks whether the object
// already exists with the multipart ETag these parts produce; only if not is the request sent
// again, on an engine timer with back-off.
//
// Every step (HEAD, attempt, retry) runs under the caller's deadline (a close()'s
// blocking_timeout): the steps after the first run on the loop thread, which has none of its own,
// so the deadline is captured at the start and set again around each step.

#include <algorithm>
#include <future>

#include "base/deadline.h"
#include "base/log.h"
#include "objstore/s3/s3_store_impl.h"
#include "objstore/s3/s3_xml.h"

namespace kvfs::s3 {
namespace {

// Lives until the final result is set; every step runs on the loop thread except Start().
class CompleteOp : public std::enable_shared_from_this<CompleteOp> {
 public:
  CompleteOp(S3Store* store, S3Client* client, std::string key, std::string upload_id,
             const std::vector<CompletedPart>& parts, const PutOptions& opts)
      : store_(store),
        client_(client),
        key_(std::move(key)),
        upload_id_(std::move(upload_id)),
        xml_(BuildCompleteMultipartXml(parts)),
        expected_etag_(ExpectedMultipartEtag(parts)),
        mode_(client->options().conditional_create),
        conditional_(opts.if_none_match),
        what_("CompleteMultipartUpload " + S3Uri(client->options().bucket, key_)) {}

  Result<ObjectInfo> Run() {
    const int64_t now = client_->clock()->NowMs();
    deadline_ms_ = now + client_->options().operation_timeout_ms;
    caller_deadline_ms_ = ThreadDeadlineMs();
    caller_source_ = ThreadDeadlineSource();
    if (caller_deadline_ms_ > 0) {  // retries stop at the caller's deadline too
      deadline_ms_ =
          std::min(deadline_ms_, now + std::max<int64_t>(1, caller_deadline_ms_ - MonotonicMs()));
    }
    auto self = shared_from_this();
    if (conditional_ && mode_ != ConditionalCreateMode::kHeader) {
      // HEAD first: servers differ in whether they honour If-None-Match on completion.
      store_->HeadAsync(key_, [self](Result<ObjectInfo> r) {
        if (r.ok()) {
          self->Finish(self->Exists(Status::OK()));
        } else if (r.status().code() != StatusCode::kNotFound) {
          self->Finish(r.status());
        } else {
          self->Attempt();
        }
      });
    } else {
      Attempt();
    }
    return result_.get_future().get();
  }

 private:
  Status Exists(const Status& from) const {
    Status st = Status::AlreadyExists(what_ + ": the key already exists (conditional create)");
    st.SetHttp(from.http_status(), from.s3_code(), from.request_id());
    return st;
  }

  // The caller's deadline on the current thread for the scope of one step (no change without one).
  ScopedDeadline CallerDeadline() const {
    if (caller_deadline_ms_ == 0) return ScopedDeadline(0, "");
    return ScopedDeadline(std::max<int64_t>(1, caller_deadline_ms_ - MonotonicMs()),
                          caller_source_);
  }

  void Attempt() {
    const ScopedDeadline deadline = CallerDeadline();
    ++attempts_;
    auto call = std::make_shared<S3Call>();
    call->operation = "CompleteMultipartUpload";
    call->method = "POST";
    call->key = key_;
    call->query = {{"uploadId", upload_id_}};
    call->retry = false;
    call->SetBody(xml_);
    send_header_ = conditional_ && mode_ != ConditionalCreateMode::kHeadCheck && !header_refused_;
    if (send_header_) call->headers.emplace_back("If-None-Match", "*");
    auto self = shared_from_this();
    S3Client* client = client_;
    call->check = [client, call_ptr = call.get()](const HttpExchange& ex) -> Status {
      Status st = client->DefaultCheck(*call_ptr, ex);
      if (!st.ok()) return st;
      Result<WriteResultDoc> doc = ParseCompleteMultipartUpload(ex.body);
      if (!doc.ok()) return Status::Unavailable(doc.status().message());
      if (doc->is_error) {  // failed after the 200 status line
        return MapHttpError(static_cast<int>(ex.http_status), doc->error,
                            client->Context(call_ptr->operation, call_ptr->key));
      }
      return Status::OK();
    };
    call->done = [self](Status st, std::unique_ptr<HttpExchange> ex) {
      self->OnResult(std::move(st), std::move(ex));
    };
    client_->Execute(std::move(call));
  }

  void OnResult(Status st, std::unique_ptr<HttpExchange> ex) {
    if (st.ok()) {
      Result<WriteResultDoc> doc = ParseCompleteMultipartUpload(ex->body);
      FillFromHead(doc.ok() ? doc->etag : "", Status::OK());
      return;
    }
    if (st.code() == StatusCode::kCancelled) return Finish(st);
    if (send_header_ && st.code() == StatusCode::kPreconditionFailed) {
      if (mode_ == ConditionalCreateMode::kHeader) return Finish(Exists(st));
      // kAuto: believe the 412 only if HEAD agrees (Ceph RGW 16 may answer 412 on new keys).
      const ScopedDeadline deadline = CallerDeadline();
      auto self = shared_from_this();
      store_->HeadAsync(key_, [self, st](Result<ObjectInfo> r) {
        if (r.ok()) return self->Finish(self->Exists(st));
        if (r.status().code() != StatusCode::kNotFound) return self->Finish(r.status());
        self->header_refused_ = true;
        self->Attempt();
      });
      return;
    }
    const bool maybe_done = st.retryable() || (attempts_ > 1 && st.s3_code() == "NoSuchUpload");
    if (!maybe_done) return Finish(st);
    Verify(std::move(st));
  }

  // After a failure that may hide a success: did the object appear with our parts' ETag?
  void Verify(Status failure) {
    const ScopedDeadline deadline = CallerDeadline();
    auto self = shared_from_this();
    store_->HeadAsync(key_, [self, failure](Result<ObjectInfo> r) {
      if (r.ok() && !self->expected_etag_.empty() && r->etag == self->expected_etag_) {
        LogInfo("s3: {}: attempt {} failed ({}), but the object is complete", self->what_,
                self->attempts_, failure.ToString());
        return self->Finish(std::move(r));
      }
      if (failure.s3_code() == "NoSuchUpload") return self->Finish(failure);
      std::optional<int64_t> delay =
          self->client_->policy()->NextDelayMs(failure, self->attempts_, self->deadline_ms_);
      if (!delay) {
        return self->Finish(
            failure.Annotate("after " + std::to_string(self->attempts_) + " attempts"));
      }
      self->client_->RunAfter(*delay, [self] { self->Attempt(); });
    });
  }

  // Success: S3 answers with the ETag but never the size, and Ceph RGW with an empty ETag; a
  // HEAD supplies both.
  void FillFromHead(std::string etag, const Status&) {
    const ScopedDeadline deadline = CallerDeadline();
    auto self = shared_from_this();
    store_->HeadAsync(key_, [self, etag](Result<ObjectInfo> r) {
      if (!r.ok()) {
        return self->Finish(
            r.status().Annotate(self->what_ + " succeeded, but HEAD of the new object failed"));
      }
      if (r->etag.empty()) r->etag = etag;
      self->Finish(std::move(r));
    });
  }

  void Finish(Result<ObjectInfo> r) { result_.set_value(std::move(r)); }

  S3Store* const store_;
  S3Client* const client_;
  const std::string key_;
  const std::string upload_id_;
  const std::string xml_;
  const std::string expected_etag_;
  const ConditionalCreateMode mode_;
  const bool conditional_;
  const std::string what_;
  std::promise<Result<ObjectInfo>> result_;
  int64_t deadline_ms_ = 0;  // client clock: operation_timeout_ms or the caller's, if earlier
  int64_t caller_deadline_ms_ = 0;  // MonotonicMs; 0: the caller had none
  std::string caller_source_;
  int attempts_ = 0;
  bool send_header_ = false;
  bool header_refused_ = false;
};

}  // namespace

Result<ObjectInfo> S3Store::CompleteMultipartUpload(const std::string& key,
                                                    const std::string& upload_id,
                                                    const std::vector<CompletedPart>& parts,
                                                    const PutOptions& opts) {
  if (parts.empty()) {
    return Status::InvalidArgument("CompleteMultipartUpload " +
                                   S3Uri(client_->options().bucket, key) + ": no parts");
  }
  auto op = std::make_shared<CompleteOp>(this, client_.get(), key, upload_id, parts, opts);
  return op->Run();
}

}  // namespace kvfs::s3
