#include "fs/fleet_feed.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "base/log.h"
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
      if (!st.ok()) LogDebug("kvfs: reading the fleet feed: {}", st.ToString());
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
  if (token.empty() || token.size() > kMaxBodyBytes || paused_ || put_refused_ ||
      outbox_.size() + unwritten_events_ >= options_.max_outbox) {
    ++counters_.dropped;  // found by the other nodes within feed_miss_ttl_secs instead
    return;
  }
  outbox_.push_back(std::move(token));
  if (outbox_.size() == 1) cv_.SignalAll();  // the feed's thread writes it (Run)
}

void FleetFeed::OwnRequestFailed(const char* what, const std::string& key, const Status& st) {
  ++counters_.failures;
  if (st.code() != StatusCode::kPermissionDenied) {
    LogDebug("kvfs: {} fleet feed entry {}: {}", what, key, st.ToString());
    return;
  }
  ++counters_.refused;
  MutexLock l(&mu_);
  if (std::string_view(what) == "writing") {
    if (!put_refused_) {
      LogWarn(
          "kvfs: the store refuses to let this node write its fleet feed entries ({}): it "
          "announces nothing more, and other nodes find its new chunks within "
          "feed_miss_ttl_secs. Allow s3:PutObject and s3:DeleteObject under '{}'",
          st.ToString(), root_);
    }
    put_refused_ = true;
    outbox_.clear();
  } else if (!warned_delete_) {
    warned_delete_ = true;
    LogWarn(
        "kvfs: the store refuses to delete this node's fleet feed entries ({}): past {} of them "
        "it writes no more, and other nodes find its new chunks within feed_miss_ttl_secs. "
        "Allow s3:DeleteObject under '{}'",
        st.ToString(), kMaxWritten, root_);
  }
}

void FleetFeed::Flush() {
  std::deque<std::string> tokens;
  {
    MutexLock l(&mu_);
    paused_ = written_.size() >= kMaxWritten;
    if (paused_ || put_refused_) {
      // Nothing more is listed while this node's entries cannot be deleted (or written): what
      // every node reads stays bounded. The outbox's names are found by the floor instead.
      counters_.dropped += outbox_.size();
      outbox_.clear();
      return;
    }
    tokens.swap(outbox_);
  }
  if (!tokens.empty()) {
    char seq[17];
    snprintf(seq, sizeof(seq), "%016" PRIx64, next_seq_);
    const std::string head = root_ + options_.node_id + "/" + seq;
    size_t bytes = head.size();
    for (const std::string& t : tokens) bytes += t.size();
    if (bytes <= kMaxKeyBytes) {
      // All of it fits in one key: an entry a reader gets from the LIST alone.
      Unwritten e{head, "", tokens.size()};
      for (std::string& t : tokens) e.key += t;
      ++next_seq_;
      unwritten_.push_back(std::move(e));
      tokens.clear();
    }
    while (!tokens.empty()) {
      // A burst: the events go in bodies, one PUT for up to kMaxBodyBytes of them.
      snprintf(seq, sizeof(seq), "%016" PRIx64, next_seq_++);
      Unwritten e{root_ + options_.node_id + "/" + seq + kSep + "b", "", 0};
      while (!tokens.empty() && e.body.size() + tokens.front().size() <= kMaxBodyBytes) {
        e.body += tokens.front();
        tokens.pop_front();
        ++e.events;
      }
      unwritten_.push_back(std::move(e));
    }
  }
  size_t pending = 0;
  for (const Unwritten& e : unwritten_) pending += e.events;
  {
    MutexLock l(&mu_);
    unwritten_events_ = pending;
  }
  while (!unwritten_.empty()) {
    ++counters_.puts;
    const Unwritten& e = unwritten_.front();
    auto put = store_->Put(e.key, Body::FromMemory(e.body.data(), e.body.size()), PutOptions{});
    if (!put.ok()) {
      OwnRequestFailed("writing", e.key, put.status());
      return;  // the same key again next interval: readers see its sequence number once
    }
    ++counters_.entries_written;
    {
      MutexLock l(&mu_);
      unwritten_events_ -= std::min(unwritten_events_, e.events);
    }
    written_.emplace_back(e.key, Now());
    unwritten_.pop_front();
  }
}

bool FleetFeed::ParseEvents(std::string_view text, std::vector<FeedEvent>* events) {
  // Any text may be there (another tool's key, a corrupt body): nothing is trusted to parse,
  // nothing throws.
  if (text.empty() || text[0] != kSep) return false;
  std::vector<std::string_view> f = Split(text.substr(1), kSep);
  std::vector<FeedEvent> out;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i].size() < 2) return false;
    FeedEvent ev;
    ev.info.key = std::string(f[i].substr(1));
    if (f[i][0] == 'r') {
      ev.kind = FeedEvent::kRemoved;
    } else if (f[i][0] == 's' && i + 2 < f.size() && !f[i + 1].empty()) {
      ev.kind = FeedEvent::kStored;
      if (!ParseNumber(f[i + 1], 10, &ev.info.size)) return false;
      ev.info.etag = std::string(f[i + 2]);
      i += 2;
    } else {
      return false;
    }
    out.push_back(std::move(ev));
  }
  for (FeedEvent& ev : out) events->push_back(std::move(ev));
  return true;
}

