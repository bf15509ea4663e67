#include "objstore/dir/dir_store.h"

#include <unistd.h>

#include <cerrno>
#include <string>

#include "objstore/dir/dir_store_impl.h"

namespace kvfs {

Result<std::shared_ptr<ObjectStore>> NewDirStore(const std::string& root_dir,
                                                 const DirStoreOptions& options) {
  std::string root = root_dir;
  if (root.rfind("file://", 0) == 0) root = root.substr(7);
  if (root.empty()) return Status::InvalidArgument("directory store: empty root directory");
  if (root[0] != '/') {
    char cwd[4096];
    if (::getcwd(cwd, sizeof(cwd)) == nullptr) return Status::FromErrno(errno, "getcwd");
    root = std::string(cwd) + "/" + root;
  }
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  auto store = std::make_shared<dirstore::DirStore>(root, options);
  KVFS_RETURN_IF_ERROR(store->Init().Annotate("directory store file://" + root));
  return std::shared_ptr<ObjectStore>(std::move(store));
}

}  // namespace kvfs
