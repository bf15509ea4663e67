// `kvfs [options] SOURCE MOUNTPOINT`: builds the stack (store, cache, read path, filesystem) from
// the configuration, checks the store, mounts, serves until unmounted, then tears down in order.
#pragma once

#include "src/cli.h"
#include "src/config.h"

namespace kvfs {

// Returns the process exit status. Thread-safety: call once, from main().
int RunMount(const CommandLine& cmd, const KvfsConfig& config);

}  // namespace kvfs