std::optional<FleetFeed::Entry> FleetFeed::ParseEntry(std::string_view root, std::string_view key) {
  if (key.compare(0, root.size(), root) != 0) return std::nullopt;
  key.remove_prefix(root.size());
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  Entry e;
  e.node = std::string(key.substr(0, slash));
  const std::string_view rest = key.substr(slash + 1);
  if (rest.size() < 16 || !ParseNumber(rest.substr(0, 16), 16, &e.seq)) return std::nullopt;
  const std::string_view events = rest.substr(16);
  if (events == std::string_view("~b")) {
    e.bodied = true;
    return e;
  }
  if (events.empty()) return e;
  if (!ParseEvents(events, &e.events)) return std::nullopt;
  return e;
}

Status FleetFeed::ReadBody(const std::string& key, uint64_t size, std::vector<FeedEvent>* events) {
  if (size == 0 || size > kMaxBodyBytes) {
    return Status::DataLoss("fleet feed entry '" + key + "': a body of " + std::to_string(size) +
                            " bytes is no entry of kvfs's");
  }
  std::string body(size, '\0');
  GetRequest req;
  req.key = key;
  req.length = size;
  auto got = store_->Get(req, body.data());
  if (!got.ok()) return got.status();
  if (*got != size || !ParseEvents(body, events)) {
    return Status::DataLoss("fleet feed entry '" + key + "': its body does not parse");
  }
  return Status::OK();
}

Status FleetFeed::Poll() {
  const Time started = Now();
  ListRequest req;
  req.prefix = root_;
  ListLoopGuard guard("reading the fleet feed '" + root_ + "'");
  std::vector<Listed> listed;
  do {
    KVFS_RETURN_IF_ERROR(guard.BeforePage(req.continuation_token));
    ++counters_.lists;
    auto page = store_->List(req);
    if (!page.ok()) {
      ++counters_.failures;
      return page.status();
    }
    for (const ObjectInfo& o : page->objects) listed.push_back({o.key, o.mtime_sec, o.size});
    KVFS_RETURN_IF_ERROR(guard.AfterPage(listed.size(), page->truncated));
    if (page->truncated && listed.size() >= kMaxListed) {
      // Entries nobody deletes (a policy without s3:DeleteObject): not read to the end, so this
      // read covers nothing (the floor), at a bounded cost.
      if (!warned_listing_) {
        warned_listing_ = true;
        LogWarn(
            "kvfs: the fleet feed '{}' holds more than {} entries (are DELETEs refused?): it is "
            "no longer read to its end, and misses hold negative_cache_ttl_ms",
            root_, kMaxListed);
      }
      ++counters_.failures;
      return Status::ResourceExhausted("the fleet feed '" + root_ + "' holds more than " +
                                       std::to_string(kMaxListed) + " entries");
    }
    req.continuation_token = page->truncated ? page->next_continuation_token : "";
  } while (!req.continuation_token.empty());
  ++counters_.polls;

  // The sequence numbers listed per node, to find the ones missing between those read.
  std::map<std::string, std::set<uint64_t>> seqs;
  std::unordered_set<std::string> now_listed;
  int64_t newest = 0;
  bool gap = false;
  // A body that could not be read now (the store failed): the entry is read again next time, and
  // this read is not complete (it does not renew what Covers trusts).
  Status incomplete;
  for (const Listed& l : listed) {
    newest = std::max(newest, l.mtime);
    auto e = ParseEntry(root_, l.key);
    if (!e) continue;  // not an entry (another tool's key): ignored
    if (e->node == options_.node_id) {
      now_listed.insert(l.key);
      continue;
    }
    seqs[e->node].insert(e->seq);
    if (applied_.count(l.key)) {
      now_listed.insert(l.key);
      continue;
    }
    if (e->bodied) {
      ++counters_.gets;
      Status st = ReadBody(l.key, l.size, &e->events);
      if (!st.ok()) {
        ++counters_.failures;
        if (st.code() == StatusCode::kNotFound || st.code() == StatusCode::kDataLoss) {
          // Expired since the listing, or not an entry of ours: its events are lost to this
          // node, as if it were missing (a gap: the misses cached before are asked again).
          LogDebug("kvfs: fleet feed: {}", st.ToString());
          gap = true;
          now_listed.insert(l.key);
        } else if (incomplete.ok()) {
          incomplete = st.Annotate("reading fleet feed entry '" + l.key + "'");
        }
        continue;
      }
    }
    now_listed.insert(l.key);
    for (FeedEvent& ev : e->events) {
      ev.info.key = options_.key_prefix + ev.info.key;
      ev.info.mtime_sec = l.mtime;
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
    if (incomplete.ok()) last_read_start_ = started;
  }
  first_read_done_ = true;
  Expire(newest, listed);
  return incomplete;
}

void FleetFeed::Expire(int64_t newest_mtime, const std::vector<Listed>& listed) {
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
      OwnRequestFailed("deleting", written_.front().first, st);
      return;
    }
    written_.pop_front();
  }
  // A node that died leaves its last entries: removed once they are ten retentions older than the
  // newest entry listed (both times are the store's).
  const int64_t stale =
      newest_mtime -
      10 * std::chrono::duration_cast<std::chrono::seconds>(options_.retention).count();
  for (const Listed& l : listed) {
    if (budget <= 0) break;
    if (l.mtime == 0 || l.mtime >= stale) continue;
    auto e = ParseEntry(root_, l.key);
    if (e && e->node == options_.node_id) continue;
    --budget;
    ++counters_.deletes;
    if (!store_->Delete(l.key).ok()) ++counters_.failures;
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
  s.writes_paused = paused_ || put_refused_ ? 1 : 0;
  if (last_read_start_) {
    s.lag_ms = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::milliseconds>(now - *last_read_start_).count());
    s.live = LiveLocked(now);
  }
  return s;
}

}  // namespace kvfs
