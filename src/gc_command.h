// `kvfs gc SOURCE|MOUNTPOINT [--dry-run] [-o ...]`: one pass of the bounded tier's collector.
//   SOURCE (a URL, e.g. s3://bucket/prefix): from the command line, for a prefix no node mounts
//     right now (a CronJob). Takes the collector's lease (waiting store_gc_interval x 3 when
//     another holder's lease exists, to see whether it is alive; a live one is left to do the
//     work), makes one pass, gives the lease back. --dry-run prints what a pass would remove and
//     changes nothing (no lease).
//   MOUNTPOINT: asks that mount's daemon to run its tier step now (user.kvfs.tier_gc), then
//     prints its tier counters.
// Thread-safety: call from main() only.
#pragma once

#include "src/cli.h"
#include "src/config.h"

namespace kvfs {

// Returns the process exit status.
int RunGcSource(const CommandLine& cmd, const KvfsConfig& config);
int RunGcMount(const CommandLine& cmd);

}  // namespace kvfs
