// The one place where a Status becomes an errno. Everything the kernel sees goes through here.
#pragma once

#include "base/status.h"

namespace kvfs {

// Returns a positive errno for a non-OK status (0 for OK).
int ToErrno(const Status& status);

}  // namespace kvfs
