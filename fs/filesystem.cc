// Filesystem: the whole class in one file, in the order a request meets it - construction and
// the paths and keys of names, lookups (what a name resolves to), attributes and statfs, open and
// read, the write path (each transition asked of the SpoolFile, fs/spool_file.h), directories,
// unlink and rename.
#include "fs/filesystem.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <linux/fs.h>  // RENAME_NOREPLACE, RENAME_EXCHANGE
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <ctime>
#include <map>
#include <unordered_set>

#include "base/log.h"
#include "cache/cache_dir.h"
#include "fs/list_loop_guard.h"
#include "fs/process_state.h"
#include "fs/read/lazy_read_handle.h"

namespace kvfs {

// ===============================================================================================
// Construction, paths and keys
// ===============================================================================================

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

// The writer's RELEASE follows its close() within microseconds when it was its last descriptor
// of the file (a second leaves room for a loaded machine); later, the /proc walk decides whether
// it holds another (Filesystem::WriterHoldsAnother).
constexpr auto kReleaseWait = std::chrono::milliseconds(1000);

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
                                                },
                                                [](pid_t tgid, uint64_t ino, const std::string& n) {
                                                  return DescendantHoldingWritableFd(tgid, ino, n);
                                                }}
                                 : ProcessProbe{}),
      unlinked_(UnlinkedNames::kDefaultMaxEntries),
      // Also without write_back when an earlier run left sealed chunks: they are uploaded here.
      write_back_(options_.write_back || !SpoolSeal::SealedIn(options_.spool_dir).empty()
                      ? std::make_unique<WriteBack>(options_.write_back_uploads,
                                                    options_.write_back_bytes,
                                                    options_.write_back_max_age_ms)
                      : nullptr) {
  if (!probe_.exiting) {
    LogWarn(
        "kvfs: /proc does not show this daemon's own pid namespace: closes by dying processes "
        "cannot be told from live ones, nor a writer's close from its children's, so a partial "
        "chunk may be published unless chunk_sizes is set, and chunks being written are "
        "visible to every process");
  }
}

