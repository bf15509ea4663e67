// Filesystem: construction, and the paths and keys of names. Lookups and what a name resolves to
// are in fs_lookup.cc, attributes and statfs in fs_attr.cc, open and read in fs_open.cc, the write
// path in fs_write.cc, directory operations, unlink and rename in fs_dir.cc.
#include "fs/filesystem.h"

#include <fnmatch.h>
#include <spdlog/spdlog.h>

#include "cache/cache_dir.h"
#include "fs/process_state.h"

namespace kvfs {

namespace {

std::chrono::milliseconds NegativeTtl(const FsOptions& o) {
  return std::min<std::chrono::milliseconds>(std::chrono::milliseconds(o.negative_ttl_ms),
                                             std::chrono::seconds(o.metadata_ttl_secs));
}

// The longest a miss may be kept: feed_miss_ttl_secs with the fleet feed (while it covers the
// miss: Filesystem::MissHolds), negative_ttl_ms without.
std::chrono::milliseconds MissTtlMax(const FsOptions& o) {
  if (!o.fleet_feed) return NegativeTtl(o);
  return std::max(NegativeTtl(o),
                  std::min<std::chrono::milliseconds>(std::chrono::seconds(o.feed_miss_ttl_secs),
                                                      std::chrono::seconds(o.metadata_ttl_secs)));
}

}  // namespace

Result<std::unique_ptr<Filesystem>> Filesystem::Create(std::shared_ptr<ObjectStore> store,
                                                       std::shared_ptr<ChunkReader> reader,
                                                       FsOptions options, SteadyClock clock) {
  KVFS_RETURN_IF_ERROR(options.Validate());
  // Creates it private without following symlinks, refuses one another user controls, and removes
  // only the spool files of an earlier run (cache_dir.h).
  KVFS_RETURN_IF_ERROR(PrepareSpoolDir(options.spool_dir, "spool_dir"));
  return std::unique_ptr<Filesystem>(
      new Filesystem(std::move(store), std::move(reader), std::move(options), std::move(clock)));
}

Filesystem::Filesystem(std::shared_ptr<ObjectStore> store, std::shared_ptr<ChunkReader> reader,
                       FsOptions options, SteadyClock clock)
    : store_(std::move(store)),
      reader_(std::move(reader)),
      options_(std::move(options)),
      codec_(options_.key_prefix, options_.fanout_hex_chars),
      uploader_(store_, options_),
      meta_(std::chrono::seconds(options_.metadata_ttl_secs), options_.metadata_cache_max_bytes,
            clock, MissTtlMax(options_)),
      learnt_sizes_(options_.learn_chunk_sizes && options_.chunk_sizes.empty()),
      // Listings answer misses, so they hold as long as a miss does. Misses start a listing only
      // while the fleet feed keeps it current: a LIST costs about 12 HEADs, and without the feed
      // it would answer for negative_ttl_ms only.
      listings_(
          store_,
          {.ttl = MissTtlMax(options_),
           .misses_before_listing = options_.fleet_feed ? 16 : 0,
           .shape_ttl = std::chrono::seconds(options_.metadata_ttl_secs),
           .answers =
               [this](std::chrono::steady_clock::time_point t) {
                 return MissHolds(listings_.Now() - t);
               },
           .worth_listing = [this] { return feed_ && feed_->Covers(listings_.Now()); },
           .on_object = [this](const ObjectInfo& o) { learnt_sizes_.Observe(o.key, o.size); }},
          clock),
      revalidator_(store_, &meta_, reader_.get(), options_.revalidate_timeout_ms),
      probe_(ProcMatchesOwnPid() ? ProcessProbe{ProcessIsExiting, KilledBySignal, ThreadGroupOf,
                                                [](pid_t tgid, uint64_t ino, const std::string& n) {
                                                  return HoldsWritableFd(tgid, ino, n);
                                                }}
                                 : ProcessProbe{}),
      unlinked_(UnlinkedNames::kDefaultMaxEntries),
      write_back_(options_.write_back ? std::make_unique<WriteBack>(options_.write_back_uploads,
                                                                    options_.write_back_bytes)
                                      : nullptr) {
  if (!probe_.exiting) {
    spdlog::warn(
        "kvfs: /proc does not show this daemon's own pid namespace: closes by dying processes "
        "cannot be told from live ones, nor a writer's close from its children's, so a partial "
        "chunk may be published unless chunk_sizes is set, and chunks being written are "
        "visible to every process");
  }
}

Filesystem::~Filesystem() {
  DrainWriteBack();
  if (size_t n = local_files_.size()) {
    spdlog::info("kvfs: {} local file(s) not uploaded at shutdown (temporary or unfinished)", n);
  }
}

// ---------------------------------------------------------------------------------------------
// Paths and keys

Result<std::vector<std::string>> Filesystem::PathOf(uint64_t ino) const {
  auto p = inodes_.Path(ino);
  if (!p) return Status::NotFound("inode " + std::to_string(ino) + " no longer has a name");
  return *p;
}

Result<std::vector<std::string>> Filesystem::ChildPath(uint64_t parent,
                                                       const std::string& name) const {
  KVFS_RETURN_IF_ERROR(NameCodec::ValidateName(name));
  KVFS_ASSIGN_OR_RETURN(std::vector<std::string> path, PathOf(parent));
  path.push_back(name);
  return path;
}

bool Filesystem::IsTempName(const std::string& name) const {
  for (const auto& pat : options_.temp_patterns) {
    if (fnmatch(pat.c_str(), name.c_str(), 0) == 0) return true;
  }
  return false;
}

std::string Filesystem::Display(const std::vector<std::string>& path) {
  std::string s;
  for (const auto& n : path) s += (s.empty() ? "" : "/") + n;
  return s;
}

size_t Filesystem::LocalFileCount() const { return local_files_.size(); }

}  // namespace kvfs
