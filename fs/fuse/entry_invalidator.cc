#define FUSE_USE_VERSION 312
#include "fs/fuse/entry_invalidator.h"

#include <fuse_lowlevel.h>

namespace kvfs {

void EntryInvalidator::Push(uint64_t parent, const std::string& name) {
  sender_.Schedule([se = se_, parent, name] {
    fuse_lowlevel_notify_inval_entry(se, parent, name.c_str(), name.size());
  });
}

}  // namespace kvfs