Filesystem::~Filesystem() {
  DrainWriteBack();
  if (size_t n = local_files_.size()) {
    LogInfo("kvfs: {} local file(s) not uploaded at shutdown (temporary or unfinished)", n);
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

// ===============================================================================================
// Lookups
//
// Filesystem lookups: what a name resolves to (a local file being written, the metadata cache, a
// local copy of its chunk, else the store), and which process may see a file being written.
//
// Lookups that need the store, with directories: one LIST per lookup.
//
// The kernel looks a path up one component at a time, and each component this node has not seen
// used to cost a HEAD (is it a file?) and a one-key LIST (is it a directory?): ~5 requests for a
// chunk of vLLM's or llm-d's "<root>/<model>_r0/<hhh>/<hh>_g0/<hash>.bin" on a node new to its
// directories. Here one LIST with prefix "<key>" and no delimiter answers instead. The
// store returns keys in byte order, so the page holds the object "<key>" itself first (if any),
// then siblings that extend the name with a byte below '/' ("<key>-old"), then every key under
// "<key>/" up to lookup_list_max_keys. That tells file, directory and missing apart, and the keys
// under "<key>/" answer the lookups of the levels below: their directories and files go to the
// metadata cache, and each directory the page lists completely becomes a listing that answers
// misses under it (DirListingCache). The next lookups of the same path cost nothing, so a chunk
// lookup costs one request whatever its depth (two when the page ends before the chunk's
// directory: a level of more than lookup_list_max_keys keys).
//
// In a chunk directory (lookups there found files and no subdirectory) one HEAD answers instead,
// at a twelfth of a LIST's price.
//
// What is found lives one metadata TTL, as a HEAD's answer would; what is missing lives
// negative_ttl_ms, or as long as the fleet feed covers it (MissHolds), so other nodes' new chunks
// show within about a second. A directory exists while any key lies under it (a marker "<key>/"
// of mkdir included) that this node did not unlink.
// ===============================================================================================

namespace {

// Whether a sorted listing whose largest key is `last` saw every key starting with `prefix`.
bool ListedPast(const std::string& last, const std::string& prefix) {
  return last.compare(0, prefix.size(), prefix) > 0;
}

// Whether the last component of `key` has a dot after its first character ("x.bin", not ".x").
bool HasExtension(const std::string& key) {
  const size_t slash = key.rfind('/');
  const size_t start = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = key.rfind('.');
  return dot != std::string::npos && dot > start && dot + 1 < key.size();
}

}  // namespace

Result<Filesystem::Node> Filesystem::Resolve(const std::string& key, bool* needs_store) {
  std::shared_ptr<SpoolFile> lf = local_files_.Find(key);
  auto local_node = [&] {
    Node node;
    node.kind = MetaEntry::kFile;
    node.info.key = key;
    node.info.size = lf->size_now();
    node.info.mtime_sec = lf->mtime_sec();
    node.spool = lf;
    node.written_here = true;
    return node;
  };
  if (lf && lf->temp_now()) return local_node();
  auto remote = ResolveRemote(key, needs_store);
  if (needs_store != nullptr && *needs_store) return remote;
  // A write in progress shows only while no complete object of that name exists: readers of a
  // chunk being rewritten get the uploaded bytes, never a partial file. A whole version accepted
  // here (write_back, its upload to follow) is what this node shows, over the older object too:
  // a reader after the close must not get the bytes it replaced (LMCache's DEVDAX L1 rewrites a
  // file through a mapping right after its first close).
  const bool accepted = lf && lf->queued_now() && lf->published_now();
  if (lf && (accepted || !remote.ok() || remote->kind != MetaEntry::kFile)) {
    return local_node();
  }
  if (lf && remote.ok()) remote->written_here = true;
  return remote;
}

Result<Filesystem::Node> Filesystem::ResolveRemote(const std::string& key, bool* needs_store) {
  Node node;
  auto hidden = [&] { return Status::NotFound("no such file (unlinked on this node): " + key); };
  auto e = meta_.Get(key);
  // A miss older than negative_ttl_ms holds only while the fleet feed says no node stored the
  // name since; otherwise the store is asked (below).
  if (e && e->kind == MetaEntry::kMissing && !MissHolds(e->age)) e.reset();
  if (e) {
    ++lookups_.local;
    if (e->kind == MetaEntry::kMissing) {
      ++lookups_.local_misses;
      return Status::NotFound("no such file: " + key);
    }
    node.kind = e->kind;
    node.info = e->info;
    node.ttl_secs = std::chrono::duration<double>(e->left).count();
    // A listing made after the unlink still holds the object: it stays hidden here.
    if (node.kind == MetaEntry::kFile && unlinked_.Hides(node.info)) return hidden();
    return node;
  }
  if (listings_.KnownMissing(key)) {
    ++lookups_.local;
    ++lookups_.local_misses;
    meta_.PutMissing(key);
    return Status::NotFound("no such file: " + key);
  }
  if (auto local = ServeLocalCopy(key)) {
    ++lookups_.local;
    if (unlinked_.Hides(local->info)) return hidden();
    return *local;
  }
  if (needs_store != nullptr) {
    *needs_store = true;
    return Status::Unavailable(key + ": the answer needs the store");
  }
  // With directories, one LIST tells file from directory from missing (filesystem.cc, Lookups),
  // unless the name's directory is a chunk directory: there a HEAD (a twelfth of a LIST's price)
  // answers.
  ++lookups_.sent;
  const bool with_dirs = !codec_.flat() && options_.subdirectories;
  if (with_dirs && !listings_.FilesOnly(DirListingCache::DirOf(key))) {
    return ResolveByListing(key);
  }
  ++lookups_.sent_heads;
  auto head = store_->Head(key);
  if (head.ok()) {
    head->key = key;
    return FoundFile(std::move(head).value());
  }
  if (head.status().code() != StatusCode::kNotFound) return head.status();
  // A name without an extension may be a directory another node made among the files: the
  // LIST tells, unless the fleet feed is read (then a kvfs node's new directory would have
  // arrived with it, and marked this directory as one with subdirectories). Every engine's chunk
  // names have an extension (.bin, .pt, .data): a missed chunk costs one request.
  if (with_dirs && !HasExtension(key) && !(feed_ && feed_->Covers(listings_.Now()))) {
    return ResolveByListing(key);
  }
  return StoreMissed(key);
}

std::optional<Filesystem::Node> Filesystem::ServeLocalCopy(const std::string& key) {
  if (options_.cached_chunk_trust_secs == 0 || reader_ == nullptr) return std::nullopt;
  std::optional<ChunkReader::CachedCopyInfo> copy = reader_->CachedCopy(key);
  if (!copy) return std::nullopt;
  const MetaCache::Stale stale = meta_.GetStale(key);
  Node node;
  node.kind = MetaEntry::kFile;
  if (stale.entry) {
    // The last answer of the store must be about the same object as the local copy.
    const ObjectInfo& info = stale.entry->info;
    if (stale.entry->kind != MetaEntry::kFile || info.size != copy->size ||
        (!info.etag.empty() && !copy->etag.empty() && info.etag != copy->etag)) {
      return std::nullopt;
    }
    if (stale.age > std::chrono::seconds(options_.cached_chunk_trust_secs)) return std::nullopt;
    node.info = info;
  } else {
    // No metadata (evicted, or a restart): the fill was the store's last word on it.
    if (time(nullptr) - copy->fetched_sec >
        static_cast<int64_t>(options_.cached_chunk_trust_secs)) {
      return std::nullopt;
    }
    node.info.key = key;
    node.info.size = copy->size;
    node.info.etag = copy->etag;
    node.info.mtime_sec = copy->fetched_sec;
  }
  node.info.key = key;
  revalidator_.Enqueue(node.info, stale.gen);
  // The kernel asks again soon: once the background check has answered (a delete elsewhere is
  // then seen here), the answer is the store's again, with the whole TTL.
  node.ttl_secs = options_.negative_ttl_ms / 1000.0;
  return node;
}

Result<FsEntry> Filesystem::Lookup(uint64_t parent, const std::string& name, bool* needs_store,
                                   pid_t pid) {
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  // A temporary name is never uploaded under that name: without a local file it does not exist,
  // and the open(O_CREAT) of each engine's temp file costs no request.
  if (IsTempName(name) && local_files_.Find(key) == nullptr) {
    return Status::NotFound("no such file (temporary name, local only): " + key);
  }
  KVFS_ASSIGN_OR_RETURN(Node node, Resolve(key, needs_store));
  FsEntry entry;
  entry.ttl_secs = node.ttl_secs;
  if (node.spool && !node.spool->published_now()) {
    // A chunk being written: only its writer sees it, and nobody caches the answer, so that
    // others see it the moment it is published.
    entry.ttl_secs = 0;
    if (!VisibleTo(*node.spool, pid)) return entry;  // ino 0, not cached
  }
  uint64_t ino = inodes_.Ref(parent, name, node.kind == MetaEntry::kDir);
  entry.attr = AttrOf(ino, node);
  if (node.kind == MetaEntry::kFile && !node.written_here && reader_ != nullptr) {
    // An engine looks up the chunks it is about to read: their downloads start now, while it
    // looks up or reads the others. A scan's lookups only answer. A chunk written here (its
    // spool becomes the cache copy at the writer's last release) is never downloaded.
    if (scans_.Scanning(pid, parent)) {
      lookups_.scan_lookups++;
    } else {
      reader_->Prefetch(key, node.info);
    }
  }
  return entry;
}

LookupStats Filesystem::LookupStatsNow() const {
  LookupStats s = lookups_.Snapshot();
  s.revalidations = revalidator_.checks();
  s.revalidation_drops = revalidator_.dropped();
  s.listings = listings_.listings();
  return s;
}

double Filesystem::MissTtlSecs(uint64_t parent, const std::string& name) {
  auto path = ChildPath(parent, name);
  if (!path.ok()) return 0;
  auto key = codec_.FileKey(*path);
  if (!key.ok()) return 0;
  auto missing = meta_.Get(*key);
  if (!missing) return 0;  // not cached here (a temp name, caching off): the kernel asks again
  // The kernel keeps a miss at most negative_ttl_ms from when it was recorded here, or, while the
  // feed covers it, negative_ttl_ms from now: then the kernel's next lookup is answered here,
  // without a request, from an entry the feed keeps current (the feed also drops the kernel's
  // entry when the name arrives).
  const std::chrono::steady_clock::duration negative =
      std::chrono::milliseconds(options_.negative_ttl_ms);
  const bool covered = feed_ && feed_->Covers(listings_.Now() - missing->age);
  const auto hold = std::min(missing->left, covered ? negative : negative - missing->age);
  return std::max(0.0, std::chrono::duration<double>(hold).count());
}

bool Filesystem::MissHolds(std::chrono::steady_clock::duration age) const {
  if (age < std::chrono::milliseconds(options_.negative_ttl_ms)) return true;
  return feed_ != nullptr && feed_->Covers(listings_.Now() - age);
}

Result<UserXattrs> Filesystem::XattrsOf(uint64_t ino, bool fetch) {
  if (ino == kRootIno || inodes_.IsDir(ino)) return UserXattrs{};
  KVFS_ASSIGN_OR_RETURN(auto path, PathOf(ino));
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  if (auto lf = local_files_.Find(key); lf && !lf->Ended()) return lf->Xattrs();
  KVFS_ASSIGN_OR_RETURN(Node node, Resolve(key));
  std::optional<std::string> encoded = node.info.user_xattrs;
  if (!encoded && fetch) {
    // Known from a listing only (a LIST carries no metadata).
    KVFS_ASSIGN_OR_RETURN(ObjectInfo head, store_->Head(key));
    encoded = head.user_xattrs;
  }
  if (!encoded) return UserXattrs{};
  Result<UserXattrs> attrs = UserXattrs::Decode(*encoded);
  if (!attrs.ok()) {
    return Status::IoError("the extended attributes of '" + Display(path) + "' (" + key +
                           ") are not kvfs's: " + attrs.status().message());
  }
  return attrs;
}

Result<std::shared_ptr<SpoolFile>> Filesystem::XattrWriterOf(uint64_t ino,
                                                             const std::string& name) {
  if (ino == kRootIno || inodes_.IsDir(ino)) {
    return Status::NotSupported("extended attribute " + name + ": directories have none");
  }
  KVFS_ASSIGN_OR_RETURN(auto path, PathOf(ino));
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  std::shared_ptr<SpoolFile> lf = local_files_.Find(key);
  if (lf && !lf->Ended()) return lf;
  KVFS_RETURN_IF_ERROR(Resolve(key).status());
  return Status::PermissionDenied("extended attribute " + name + " of '" + Display(path) +
                                  "': a stored chunk's attributes are those it was stored with; "
                                  "set them before its close() or rename()");
}

Result<std::string> Filesystem::GetXattr(uint64_t ino, const std::string& name) {
  KVFS_ASSIGN_OR_RETURN(UserXattrs attrs, XattrsOf(ino, /*fetch=*/true));
  return attrs.Get(name);
}

Result<std::string> Filesystem::ListXattrs(uint64_t ino) {
  KVFS_ASSIGN_OR_RETURN(UserXattrs attrs, XattrsOf(ino, /*fetch=*/false));
  return attrs.Names();
}

Status Filesystem::SetXattr(uint64_t ino, const std::string& name, std::string value,
                            UserXattrs::SetMode mode) {
  KVFS_ASSIGN_OR_RETURN(std::shared_ptr<SpoolFile> lf, XattrWriterOf(ino, name));
  return lf->SetXattr(name, std::move(value), mode);
}

Status Filesystem::RemoveXattr(uint64_t ino, const std::string& name) {
  KVFS_ASSIGN_OR_RETURN(std::shared_ptr<SpoolFile> lf, XattrWriterOf(ino, name));
  return lf->RemoveXattr(name);
}

void Filesystem::Announce(FeedEvent::Kind kind, const std::string& key, const std::string& etag) {
  if (feed_ == nullptr) return;
  FeedEvent event;
  event.kind = kind;
  event.info.key = key;
  event.info.etag = etag;
  feed_->Announce(std::move(event));
}

void Filesystem::Invalidate(uint64_t parent, const std::string& name) {
  MutexLock l(&invalidate_mu_);
  if (invalidate_) invalidate_(parent, name);
}

void Filesystem::InvalidateKey(const std::string& key) {
  const std::string& prefix = codec_.key_prefix();
  if (key.compare(0, prefix.size(), prefix) != 0) return;
  std::vector<std::string> parts;
  for (size_t start = prefix.size();;) {
    const size_t slash = key.find('/', start);
    parts.push_back(
        key.substr(start, slash == std::string::npos ? std::string::npos : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (!parts.empty() && parts.back().empty()) parts.pop_back();  // a directory's marker
  // With fan-out the namespace is flat: the first component is the hashed directory.
  if (codec_.flat() && parts.size() == 2) parts.erase(parts.begin());
  // The kernel may hold a negative entry at the first level it has no inode for (or the name
  // itself): that one is dropped.
  uint64_t parent = 1;  // the root
  for (size_t i = 0; i < parts.size(); ++i) {
    auto name = NameCodec::DecodeComponent(parts[i]);
    if (!name) return;
    auto child = inodes_.Find(parent, *name);
    if (!child || i + 1 == parts.size()) {
      Invalidate(parent, *name);
      return;
    }
    parent = *child;
  }
}

void Filesystem::ApplyFeed(const FeedEvent& event) {
  const std::string& key = event.info.key;
  if (local_files_.Find(key) != nullptr) return;  // being written here: this node's own answer
  const std::string& prefix = codec_.key_prefix();
  if (!key.empty() && key.back() == '/') {
    // A directory's marker (mkdir, rmdir elsewhere): the next lookup of the directory asks.
    const std::string dir = key.substr(0, key.size() - 1);
    meta_.Erase(dir);
    if (event.kind == FeedEvent::kStored) {
      listings_.NoteAdded(dir);
      listings_.NoteChild(dir, /*is_dir=*/true);
    }
    InvalidateKey(key);
    return;
  }
  if (event.kind == FeedEvent::kStored) {
    // Every directory above the chunk exists now: misses of them cached here are over.
    for (size_t slash = key.find('/', prefix.size()); slash != std::string::npos;
         slash = key.find('/', slash + 1)) {
      const std::string dir = key.substr(0, slash);
      meta_.PutDir(dir);
      listings_.NoteChild(dir, /*is_dir=*/true);  // its parent holds a directory
    }
  }
  // A feed entry is anyone's who can write the bucket (or corrupt): one that contradicts the
  // local copy this node holds is checked against the store (one HEAD, in the background), never
  // trusted to evict that copy or to stand for it (issue 47 item 7). The copy goes only if the
  // store says so (Revalidator: 404 or another object).
  const std::optional<ChunkReader::CachedCopyInfo> copy = reader_->CachedCopy(key);
  ObjectInfo held;  // what the local copy is
  if (copy) {
    held.key = key;
    held.size = copy->size;
    held.etag = copy->etag;
  }
  const bool contradicts_copy =
      copy && (event.kind == FeedEvent::kRemoved || !Revalidator::SameObject(held, event.info));
  if (event.kind == FeedEvent::kRemoved) {
    // Asked again at the next lookup (a later store by another node may already be there).
    meta_.Erase(key);
  } else {
    if (unlinked_.Hides(event.info)) return;  // unlinked here: stays hidden
    if (event.info.etag.empty() || contradicts_copy) {
      meta_.Erase(key);  // found at the next lookup, with its ETag, as the store has it
    } else {
      meta_.PutFile(event.info);
      learnt_sizes_.Observe(key, event.info.size);
    }
    listings_.NoteAdded(key);
    listings_.NoteChild(key, /*is_dir=*/false);
  }
  // After the metadata changed above: the check's answer is stored only if nothing changed since.
  if (contradicts_copy) revalidator_.Enqueue(held, /*gen=*/0);
  InvalidateKey(key);
}

void Filesystem::Forget(uint64_t ino, uint64_t nlookup) { inodes_.Forget(ino, nlookup); }

pid_t Filesystem::ProcessOf(pid_t pid) const {
  return pid > 0 && probe_.thread_group ? probe_.thread_group(pid) : 0;
}

bool Filesystem::VisibleTo(const SpoolFile& lf, pid_t pid) const {
  if (lf.published_now()) return true;
  const pid_t owner = lf.owner();
  if (owner == 0) return true;  // written from a pid namespace we cannot see into
  const pid_t tgid = ProcessOf(pid);
  // The creator too: a process that opens a log file and hands it to a server process reads
  // what the server writes.
  return tgid == 0 || tgid == owner || tgid == lf.creator();
}

Status Filesystem::StoreMissed(const std::string& key) {
  ++lookups_.sent_misses;
  unlinked_.ForgetGone(key);  // gone from the store: a new object of that name will show
  meta_.PutMissing(key);
  listings_.NoteMiss(key);
  return Status::NotFound("no such file: " + key);
}

Result<Filesystem::Node> Filesystem::FoundFile(ObjectInfo info) {
  if (unlinked_.Hides(info)) {
    meta_.PutMissing(info.key);  // asked again after a TTL: has the object changed?
    return Status::NotFound("no such file (unlinked on this node): " + info.key);
  }
  meta_.PutFile(info);
  listings_.NoteChild(info.key, /*is_dir=*/false);
  learnt_sizes_.Observe(info.key, info.size);
  Node node;
  node.kind = MetaEntry::kFile;
  node.info = std::move(info);
  return node;
}

Result<Filesystem::Node> Filesystem::ResolveByListing(const std::string& key) {
  const auto started = listings_.Now();
  ListRequest req;
  req.prefix = key;
  req.max_keys = options_.lookup_list_max_keys;
  ++lookups_.sent_lists;
  auto listed = store_->List(req);
  if (!listed.ok()) return listed.status().Annotate("looking up " + key);
  const ListResult& lr = *listed;
  const std::string dir = key + "/";
  std::optional<ObjectInfo> file;
  bool under = false;
  // Directory prefix ("a/b/") -> the keys of its children seen (files, and directories without
  // their '/'), as DirListingCache holds them.
  std::map<std::string, std::unordered_set<std::string>> children;
  for (const ObjectInfo& o : lr.objects) {
    if (o.key == key) {
      file = o;
      continue;
    }
    if (o.key.compare(0, dir.size(), dir) != 0) continue;  // a sibling, such as "<key>-old"
    // A name this node unlinked (unlink_policy local) is not there for it: a directory holding
    // only such names is empty here (and removable: Rmdir).
    if (unlinked_.Hides(o)) continue;
    under = true;
    std::string parent = dir;
    children[parent];
    for (size_t start = dir.size();;) {
      const size_t slash = o.key.find('/', start);
      if (slash == std::string::npos) {
        if (start < o.key.size()) {  // a file (else the marker of the directory `parent`)
          children[parent].insert(o.key);
          meta_.PutFile(o);
          listings_.NoteChild(o.key, /*is_dir=*/false);
          learnt_sizes_.Observe(o.key, o.size);
        }
        break;
      }
      std::string sub = o.key.substr(0, slash);
      if (slash > start && children[parent].insert(sub).second) {
        meta_.PutDir(sub);
        listings_.NoteChild(sub, /*is_dir=*/true);
      }
      parent = o.key.substr(0, slash + 1);
      children[parent];
      start = slash + 1;
    }
  }
  const std::string last = lr.objects.empty() ? std::string() : lr.objects.back().key;
  const bool all_under = !lr.truncated || ListedPast(last, dir);
  // Every directory this page saw whole answers the misses under it (names created here later
  // are cached positively for longer than this listing lives: the listing never hides them).
  for (auto& [prefix, names] : children) {
    if (!lr.truncated || ListedPast(last, prefix)) {
      listings_.RecordListing(prefix, std::move(names), started);
    }
  }
  if (file) {
    file->key = key;
    return FoundFile(std::move(*file));
  }
  if (!under && !all_under) {
    // The page ended among siblings before reaching "<key>/": ask about the directory alone.
    ListRequest one;
    one.prefix = dir;
    one.max_keys = 1;
    ++lookups_.sent_lists;
    KVFS_ASSIGN_OR_RETURN(ListResult lr1, store_->List(one));
    under = !lr1.objects.empty() || !lr1.common_prefixes.empty();
    if (!under) listings_.RecordEmpty(dir);
  }
  if (under) {
    meta_.PutDir(key);
    listings_.NoteChild(key, /*is_dir=*/true);
    Node node;
    node.kind = MetaEntry::kDir;
    node.info.key = key;
    return node;
  }
  // Nothing under "<key>/" either (recorded above as an empty listing when this page saw the
  // whole range): names below it are known missing too, a walk down a tree that does not exist
  // yet (mkdir -p) costs nothing more.
  if (all_under) listings_.RecordEmpty(dir);
  return StoreMissed(key);
}

// ===============================================================================================
// Attributes and statfs
//
// Filesystem attributes: of files (from what a name resolves to, or from an open handle when the
// name is gone), of directories (fixed), their changes (only truncation of a local file), and
// statfs (the free space of the cache disk, or of the bounded tier).
// ===============================================================================================

FileAttr Filesystem::DirAttr(uint64_t ino) const {
  FileAttr a;
  a.ino = ino;
  a.is_dir = true;
  a.mode = S_IFDIR | options_.dir_mode;
  a.nlink = 2;
  a.uid = options_.uid;
  a.gid = options_.gid;
  a.mtime_sec = 0;
  return a;
}

FileAttr Filesystem::AttrOf(uint64_t ino, const Node& node) const {
  if (node.kind == MetaEntry::kDir) return DirAttr(ino);
  FileAttr a;
  a.ino = ino;
  a.size = node.info.size;
  a.mtime_sec = node.info.mtime_sec ? node.info.mtime_sec : time(nullptr);
  a.mode = S_IFREG | options_.file_mode;
  // A name made by link() is the same inode (InodeTable::Link); an open file whose names are all
  // gone keeps 1, as before (fstat of an unlinked open chunk).
  a.nlink = std::max<uint32_t>(1, inodes_.Names(ino));
  a.uid = options_.uid;
  a.gid = options_.gid;
  return a;
}

std::optional<FileAttr> Filesystem::AttrOfOpen(uint64_t ino) const {
  for (const auto& h : handles_.FilesOf(ino)) {
    Node node;
    node.kind = MetaEntry::kFile;
    if (h->spool) {
      node.info.size = h->spool->size_now();
      node.info.mtime_sec = h->spool->mtime_sec();
    } else {
      node.info = h->info;
    }
    return AttrOf(ino, node);
  }
  return std::nullopt;
}

Result<FileAttr> Filesystem::GetAttr(uint64_t ino, std::optional<uint64_t> fh, bool* needs_store) {
  if (ino == kRootIno) return DirAttr(ino);
  if (fh) {
    auto h = handles_.File(*fh);
    if (h.ok() && (*h)->spool) {
      Node node;
      node.kind = MetaEntry::kFile;
      node.info.size = (*h)->spool->size_now();
      node.info.mtime_sec = (*h)->spool->mtime_sec();
      return AttrOf(ino, node);
    }
  }
  auto path = PathOf(ino);
  if (!path.ok()) {
    // fstat() of a file unlinked while open (the kernel passes no handle with it): the file
    // lives until its last close, as on a local filesystem (tempfile.TemporaryFile, pytest).
    if (auto open = AttrOfOpen(ino)) return *open;
    return path.status();
  }
  if (inodes_.IsDir(ino)) return DirAttr(ino);
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(*path));
  Result<Node> node = Resolve(key, needs_store);
  if (!node.ok() && node.status().code() == StatusCode::kNotFound) {
    // Removed by another node while open here: this mount's handles still read it.
    if (auto open = AttrOfOpen(ino)) return *open;
  }
  KVFS_RETURN_IF_ERROR(node.status());
  return AttrOf(ino, *node);
}

Result<FileAttr> Filesystem::SetAttr(uint64_t ino, const SetAttrRequest& req,
                                     std::optional<uint64_t> fh) {
  KVFS_ASSIGN_OR_RETURN(FileAttr cur, GetAttr(ino, fh));
  const std::string what = "inode " + std::to_string(ino);
  if (req.mode && (*req.mode & 07777) != (cur.mode & 07777)) {
    return Status::PermissionDenied("chmod is not supported (fixed mode) on " + what);
  }
  if ((req.uid && *req.uid != cur.uid) || (req.gid && *req.gid != cur.gid)) {
    return Status::PermissionDenied("chown is not supported (fixed owner) on " + what);
  }
  if (req.size && *req.size != cur.size) {
    if (cur.is_dir) return Status::InvalidArgument("cannot truncate a directory");
    std::shared_ptr<SpoolFile> lf;
    if (fh) {
      auto h = handles_.File(*fh);
      if (h.ok()) lf = (*h)->spool;
    }
    if (!lf) {
      auto path = PathOf(ino);
      if (path.ok()) {
        auto key = codec_.FileKey(*path);
        if (key.ok()) lf = local_files_.Find(*key);
      }
    }
    if (!lf) return Status::PermissionDenied("cannot truncate an uploaded file (" + what + ")");
    KVFS_RETURN_IF_ERROR(lf->Truncate(*req.size));
    cur.size = *req.size;
  }
  return cur;
}

FsStat Filesystem::StatFs() const {
  FsStat s;
  s.bsize = 4096;
  s.frsize = 4096;
  s.blocks =
      (options_.statfs_total_bytes != 0 ? options_.statfs_total_bytes : 1ull << 40) / s.frsize;
  // Free: what this node can still take for new chunks. The store itself has no limit here; what
  // fills up is the disk of the cache directory, where chunks are spooled while written and
  // which the cache's chunks share (evicted as needed). So free = that disk's free space plus the
  // cache's evictable bytes, at most the reported size: engines' free-space guards (LMCache's
  // DiskGuard, SGLang's cleaner, llm-d's evictor) then stop or evict only when writes would
  // really fail with ENOSPC, not because the cache holds copies it can drop.
  uint64_t free_bytes = s.blocks * s.frsize;
  struct statvfs disk;
  if (!options_.spool_dir.empty() && statvfs(options_.spool_dir.c_str(), &disk) == 0) {
    const uint64_t takes = static_cast<uint64_t>(disk.f_bavail) * disk.f_frsize +
                           (reader_ ? reader_->EvictableBytes() : 0);
    free_bytes = std::min(free_bytes, takes);
  }
  // With a bounded tier, the tier's capacity and what is left of it (counted by the collector,
  // plus this node's writes since): the engines' guards then see the shared tier fill up.
  if (auto usage = tier_ ? tier_->CurrentUsage() : std::nullopt) {
    s.blocks = usage->capacity / s.frsize;
    const uint64_t left = usage->used >= usage->capacity ? 0 : usage->capacity - usage->used;
    free_bytes = std::min(free_bytes, left);
  }
  s.bfree = s.bavail = free_bytes / s.frsize;
  s.files = s.ffree = 1ull << 32;
  s.namemax = NameCodec::kMaxNameBytes;
  return s;
}

// ===============================================================================================
// Open and read
//
// Filesystem open and read: opening a name (for writing: the write path below), reading an open
// file from its object through the reader (or from its local bytes), the file-backed reads the
// adapter splices, and forgetting objects found changed or removed.
// ===============================================================================================

Result<OpenResult> Filesystem::Open(uint64_t ino, int flags, bool* needs_store, pid_t pid) {
  KVFS_ASSIGN_OR_RETURN(auto path, PathOf(ino));
  if (path.empty() || inodes_.IsDir(ino)) return Status::InvalidArgument("is a directory");
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  if ((flags & O_ACCMODE) != O_RDONLY) return OpenForWrite(ino, path, key, flags, pid);
  KVFS_ASSIGN_OR_RETURN(Node node, Resolve(key, needs_store));
  if (node.kind == MetaEntry::kDir) return Status::InvalidArgument("is a directory");
  if (!node.spool && node.kind == MetaEntry::kFile && KernelWritesOn()) {
    // The spool this node just published may still be the kernel's backing file of the inode
    // (the last RELEASE comes after close() returned), and every open of it must then use that
    // file: a read of the object those bytes are opens the spool rather than failing (EBUSY).
    std::shared_ptr<SpoolFile> lf = local_files_.Find(key);
    if (lf && lf->KernelHeld() && lf->IsObject(node.info)) node.spool = std::move(lf);
  }
  if (node.spool && !VisibleTo(*node.spool, pid)) {
    return Status::NotFound("no such file (being written by another process): " + key);
  }
  auto h = std::make_shared<Handle>();
  h->ino = ino;
  if (node.spool) {  // a file being written here, or a temp file: its local bytes
    node.spool->AttachReader();
    OpenResult r{0, /*keep_cache=*/false};
    // While the kernel writes the spool, every open of the inode must be a passthrough open of it.
    if (KernelWritesOn()) OfferSpool(*node.spool, &r);
    h->spool = std::move(node.spool);
    r.fh = handles_.AddFile(std::move(h));
    return r;
  }
  h->info = node.info;
  if (tier_) tier_->NoteUse(key);  // a hash-set insert; recorded in the store once per interval
  // Opened in the reader at the first read: an open that never reads (llm-d's existence check)
  // transfers nothing.
  h->object = std::make_unique<LazyReadHandle>(reader_.get(), key, node.info,
                                               reader_->ServesFromCache(node.info));
  // O_DIRECT opens bypass the page cache anyway, and FOPEN_DIRECT_IO would turn the kernel's
  // parallel requests for them into sequential ones.
  const bool direct_io = !options_.page_cache && h->object->Local() && !(flags & O_DIRECT);
  const int passthrough_fd = options_.passthrough ? h->object->PassthroughFd() : -1;
  std::string version = node.info.etag + "/" + std::to_string(node.info.size);
  return OpenResult{handles_.AddFile(std::move(h)), /*keep_cache=*/true, direct_io, passthrough_fd,
                    std::move(version)};
}

void Filesystem::NotePassthrough(uint64_t fh) {
  auto h = handles_.File(fh);
  if (!h.ok()) return;
  if ((*h)->object) (*h)->object->NotePassthrough();
  if ((*h)->spool && (*h)->writable) {
    (*h)->spool->KernelWrites();
    writes_.passthrough_opens++;
  }
}

bool Filesystem::KernelWritesOn() const {
  return options_.passthrough && options_.passthrough_writes;
}

bool Filesystem::WritesBypassPageCache(int flags) {
  // The kernel copies a buffered write into its page cache and then into the request: with
  // FOPEN_DIRECT_IO the engine's bytes go straight into the request, one copy (of three) less,
  // and no page cache is filled with a chunk nobody on this node reads through this open.
  // Write-only opens only: nothing reads through them, and no shared writable mapping can be
  // made of them (it needs O_RDWR), which FOPEN_DIRECT_IO would refuse.
  return (flags & O_ACCMODE) == O_WRONLY;
}

void Filesystem::OfferSpool(const SpoolFile& lf, OpenResult* r) const {
  r->passthrough_fd = lf.spool_fd();
  r->version = lf.backing_version();
}

Status Filesystem::RefuseNewVersion(const SpoolFile& lf, const std::vector<std::string>& path) {
  if (!lf.KernelHeld()) return Status::OK();
  // The inode's opens all use that spool as their backing file (the kernel's rule): a second
  // version of the name could not be opened beside them.
  return Status::Busy("'" + Display(path) +
                      "' is being written on this node by the kernel into its spool "
                      "(passthrough_writes): a new version waits until that writer closes it");
}

Result<uint64_t> Filesystem::Read(uint64_t fh, uint64_t offset, uint64_t size, char* buf) {
  KVFS_ASSIGN_OR_RETURN(auto h, handles_.File(fh));
  if (h->object) {
    Result<uint64_t> n = h->object->Read(offset, size, buf);
    if (n.status().code() == StatusCode::kPreconditionFailed) ForgetChanged(h->ino);
    return n;
  }
  uint64_t end = h->spool->size_now();
  if (offset >= end) return uint64_t{0};
  return h->spool->Read(offset, std::min(size, end - offset), buf);
}

bool Filesystem::ReadWouldWait(uint64_t fh, uint64_t offset, uint64_t size) {
  auto h = handles_.File(fh);
  // An unknown handle fails at once; local files are read from local bytes.
  if (!h.ok() || !(*h)->object) return false;
  return (*h)->object->WouldWait(offset, size);
}

Result<FdRange> Filesystem::ReadFd(uint64_t fh, uint64_t offset, uint64_t size,
                                   std::shared_ptr<const void>* keep_alive) {
  KVFS_ASSIGN_OR_RETURN(auto h, handles_.File(fh));
  // Local files change while written; their bytes are copied by Read.
  if (!h->object) return Status::NotSupported("no file-backed reads of local files");
  Result<FdRange> got = h->object->ReadFd(offset, size);
  if (got.status().code() == StatusCode::kPreconditionFailed) ForgetChanged(h->ino);
  KVFS_ASSIGN_OR_RETURN(FdRange r, std::move(got));
  // The fd belongs to the ReadHandle, which the Handle owns.
  if (keep_alive != nullptr) *keep_alive = std::move(h);
  return r;
}

void Filesystem::ForgetChanged(uint64_t ino) {
  auto path = PathOf(ino);
  if (!path.ok()) return;
  auto key = codec_.FileKey(*path);
  if (!key.ok()) return;
  // The handle is stale (ESTALE); the next lookup and open must see the object as it is now.
  meta_.Erase(*key);
  reader_->Invalidate(*key);
}

void Filesystem::ForgetRemoved(const std::string& key) {
  if (local_files_.Find(key)) return;  // a new version is being written here: it is not gone
  // A batch is read a few intervals after its removals, and the chunk may have been stored again
  // since (by this node, or another that announced it): one known here as a file is asked again
  // at its next lookup rather than held missing - a batch applied late hid the new chunk for
  // feed_miss_ttl_secs (issue 47 item 8). A name not known here is missing, as the batch says
  // (a later store of it reaches this node through the feed, after this).
  auto known = meta_.Get(key);
  if (known && known->kind == MetaEntry::kFile) {
    meta_.Erase(key);
  } else {
    meta_.PutMissing(key);
  }
  reader_->Invalidate(key);
}

void Filesystem::KeepOpenLocal(uint64_t ino) {
  for (const auto& h : handles_.FilesOf(ino)) {
    if (!h->object) continue;
    Status st = h->object->KeepCached();
    if (!st.ok()) LogWarn("kvfs: keeping an open, unlinked file readable: {}", st.ToString());
  }
}

// ===============================================================================================
// The write path
//
// Filesystem write path: create, open for writing, write, truncate, flush/fsync/release. Each
// finds the SpoolFile and asks it for a transition (fs/spool_file.h holds the state machine),
// which records what it did through Deps::record (Apply) under its own lock: FLUSH/RELEASE ->
// SpoolFile::Commit/Release -> Uploader -> the store's conditional PUT or multipart upload.
// ===============================================================================================

SpoolFile::Deps Filesystem::SpoolDeps() {
  return SpoolFile::Deps{&options_,
                         store_.get(),
                         &uploader_,
                         reader_.get(),
                         &local_files_,
                         learnt_sizes_.enabled() ? &learnt_sizes_ : nullptr,
                         [this](const SpoolFile::Outcome& out) { Apply(out); }};
}

Result<std::shared_ptr<SpoolFile>> Filesystem::NewLocal(const std::vector<std::string>& path,
                                                        const std::string& key, uint64_t parent,
                                                        bool created) {
  SpoolFile::Place place{key, Display(path), parent, path.back()};
  return SpoolFile::Create(SpoolDeps(), std::move(place), IsTempName(path.back()), created);
}

void Filesystem::Apply(const SpoolFile::Outcome& out, const std::shared_ptr<SpoolFile>& lf,
                       uint64_t reserved, uint64_t rule_ino) {
  switch (out.kind) {
    case SpoolFile::Outcome::kNothing:
    case SpoolFile::Outcome::kRejected:
    case SpoolFile::Outcome::kNotQueued:
      return;
    case SpoolFile::Outcome::kQueued: {
      // Only write_back queues (Commit and RenameTo without waiting).
      if (lf == nullptr || write_back_ == nullptr) return;
      // Held by the task until it has run: the handles may all be released before.
      write_back_->Submit(reserved, [this, lf, rule_ino] { return UploadAccepted(*lf, rule_ino); });
      return;
    }
    case SpoolFile::Outcome::kPublished:
      Published(out.info);
      return;
    case SpoolFile::Outcome::kOrphaned:
      // Unlinked while its queued upload was on its way: the unlink's rules apply to the object
      // the upload made, as if it had come after it - unless this node has a newer file of the
      // name, which owns it now. Until then the name was hidden whatever it held (HidePending).
      if (!out.object_remains || local_files_.Find(out.info.key) != nullptr) {
        unlinked_.ForgetPending(out.info.key);
        return;
      }
      (void)ForgetUnlinked(out.info, true);
      return;
    case SpoolFile::Outcome::kDropped:
      // No object, no visible file: the kernel saw the name created, so it is told to forget it.
      // A failed new version of an existing object (a refused rewrite) leaves the name with its
      // inode, showing the object again; the kernel forgets the version's size.
      meta_.Erase(out.place.key);
      if (out.place.parent_ino != 0) {
        if (!out.object_remains) inodes_.Detach(out.place.parent_ino, out.place.name);
        Invalidate(out.place.parent_ino, out.place.name);
      }
      return;
  }
}

WriteBack::Ending Filesystem::UploadAccepted(SpoolFile& lf, uint64_t rule_ino) {
  // 1 s, doubling to a minute: a store back from an outage is found within a minute, and an
  // outage costs one attempt a minute per pending chunk.
  constexpr auto kFirstRetry = std::chrono::milliseconds(1000);
  constexpr auto kLastRetry = std::chrono::milliseconds(60'000);
  // The walk runs once a second while the writer holds another descriptor. Only such a writer
  // waits longer than its RELEASE (kReleaseWait): its upload waits for that descriptor anyway.
  constexpr auto kHeldRecheck = std::chrono::milliseconds(1000);
  if (rule_ino != 0 && !lf.WaitForWriters(kReleaseWait)) {
    // Accepted at a close whose publication rule was left to here (Commit): another
    // descriptor of the writer's (a dup, a shell's redirection) may still write it.
    while (WriterHoldsAnother(lf, rule_ino) && !lf.WaitForWriters(kHeldRecheck)) {
      if (write_back_->stopping()) return WriteBack::Ending::kKept;  // sealed for the next mount
    }
  }
  auto backoff = kFirstRetry;
  for (int attempt = 1;; ++attempt) {
    if (write_back_->stopping()) return WriteBack::Ending::kKept;  // sealed for the next mount
    SpoolFile::Outcome up = lf.UploadQueued();  // recorded by the file (Deps::record)
    if (up.kind == SpoolFile::Outcome::kDropped) {
      LogError(
          "kvfs: '{}' was accepted at close() but its upload was refused: not stored ({}); the "
          "name is gone (write_back)",
          up.place.display, up.status.ToString());
      return WriteBack::Ending::kFailed;
    }
    if (up.status.ok()) return WriteBack::Ending::kStored;
    // Logged at the first failures and then about every ten minutes, not at every attempt.
    if (attempt <= 3 || attempt % 10 == 0) {
      LogWarn(
          "kvfs: upload of '{}', accepted at close(), failed ({}; attempt {}): it stays sealed in "
          "the spool and is tried again in {} s",
          up.place.display, up.status.ToString(), attempt, backoff.count() / 1000);
    }
    if (!write_back_->WaitToRetry(backoff)) return WriteBack::Ending::kKept;
    backoff = std::min(backoff * 2, kLastRetry);
  }
}

void Filesystem::Published(const ObjectInfo& info) {
  unlinked_.Forget(info.key);  // stored again from here: the name shows again
  meta_.PutFile(info);
  listings_.NoteChild(info.key, /*is_dir=*/false);
  listings_.NoteAdded(info.key);  // a listing made before must not hide it once the entry goes
  if (feed_) feed_->Announce({FeedEvent::kStored, info});
  if (tier_) tier_->NoteWrite(info.key, info.size);
  learnt_sizes_.Observe(info.key, info.size);
}

Result<std::pair<FsEntry, OpenResult>> Filesystem::CreateFile(uint64_t parent,
                                                              const std::string& name, int flags,
                                                              pid_t pid) {
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  if (auto existing = inodes_.Find(parent, name))
    KVFS_RETURN_IF_ERROR(RefuseLinked(*existing, path));
  std::shared_ptr<SpoolFile> lf = local_files_.Find(key);
  if (lf && (flags & O_EXCL)) return Status::AlreadyExists("file exists: " + Display(path));
  if (lf) KVFS_RETURN_IF_ERROR(RefuseNewVersion(*lf, path));
  // An idle temp file is reused, as creat() on a local file would; a file another writer is
  // writing is left to it: this one gets its own version.
  if (!lf || !lf->ReuseIdleTemp(flags & O_TRUNC)) {
    // A new version of a name whose accepted version is not stored yet meets that version in
    // the store, as it would have without write-back.
    if (lf) StoreAcceptedVersion(key, nullptr);
    // A created file must end as an object or as an error, never silently vanish.
    KVFS_ASSIGN_OR_RETURN(lf, NewLocal(path, key, parent, /*created=*/true));
  }
  lf->set_owner(ProcessOf(pid));
  lf->set_creator(ProcessOf(pid));
  uint64_t ino = inodes_.Ref(parent, name, false);
  auto h = std::make_shared<Handle>();
  h->ino = ino;
  h->writable = true;
  h->sync = flags & O_DSYNC;  // O_SYNC includes O_DSYNC's bit
  h->spool = lf;
  Node node;
  node.kind = MetaEntry::kFile;
  node.info.key = key;
  node.info.size = lf->size_now();
  node.info.mtime_sec = lf->mtime_sec();
  FsEntry entry{AttrOf(ino, node)};
  if (!lf->published_now()) entry.ttl_secs = 0;  // others see it when it is published, not before
  OpenResult r{0, false};
  r.direct_io = WritesBypassPageCache(flags);
  writes_.opens++;
  if (KernelWritesOn() && lf->KernelMayWrite()) OfferSpool(*lf, &r);
  r.fh = handles_.AddFile(std::move(h));
  return std::make_pair(entry, r);
}

Status Filesystem::RefuseLinked(uint64_t ino, const std::vector<std::string>& path) const {
  const uint32_t names = inodes_.Names(ino);
  if (names <= 1) return Status::OK();
  // Each name is an object of its own in the store: a new version written through one would
  // leave the inode's other names showing other bytes.
  return Status::PermissionDenied("'" + Display(path) + "' has " + std::to_string(names) +
                                  " names (link()): a linked chunk is not rewritten; unlink its "
                                  "other names first");
}

Result<OpenResult> Filesystem::OpenForWrite(uint64_t ino, const std::vector<std::string>& path,
                                            const std::string& key, int flags, pid_t pid) {
  KVFS_RETURN_IF_ERROR(RefuseLinked(ino, path));
  std::shared_ptr<SpoolFile> lf = local_files_.Find(key);
  // A file that failed or was abandoned is over; O_TRUNC on a file another handle is writing
  // gives this writer its own version, so two writers of one name never truncate each other.
  if (lf && !lf->Ended() && (flags & O_TRUNC)) KVFS_RETURN_IF_ERROR(RefuseNewVersion(*lf, path));
  if (lf && (lf->Ended() || (flags & O_TRUNC))) lf.reset();
  if (lf) {
    // A file published or let go since is the object: the open is the same whether or not the
    // kernel sent the last close's release before it.
    KVFS_ASSIGN_OR_RETURN(const bool attached,
                          lf->AttachWriter(/*keeps_bytes=*/(flags & O_ACCMODE) == O_RDWR));
    if (!attached) lf.reset();
  }
  if (!lf) {
    // A new version of a name whose accepted version (write_back) is not stored yet: that one
    // is stored first, so that this one is judged against it as it would have been without
    // write-back (the exists rule: a rewrite of another size is EEXIST at its close).
    StoreAcceptedVersion(key, nullptr);
    // Opening an existing object write-only starts a new, empty version (O_TRUNC or not): the
    // engines rewrite whole chunks, and downloading a chunk only to overwrite it is waste. Opened
    // for reading and writing, it keeps its bytes (below).
    KVFS_ASSIGN_OR_RETURN(Node node, Resolve(key));
    if (node.kind == MetaEntry::kDir) return Status::InvalidArgument("is a directory");
    if (flags & O_APPEND) {
      return Status::NotSupported("appending to an uploaded file is not supported: " + key);
    }
    KVFS_ASSIGN_OR_RETURN(lf, NewLocal(path, key, inodes_.ParentOf(ino), /*created=*/false));
    lf->OverObjectOf(node.info.size);
    lf->set_owner(ProcessOf(pid));
    lf->set_creator(ProcessOf(pid));
    if ((flags & O_ACCMODE) == O_RDWR && !(flags & O_TRUNC) && node.info.size > 0) {
      // Read and write: the file keeps its bytes (a shared mapping reads them back).
      KVFS_ASSIGN_OR_RETURN(auto from, reader_->Open(key, node.info));
      Status st = lf->Preload(from.get(), node.info.size);
      if (!st.ok()) {
        lf->Discard();
        local_files_.EraseIf(key, lf.get());
        return st;
      }
    }
  }
  auto h = std::make_shared<Handle>();
  h->ino = ino;
  h->writable = true;
  h->sync = flags & O_DSYNC;
  OpenResult r{0, /*keep_cache=*/false};
  r.direct_io = WritesBypassPageCache(flags);
  writes_.opens++;
  if (KernelWritesOn() && lf->KernelMayWrite()) OfferSpool(*lf, &r);
  h->spool = std::move(lf);
  r.fh = handles_.AddFile(std::move(h));
  return r;
}

Result<uint64_t> Filesystem::Write(uint64_t fh, uint64_t offset, const char* data, uint64_t size,
                                   pid_t pid) {
  KVFS_ASSIGN_OR_RETURN(auto h, handles_.File(fh));
  if (!h->writable || !h->spool) return Status::InvalidArgument("file not open for writing");
  // The process that writes is the writer (a descriptor handed to a server process, a forked
  // worker): its close publishes. One /proc read per writing thread and handle.
  if (pid > 0 && h->last_writer_thread.exchange(pid) != pid) h->spool->set_owner(ProcessOf(pid));
  writes_.bytes_served += size;
  return h->spool->Write(offset, data, size);
}

Status Filesystem::Flush(uint64_t fh, pid_t pid) {
  return Commit(fh, pid, /*wait=*/!options_.write_back);
}

Status Filesystem::Fsync(uint64_t fh) {
  KVFS_ASSIGN_OR_RETURN(auto h, handles_.File(fh));
  if (h->spool && h->spool->FsyncWaits()) {
    // A chunk accepted at a close or rename (write_back) is made durable here, or its failure
    // reported, whichever descriptor asks.
    return h->spool->Commit(/*wait=*/true).status;  // recorded by the file (Deps::record)
  }
  // A chunk still being written is not published by fsync: an O_SYNC/O_DSYNC writer's kernel
  // sends one after every write(), mid-chunk. As a close by a thread the daemon cannot place
  // (pid 0), this publishes only where nobody's close can be told from another's (no owner).
  return Commit(fh, /*pid=*/0, /*wait=*/true);
}

std::string Filesystem::SyncAccepted() {
  std::string report;
  for (const std::string& key : local_files_.KeysWithPrefix("")) {
    std::shared_ptr<SpoolFile> lf = local_files_.Find(key);
    if (lf == nullptr || !lf->queued_now()) continue;
    // Not accepted yet while its writer holds another descriptor of it (a dup, a shell's
    // redirection): the close that queued it left that rule to its upload (UploadAccepted), and
    // a sync must not publish it ahead of that descriptor's close.
    if (!lf->WaitForWriters(kReleaseWait)) {
      const SpoolFile::Place at = lf->place();
      const std::optional<uint64_t> ino = inodes_.Find(at.parent_ino, at.name);
      if (ino && WriterHoldsAnother(*lf, *ino)) continue;
    }
    // As fsync() does: waits for an upload under way, or uploads it here (the queued task then
    // finds it stored); a failure leaves it queued and sealed.
    const SpoolFile::Outcome out = lf->Commit(/*wait=*/true);
    if (!out.status.ok()) {
      std::string why = out.status.ToString();
      for (char& c : why) c = c == '\n' ? ' ' : c;
      report += (out.place.display.empty() ? key : out.place.display) + "\t" + why + "\n";
    }
  }
  return report;
}

void Filesystem::RecoverSealed() {
  if (write_back_ == nullptr) return;  // none were there at start
  write_back_->Post([this] {
    for (const std::string& spool : SpoolSeal::SealedIn(options_.spool_dir)) RecoverOne(spool);
  });
}

void Filesystem::RecoverOne(const std::string& spool) {
  const std::string seal_path = SpoolSeal::PathOf(spool);
  Result<SpoolSeal::Record> seal = SpoolSeal::Read(seal_path);
  auto refuse = [&](const Status& why, const std::string& what) {
    LogError("kvfs: not uploading {}, accepted by an earlier run: {}; removed", what,
             why.ToString());
    SpoolSeal::Remove(spool);
    unlink(spool.c_str());
    write_back_->NoteRecovered(false);
  };
  if (!seal.ok()) return refuse(seal.status(), spool);
  // The key is recomputed from the name: a mount with another key_prefix (or bucket layout)
  // leaves the chunk sealed for a mount of the one it was written to.
  std::vector<std::string> path;
  for (size_t from = 0; from <= seal->display.size();) {
    const size_t slash = std::min(seal->display.find('/', from), seal->display.size());
    path.push_back(seal->display.substr(from, slash - from));
    from = slash + 1;
  }
  Result<std::string> key = codec_.FileKey(path);
  if (!key.ok() || *key != seal->key) {
    LogWarn(
        "kvfs: '{}' was accepted as key {} by an earlier mount, which this mount's settings do not "
        "name it as ({}): left sealed in {} for a mount with those settings",
        seal->display, seal->key, key.ok() ? *key : key.status().ToString(), spool);
    return;
  }
  SpoolFile::Place place{seal->key, seal->display, /*parent_ino=*/0, path.back()};
  // Recovered chunks take room in the queue as accepted ones do (this thread has no deadline:
  // it waits for room).
  if (Status room = write_back_->Reserve(seal->size); !room.ok()) {
    LogWarn("kvfs: '{}' left sealed in {}: {}", seal->display, spool, room.ToString());
    return;
  }
  Result<std::shared_ptr<SpoolFile>> lf =
      SpoolFile::Recover(SpoolDeps(), spool, *seal, std::move(place));
  if (!lf.ok()) {
    write_back_->Unreserve(seal->size);
    return refuse(lf.status(), "'" + seal->display + "' (" + spool + ")");
  }
  LogInfo("kvfs: uploading '{}' ({} bytes), accepted by an earlier run and not yet stored",
          seal->display, seal->size);
  write_back_->NoteRecovered(true);
  SpoolFile::Outcome queued;
  queued.kind = SpoolFile::Outcome::kQueued;
  queued.place = {seal->key, seal->display, 0, path.back()};
  Apply(queued, *lf, seal->size);
}

void Filesystem::DrainWriteBack() {
  if (write_back_ == nullptr) return;
  const WriteBackStats s = write_back_->Stats();
  if (s.pending > 0) {
    LogInfo("kvfs: waiting for {} chunk upload(s) accepted at close() ({} bytes)", s.pending,
            s.pending_bytes);
  }
  const auto limit = std::chrono::milliseconds(options_.write_back_drain_timeout_ms);
  if (limit.count() == 0 || write_back_->DrainFor(limit)) return write_back_->Drain();
  const WriteBackStats left = write_back_->Stats();
  LogWarn(
      "kvfs: {} chunk upload(s) ({} bytes) accepted at close() did not end within "
      "write_back_drain_timeout ({} ms): they stay sealed in {} and the next mount of this "
      "cache uploads them",
      left.pending, left.pending_bytes, limit.count(), options_.spool_dir);
  write_back_->Stop();
  write_back_->Drain();  // attempts under way end within the store's own time limits
}

Status Filesystem::Commit(uint64_t fh, pid_t pid, bool wait) {
  KVFS_ASSIGN_OR_RETURN(auto h, handles_.File(fh));
  if (!h->writable || !h->spool) return Status::OK();
  SpoolFile& lf = *h->spool;
  const pid_t owner = lf.owner();
  const pid_t tgid = ProcessOf(pid);
  // A process that was handed the descriptor (a server writing its log to an inherited stdout)
  // and exits with a status (exit(), the end of main) with it open closes it like an explicit
  // close. The file's own creator exiting with it open, or anyone killed by a signal (kill -9,
  // the OOM killer, a crash), is a dying writer: a chunk half written is never published.
  const bool exiting = pid > 0 && probe_.exiting && probe_.exiting(pid) &&
                       (tgid == 0 || tgid == lf.creator() || !probe_.killed || probe_.killed(pid));
  if (owner != 0 && tgid != owner && !(exiting && tgid == 0)) {
    // Another process's copy of the descriptor (a child closing it at exec or exit, a shell, a
    // server the descriptor was handed to before it wrote): the writer's own close publishes.
    return Status::OK();
  }
  if (exiting) {
    // The writer died (or a thread we could not place did): nothing is published for it. Its
    // own later close, if it was not the writer after all, still commits (kAbandoned).
    lf.Abandon(pid);      // recorded by the file (Deps::record)
    return Status::OK();  // nobody is left to read this answer
  }
  if (owner != 0 && lf.size_now() == 0 && lf.WouldPublish()) {
    // Nothing written yet: the descriptor may live on in a process it was handed to (a server's
    // log on its stdout) that writes later. An empty file is published at its last release.
    return Status::OK();
  }
  // write_back: a whole chunk is accepted (not uploaded here) once the queue has room for it.
  const bool write_back_close = !wait && !h->sync;
  const bool accept = write_back_close && lf.WouldPublish();
  // The publication rule's /proc walk (the writer's other descriptors) costs one system call
  // per descriptor the writer holds - thousands in a GPU engine - so a chunk write-back accepts
  // skips it here: its upload applies the rule after the writer's RELEASE (WaitForWriters),
  // which comes at once when no other descriptor remains. Only a close that would publish or
  // refuse now walks.
  const bool ruled_later = accept && owner != 0 && probe_.holds_writer;
  if (!ruled_later && owner != 0 && lf.WouldPublish() && WriterHoldsAnother(lf, h->ino)) {
    return Status::OK();
  }
  // Renamed over while it was written: the version that took its name is stored first, so that
  // this close meets it in the store (EEXIST unless the same bytes), as it would have had that
  // rename waited for its upload - not the other way round, which would refuse the rename's.
  if (lf.displaced()) StoreAcceptedVersion(lf.place().key, &lf);
  const uint64_t reserved = accept ? lf.size_now() : 0;
  if (accept) KVFS_RETURN_IF_ERROR(write_back_->Reserve(reserved));
  SpoolFile::Outcome out = lf.Commit(/*wait=*/wait || h->sync, /*queue_only=*/ruled_later);
  if (out.kind == SpoolFile::Outcome::kNotQueued) {
    // Not acceptable as it is (a partial chunk, say): the rule decides before it is refused.
    write_back_->Unreserve(reserved);
    if (WriterHoldsAnother(lf, h->ino)) return Status::OK();
    // Refused now, or uploaded before the close returns (no seal: as without write-back).
    return lf.Commit(/*wait=*/true).status;  // recorded by the file (Deps::record)
  }
  // A publication or a drop is recorded by the file itself (Deps::record, under its lock); an
  // accepted chunk's upload is queued here, in the room reserved for it.
  if (out.kind == SpoolFile::Outcome::kQueued) {
    Apply(out, h->spool, reserved, ruled_later ? h->ino : 0);
  } else if (accept) {
    write_back_->Unreserve(reserved);
  }
  return out.status;
}

void Filesystem::StoreAcceptedVersion(const std::string& key, const SpoolFile* except) {
  std::shared_ptr<SpoolFile> held = local_files_.Find(key);
  if (held == nullptr || held.get() == except || !held->queued_now()) return;
  (void)held->Commit(/*wait=*/true);  // recorded by the file; a failure leaves it queued
}

bool Filesystem::WriterHoldsAnother(SpoolFile& lf, uint64_t ino) {
  const pid_t owner = lf.owner();
  if (owner == 0 || !probe_.holds_writer) return false;
  auto path = PathOf(ino);
  if (!path.ok() || path->empty()) return false;
  writes_.publication_walks++;
  // The writer still holds the file through another descriptor (`cmd > f`: the shell's dup2
  // and close of the original; an explicit dup): that descriptor's close publishes.
  if (probe_.holds_writer(owner, ino, path->back())) return true;
  // The kernel writes the spool (passthrough_writes), so a process the descriptor was handed
  // to (a forked child) is never seen writing and never becomes the owner: while one still
  // holds it, its close (or the last release) publishes. Daemon-served writes need no such
  // walk - a child that writes becomes the owner - and are spared its cost and its one risk:
  // a forked child that holds the descriptor without writing delays the publication.
  if (lf.kernel_written() && probe_.child_holding) {
    if (const pid_t child = probe_.child_holding(owner, ino, path->back())) {
      lf.set_owner(child);
      return true;
    }
  }
  return false;
}

bool Filesystem::MayWaitOnStore(uint64_t fh) const {
  auto h = handles_.File(fh);
  return !h.ok() || (*h)->spool != nullptr;  // an unknown handle: its error is not hurried
}

Status Filesystem::Release(uint64_t fh) {
  KVFS_ASSIGN_OR_RETURN(std::shared_ptr<Handle> h, handles_.TakeFile(fh));
  if (!h->spool) return Status::OK();
  // A queued upload does not hold the file's lock during its transfer: a release never waits
  // for the store here.
  return h->spool->Release(h->writable).status;  // recorded by the file (Deps::record)
}

// ===============================================================================================
// Directories, unlink and rename
//
// Filesystem directory operations: readdir (paged listing merged with local files and
// directories), mkdir (local until a file under it is uploaded: LocalDirs) and rmdir, unlink
// (policy) and rename (temp upload or server-side copy).
// ===============================================================================================

namespace {

// d_ino for names the kernel has not looked up yet: stable, and outside the range of real
// inode numbers (which count up from 1).
uint64_t SyntheticIno(const std::string& name) {
  return (std::hash<std::string>{}(name) | (1ull << 63));
}

}  // namespace

Result<uint64_t> Filesystem::OpenDir(uint64_t ino, pid_t pid) {
  KVFS_ASSIGN_OR_RETURN(auto path, PathOf(ino));
  KVFS_ASSIGN_OR_RETURN(std::string prefix, codec_.DirPrefix(path));
  // The head: ".", "..", then the chunks this node is writing here that are not in the store yet
  // (as many as files are open for writing: bounded by the spool, not by the directory).
  std::vector<DirEntry> head;
  head.push_back({".", ino, true});
  head.push_back({"..", ino == kRootIno ? kRootIno : inodes_.ParentOf(ino), true});
  auto local = std::make_shared<std::unordered_set<std::string>>();
  for (const std::string& key : local_files_.KeysWithPrefix(prefix)) {
    // A chunk another process is writing is not listed until it is published.
    auto lf = local_files_.Find(key);
    if (lf && !VisibleTo(*lf, pid)) continue;
    auto name = codec_.NameOfKey(prefix, key);
    if (!name || !local->insert(*name).second) continue;
    auto known = inodes_.Find(ino, *name);
    head.push_back({*name, known ? *known : SyntheticIno(prefix + *name), false});
  }
  auto stream = std::make_shared<DirStream>(
      std::move(head),
      [this, ino, prefix, local](DirStream::Cursor* c, std::vector<DirEntry>* out) {
        return NextDirPage(ino, prefix, *local, c, out);
      });
  KVFS_RETURN_IF_ERROR(stream->Start());
  scans_.Listed(pid, ino);
  return handles_.AddDir(std::move(stream));
}

Status Filesystem::NextDirPage(uint64_t ino, const std::string& prefix,
                               const std::unordered_set<std::string>& local, DirStream::Cursor* c,
                               std::vector<DirEntry>* out) {
  if (!c->guard) c->guard = std::make_unique<ListLoopGuard>("listing " + prefix);
  KVFS_RETURN_IF_ERROR(c->guard->BeforePage(c->token));
  ListRequest req;
  req.prefix = prefix;
  // With fan-out the root's files lie one level down: list flat and take the valid keys.
  req.delimiter = codec_.flat() ? "" : "/";
  req.continuation_token = c->token;
  auto page = store_->List(req);
  if (!page.ok()) return page.status().Annotate("listing " + prefix);
  const auto& objects = page->objects;
  static const std::vector<std::string> kNone;
  const auto& prefixes = options_.subdirectories ? page->common_prefixes : kNone;
  for (auto& f : c->open_files) f.second = -1;  // from an earlier page now
  auto add = [&](const std::string& name, bool is_dir) {
    auto known = inodes_.Find(ino, name);
    out->push_back({name, known ? *known : SyntheticIno(prefix + name), is_dir});
    ++c->names;
  };
  // Objects and directories ("d/") merged in the store's ascending key order, so that a file "d"
  // and a directory "d/" of one name meet while the file is still in `open_files`: the name is
  // shown once (as the directory, or as the file if the file came on an earlier page).
  size_t oi = 0, pi = 0;
  while (oi < objects.size() || pi < prefixes.size()) {
    const bool is_obj =
        pi == prefixes.size() || (oi < objects.size() && objects[oi].key < prefixes[pi]);
    const std::string& pos = is_obj ? objects[oi++].key : prefixes[pi++];
    if (!c->last_key.empty() && pos <= c->last_key) continue;  // seen before
    c->last_key = pos;
    // A file "f" can still meet its directory only while keys start with "f" and a byte <= '/'.
    std::erase_if(c->open_files, [&](const auto& f) {
      return !(pos.size() > f.first.size() && pos.compare(0, f.first.size(), f.first) == 0 &&
               pos[f.first.size()] <= '/');
    });
    if (is_obj) {
      const ObjectInfo& obj = objects[oi - 1];
      auto name = codec_.NameOfKey(prefix, obj.key);
      if (!name) continue;  // a marker or a key that is not a valid encoded name: hidden
      if (unlinked_.Hides(obj)) continue;  // unlinked on this node (unlink_policy local)
      meta_.PutFile(obj);                  // scandir + stat then costs no request
      learnt_sizes_.Observe(obj.key, obj.size);
      if (local.count(*name)) continue;  // in the head already
      add(*name, false);
      c->open_files.emplace_back(obj.key, static_cast<long>(out->size()) - 1);
      continue;
    }
    auto name = codec_.NameOfPrefix(prefix, pos);
    if (!name) continue;
    const std::string dir_key = pos.substr(0, pos.size() - 1);
    meta_.PutDir(dir_key);
    listings_.NoteChild(dir_key, /*is_dir=*/true);
    if (local.count(*name)) continue;
    auto file = std::find_if(c->open_files.begin(), c->open_files.end(),
                             [&](const auto& f) { return f.first == dir_key; });
    if (file == c->open_files.end()) {
      add(*name, true);
    } else if (file->second >= 0) {
      (*out)[file->second].is_dir = true;
    }
  }
  KVFS_RETURN_IF_ERROR(c->guard->AfterPage(c->names, page->truncated));
  if (page->truncated && page->next_continuation_token.empty()) {
    return Status::IoError("listing " + prefix + ": a truncated page without a continuation token");
  }
  c->token = page->truncated ? page->next_continuation_token : "";
  c->done = !page->truncated;
  return Status::OK();
}

Status Filesystem::ReadDir(uint64_t dir_fh, uint64_t offset, const DirStream::Visitor& add,
                           uint64_t ino, pid_t pid) {
  if (ino != 0) scans_.Listed(pid, ino);
  KVFS_ASSIGN_OR_RETURN(std::shared_ptr<DirStream> stream, handles_.Dir(dir_fh));
  return stream->Read(offset, add);
}

void Filesystem::ReleaseDir(uint64_t dir_fh) {
  // Freed outside the table's mutex (or by a read still using it).
  handles_.TakeDir(dir_fh);
}

size_t Filesystem::DirHandleBytes() const {
  size_t n = 0;
  for (const auto& s : handles_.Dirs()) n += s->bytes();
  return n;
}

Result<FsEntry> Filesystem::Mkdir(uint64_t parent, const std::string& name) {
  if (codec_.flat() || !options_.subdirectories) {
    return Status::NotSupported("mkdir: subdirectories are off (fan-out or subdirectories: false)");
  }
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  // The kernel looked the name up just before: this is answered from the metadata cache.
  auto node = Resolve(key);
  if (node.ok()) return Status::AlreadyExists("mkdir: exists: " + Display(path));
  if (node.status().code() != StatusCode::kNotFound) return node.status();
  // A marker object ("name/", empty: the convention of s3fs, rclone and the S3 console) makes
  // the directory exist for every node until rmdir, whether or not files are under it: engines
  // make their tier's directory once at start-up and must still be able to store into it after
  // every chunk in it was removed (by any node). One PUT per directory made; lookups of names
  // under it ask the store, as on every other node (no empty listing is assumed).
  PutOptions opts;
  opts.if_none_match = true;
  auto put = store_->Put(key + "/", Body::FromMemory("", 0), opts);
  if (!put.ok() && put.status().code() != StatusCode::kAlreadyExists) {
    return put.status().Annotate("mkdir " + Display(path));
  }
  meta_.PutDir(key);
  listings_.NoteChild(key, /*is_dir=*/true);
  listings_.NoteAdded(key);
  // Made just now (not another node's): nothing is under it, so the walks of the levels below
  // (mkdir -p) cost nothing.
  if (put.ok()) listings_.RecordEmpty(key + "/");
  Announce(FeedEvent::kStored, key + "/", put.ok() ? put->etag : "");
  uint64_t ino = inodes_.Ref(parent, name, true);
  return FsEntry{DirAttr(ino)};
}

Status Filesystem::Rmdir(uint64_t parent, const std::string& name) {
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string prefix, codec_.DirPrefix(path));
  const std::string dir_key = prefix.substr(0, prefix.size() - 1);
  // rmdir(2) allows EEXIST for a non-empty directory (errno map: kAlreadyExists -> EEXIST).
  if (!local_files_.KeysWithPrefix(prefix).empty()) {
    return Status::AlreadyExists("rmdir: directory not empty: " + Display(path));
  }
  // Empty on this node: nothing under it but its marker and names this node unlinked (under
  // unlink_policy local their objects stay for the other nodes, who still see the directory).
  ListRequest req;
  req.prefix = prefix;
  req.max_keys = 1000;
  ListLoopGuard guard("rmdir '" + prefix + "'");
  size_t seen = 0;
  do {
    KVFS_RETURN_IF_ERROR(guard.BeforePage(req.continuation_token));
    KVFS_ASSIGN_OR_RETURN(ListResult lr, store_->List(req));
    for (const auto& o : lr.objects) {
      if (o.key != prefix && !unlinked_.Hides(o)) {
        return Status::AlreadyExists("rmdir: directory not empty: " + Display(path));
      }
    }
    seen += lr.objects.size();
    KVFS_RETURN_IF_ERROR(guard.AfterPage(seen, lr.truncated));
    req.continuation_token = lr.truncated ? lr.next_continuation_token : "";
  } while (!req.continuation_token.empty());
  // Its marker (mkdir's, or another tool's); deleting an absent key succeeds.
  KVFS_RETURN_IF_ERROR(store_->Delete(prefix));
  Announce(FeedEvent::kRemoved, prefix);
  meta_.PutMissing(dir_key);
  inodes_.Detach(parent, name);
  return Status::OK();
}

Status Filesystem::Unlink(uint64_t parent, const std::string& name) {
  KVFS_ASSIGN_OR_RETURN(auto path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(std::string key, codec_.FileKey(path));
  // deny refuses before anything is dropped: a chunk being written is a chunk too, and its
  // writer's close must still publish it. Temp files are local, never shared: still removable.
  if (options_.unlink_policy == UnlinkPolicy::kDeny) {
    if (auto open = local_files_.Find(key); open && !open->temp_now()) {
      return Status::PermissionDenied("unlink denied by unlink_policy: " + Display(path));
    }
  }
  std::shared_ptr<SpoolFile> lf = local_files_.Take(key);
  // Open handles keep their bytes, but nothing is uploaded any more. A queued upload already on
  // its way may make the object any moment: the name reads as missing here from now on, not only
  // once that upload ends (Apply, kOrphaned) - hidden under the file's lock, so before that end.
  bool under_way = false;
  const bool was_temp = lf && lf->Discard([this, &key, &under_way] {
    unlinked_.HidePending(key);
    under_way = true;
  });
  if (was_temp) {  // local only: nothing remote to remove
    inodes_.Detach(parent, name);
    return Status::OK();
  }
  auto node = Resolve(key);
  if (!node.ok()) {
    // A write in progress that never reached the store: dropping it was the whole unlink.
    if (lf && node.status().code() == StatusCode::kNotFound) {
      // Hidden just now for the upload on its way: the object the name holds meanwhile (an older
      // version, or what that upload already stored) takes the unlink's rules too - the upload
      // may yet fail and leave it there.
      if (under_way) {
        Result<ObjectInfo> held = store_->Head(key);
        if (held.ok()) {
          held->key = key;
          KVFS_RETURN_IF_ERROR(ForgetUnlinked(*held, /*orphan=*/false));
        }
      }
      inodes_.Detach(parent, name);
      return Status::OK();
    }
    return node.status();
  }
  if (node->kind == MetaEntry::kDir) return Status::InvalidArgument("unlink: is a directory");
  if (options_.unlink_policy == UnlinkPolicy::kDeny) {
    return Status::PermissionDenied("unlink denied by unlink_policy: " + Display(path));
  }
  if (options_.unlink_policy == UnlinkPolicy::kRemote) {
    if (auto ino = inodes_.Find(parent, name)) KeepOpenLocal(*ino);
  }
  ObjectInfo gone = node->info;
  gone.key = key;
  KVFS_RETURN_IF_ERROR(ForgetUnlinked(gone, /*orphan=*/false));
  inodes_.Detach(parent, name);
  return Status::OK();
}

Status Filesystem::ForgetUnlinked(const ObjectInfo& gone, bool orphan) {
  const std::string& key = gone.key;
  switch (options_.unlink_policy) {
    case UnlinkPolicy::kDeny:
      return Status::OK();  // refused before anything was dropped
    case UnlinkPolicy::kLocal:
      // The object, shared with other nodes, stays; on this node the name goes with its cached
      // copy (an engine that deleted a chunk must not find it again at its next lookup), until
      // the object changes or this node stores that name again (UnlinkedNames).
      unlinked_.Hide(gone);
      // The object the unlinked upload made: what stays hidden now that the upload is over.
      if (orphan) unlinked_.ForgetPending(key);
      reader_->Invalidate(key);
      meta_.PutMissing(key);
      return Status::OK();
    case UnlinkPolicy::kRemote:
      break;
  }
  auto remove = [this, gone] {
    // An orphan is deleted only as the upload made it: a newer version of the name is not.
    DeleteOptions only;
    only.if_match = gone.etag;
    Status st = store_->Delete(gone.key, only);
    reader_->Invalidate(gone.key);
    meta_.PutMissing(gone.key);
    unlinked_.ForgetPending(gone.key);  // hidden until this delete (HidePending)
    if (st.ok()) Announce(FeedEvent::kRemoved, gone.key);
    return st;
  };
  if (!orphan) {
    DeleteOptions any;
    KVFS_RETURN_IF_ERROR(store_->Delete(key, any));
    reader_->Invalidate(key);
    meta_.PutMissing(key);
    Announce(FeedEvent::kRemoved, key);
    return Status::OK();
  }
  meta_.PutMissing(key);
  auto run = [remove, key] {
    Status st = remove();
    if (!st.ok() && st.code() != StatusCode::kPreconditionFailed) {
      LogWarn(
          "kvfs: '{}' was unlinked while its upload was on its way; deleting the object it "
          "made failed ({}): it stays in the store",
          key, st.ToString());
    }
  };
  if (write_back_ != nullptr) {
    write_back_->Post(std::move(run));
  } else {
    run();
  }
  return Status::OK();
}

Result<FsEntry> Filesystem::Link(uint64_t ino, uint64_t new_parent, const std::string& new_name) {
  KVFS_ASSIGN_OR_RETURN(auto src_path, PathOf(ino));
  if (src_path.empty() || inodes_.IsDir(ino)) {
    return Status::PermissionDenied("link: directories cannot be linked");
  }
  KVFS_ASSIGN_OR_RETURN(auto dst_path, ChildPath(new_parent, new_name));
  KVFS_ASSIGN_OR_RETURN(std::string src_key, codec_.FileKey(src_path));
  KVFS_ASSIGN_OR_RETURN(std::string dst_key, codec_.FileKey(dst_path));
  if (IsTempName(new_name)) {
    return Status::PermissionDenied("link: a temporary name cannot be a link target: " +
                                    Display(dst_path));
  }
  auto dst = Resolve(dst_key);
  if (dst.ok()) return Status::AlreadyExists("link: target exists: " + Display(dst_path));
  if (dst.status().code() != StatusCode::kNotFound) return dst.status();
  ObjectInfo info;
  if (auto lf = local_files_.Find(src_key)) {
    SpoolFile::Place place{dst_key, Display(dst_path), new_parent, new_name};
    SpoolFile::Outcome out = lf->LinkTo(place);
    if (out.kind != SpoolFile::Outcome::kPublished) return out.status;
    info = std::move(out.info);
  } else {
    KVFS_ASSIGN_OR_RETURN(Node node, Resolve(src_key));
    if (node.kind == MetaEntry::kDir) return Status::PermissionDenied("link: is a directory");
    PutOptions opts;
    opts.if_none_match = true;
    auto copied = store_->Copy(src_key, dst_key, opts);
    if (!copied.ok()) return copied.status().Annotate("link " + Display(src_path));
    info = std::move(copied).value();
    if (info.size == 0) info.size = node.info.size;
  }
  info.key = dst_key;
  Published(info);
  Node node;
  node.kind = MetaEntry::kFile;
  node.info = info;
  // The new name is the same inode on this node (st_nlink 2 while both names exist; LMCache's
  // device-alias checks compare inodes); in the store, and on other nodes, it is an object of
  // its own with the same bytes - chunks are written once, and a linked one is not rewritten
  // (OpenForWrite).
  if (!inodes_.Link(ino, new_parent, new_name)) {
    return FsEntry{AttrOf(inodes_.Ref(new_parent, new_name, false), node)};
  }
  return FsEntry{AttrOf(ino, node)};
}

Status Filesystem::Rename(uint64_t parent, const std::string& name, uint64_t new_parent,
                          const std::string& new_name, unsigned int flags) {
  if (flags & RENAME_EXCHANGE) return Status::NotSupported("rename: RENAME_EXCHANGE");
  if (flags & ~static_cast<unsigned int>(RENAME_NOREPLACE)) {
    return Status::InvalidArgument("rename: unsupported flags");
  }
  const bool no_replace = flags & RENAME_NOREPLACE;
  KVFS_ASSIGN_OR_RETURN(auto src_path, ChildPath(parent, name));
  KVFS_ASSIGN_OR_RETURN(auto dst_path, ChildPath(new_parent, new_name));
  KVFS_ASSIGN_OR_RETURN(std::string src_key, codec_.FileKey(src_path));
  KVFS_ASSIGN_OR_RETURN(std::string dst_key, codec_.FileKey(dst_path));
  if (src_key == dst_key) return Status::OK();
  if (no_replace) {
    auto dst = Resolve(dst_key);
    if (dst.ok()) return Status::AlreadyExists("rename: target exists: " + Display(dst_path));
    if (dst.status().code() != StatusCode::kNotFound) return dst.status();
  }
  if (auto lf = local_files_.Find(src_key)) {
    std::shared_ptr<SpoolFile> replaced;
    SpoolFile::Place dst{dst_key, Display(dst_path), new_parent, new_name};
    // write_back: a chunk renamed to a final name is accepted once the queue has room for it -
    // unless the target holds a chunk the exists policy would keep (another non-empty size, as
    // the kernel's lookup of it just found): the rename then waits for that answer (EEXIST).
    // A target this node accepted and has not stored yet is stored first (as fsync() would), so
    // that the answer is the one the rename would get once it is.
    StoreAcceptedVersion(dst_key, lf.get());
    const std::optional<MetaEntry> target = meta_.Get(dst_key);
    const bool refused_ahead = target && target->kind == MetaEntry::kFile &&
                               uploader_.WouldRefuse(target->info.size, lf->size_now());
    const bool accept = options_.write_back && !IsTempName(new_name) && !refused_ahead;
    const uint64_t reserved = accept ? lf->size_now() : 0;
    if (accept) KVFS_RETURN_IF_ERROR(write_back_->Reserve(reserved));
    SpoolFile::Outcome out = lf->RenameTo(std::move(dst), IsTempName(new_name), no_replace,
                                          /*wait=*/!accept, &replaced);
    if (accept && out.kind != SpoolFile::Outcome::kQueued) write_back_->Unreserve(reserved);
    if (out.kind == SpoolFile::Outcome::kRejected || !out.status.ok()) return out.status;
    // The old name's lookups: a temp name's cost nothing (Lookup), another's asks the store (an
    // older object of that name may still be there).
    meta_.Erase(out.place.key);
    if (out.kind == SpoolFile::Outcome::kPublished) Published(out.info);
    if (out.kind == SpoolFile::Outcome::kQueued) {
      SpoolFile::Outcome queued = out;
      queued.place = {};  // the old name is forgotten above; the new one is the file's own
      Apply(queued, lf, reserved);
    }
    // A local file that had the target name is gone from it, after lf's lock is released (two
    // SpoolFile locks are never held at once). One another process is still writing keeps its
    // bytes and meets the renamed object at its own close (SpoolFile::Displace): discarding it
    // made that close return 0 with nothing stored (issue 47 item 10).
    if (replaced) replaced->Displace();
  } else {
    KVFS_ASSIGN_OR_RETURN(Node node, Resolve(src_key));
    if (node.kind == MetaEntry::kDir) {
      return Status::NotSupported("rename of directories is not supported: " + Display(src_path));
    }
    // An uploaded file: server-side copy, then delete the source.
    static std::atomic<bool> hinted{false};
    if (!hinted.exchange(true)) {
      LogInfo(
          "kvfs: rename of the uploaded file '{}' costs a server-side copy and a delete; if it is "
          "a temporary name, add a pattern matching it to temp_patterns (shown once)",
          Display(src_path));
    }
    PutOptions opts;
    opts.if_none_match = no_replace;
    auto info = store_->Copy(src_key, dst_key, opts);
    if (!info.ok()) return info.status().Annotate("rename " + Display(src_path));
    KVFS_RETURN_IF_ERROR(store_->Delete(src_key));
    Announce(FeedEvent::kRemoved, src_key);
    info->key = dst_key;
    if (info->size == 0) info->size = node.info.size;
    Published(*info);
    meta_.PutMissing(src_key);
    reader_->Invalidate(src_key);
    reader_->Invalidate(dst_key);
  }
  inodes_.Move(parent, name, new_parent, new_name);
  return Status::OK();
}

}  // namespace kvfs
