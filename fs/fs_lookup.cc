// Filesystem lookups that need the store, with directories: one LIST per lookup.
//
// The kernel looks a path up one component at a time, and each component this node has not seen
// used to cost a HEAD (is it a file?) and a one-key LIST (is it a directory?): ~5 requests for a
// chunk of vLLM's or llm-d's "<root>/<model>_r0/<hhh>/<hh>_g0/<hash>.bin" on a node new to its
// directories (issue 22). Here one LIST with prefix "<key>" and no delimiter answers instead. The
// store returns keys in byte order, so the page holds the object "<key>" itself first (if any),
// then siblings that extend the name with a byte below '/' ("<key>-old"), then every key under
// "<key>/" up to lookup_list_max_keys. That tells file, directory and missing apart, and the keys
// under "<key>/" answer the lookups of the levels below: their directories and files go to the
// metadata cache, and each directory the page lists completely becomes a listing that answers
// misses under it (DirListingCache). The next lookups of the same path cost nothing, so a chunk
// lookup costs one request whatever its depth (two when the page ends before the chunk's
// directory: a level of more than lookup_list_max_keys keys).
//
// What is cached lives one metadata TTL, as a HEAD's answer would: other nodes' new chunks and
// deletes show within it. A directory exists while any key lies under it (a marker "<key>/" of
// mkdir included), as before.
#include <map>
#include <unordered_set>

#include "fs/filesystem.h"

namespace kvfs {

namespace {

// Whether a sorted listing whose largest key is `last` saw every key starting with `prefix`.
bool ListedPast(const std::string& last, const std::string& prefix) {
  return last.compare(0, prefix.size(), prefix) > 0;
}

}  // namespace

Result<Filesystem::Node> Filesystem::FoundFile(ObjectInfo info) {
  if (unlinked_.Hides(info)) {
    meta_.PutMissing(info.key);  // asked again after a TTL: has the object changed?
    return Status::NotFound("no such file (unlinked on this node): " + info.key);
  }
  meta_.PutFile(info);
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
    under = true;
    std::string parent = dir;
    children[parent];
    for (size_t start = dir.size();;) {
      const size_t slash = o.key.find('/', start);
      if (slash == std::string::npos) {
        if (start < o.key.size()) {  // a file (else the marker of the directory `parent`)
          children[parent].insert(o.key);
          meta_.PutFile(o);
          learnt_sizes_.Observe(o.key, o.size);
        }
        break;
      }
      std::string sub = o.key.substr(0, slash);
      if (slash > start && children[parent].insert(sub).second) meta_.PutDir(sub);
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
    KVFS_ASSIGN_OR_RETURN(ListResult lr1, store_->List(one));
    under = !lr1.objects.empty() || !lr1.common_prefixes.empty();
    if (!under) listings_.RecordEmpty(dir);
  }
  if (under) {
    meta_.PutDir(key);
    Node node;
    node.kind = MetaEntry::kDir;
    node.info.key = key;
    return node;
  }
  // Nothing under "<key>/" either (recorded above as an empty listing when this page saw the
  // whole range): names below it are known missing too, a walk down a tree that does not exist
  // yet (mkdir -p) costs nothing more.
  if (all_under) listings_.RecordEmpty(dir);
  unlinked_.Forget(key);  // gone from the store: a new object of that name will show
  meta_.PutMissing(key);
  listings_.NoteMiss(key);
  return Status::NotFound("no such file: " + key);
}

}  // namespace kvfs
