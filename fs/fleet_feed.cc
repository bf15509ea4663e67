#include "fs/fleet_feed.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "fs/list_loop_guard.h"

namespace kvfs {

namespace {

constexpr char kSep = '~';

// An ETag as it may stand in a key: hex digits and '-' (multipart) only; others are left out (a
// reader then takes the event as "stored, ETag unknown").
std::string KeyableEtag(const std::string& etag) {
  for (char c : etag) {
    if (!std::isxdigit(static_cast<unsigned char>(c)) && c != '-') return "";
  }
  return etag;
}

// The whole of `s` as a number in `base`; false for anything else (empty, other characters, too
// large).
bool ParseNumber(std::string_view s, int base, uint64_t* out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return ec == std::errc() && end == s.data() + s.size();
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    const size_t at = s.find(sep, start);
    out.push_back(
        s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

}  // namespace

FleetFeed::FleetFeed(std::shared_ptr<ObjectStore> store, FleetFeedOptions options, Apply apply,
                     SteadyClock clock)
    : store_(std::move(store)),
      options_(std::move(options)),
      apply_(std::move(apply)),
      clock_(std::move(clock)),
      root_(options_.key_prefix + "~kvfs-feed/") {}

FleetFeed::~FleetFeed() { Stop(); }

FleetFeed::Time FleetFeed::Now() const {
  return clock_ ? clock_() : std::chrono::steady_clock::now();
}

void FleetFeed::Start() {
  thread_ = std::thread([this] { Run(); });
}

void FleetFeed::Stop() {
  {
    MutexLock l(&mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.SignalAll();
  if (thread_.joinable()) thread_.join();
}

void FleetFeed::Run() {
  using Clock = std::chrono::steady_clock;
  // The feed is read once per interval. An announcement is written at once, unless an entry was
  // written less than half an interval ago (then when that half is over): a chunk is listed
  // within half an interval of its close, and a node writes at most two entries per interval.
  const auto half = options_.interval / 2;
  Clock::time_point next_read = Clock::now();
  Clock::time_point last_write = Clock::now() - options_.interval;
  for (;;) {
    last_write = Clock::now();
    if (last_write < next_read) {
      Flush();
    } else {
      Status st = Step();  // writes too
      if (!st.ok()) spdlog::debug("kvfs: reading the fleet feed: {}", st.ToString());
      next_read = Clock::now() + options_.interval;
    }
    MutexLock l(&mu_);
    for (;;) {
      if (stop_) break;
      const Clock::time_point now = Clock::now();
      if (now >= next_read) break;
      if (!outbox_.empty() && now >= last_write + half) break;
      const Clock::time_point until =
          outbox_.empty() ? next_read : std::min(next_read, last_write + half);
      cv_.WaitFor(&mu_, until - now);
    }
    if (stop_) break;
  }
  Flush();  // a clean unmount announces everything it stored
}

std::string FleetFeed::Token(const FeedEvent& event) const {
  const std::string& key = event.info.key;
  if (key.compare(0, options_.key_prefix.size(), options_.key_prefix) != 0) return "";
  const std::string_view rel = std::string_view(key).substr(options_.key_prefix.size());
  if (rel.empty() || rel.find(kSep) != std::string_view::npos) return "";
  std::string t(1, kSep);
  t += event.kind == FeedEvent::kStored ? 's' : 'r';
  t += rel;
  if (event.kind == FeedEvent::kStored) {
    t += kSep + std::to_string(event.info.size) + kSep + KeyableEtag(event.info.etag);
  }
  return t;
}

void FleetFeed::Announce(FeedEvent event) {
  std::string token = Token(event);
  MutexLock l(&mu_);
  ++counters_.announced;
  // An entry holds the node, its sequence number and at least this one event.
  const size_t head = root_.size() + options_.node_id.size() + 1 + 16;
  if (token.empty() || head + token.size() > kMaxKeyBytes ||
      outbox_.size() >= options_.max_outbox) {
    ++counters_.dropped;  // found by the other nodes within feed_miss_ttl_secs instead
    return;
  }
  outbox_.push_back(std::move(token));
  if (outbox_.size() == 1) cv_.SignalAll();  // the feed's thread writes it (Run)
}

void FleetFeed::Flush() {
  std::deque<std::string> tokens;
  {
    MutexLock l(&mu_);
    tokens.swap(outbox_);
  }
  while (!tokens.empty()) {
    char seq[17];
    snprintf(seq, sizeof(seq), "%016" PRIx64, next_seq_++);
    std::string key = root_ + options_.node_id + "/" + seq;
    while (!tokens.empty() && key.size() + tokens.front().size() <= kMaxKeyBytes) {
      key += tokens.front();
      tokens.pop_front();
    }
    unwritten_.push_back(std::move(key));
  }
  while (!unwritten_.empty()) {
    ++counters_.puts;
    auto put = store_->Put(unwritten_.front(), Body::FromMemory("", 0), PutOptions{});
    if (!put.ok()) {
      ++counters_.failures;
      spdlog::debug("kvfs: writing a fleet feed entry: {}", put.status().ToString());
      return;  // the same key again next interval: readers see its sequence number once
    }
    ++counters_.entries_written;
    written_.emplace_back(std::move(unwritten_.front()), Now());
    unwritten_.pop_front();
  }
}

std::optional<FleetFeed::Entry> FleetFeed::ParseEntry(std::string_view root, std::string_view key) {
  if (key.compare(0, root.size(), root) != 0) return std::nullopt;
  key.remove_prefix(root.size());
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  Entry e;
  e.node = std::string(key.substr(0, slash));
  std::vector<std::string_view> f = Split(key.substr(slash + 1), kSep);
  // Any key may be there (another tool's): nothing is trusted to parse, nothing throws.
  if (f[0].size() != 16 || !ParseNumber(f[0], 16, &e.seq)) return std::nullopt;
  for (size_t i = 1; i < f.size(); ++i) {
    if (f[i].size() < 2) return std::nullopt;
    FeedEvent ev;
    ev.info.key = std::string(f[i].substr(1));
    if (f[i][0] == 'r') {
      ev.kind = FeedEvent::kRemoved;
    } else if (f[i][0] == 's' && i + 2 < f.size() && !f[i + 1].empty()) {
      ev.kind = FeedEvent::kStored;
      if (!ParseNumber(f[i + 1], 10, &ev.info.size)) return std::nullopt;
      ev.info.etag = std::string(f[i + 2]);
      i += 2;
    } else {
      return std::nullopt;
    }
    e.events.push_back(std::move(ev));
  }
  return e;
}

Status FleetFeed::Poll() {
  const Time started = Now();
  ListRequest req;
  req.prefix = root_;
  ListLoopGuard guard("reading the fleet feed '" + root_ + "'");
  std::vector<std::pair<std::string, int64_t>> listed;  // key, Last-Modified
  do {
    KVFS_RETURN_IF_ERROR(guard.BeforePage(req.continuation_token));
    ++counters_.lists;
    auto page = store_->List(req);
    if (!page.ok()) {
      ++counters_.failures;
      return page.status();
    }
    for (const ObjectInfo& o : page->objects) listed.emplace_back(o.key, o.mtime_sec);
    KVFS_RETURN_IF_ERROR(guard.AfterPage(listed.size(), page->truncated));
    req.continuation_token = page->truncated ? page->next_continuation_token : "";
  } while (!req.continuation_token.empty());
  ++counters_.polls;

  // The sequence numbers listed per node, to find the ones missing between those read.
  std::map<std::string, std::set<uint64_t>> seqs;
  std::unordered_set<std::string> now_listed;
  int64_t newest = 0;
  bool gap = false;
  for (const auto& [key, mtime] : listed) {
    newest = std::max(newest, mtime);
    auto e = ParseEntry(root_, key);
    if (!e) continue;  // not an entry (another tool's key): ignored
    now_listed.insert(key);
    if (e->node == options_.node_id) continue;
    seqs[e->node].insert(e->seq);
    if (applied_.count(key)) continue;
    for (FeedEvent& ev : e->events) {
      ev.info.key = options_.key_prefix + ev.info.key;
      ev.info.mtime_sec = mtime;
      ++counters_.received;
      apply_(ev);
    }
  }
  for (const auto& [node, s] : seqs) {
    auto it = cursor_.find(node);
    // After what was read of a node, its next numbers must follow without a hole; a node first
    // seen after the first read must begin at 1 (a writer always keeps its newest entry listed,
    // so a node that wrote before that read was seen by it). The first read is the baseline.
    uint64_t expect = it != cursor_.end() ? it->second + 1 : (first_read_done_ ? 1 : *s.begin());
    for (auto q = s.lower_bound(expect); q != s.end(); ++q, ++expect) {
      if (*q != expect) {
        gap = true;
        break;
      }
    }
    cursor_[node] = std::max(it != cursor_.end() ? it->second : 0, *s.rbegin());
  }
  applied_.swap(now_listed);
  {
    MutexLock l(&mu_);
    if (!first_read_done_ || gap) {
      trust_since_ = started;
      if (gap) ++counters_.gaps;
    }
    last_read_start_ = started;
  }
  first_read_done_ = true;
  Expire(newest, listed);
  return Status::OK();
}

void FleetFeed::Expire(int64_t newest_mtime,
                       const std::vector<std::pair<std::string, int64_t>>& listed) {
  const Time now = Now();
  // DELETEs per interval spent on expiry: a node writes at most two entries an interval, and a
  // read must not wait behind a long run of deletes.
  int budget = 4;
  // The newest entry stays: readers that start later learn this node's sequence from it.
  while (written_.size() > 1 && budget > 0 && now - written_.front().second >= options_.retention) {
    --budget;
    ++counters_.deletes;
    Status st = store_->Delete(written_.front().first);
    if (!st.ok()) {
      ++counters_.failures;
      return;
    }
    written_.pop_front();
  }
  // A node that died leaves its last entries: removed once they are ten retentions older than the
  // newest entry listed (both times are the store's).
  const int64_t stale =
      newest_mtime -
      10 * std::chrono::duration_cast<std::chrono::seconds>(options_.retention).count();
  for (const auto& [key, mtime] : listed) {
    if (budget <= 0) break;
    if (mtime == 0 || mtime >= stale) continue;
    auto e = ParseEntry(root_, key);
    if (e && e->node == options_.node_id) continue;
    --budget;
    ++counters_.deletes;
    if (!store_->Delete(key).ok()) ++counters_.failures;
  }
}

Status FleetFeed::Step() {
  Flush();
  return Poll();
}

bool FleetFeed::LiveLocked(Time now) const {
  return last_read_start_ &&
         now - *last_read_start_ <= 2 * options_.interval + std::chrono::seconds(1);
}

bool FleetFeed::Covers(Time t) const {
  const Time now = Now();
  MutexLock l(&mu_);
  return LiveLocked(now) && t >= trust_since_;
}

FeedStats FleetFeed::Stats() const {
  FeedStats s = counters_.Snapshot();
  const Time now = Now();
  MutexLock l(&mu_);
  if (last_read_start_) {
    s.lag_ms = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(now - *last_read_start_).count());
    s.live = LiveLocked(now);
  }
  return s;
}

}  // namespace kvfs
