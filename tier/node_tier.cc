#include "tier/node_tier.h"

#include <utility>

namespace kvfs {

void NodeTier::Insert(std::string_view key) {
  std::function<void()> wake;
  {
    MutexLock l(&mu_);
    if (pending_.contains(key)) return;
    if (pending_.size() >= max_pending_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      wake = wake_;
    } else {
      pending_.emplace(key);
      if (pending_.size() == max_pending_) wake = wake_;
    }
  }
  if (wake) wake();
}

void NodeTier::NoteUse(std::string_view key) { Insert(key); }

void NodeTier::NoteWrite(std::string_view key, uint64_t size) {
  {
    MutexLock l(&mu_);
    written_since_ += size;
  }
  Insert(key);
}

std::optional<NodeTier::Usage> NodeTier::CurrentUsage() const {
  if (capacity_ == 0) return std::nullopt;
  MutexLock l(&mu_);
  return Usage{capacity_, counted_ + written_since_};
}

std::vector<std::string> NodeTier::TakeUses() {
  decltype(pending_) taken;
  {
    MutexLock l(&mu_);
    taken.swap(pending_);
  }
  std::vector<std::string> keys;
  keys.reserve(taken.size());
  for (auto it = taken.begin(); it != taken.end();) {
    keys.push_back(std::move(taken.extract(it++).value()));
  }
  return keys;
}

void NodeTier::ReturnUses(std::vector<std::string> keys) {
  MutexLock l(&mu_);
  for (std::string& k : keys) {
    if (pending_.size() >= max_pending_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    pending_.insert(std::move(k));
  }
}

void NodeTier::SetCounted(uint64_t used) {
  MutexLock l(&mu_);
  counted_ = used;
  written_since_ = 0;
}

void NodeTier::SetWake(std::function<void()> wake) {
  MutexLock l(&mu_);
  wake_ = std::move(wake);
}

}  // namespace kvfs
