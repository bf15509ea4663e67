#include "tier/tier_agent.h"

#include <unistd.h>

#include <random>
#include <sstream>
#include <vector>

#include "base/log.h"
#include "tier/small_object.h"

namespace kvfs {
namespace {

constexpr uint64_t kMaxStatusBytes = 64 * 1024;
constexpr uint64_t kMaxBatchBytes = 256ull << 20;

}  // namespace

std::string MakeNodeId() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::string h;
  for (const char* p = host; *p != '\0'; ++p) {
    // Keys stay plain: letters, digits, '-', '.'.
    const char c = *p;
    h += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.') ? c : '_';
  }
  if (h.empty()) h = "node";
  std::random_device rd;
  char rnd[16];
  std::snprintf(rnd, sizeof rnd, "%08x", rd());
  return h + "-" + std::to_string(getpid()) + "-" + rnd;
}

TierAgent::TierAgent(std::shared_ptr<ObjectStore> store, TierOptions options,
                     std::shared_ptr<NodeTier> node,
                     std::function<void(const std::string&)> on_removed)
    : store_(std::move(store)),
      options_(std::move(options)),
      keys_(options_.key_prefix),
      node_(std::move(node)),
      on_removed_(std::move(on_removed)),
      lease_(store_.get(), keys_, options_.node_id, options_.lease_secs()),
      collector_(store_.get(), options_) {
  MutexLock l(&mu_);
  stats_.capacity_bytes = options_.capacity_bytes;
}

TierAgent::~TierAgent() { Stop(); }

void TierAgent::Start() {
  node_->SetWake([this] { Wake(); });
  thread_ = std::thread([this] { Run(); });
}

