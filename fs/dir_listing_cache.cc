#include "fs/dir_listing_cache.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "base/log.h"
#include "fs/list_loop_guard.h"

namespace kvfs {

DirListingCache::DirListingCache(std::shared_ptr<ObjectStore> store, Options options,
                                 SteadyClock clock)
    : store_(std::move(store)), options_(options), clock_(std::move(clock)) {}

DirListingCache::Time DirListingCache::Now() const {
  return clock_ ? clock_() : std::chrono::steady_clock::now();
}

std::string DirListingCache::DirOf(const std::string& key) {
  size_t slash = key.rfind('/');
  return slash == std::string::npos ? std::string() : key.substr(0, slash + 1);
}

bool DirListingCache::KnownMissing(const std::string& key) {
  if (options_.ttl.count() == 0) return false;
  MutexLock l(&mu_);
  if (dirs_.empty()) return false;
  const Time now = Now();
  // `name` is the key of the path component inside `dir`: the key itself, then each ancestor
  // directory's key (without its '/').
  std::string name = key;
  for (std::string dir = DirOf(key);; dir = DirOf(name)) {
    auto it = dirs_.find(dir);
    if (it != dirs_.end() && it->second.names != nullptr && Fresh(it->second.listed_at, now) &&
        (!options_.answers || options_.answers(it->second.listed_at)) &&
        it->second.names->count(name) == 0 && it->second.added.count(name) == 0) {
      return true;
    }
    if (dir.empty()) return false;
    name = dir.substr(0, dir.size() - 1);
  }
}

bool DirListingCache::RoomForDir(const std::string& dir, Time now) {
  if (dirs_.size() < kMaxDirs || dirs_.count(dir)) return true;
  // One record per missing directory looked up: drop those no longer answering anything.
  for (auto it = dirs_.begin(); it != dirs_.end();) {
    const Dir& o = it->second;
    const bool live =
        o.listing || Fresh(o.listed_at, now) || Fresh(o.window_start, now) || ShapeFresh(o, now);
    if (live) {
      ++it;
    } else {
      SetNames(&it->second, nullptr);
      it = dirs_.erase(it);
    }
  }
  return dirs_.size() < kMaxDirs;
}

void DirListingCache::SetNames(Dir* d,
                               std::shared_ptr<const std::unordered_set<std::string>> names) {
  if (d->names) total_names_ -= d->names->size();
  total_names_ -= d->added.size();
  d->added.clear();
  d->names = std::move(names);
  if (d->names) total_names_ += d->names->size();
}

void DirListingCache::NoteAdded(const std::string& key) {
  if (options_.ttl.count() == 0) return;
  MutexLock l(&mu_);
  const Time now = Now();
  recently_added_.emplace_back(now, key);
  if (recently_added_.size() > kMaxRecentlyAdded) recently_added_.pop_front();
  if (dirs_.empty()) return;
  std::string name = key;
  for (std::string dir = DirOf(key);; dir = DirOf(name)) {
    auto it = dirs_.find(dir);
    if (it != dirs_.end() && it->second.names != nullptr && !it->second.names->count(name)) {
      Dir& d = it->second;
      if (d.added.size() >= options_.max_entries || total_names_ >= options_.max_total_names) {
        SetNames(&d, nullptr);  // no room: its lookups ask the store, until it is listed again
      } else if (d.added.emplace(name, now).second) {
        ++total_names_;
      }
    }
    if (dir.empty()) return;
    name = dir.substr(0, dir.size() - 1);
  }
}

void DirListingCache::MakeRoom(const std::string& keep, size_t n) {
  if (total_names_ + n <= options_.max_total_names) return;
  std::vector<std::pair<Time, Dir*>> listed;
  for (auto& [key, d] : dirs_) {
    if (key != keep && d.names && !d.names->empty()) listed.emplace_back(d.listed_at, &d);
  }
  std::sort(listed.begin(), listed.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  for (auto& [at, d] : listed) {
    if (total_names_ + n <= options_.max_total_names) break;
    SetNames(d, nullptr);  // its lookups ask the store again, until its next listing
  }
}

void DirListingCache::RecordEmpty(const std::string& dir) {
  static const auto kEmpty = std::make_shared<const std::unordered_set<std::string>>();
  Record(dir, kEmpty, Now());
}

void DirListingCache::RecordListing(const std::string& dir, std::unordered_set<std::string> names,
                                    Time started) {
  Record(dir, std::make_shared<const std::unordered_set<std::string>>(std::move(names)), started);
}

void DirListingCache::Record(const std::string& dir,
                             std::shared_ptr<const std::unordered_set<std::string>> names,
                             Time listed_at) {
  if (options_.ttl.count() == 0) return;
  MutexLock l(&mu_);
  const Time now = Now();
  if (!RoomForDir(dir, now)) return;
  Dir& d = dirs_[dir];
  if (d.listing) return;  // a real listing is on its way
  // A fresher listing already answers (another lookup's).
  if (d.names != nullptr && d.listed_at > listed_at) return;
  d.too_big = false;
  ReplaceNames(dir, &d, std::move(names), listed_at);
}

void DirListingCache::ReplaceNames(const std::string& dir, Dir* d,
                                   std::shared_ptr<const std::unordered_set<std::string>> names,
                                   Time listed_at) {
  // Names added since this listing began stay added: its pages may have been read before them.
  std::unordered_map<std::string, Time> keep;
  for (auto& [n, at] : d->added) {
    if (at >= listed_at && (names == nullptr || !names->count(n))) keep.emplace(n, at);
  }
  // And names added while this listing was under way before the directory had a listing to add
  // them to: the component under `dir` leading to each (a deeper key shows its directory).
  for (auto it = recently_added_.rbegin(); it != recently_added_.rend() && it->first >= listed_at;
       ++it) {
    const std::string& key = it->second;
    if (key.size() <= dir.size() || key.compare(0, dir.size(), dir) != 0) continue;
    const size_t slash = key.find('/', dir.size());
    std::string name = slash == std::string::npos ? key : key.substr(0, slash);
    if (names == nullptr || !names->count(name)) keep.emplace(std::move(name), it->first);
  }
  SetNames(d, nullptr);
  MakeRoom(dir, (names ? names->size() : 0) + keep.size());
  d->listed_at = listed_at;
  SetNames(d, std::move(names));
  if (d->names == nullptr) return;
  total_names_ += keep.size();
  d->added = std::move(keep);
}

void DirListingCache::NoteChild(const std::string& key, bool is_dir) {
  if (options_.shape_ttl.count() == 0) return;
  const std::string dir = DirOf(key);
  MutexLock l(&mu_);
  const Time now = Now();
  if (!RoomForDir(dir, now)) return;
  Dir& d = dirs_[dir];
  if (!ShapeFresh(d, now)) d.files_seen = d.dirs_seen = false;
  (is_dir ? d.dirs_seen : d.files_seen) = true;
  d.shape_at = now;
}

bool DirListingCache::FilesOnly(const std::string& dir) {
  if (options_.shape_ttl.count() == 0) return false;
  MutexLock l(&mu_);
  auto it = dirs_.find(dir);
  if (it == dirs_.end()) return false;
  const Dir& d = it->second;
  return ShapeFresh(d, Now()) && d.files_seen && !d.dirs_seen;
}

void DirListingCache::NoteMiss(const std::string& key) {
  if (options_.ttl.count() == 0 || options_.misses_before_listing <= 0) return;
  const std::string dir = DirOf(key);
  // A listing made now would not answer past the first moments (no feed covers it): not worth
  // its price.
  if (options_.worth_listing && !options_.worth_listing()) return;
  {
    MutexLock l(&mu_);
    Time now = Now();
    if (!RoomForDir(dir, now)) return;
    Dir& d = dirs_[dir];
    if (d.listing) return;
    // A directory found too big to hold is not listed again for ten TTLs: each attempt reads
    // max_entries names (100 pages) only to drop them.
    if (d.too_big && now - d.listed_at < 10 * options_.ttl) return;
    if (d.names != nullptr && Fresh(d.listed_at, now)) return;  // a listing answers already
    if (!Fresh(d.window_start, now)) {
      d.window_start = now;
      d.misses = 0;
    }
    if (++d.misses < std::max(options_.misses_before_listing, 12 * d.pages)) return;
    d.listing = true;
  }
  ListDir(dir);
}

void DirListingCache::ListDir(const std::string& dir) {
  const Time started = Now();
  auto names = std::make_shared<std::unordered_set<std::string>>();
  bool too_big = false;
  Status failed;
  ListRequest req;
  req.prefix = dir;
  req.delimiter = "/";
  ListLoopGuard guard("listing '" + dir + "'");
  int pages = 0;
  do {
    failed = guard.BeforePage(req.continuation_token);
    if (!failed.ok()) break;
    ++pages;
    auto page = store_->List(req);
    if (!page.ok()) {
      failed = page.status();
      break;
    }
    for (const ObjectInfo& o : page->objects) {
      names->insert(o.key);
      if (options_.on_object) options_.on_object(o);
    }
    // A directory is looked up by its key without the trailing '/'.
    for (const std::string& p : page->common_prefixes) names->insert(p.substr(0, p.size() - 1));
    failed = guard.AfterPage(names->size(), page->truncated);
    if (!failed.ok()) break;
    if (names->size() > options_.max_entries) {
      too_big = true;
      break;
    }
    req.continuation_token = page->truncated ? page->next_continuation_token : "";
  } while (!req.continuation_token.empty());

  MutexLock l(&mu_);
  Dir& d = dirs_[dir];
  d.listing = false;
  d.misses = 0;
  d.pages = pages;
  d.window_start = Now();
  if (!failed.ok()) {
    // Lookups keep asking the store, which reports its own errors; try again after more misses.
    LogWarn("kvfs: listing '{}' for negative lookups failed: {}", dir, failed.ToString());
    return;
  }
  ++listings_;
  d.listed_at = started;  // conservative: names uploaded during the listing may be missing
  d.too_big = too_big || names->size() > options_.max_total_names;
  if (d.too_big) {
    SetNames(&d, nullptr);
    return;
  }
  ReplaceNames(dir, &d, std::move(names), started);
}

uint64_t DirListingCache::listings() const {
  MutexLock l(&mu_);
  return listings_;
}

size_t DirListingCache::names_held() const {
  MutexLock l(&mu_);
  return total_names_;
}

}  // namespace kvfs
