#include "src/store_factory.h"

#include "objstore/dir/dir_store.h"
#include "objstore/s3/s3_store.h"
#include "src/config_keys.h"
#include "src/config_values.h"
#include "src/s3_resolve.h"

namespace kvfs {

Result<StoreAndPrefix> OpenStore(const KvfsConfig& config) {
  StoreAndPrefix out;
  out.key_prefix = NormalizeKeyPrefix(config.key_prefix);
  switch (config.source_kind) {
    case SourceKind::kDir: {
      KVFS_ASSIGN_OR_RETURN(out.store, NewDirStore(config.dir_root));
      return out;
    }
    case SourceKind::kS3: {
      KVFS_ASSIGN_OR_RETURN(out.store, NewS3Store(EffectiveS3Options(config)));
      return out;
    }
    case SourceKind::kNone:
      break;
  }
  return Status::InvalidArgument(
      "no store to mount: give SOURCE (s3://bucket[/prefix] or file:///dir) on the command line, "
      "or 'source' / LMCache's 'remote_url' in the config file");
}

}  // namespace kvfs
