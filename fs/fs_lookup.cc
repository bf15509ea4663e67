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
#include <algorithm>
#include <ctime>
#include <map>
#include <unordered_set>

#include "fs/filesystem.h"

namespace kvfs {

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
  std::shared_ptr<LocalFile> lf = local_files_.Find(key);
  auto local_node = [&] {
    Node node;
    node.kind = MetaEntry::kFile;
    node.info.key = key;
    node.info.size = lf->size_now();
    node.info.mtime_sec = lf->mtime_sec();
    node.local = lf;
    return node;
  };
  if (lf && lf->temp_now()) return local_node();
  auto remote = ResolveRemote(key, needs_store);
  if (needs_store != nullptr && *needs_store) return remote;
  // A write in progress shows only while no complete object of that name exists: readers of a
  // chunk being rewritten get the uploaded bytes, never a partial file.
  if (lf && (!remote.ok() || remote->kind != MetaEntry::kFile)) {
    return local_node();
  }
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
  // With directories, one LIST tells file from directory from missing (fs_lookup.cc), unless the
  // name's directory is a chunk directory: there a HEAD (a twelfth of a LIST's price) answers.
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
  std::optional<ChunkReader::LocalCopyInfo> copy = reader_->LocalCopy(key);
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
  if (node.local && !node.local->published_now()) {
    // A chunk being written: only its writer sees it, and nobody caches the answer, so that
    // others see it the moment it is published.
    entry.ttl_secs = 0;
    if (!VisibleTo(*node.local, pid)) return entry;  // ino 0, not cached
  }
  uint64_t ino = inodes_.Ref(parent, name, node.kind == MetaEntry::kDir);
  entry.attr = AttrOf(ino, node);
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
  if (event.kind == FeedEvent::kRemoved) {
    // Asked again at the next lookup (a later store by another node may already be there).
    meta_.Erase(key);
    reader_->Invalidate(key);
  } else {
    if (unlinked_.Hides(event.info)) return;  // unlinked here: stays hidden
    if (event.info.etag.empty()) {
      meta_.Erase(key);  // found at the next lookup, with its ETag
    } else {
      meta_.PutFile(event.info);
      learnt_sizes_.Observe(key, event.info.size);
    }
    listings_.NoteAdded(key);
    listings_.NoteChild(key, /*is_dir=*/false);
  }
  InvalidateKey(key);
}

void Filesystem::Forget(uint64_t ino, uint64_t nlookup) { inodes_.Forget(ino, nlookup); }

pid_t Filesystem::ProcessOf(pid_t pid) const {
  return pid > 0 && probe_.thread_group ? probe_.thread_group(pid) : 0;
}

bool Filesystem::VisibleTo(const LocalFile& lf, pid_t pid) const {
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
  unlinked_.Forget(key);  // gone from the store: a new object of that name will show
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

}  // namespace kvfs
