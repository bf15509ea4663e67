#include "fs/read/ranged_get.h"

#include <algorithm>
#include <memory>

#include "base/mutex.h"

namespace kvfs {

Result<uint64_t> ParallelRangedGet(ObjectStore* store, const ObjectInfo& info, uint64_t offset,
                                   uint64_t length, char* buf, const RangedGetOptions& opts,
                                   uint64_t* requests,
                                   std::function<void(const ObjectInfo&)> on_info) {
  if (offset >= info.size || length == 0) return uint64_t{0};
  const uint64_t total = std::min(length, info.size - offset);
  const uint64_t part = std::max<uint64_t>(opts.part_size, 1);
  // Shared with the callbacks, which may run on another thread.
  struct Wave {
    Mutex mu;
    CondVar cv;
    int pending GUARDED_BY(mu) = 0;
    Status error GUARDED_BY(mu);
  };
  uint64_t done = 0;
  while (done < total) {
    auto wave = std::make_shared<Wave>();
    std::vector<std::pair<uint64_t, uint64_t>> ranges;  // (offset in buf, length)
    for (int i = 0; i < std::max(opts.max_parallel, 1) && done < total; i++) {
      uint64_t n = std::min(part, total - done);
      ranges.emplace_back(done, n);
      done += n;
    }
    {
      MutexLock l(&wave->mu);  // uncontended: no callback exists yet
      wave->pending = static_cast<int>(ranges.size());
    }
    for (auto [at, n] : ranges) {
      GetRequest req;
      req.key = info.key;
      req.offset = offset + at;
      req.length = n;
      req.if_match = info.etag;
      req.on_info = on_info;
      if (requests != nullptr) (*requests)++;
      // n = n: clang 14 cannot capture a structured binding directly.
      store->GetAsync(
          req, buf + at, [wave, req, n = n, info_size = info.size](Result<uint64_t> got) {
            Status st;
            if (!got.ok()) {
              st = got.status().Annotate("GET " + req.key + " at " + std::to_string(req.offset));
            } else if (*got != n) {
              st = ObjectSizeChanged(req.key, info_size,
                                     "GET of " + std::to_string(n) + " bytes at " +
                                         std::to_string(req.offset) + " returned " +
                                         std::to_string(*got));
            }
            MutexLock l(&wave->mu);
            if (!st.ok() && wave->error.ok()) wave->error = st;
            if (--wave->pending == 0) wave->cv.SignalAll();
          });
    }
    MutexLock l(&wave->mu);
    wave->cv.Wait(&wave->mu, [&]() REQUIRES(wave->mu) { return wave->pending == 0; });
    if (!wave->error.ok()) return wave->error;
  }
  return total;
}

}  // namespace kvfs
