#include "fs/chunk_size_learner.h"

#include <spdlog/spdlog.h>

#include <cctype>

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

std::string_view FileName(std::string_view key) {
  size_t slash = key.rfind('/');
  return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

void AppendComponent(std::string_view comp, bool last, std::string_view file_name,
                     std::string* out) {
  if (IsFanoutDir(comp, last, file_name)) {
    out->push_back('*');
    return;
  }
  size_t i = 0;
  while (i < comp.size()) {
    if (!IsHex(comp[i])) {
      out->push_back(comp[i++]);
      continue;
    }
    size_t j = i;
    while (j < comp.size() && IsHex(comp[j])) ++j;
    if (j - i >= kMinHashRun) {
      out->push_back('*');
    } else {
      out->append(comp.substr(i, j - i));
    }
    i = j;
  }
}

}  // namespace

ChunkSizeLearner::ChunkSizeLearner(bool enabled, size_t max_patterns)
    : enabled_(enabled), max_patterns_(max_patterns == 0 ? 1 : max_patterns) {}

std::string ChunkSizeLearner::PatternOf(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  size_t start = 0;
  while (true) {
    size_t slash = key.find('/', start);
    bool last = slash == std::string_view::npos;
    AppendComponent(key.substr(start, last ? std::string_view::npos : slash - start), last,
                    FileName(key), &out);
    if (last) break;
    out.push_back('/');
    start = slash + 1;
  }
  return out;
}

void ChunkSizeLearner::Observe(std::string_view key, uint64_t size) {
  if (!enabled_ || size == 0) return;
  std::string pattern = PatternOf(key);
  if (pattern == key) return;  // no hash in the name: nothing to share a size with
  MutexLock l(&mu_);
  auto it = by_pattern_.find(pattern);
  if (it != by_pattern_.end()) {
    if (size > it->second.size) it->second = Learnt{size, std::string(key)};
    return;
  }
  if (by_pattern_.size() >= max_patterns_) by_pattern_.erase(by_pattern_.begin());
  by_pattern_.emplace(std::move(pattern), Learnt{size, std::string(key)});
}

std::optional<ChunkSizeLearner::Learnt> ChunkSizeLearner::Lookup(std::string_view key) const {
  if (!enabled_) return std::nullopt;
  std::string pattern = PatternOf(key);
  if (pattern == key) return std::nullopt;
  MutexLock l(&mu_);
  auto it = by_pattern_.find(pattern);
  if (it == by_pattern_.end() || it->second.size == 0) return std::nullopt;  // 0: probed, empty
  return it->second;
}

std::string_view ChunkSizeLearner::LiteralPrefix(std::string_view key) {
  size_t start = 0;
  while (true) {
    size_t slash = key.find('/', start);
    bool last = slash == std::string_view::npos;
    std::string_view comp = key.substr(start, last ? std::string_view::npos : slash - start);
    if (IsFanoutDir(comp, last, FileName(key))) return key.substr(0, start);
    for (size_t i = 0; i < comp.size();) {
      size_t j = i;
      while (j < comp.size() && IsHex(comp[j])) ++j;
      if (j - i >= kMinHashRun) return key.substr(0, start + i);
      i = j == i ? i + 1 : j;
    }
    if (last) return key;
    start = slash + 1;
  }
}

void ChunkSizeLearner::Probe(std::string_view key, ObjectStore* store) {
  if (!enabled_ || store == nullptr) return;
  std::string pattern = PatternOf(key);
  if (pattern == key) return;  // a name without a hash is not checked: no request for it
  {
    MutexLock l(&mu_);
    if (by_pattern_.count(pattern) != 0) return;  // known, or already asked
  }
  ListRequest req;
  req.prefix = std::string(LiteralPrefix(key));
  req.max_keys = kProbeKeys;
  auto page = store->List(req);
  if (!page.ok()) {
    spdlog::info(
        "kvfs: learn_chunk_sizes: listing '{}' to learn the size of '{}' failed ({}); "
        "its chunk is not size-checked",
        req.prefix, pattern, page.status().ToString());
    return;
  }
  for (const ObjectInfo& o : page->objects) Observe(o.key, o.size);
  MutexLock l(&mu_);
  if (by_pattern_.size() >= max_patterns_ && by_pattern_.count(pattern) == 0) {
    by_pattern_.erase(by_pattern_.begin());
  }
  by_pattern_.try_emplace(std::move(pattern), Learnt{});  // asked: nothing of it in the store
}

}  // namespace kvfs
