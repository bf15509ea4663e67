#include "fs/chunk_size_learner.h"

#include <algorithm>
#include <cctype>
#include <functional>

#include "base/log.h"

namespace kvfs {
namespace {

constexpr size_t kMinHashRun = 12;   // shorter hex runs are ranks, versions, sizes: kept
constexpr size_t kMaxFanoutDir = 4;  // "abc/de/" levels above the hash-named file

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// A fan-out level is a piece of the hash the file is named by (llm-d "<hhh>/<hh>/<hash>.bin",
// LMCache GDS "<h[0:2]>/<h[2:4]>/<key with h>"): short, hex digits (or a sign), and found in the
// file's name. "bf16" above "a1b/2c/a1b2....bin" is a dtype, not fan-out.
bool IsFanoutDir(std::string_view comp, bool last, std::string_view file_name) {
  bool hexish = !comp.empty();
  for (char c : comp) hexish = hexish && (IsHex(c) || c == '-');
  return !last && hexish && comp.size() <= kMaxFanoutDir &&
         file_name.find(comp) != std::string_view::npos;
}

// A key's pattern, and where its first hashed part starts (the literal prefix a probe lists).
struct Parsed {
  std::string pattern;
  size_t literal_end = 0;
  bool hashed = false;  // some part became '*': the name can share a size with others
};

Parsed Parse(std::string_view key) {
  Parsed p;
  p.pattern.reserve(key.size());
  const size_t slash_at = key.rfind('/');
  const std::string_view file_name =
      slash_at == std::string_view::npos ? key : key.substr(slash_at + 1);
  auto wildcard = [&p](size_t at) {
    p.pattern.push_back('*');
    if (!p.hashed) p.literal_end = at;
    p.hashed = true;
  };
  size_t start = 0;
  while (true) {
    const size_t slash = key.find('/', start);
    const bool last = slash == std::string_view::npos;
    const std::string_view comp = key.substr(start, last ? std::string_view::npos : slash - start);
    if (IsFanoutDir(comp, last, file_name)) {
      wildcard(start);
    } else {
      for (size_t i = 0; i < comp.size();) {
        size_t j = i;
        while (j < comp.size() && IsHex(comp[j])) ++j;
        if (j == i) {
          p.pattern.push_back(comp[i++]);
        } else {
          if (j - i >= kMinHashRun) {
            wildcard(start + i);
          } else {
            p.pattern.append(comp.substr(i, j - i));
          }
          i = j;
        }
      }
    }
    if (last) break;
    p.pattern.push_back('/');
    start = slash + 1;
  }
  if (!p.hashed) p.literal_end = key.size();
  return p;
}

}  // namespace

ChunkSizeLearner::ChunkSizeLearner(bool enabled, size_t max_patterns)
    : enabled_(enabled), max_patterns_(max_patterns == 0 ? 1 : max_patterns) {}

std::string ChunkSizeLearner::PatternOf(std::string_view key) { return Parse(key).pattern; }

std::string_view ChunkSizeLearner::LiteralPrefix(std::string_view key) {
  return key.substr(0, Parse(key).literal_end);
}

std::optional<ChunkSizeLearner::Learnt> ChunkSizeLearner::Known(const Learnt& l) {
  if (l.size == 0) return std::nullopt;  // asked: nothing of the pattern in the store
  return l;
}

ChunkSizeLearner::PatternState& ChunkSizeLearner::RememberLocked(std::string pattern, uint64_t size,
                                                                 std::string_view key) {
  auto it = by_pattern_.find(pattern);
  if (it == by_pattern_.end()) {
    if (by_pattern_.size() >= max_patterns_) by_pattern_.erase(by_pattern_.begin());
    it = by_pattern_.emplace(std::move(pattern), PatternState{}).first;
  }
  PatternState& st = it->second;
  if (size == 0) return st;
  if (size > st.largest.size) st.largest = Learnt{size, std::string(key)};
  auto sized = st.names_by_size.find(size);
  if (sized == st.names_by_size.end()) {
    if (st.names_by_size.size() >= kMaxSizesPerPattern) {
      // Full: forget the size fewest names had (a partial one, most likely).
      auto fewest = st.names_by_size.begin();
      for (auto s = st.names_by_size.begin(); s != st.names_by_size.end(); ++s) {
        if (s->second.size() < fewest->second.size()) fewest = s;
      }
      st.names_by_size.erase(fewest);
    }
    sized = st.names_by_size.emplace(size, std::vector<size_t>{}).first;
  }
  std::vector<size_t>& names = sized->second;
  const size_t h = std::hash<std::string_view>{}(key);
  if (names.size() < kEstablish && std::find(names.begin(), names.end(), h) == names.end()) {
    names.push_back(h);
  }
  return st;
}

void ChunkSizeLearner::Observe(std::string_view key, uint64_t size) {
  if (!enabled_ || size == 0) return;
  Parsed p = Parse(key);
  if (!p.hashed) return;  // no hash in the name: nothing to share a size with
  MutexLock l(&mu_);
  RememberLocked(std::move(p.pattern), size, key);
}

std::optional<ChunkSizeLearner::Learnt> ChunkSizeLearner::Lookup(std::string_view key,
                                                                 ObjectStore* store) {
  if (!enabled_) return std::nullopt;
  Parsed p = Parse(key);
  if (!p.hashed) return std::nullopt;  // a name without a hash is not checked: no request
  {
    MutexLock l(&mu_);
    auto it = by_pattern_.find(p.pattern);
    if (it != by_pattern_.end()) return Known(it->second.largest);
  }
  if (store == nullptr) return std::nullopt;
  ListRequest req;
  req.prefix = std::string(key.substr(0, p.literal_end));
  req.max_keys = kProbeKeys;
  auto page = store->List(req);
  if (!page.ok()) {
    LogInfo(
        "kvfs: learn_chunk_sizes: listing '{}' to learn the size of '{}' failed ({}); "
        "its chunk is not size-checked",
        req.prefix, p.pattern, page.status().ToString());
    return std::nullopt;  // asked again next time
  }
  for (const ObjectInfo& o : page->objects) Observe(o.key, o.size);
  MutexLock l(&mu_);
  // Asked: recorded even when nothing matched.
  return Known(RememberLocked(std::move(p.pattern), 0, key).largest);
}

std::optional<ChunkSizeLearner::Learnt> ChunkSizeLearner::CheckClose(std::string_view key,
                                                                     uint64_t size,
                                                                     ObjectStore* store) {
  if (size == 0) return std::nullopt;
  std::optional<Learnt> learnt = Lookup(key, store);  // nullopt also when disabled or unhashed
  if (!learnt || size >= learnt->size) return std::nullopt;
  MutexLock l(&mu_);
  const PatternState& st = RememberLocked(PatternOf(key), size, key);
  if (st.names_by_size.at(size).size() >= kEstablish) return std::nullopt;
  return learnt;
}

}  // namespace kvfs
