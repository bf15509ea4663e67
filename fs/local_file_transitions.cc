// LocalFile's transitions that publish or drop it (fs/local_file.h): commit (the whole-chunk
// rule, then the upload), fail, abandon by a dying process, discard, and link and rename to
// another name.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "fs/local_file.h"

namespace kvfs {

Status LocalFile::CheckWholeLocked(uint64_t size, const Place& place) const {
  const std::string& display = place.display;
  // An empty file is a valid file (touch, marker files, NIXL's pool files): never a partial
  // chunk, since no engine writes empty chunks.
  if (size == 0) return Status::OK();
  const auto& sizes = env_.options->chunk_sizes;
  bool whole = sizes.empty() || std::find(sizes.begin(), sizes.end(), size) != sizes.end();
  if (whole && sizes.empty() && env_.learnt_sizes != nullptr) {
    auto learnt = env_.learnt_sizes->CheckClose(place.key, size, env_.store);
    if (learnt) {
      return Status::InvalidArgument(
          "rejected '" + display + "': " + std::to_string(size) +
          " bytes is not a whole chunk: names like '" + ChunkSizeLearner::PatternOf(place.key) +
          "' hold " + std::to_string(learnt->size) + "-byte chunks (e.g. '" + learnt->from_key +
          "'; learn_chunk_sizes: a smaller size is taken as the new chunk size once " +
          std::to_string(ChunkSizeLearner::kEstablish) + " names have had it)");
    }
  }
  if (whole) return Status::OK();
  std::string allowed;
  for (uint64_t s : sizes) allowed += (allowed.empty() ? "" : ", ") + std::to_string(s);
  return Status::InvalidArgument("rejected '" + display + "': " + std::to_string(size) +
                                 " bytes is not a whole chunk (chunk sizes: " + allowed + ")");
}

LocalFile::Outcome LocalFile::Commit(bool wait) {
  MutexLock l(&mu_);
  temp_orphaned_ = false;  // a live close: the temp file's writer (or a holder) is alive
  return CommitLocked(wait);
}

LocalFile::Outcome LocalFile::CommitLocked(bool wait) {
  Outcome out;
  if (state_ == State::kFailed) {
    out.status = failure_;
    return out;
  }
  // kAbandoned: a live process that shares the descriptor closes it after the dying one did.
  // kQueued: accepted already; a waiting commit (fsync) stores it now instead of the queue.
  const bool pending =
      state_ == State::kDirty || state_ == State::kAbandoned || (wait && state_ == State::kQueued);
  if (!pending || temp_) return out;
  Status st = CheckWholeLocked(size_, place_);
  if (!st.ok()) return FailLocked(std::move(st));
  if (!wait) {
    // Write-back: the chunk is whole; the name shows it on this node from here on.
    state_ = State::kQueued;
    queued_atomic_.store(true);
    published_atomic_.store(true);
    out.kind = Outcome::kQueued;
    out.place = place_;
    return out;
  }
  return UploadLocked();
}

LocalFile::Outcome LocalFile::UploadLocked() {
  // Parts sent while writing serve only if they still match this key and these bytes; otherwise
  // the early upload is aborted here (reset) and the spool uploads the normal way.
  if (early_ && !(early_->key() == place_.key && early_->Usable(size_))) early_.reset();
  auto up = replaces_
                ? env_.uploader->Replace(place_.key, fd_, size_, place_.display, SpoolCrcLocked())
                : env_.uploader->Upload(place_.key, fd_, size_, place_.display,
                                        /*no_replace=*/false, early_.get(), SpoolCrcLocked());
  early_.reset();
  queued_atomic_.store(false);
  if (!up.ok()) return FailLocked(up.status());  // the adapter logs the failed reply
  Outcome out = CommittedLocked(place_.key, std::move(up).value());
  out.place = place_;
  return out;
}

LocalFile::Outcome LocalFile::UploadQueued(const std::function<void(const Outcome&)>& record) {
  MutexLock l(&mu_);
  Outcome out;
  if (state_ != State::kQueued || temp_) return out;
  out = UploadLocked();
  record(out);
  if (handles_ == 0 && state_ == State::kCommitted) {
    MaybeAdoptLocked();  // first, as in Release: an open in between finds the cache copy
    env_.files->EraseIf(place_.key, this);  // recorded: the name resolves to the object now
  }
  return out;
}

LocalFile::Outcome LocalFile::CommittedLocked(const std::string& key, UploadOutcome up) {
  up.info.key = key;
  state_ = State::kCommitted;
  published_atomic_.store(true);
  uploaded_ = up.info;
  created_object_ = up.created;
  Outcome out;
  out.kind = Outcome::kPublished;
  out.info = std::move(up.info);
  return out;
}

LocalFile::Outcome LocalFile::FailLocked(Status st) {
  state_ = State::kFailed;
  published_atomic_.store(false);
  failure_ = st;
  early_.reset();
  env_.files->EraseIf(place_.key, this);
  Outcome out;
  out.kind = Outcome::kDropped;
  out.object_remains = over_object_ || st.code() == StatusCode::kAlreadyExists;
  out.status = std::move(st);
  out.place = place_;
  return out;
}

LocalFile::Outcome LocalFile::Abandon(pid_t pid) {
  MutexLock l(&mu_);
  Outcome out;
  if (temp_ && state_ != State::kFailed && state_ != State::kDiscarded) {
    temp_orphaned_ = true;  // the last Release decides: a live close may still come
    return out;
  }
  if (state_ != State::kDirty || temp_) return out;
  spdlog::info(
      "kvfs: '{}' ({} bytes) was closed by exiting process {} without a close() of its own: "
      "not published",
      place_.display, size_, pid);
  state_ = State::kAbandoned;
  early_.reset();  // aborts the parts sent so far
  env_.files->EraseIf(place_.key, this);
  out.kind = Outcome::kDropped;
  out.object_remains = over_object_;
  out.place = place_;
  return out;
}

bool LocalFile::Discard() {
  MutexLock l(&mu_);
  if (state_ != State::kFailed) {
    state_ = State::kDiscarded;
    published_atomic_.store(false);
    failure_ = Status::NotFound("'" + place_.display + "' was removed");
    early_.reset();
  }
  return temp_;
}

LocalFile::Outcome LocalFile::LinkTo(const Place& dst) {
  MutexLock l(&mu_);
  Outcome out;
  if (state_ == State::kFailed || state_ == State::kDiscarded) {
    out.kind = Outcome::kRejected;
    out.status = failure_;
    return out;
  }
  Status st = CheckWholeLocked(size_, dst);
  if (st.ok()) {
    auto up = env_.uploader->Upload(dst.key, fd_, size_, dst.display, /*no_replace=*/true,
                                    /*early=*/nullptr, SpoolCrcLocked());
    if (up.ok()) {
      up->info.key = dst.key;
      out.kind = Outcome::kPublished;
      out.info = std::move(up->info);
      return out;
    }
    st = up.status();
  }
  out.kind = Outcome::kRejected;
  out.status = std::move(st);
  return out;
}

LocalFile::Outcome LocalFile::RenameTo(Place dst, bool dst_temp, bool no_replace, bool wait,
                                       std::shared_ptr<LocalFile>* replaced) {
  MutexLock l(&mu_);
  Outcome out;
  if (state_ == State::kFailed) {
    out.status = failure_;
    return out;
  }
  if (!dst_temp && !wait) {
    // Write-back: a whole chunk is renamed at once and uploaded under the final name after.
    early_.reset();  // parts sent under the old name
    Status st = CheckWholeLocked(size_, dst);
    if (!st.ok()) {
      out.kind = Outcome::kRejected;
      out.status = std::move(st);
      return out;
    }
    state_ = State::kQueued;
    queued_atomic_.store(true);
    published_atomic_.store(true);
    out.kind = Outcome::kQueued;
  } else if (!dst_temp) {
    // Upload under the final name; the rename returns only when the object is durable. On
    // failure the source stays as it was (POSIX: a failed rename changes nothing).
    early_.reset();  // parts sent under the old name
    Status st = CheckWholeLocked(size_, dst);
    if (st.ok()) {
      auto up = env_.uploader->Upload(dst.key, fd_, size_, dst.display, no_replace,
                                      /*early=*/nullptr, SpoolCrcLocked());
      if (up.ok()) {
        out = CommittedLocked(dst.key, std::move(up).value());
      } else {
        st = up.status();
      }
    }
    if (!st.ok()) {
      out.kind = Outcome::kRejected;
      out.status = std::move(st);
      return out;
    }
  }
  if (dst_temp && state_ == State::kQueued) {
    // Renamed to a temp name before its upload: local only again, never uploaded as that name.
    state_ = State::kDirty;
    published_atomic_.store(false);
  }
  env_.files->EraseIf(place_.key, this);
  // Open handles (a temp name, a queued upload) keep it visible under the new name; otherwise the
  // object is.
  std::shared_ptr<LocalFile> prev = (dst_temp || handles_ > 0 || state_ == State::kQueued)
                                        ? env_.files->Put(dst.key, shared_from_this())
                                        : env_.files->Take(dst.key);
  if (prev.get() != this) *replaced = std::move(prev);
  out.place = std::move(place_);  // where it was: Filesystem forgets that name
  place_ = std::move(dst);
  temp_ = dst_temp;
  temp_atomic_.store(dst_temp);
  if (handles_ == 0) MaybeAdoptLocked();
  return out;
}

}  // namespace kvfs
