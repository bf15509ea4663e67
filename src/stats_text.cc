#include "src/stats_text.h"

#include <cstdint>
#include <utility>

namespace kvfs {

std::string FormatStats(const ReaderStats& r, const CacheStats& c, const StoreStats& s) {
  const std::pair<const char*, uint64_t> rows[] = {
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
      {"kvfs_store_requests", s.requests},
      {"kvfs_store_retries", s.retries},
      {"kvfs_store_errors", s.errors},
      {"kvfs_store_requests_in_flight", s.in_flight},
      {"kvfs_store_breaker_opens", s.breaker_opens},
      {"kvfs_store_breaker_rejected", s.breaker_rejected},
      {"kvfs_store_breaker_open", s.breaker_open},
  };
  std::string out;
  for (const auto& [name, value] : rows) {
    out += name;
    out += ' ';
    out += std::to_string(value);
    out += '\n';
  }
  return out;
}

}  // namespace kvfs
