// MeteredStore: a StoreWrapper that times every store operation, for the Prometheus endpoint
// (metrics_listen): per operation a latency histogram, the bytes moved and the failures, and for
// GETs the time to the first byte. Only installed when metrics are asked for, so a mount without
// them pays nothing.
//
// Thread-safe: lock-free counters (relaxed atomics); a scrape may see one operation's count
// without its sum, which Prometheus tolerates.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "objstore/store_wrapper.h"

namespace kvfs {

class LatencyHistogram {
 public:
  // Upper bounds in seconds: object-store requests take from sub-millisecond (a local RGW) to
  // tens of seconds (a large part over a slow link).
  static constexpr std::array<double, 14> kBounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                     0.25,  0.5,    1,     2.5,  5,     10,   30};
  void Observe(std::chrono::steady_clock::duration d);
  // Appends the _bucket, _sum and _count lines of `name` with the label set `labels`
  // (e.g. op="GET").
  void AppendPrometheus(const std::string& name, const std::string& labels, std::string* out) const;

 private:
  std::array<std::atomic<uint64_t>, kBounds.size() + 1> buckets_{};  // last: +Inf
  std::atomic<uint64_t> sum_us_{0};
  std::atomic<uint64_t> count_{0};
};

// Meters every operation the list in objstore/store_ops.h marks `metered` (through
// StoreWrapper::Begin, so a new operation needs no change here); GETs also for the time to first
// byte.
class MeteredStore : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;

  // The metrics in Prometheus text format (HELP/TYPE lines included).
  std::string Prometheus() const;

  void GetAsync(const GetRequest& req, char* dst, GetCallback done) override;
  void GetStreamAsync(const GetRequest& req, GetSink sink, GetCallback done) override;

 protected:
  Interception Begin(const Call& call) override;

 private:
  using Clock = std::chrono::steady_clock;
  struct OpMetrics {
    LatencyHistogram latency;
    std::atomic<uint64_t> bytes{0};
    std::atomic<uint64_t> errors{0};
  };
  // Records one finished operation.
  void Done(StoreOp op, Clock::time_point start, const Status& st, uint64_t bytes);
  // `req` with an on_info that records the time to first byte.
  GetRequest Timed(const GetRequest& req);

  std::array<OpMetrics, kNumStoreOps> ops_;  // indexed by StoreOp; only metered ones are used
  LatencyHistogram get_first_byte_;
  // Indexed by StatusCode (kInternal is the last code).
  std::array<std::atomic<uint64_t>, static_cast<size_t>(StatusCode::kInternal) + 1>
      errors_by_kind_{};
};

}  // namespace kvfs