void TierAgent::Stop() {
  {
    MutexLock l(&mu_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
  node_->SetWake(nullptr);
}

void TierAgent::Wake() {
  {
    MutexLock l(&mu_);
    wake_ = true;
  }
  cv_.SignalAll();
}

Status TierAgent::RunStep(std::chrono::milliseconds timeout) {
  MutexLock l(&mu_);
  if (!thread_.joinable() || stop_) return Status::Unavailable("the tier's agent is not running");
  // A step that already started may have missed what the caller wants: wait for the next one.
  const uint64_t want = steps_done_ + (in_step_ ? 2 : 1);
  wake_ = true;
  cv_.SignalAll();
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (steps_done_ < want && !stop_) {
    if (std::chrono::steady_clock::now() >= until) {
      return Status::DeadlineExceeded("the tier's agent did not finish a step in time");
    }
    cv_.WaitFor(&mu_, until - std::chrono::steady_clock::now());
  }
  return Status::OK();
}

void TierAgent::Run() {
  while (true) {
    {
      MutexLock l(&mu_);
      in_step_ = true;
    }
    Step();
    MutexLock l(&mu_);
    in_step_ = false;
    ++steps_done_;
    cv_.SignalAll();
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::seconds(options_.interval_secs);
    while (!stop_ && !wake_ && std::chrono::steady_clock::now() < until) {
      cv_.WaitFor(&mu_, until - std::chrono::steady_clock::now());
    }
    wake_ = false;
    if (stop_) break;
  }
  // Unmounting: this node's last uses, and the lease to the next node without waiting.
  FlushUses();
  lease_.Release();
}

void TierAgent::Step() {
  FlushUses();
  ReadStatus();
  ApplyRemovals();
  LeaseAndCollect();
}

void TierAgent::FlushUses() {
  std::vector<std::string> keys = node_->TakeUses();
  if (keys.empty()) return;
  std::string text;
  for (const std::string& k : keys) {
    if (!k.starts_with(options_.key_prefix)) continue;
    text += k.substr(options_.key_prefix.size());
    text += '\n';
  }
  Status st =
      WriteSmallObject(store_.get(), keys_.UsesKey(options_.node_id, ++record_seq_), text).status();
  MutexLock l(&mu_);
  stats_.uses_dropped = node_->dropped();
  if (st.ok()) {
    ++stats_.records_written;
    return;
  }
  ++stats_.record_failures;
  LogWarn("kvfs: tier: writing this node's use record: {}", st.ToString());
  MutexUnlock u(&mu_);
  node_->ReturnUses(std::move(keys));
}

void TierAgent::ReadStatus() {
  auto text = ReadSmallObject(store_.get(), keys_.status_key(), kMaxStatusBytes);
  if (!text.ok()) {
    if (text.status().code() != StatusCode::kNotFound) {
      LogDebug("kvfs: tier: reading {}: {}", keys_.status_key(), text.status().ToString());
    }
    return;
  }
  auto status = ParseTierStatus(*text);
  if (!status.ok()) {
    LogWarn("kvfs: tier: {}: {}", keys_.status_key(), status.status().ToString());
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  const std::string stamp = std::to_string(status->time) + "/" + status->holder;
  if (stamp != status_etag_) {
    status_etag_ = stamp;
    status_changed_at_ = now;
    node_->SetCounted(status->bytes);
  }
  MutexLock l(&mu_);
  stats_.chunks = status->chunks;
  stats_.holder = status->holder;
  stats_.collector_lag_seconds = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(now - status_changed_at_).count());
}

void TierAgent::ApplyRemovals() {
  std::vector<ObjectInfo> batches;
  ListRequest req;
  req.prefix = keys_.removed_prefix();
  for (int page = 0; page < 1000; ++page) {
    auto r = store_->List(req);
    if (!r.ok()) return;
    for (ObjectInfo& o : r->objects) {
      if (o.key > last_batch_) batches.push_back(std::move(o));
    }
    if (!r->truncated) break;
    req.continuation_token = r->next_continuation_token;
  }
  uint64_t applied = 0;
  for (const ObjectInfo& b : batches) {
    // This node's own collector applied its removals when it made them.
    if (b.key.find("-" + options_.node_id + "-") == std::string::npos) {
      auto text = ReadSmallObject(store_.get(), b.key, kMaxBatchBytes);
      if (!text.ok()) {
        if (text.status().code() == StatusCode::kNotFound) continue;  // trimmed meanwhile
        return;                                                       // read it at the next step
      }
      std::istringstream in(*text);
      std::string rel;
      while (std::getline(in, rel)) {
        if (rel.empty()) continue;
        on_removed_(options_.key_prefix + rel);
        ++applied;
      }
    }
    last_batch_ = b.key;
  }
  if (applied == 0) return;
  MutexLock l(&mu_);
  stats_.removed_names_applied += applied;
}

void TierAgent::LeaseAndCollect() {
  if (!options_.may_collect) return;
  const auto now = std::chrono::steady_clock::now();
  auto held = lease_.Tick(now);
  {
    MutexLock l(&mu_);
    stats_.is_collector = held.ok() && *held ? 1 : 0;
    stats_.lease_epoch = lease_.epoch();
    if (!lease_.holder().empty()) stats_.holder = lease_.holder();
  }
  if (!held.ok()) {
    LogWarn("kvfs: tier: lease step: {}", held.status().ToString());
    return;
  }
  if (!*held) return;
  // The store's clock: the lease's renewal time plus what has passed here since.
  const int64_t server_now =
      lease_.renewed_server_sec() +
      std::chrono::duration_cast<std::chrono::seconds>(now - lease_.renewed_at()).count();
  // Watchers take over no sooner than lease_secs after seeing this renewal; half an interval
  // of margin before that.
  const auto deadline = lease_.renewed_at() + std::chrono::seconds(options_.lease_secs()) -
                        std::chrono::milliseconds(options_.interval_secs * 500);
  auto pass = collector_.Pass(server_now, lease_.epoch(), /*dry_run=*/false, [deadline] {
    // Removing only while the lease is surely still this node's.
    return std::chrono::steady_clock::now() < deadline;
  });
  std::vector<std::string> removed;
  {
    MutexLock l(&mu_);
    ++stats_.passes;
    if (!pass.ok()) {
      ++stats_.pass_failures;
    } else {
      stats_.removed_capacity = pass->status.removed_capacity;
      stats_.removed_age = pass->status.removed_age;
      stats_.removed_bytes = pass->status.removed_bytes;
      stats_.chunks = pass->status.chunks;
      stats_.holder = options_.node_id;
    }
  }
  if (!pass.ok()) {
    LogWarn("kvfs: tier: collector pass: {}", pass.status().ToString());
    return;
  }
  node_->SetCounted(pass->status.bytes);
  status_etag_ = std::to_string(pass->status.time) + "/" + pass->status.holder;
  status_changed_at_ = std::chrono::steady_clock::now();
  for (const Removal& r : pass->removals) on_removed_(r.key);
  if (!pass->removals.empty()) {
    LogInfo("kvfs: tier: removed {} chunks ({} bytes); {} bytes in {} chunks remain",
            pass->removals.size(), pass->status.removed_bytes, pass->status.bytes,
            pass->status.chunks);
  }
}

TierStats TierAgent::Stats() const {
  TierStats s;
  {
    MutexLock l(&mu_);
    s = stats_;
  }
  if (auto u = node_->CurrentUsage()) s.bytes = u->used;
  s.uses_dropped = node_->dropped();
  return s;
}

}  // namespace kvfs
