// The directory store's settings: a room of their own, so that the factory (dir_store.h) and the
// class behind it (dir_store_impl.h) both use them without including each other.
#pragma once

namespace kvfs {

// A plain value: copied into the store at construction.
struct DirStoreOptions {
  // fsync files before they are published and the directory after. Off only for tests and
  // benchmarks that do not care about crashes.
  bool sync = true;
};

}  // namespace kvfs
