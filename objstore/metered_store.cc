#include "objstore/metered_store.h"

#include <cstdio>

namespace kvfs {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

}  // namespace

void LatencyHistogram::Observe(std::chrono::steady_clock::duration d) {
  const double secs = std::chrono::duration<double>(d).count();
  size_t i = 0;
  while (i < kBounds.size() && secs > kBounds[i]) i++;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_us_.fetch_add(
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count()),
      std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
}

void LatencyHistogram::AppendPrometheus(const std::string& name, const std::string& labels,
                                        std::string* out) const {
  // Prometheus buckets are cumulative.
  uint64_t cumulative = 0;
  for (size_t i = 0; i <= kBounds.size(); i++) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    const std::string le = i < kBounds.size() ? Num(kBounds[i]) : "+Inf";
    *out += name + "_bucket{" + labels + ",le=\"" + le + "\"} " + std::to_string(cumulative) + "\n";
  }
  *out += name + "_sum{" + labels + "} " +
          Num(static_cast<double>(sum_us_.load(std::memory_order_relaxed)) / 1e6) + "\n";
  *out += name + "_count{" + labels + "} " +
          std::to_string(count_.load(std::memory_order_relaxed)) + "\n";
}

void MeteredStore::Done(StoreOp op, Clock::time_point start, const Status& st, uint64_t bytes) {
  OpMetrics& m = ops_[OpIndex(op)];
  m.latency.Observe(Clock::now() - start);
  if (st.ok()) {
    m.bytes.fetch_add(bytes, std::memory_order_relaxed);
  } else if (st.code() != StatusCode::kNotFound && st.code() != StatusCode::kAlreadyExists) {
    // Absent keys and lost creates are answers, not failures (as StoreStats::errors counts).
    m.errors.fetch_add(1, std::memory_order_relaxed);
    errors_by_kind_[static_cast<size_t>(st.code())].fetch_add(1, std::memory_order_relaxed);
  }
}

std::string MeteredStore::Prometheus() const {
  std::string out;
  out += "# HELP kvfs_store_request_duration_seconds Object store operations, retries included.\n";
  out += "# TYPE kvfs_store_request_duration_seconds histogram\n";
  for (size_t op = 0; op < kNumStoreOps; op++) {
    if (!kStoreOps[op].metered) continue;
    ops_[op].latency.AppendPrometheus("kvfs_store_request_duration_seconds",
                                      std::string("op=\"") + kStoreOps[op].name + "\"", &out);
  }
  out += "# HELP kvfs_store_get_first_byte_seconds Time from a GET's start to its first byte.\n";
  out += "# TYPE kvfs_store_get_first_byte_seconds histogram\n";
  get_first_byte_.AppendPrometheus("kvfs_store_get_first_byte_seconds", "op=\"GET\"", &out);
  out += "# HELP kvfs_store_bytes_total Bytes moved by successful operations.\n";
  out += "# TYPE kvfs_store_bytes_total counter\n";
  for (size_t op = 0; op < kNumStoreOps; op++) {
    if (!kStoreOps[op].metered || !kStoreOps[op].moves_bytes) continue;
    out += std::string("kvfs_store_bytes_total{op=\"") + kStoreOps[op].name + "\"} " +
           std::to_string(ops_[op].bytes.load(std::memory_order_relaxed)) + "\n";
  }
  out += "# HELP kvfs_store_operation_errors_total Operations that failed after their retries.\n";
  out += "# TYPE kvfs_store_operation_errors_total counter\n";
  for (size_t op = 0; op < kNumStoreOps; op++) {
    if (!kStoreOps[op].metered) continue;
    out += std::string("kvfs_store_operation_errors_total{op=\"") + kStoreOps[op].name + "\"} " +
           std::to_string(ops_[op].errors.load(std::memory_order_relaxed)) + "\n";
  }
  out += "# HELP kvfs_store_errors_by_kind_total Failed operations by kind of failure.\n";
  out += "# TYPE kvfs_store_errors_by_kind_total counter\n";
  for (size_t code = 1; code < errors_by_kind_.size(); code++) {
    const auto c = static_cast<StatusCode>(code);
    if (c == StatusCode::kNotFound || c == StatusCode::kAlreadyExists) continue;  // not failures
    out += std::string("kvfs_store_errors_by_kind_total{kind=\"") + StatusCodeName(c) + "\"} " +
           std::to_string(errors_by_kind_[code].load(std::memory_order_relaxed)) + "\n";
  }
  return out;
}

StoreWrapper::Interception MeteredStore::Begin(const Call& call) {
  Interception ic;
  if (!OpInfo(call.op).metered) return ic;
  ic.end = [this, op = call.op, t0 = Clock::now()](const Status& st, uint64_t bytes) {
    Done(op, t0, st, bytes);
    return Status::OK();
  };
  return ic;
}

GetRequest MeteredStore::Timed(const GetRequest& req) {
  // The store reports the object's headers once per GET, as its first bytes arrive: that is
  // the time to first byte, whether the body then goes to a buffer or a sink.
  GetRequest timed = req;
  timed.on_info = [this, t0 = Clock::now(), inner = req.on_info](const ObjectInfo& info) {
    get_first_byte_.Observe(Clock::now() - t0);
    if (inner) inner(info);
  };
  return timed;
}

void MeteredStore::GetAsync(const GetRequest& req, char* dst, GetCallback done) {
  StoreWrapper::GetAsync(Timed(req), dst, std::move(done));
}

void MeteredStore::GetStreamAsync(const GetRequest& req, GetSink sink, GetCallback done) {
  StoreWrapper::GetStreamAsync(Timed(req), std::move(sink), std::move(done));
}

}  // namespace kvfs
