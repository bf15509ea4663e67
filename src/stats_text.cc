#include "src/stats_text.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace kvfs {

std::vector<StatRow> StatRows(const ReaderStats& r, const CacheStats& c, const StoreStats& s) {
  return {
      {"kvfs_read_opens", r.opens},
      {"kvfs_read_hits", r.hits},
      {"kvfs_read_misses", r.misses},
      {"kvfs_read_shared_downloads", r.joins},
      {"kvfs_read_streamed_opens", r.streamed},
      {"kvfs_read_bytes_from_cache", r.bytes_from_cache},
      {"kvfs_read_bytes_from_store", r.bytes_from_store},
      {"kvfs_store_get_requests", r.get_requests},
      {"kvfs_downloads_in_flight", r.fetches_in_flight},
      {"kvfs_get_parts_in_flight", r.parts_in_flight},
      {"kvfs_download_failures", r.fetch_failures},
      {"kvfs_download_verify_failures", r.verify_failures},
      {"kvfs_downloads_unverified", r.unverified},
      {"kvfs_read_errors", r.read_errors},
      {"kvfs_cache_entries", c.entries},
      {"kvfs_cache_bytes", c.bytes},
      {"kvfs_cache_capacity_bytes", c.capacity},
      {"kvfs_cache_evictions", c.evictions},
      {"kvfs_cache_bytes_evicted", c.bytes_evicted},
      {"kvfs_cache_fills", c.fills},
      {"kvfs_cache_fill_aborts", c.fill_aborts},
      {"kvfs_cache_adopted_writes", c.adopted},
      {"kvfs_cache_fill_rejected", c.fill_rejected},
      {"kvfs_cache_recovered_entries", c.recovered},
      {"kvfs_cache_recovery_dropped", c.recovery_dropped},
      {"kvfs_cache_verify_failures", c.verify_failures},
      {"kvfs_cache_open_failures", c.open_failures},
      {"kvfs_store_requests", s.requests},
      {"kvfs_store_retries", s.retries},
      {"kvfs_store_errors", s.errors},
      {"kvfs_store_requests_in_flight", s.in_flight},
      {"kvfs_store_breaker_opens", s.breaker_opens},
      {"kvfs_store_breaker_rejected", s.breaker_rejected},
      {"kvfs_store_breaker_open", s.breaker_open},
  };
}

namespace {

// Values that go up and down; every other row only grows (a Prometheus counter).
bool IsGauge(const std::string& name) {
  for (const char* g : {"_in_flight", "kvfs_cache_entries", "kvfs_cache_bytes",
                        "kvfs_cache_capacity_bytes", "kvfs_store_breaker_open"}) {
    if (name.ends_with(g)) return true;
  }
  return false;
}

}  // namespace

std::string FormatStats(const ReaderStats& r, const CacheStats& c, const StoreStats& s) {
  std::string out;
  for (const StatRow& row : StatRows(r, c, s)) {
    out += row.name + " " + std::to_string(row.value) + "\n";
  }
  return out;
}

std::string FormatPrometheus(const ReaderStats& r, const CacheStats& c, const StoreStats& s) {
  std::string out;
  for (const StatRow& row : StatRows(r, c, s)) {
    const bool gauge = IsGauge(row.name);
    // Prometheus names counters ..._total.
    const std::string name = gauge ? row.name : row.name + "_total";
    out += "# TYPE " + name + (gauge ? " gauge\n" : " counter\n");
    out += name + " " + std::to_string(row.value) + "\n";
  }
  return out;
}

}  // namespace kvfs
