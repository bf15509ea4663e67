#include "tests/objstore/conformance_fixture.h"

#include <random>

#include "base/mutex.h"

namespace kvfs::testing {

std::string ConformanceTest::RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = rng();
    for (size_t j = 0; j < 8 && i + j < n; ++j) out[i + j] = static_cast<char>(v >> (8 * j));
  }
  return out;
}

Result<ObjectInfo> ConformanceTest::PutString(const std::string& key, const std::string& data,
                                              PutOptions opts) {
  return store().Put(key, Body::FromMemory(data.data(), data.size()), opts);
}

Result<std::string> ConformanceTest::GetString(const std::string& key, uint64_t offset,
                                               uint64_t length) {
  uint64_t room = length;
  if (length == GetRequest::kToEnd) {
    KVFS_ASSIGN_OR_RETURN(ObjectInfo info, store().Head(key));
    room = info.size > offset ? info.size - offset : 0;
  }
  std::string buf(room + 1, '\0');  // +1: a store writing past `length` shows up as a size change
  GetRequest req;
  req.key = key;
  req.offset = offset;
  req.length = length;
  KVFS_ASSIGN_OR_RETURN(uint64_t n, store().Get(req, buf.data()));
  if (n > room) return Status::Internal("GET returned more bytes than asked for");
  if (buf[room] != '\0') return Status::Internal("GET wrote past the requested length");
  buf.resize(n);
  return buf;
}

Status ConformanceTest::PutMany(const std::vector<std::pair<std::string, std::string>>& objects,
                                int inflight) {
  Mutex mu;
  CondVar cv;
  int running = 0;
  Status first_error;
  for (const auto& [key, data] : objects) {
    {
      MutexLock l(&mu);
      cv.Wait(&mu, [&] { return running < inflight; });
      ++running;
    }
    store().PutAsync(key, Body::FromMemory(data.data(), data.size()), {},
                     [&, key = key](Result<ObjectInfo> r) {
                       MutexLock l(&mu);
                       if (!r.ok() && first_error.ok()) first_error = r.status().Annotate(key);
                       --running;
                       cv.SignalAll();
                     });
  }
  MutexLock l(&mu);
  cv.Wait(&mu, [&] { return running == 0; });
  return first_error;
}

Result<ConformanceTest::Listing> ConformanceTest::ListAll(ListRequest req) {
  Listing out;
  for (;;) {
    KVFS_ASSIGN_OR_RETURN(ListResult page, store().List(req));
    ++out.pages;
    // Entries of one page, merged in byte order (S3 sorts keys and prefixes together).
    std::vector<std::string> entries;
    for (const auto& o : page.objects) {
      out.keys.push_back(o.key);
      entries.push_back(o.key);
    }
    for (const auto& p : page.common_prefixes) {
      out.prefixes.push_back(p);
      entries.push_back(p);
    }
    std::sort(entries.begin(), entries.end());
    out.entries.insert(out.entries.end(), entries.begin(), entries.end());
    if (static_cast<int>(entries.size()) > req.max_keys) {
      return Status::Internal("page with " + std::to_string(entries.size()) + " entries > " +
                              std::to_string(req.max_keys));
    }
    if (!page.truncated) break;
    if (page.next_continuation_token.empty()) {
      return Status::Internal("truncated page without continuation token");
    }
    if (out.pages > 10000) return Status::Internal("listing does not end");
    req.continuation_token = page.next_continuation_token;
  }
  return out;
}

}  // namespace kvfs::testing
