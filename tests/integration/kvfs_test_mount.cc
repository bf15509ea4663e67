// kvfs_test_mount: mounts a Filesystem over the directory store or an S3 bucket for the
// integration tests (not the daemon: no config file, no daemonizing). Stays in the foreground
// until unmounted or signalled. Also dumps a store's keys for checking what a test left behind.
//
//   kvfs_test_mount [options] MOUNTPOINT
//   kvfs_test_mount --dump [--dir ROOT | --s3-bucket B] [--prefix P]  (prints "key size sha256")
//   kvfs_test_mount --create-bucket | --delete-bucket --s3-bucket B
//
// Options: --dir ROOT | --s3-bucket NAME (endpoint and keys from KVFS_TEST_S3_* variables),
//   --prefix P, --spool DIR, --ttl SECS, --chunk-size BYTES (repeatable), --max-chunk BYTES,
//   --multipart-threshold BYTES, --part-size BYTES, --unlink-policy remote|local|deny,
//   --exists-policy same-size|eexist, --fanout N, --threads N, --debug,
//   --cache-dir DIR (default: a temporary directory, removed at exit), --cache-size BYTES,
//   --no-cache (plain ranged GETs: DirectReader).
// The stack is wired as the daemon wires it (BuildMountStack, src/mount.h). With the cache
// (default) reads go through the CachedReader, so hits are spliced from cache files, and the
// statistics (the daemon's, src/stats_text.h) are readable as the root's "user.kvfs.stats"
// attribute.
#include <openssl/evp.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "fs/fuse/fuse_adapter.h"
#include "objstore/dir/dir_store.h"
#include "objstore/s3/s3_store.h"
#include "src/mount.h"
#include "tests/support/s3_admin.h"

namespace {

using namespace kvfs;

int Fail(const std::string& msg) {
  std::fprintf(stderr, "kvfs_test_mount: %s\n", msg.c_str());
  return 2;
}

std::string Sha256Hex(const std::string& s) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), md, &n, EVP_sha256(), nullptr);
  std::string hex;
  char buf[3];
  for (unsigned int i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", md[i]);
    hex += buf;
  }
  return hex;
}

int Dump(ObjectStore& store, const std::string& prefix) {
  ListRequest req;
  req.prefix = prefix;
  for (;;) {
    auto page = store.List(req);
    if (!page.ok()) return Fail(page.status().ToString());
    for (const auto& o : page->objects) {
      std::string data(o.size, '\0');
      GetRequest g;
      g.key = o.key;
      auto n = store.Get(g, data.data());
      if (!n.ok()) return Fail(n.status().ToString());
      std::printf("%s %llu %s\n", o.key.c_str(), static_cast<unsigned long long>(o.size),
                  Sha256Hex(data).c_str());
    }
    if (!page->truncated) break;
    req.continuation_token = page->next_continuation_token;
  }
  return 0;
}

int Serve(MountStack& stack, FuseOptions fuse, const std::string& mountpoint) {
  fuse.stats_text = stack.StatsText();
  return RunFuseSession(*stack.fs, mountpoint, fuse, [&] {
    std::printf("kvfs_test_mount: mounted %s at %s\n", stack.store->Describe().c_str(),
                mountpoint.c_str());
    std::fflush(stdout);
  });
}

}  // namespace

int main(int argc, char** argv) {
  // stdout carries --dump's listing: logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("kvfs_test_mount"));
  FsOptions fo;
  FuseOptions fuse;
  std::string dir_root, bucket, mountpoint;
  bool dump = false, create_bucket = false, delete_bucket = false, use_cache = true;
  std::string cache_dir;
  uint64_t cache_size = 256ull << 20;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "missing value for %s\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--dir")
      dir_root = next();
    else if (a == "--s3-bucket")
      bucket = next();
    else if (a == "--prefix")
      fo.key_prefix = next();
    else if (a == "--spool")
      fo.spool_dir = next();
    else if (a == "--ttl")
      fo.metadata_ttl_secs = std::stoul(next());
    else if (a == "--chunk-size")
      fo.chunk_sizes.push_back(std::stoull(next()));
    else if (a == "--max-chunk")
      fo.max_chunk_bytes = std::stoull(next());
    else if (a == "--multipart-threshold")
      fo.multipart_threshold = std::stoull(next());
    else if (a == "--part-size")
      fo.multipart_part_size = std::stoull(next());
    else if (a == "--fanout")
      fo.fanout_hex_chars = std::stoi(next());
    else if (a == "--threads")
      fuse.max_threads = std::stoi(next());
    else if (a == "--cache-dir")
      cache_dir = next();
    else if (a == "--cache-size")
      cache_size = std::stoull(next());
    else if (a == "--no-cache")
      use_cache = false;
    else if (a == "--debug")
      fuse.debug = true;
    else if (a == "--dump")
      dump = true;
    else if (a == "--create-bucket")
      create_bucket = true;
    else if (a == "--delete-bucket")
      delete_bucket = true;
    else if (a == "--unlink-policy") {
      std::string p = next();
      fo.unlink_policy = p == "local"  ? UnlinkPolicy::kLocal
                         : p == "deny" ? UnlinkPolicy::kDeny
                                       : UnlinkPolicy::kRemote;
    } else if (a == "--exists-policy") {
      fo.exists_policy = next() == "eexist" ? ExistsPolicy::kEexist : ExistsPolicy::kSameSizeOk;
    } else if (!a.empty() && a[0] != '-' && mountpoint.empty()) {
      mountpoint = a;
    } else {
      return Fail("unknown argument " + a);
    }
  }

  std::shared_ptr<ObjectStore> store;
  if (!dir_root.empty()) {
    DirStoreOptions dopts;
    dopts.sync = false;
    auto s = NewDirStore(dir_root, dopts);
    if (!s.ok()) return Fail(s.status().ToString());
    store = *s;
  } else if (!bucket.empty()) {
    auto o = S3TestOptionsFromEnv();
    if (!o.ok()) return Fail(o.status().ToString());
    o->bucket = bucket;
    if (create_bucket || delete_bucket) {
      Status st = create_bucket ? CreateBucketForTest(*o) : DeleteBucketForTest(*o);
      return st.ok() ? 0 : Fail(st.ToString());
    }
    auto s = NewS3Store(*o);
    if (!s.ok()) return Fail(s.status().ToString());
    store = *s;
  } else {
    return Fail("need --dir ROOT or --s3-bucket NAME");
  }
  if (dump) return Dump(*store, fo.key_prefix);
  if (mountpoint.empty()) return Fail("need a MOUNTPOINT");
  Status access = store->CheckAccess();
  if (!access.ok()) return Fail(access.ToString());

  // The daemon's wiring (src/mount.h), over this store and these options.
  MountStackOptions mo;
  mo.fs = fo;
  const bool temp_cache = use_cache && cache_dir.empty();
  if (use_cache) {
    if (temp_cache) cache_dir = "/tmp/kvfs-test-mount-cache-" + std::to_string(getpid());
    ChunkCacheOptions& co = mo.cache.emplace();
    co.dir = cache_dir;
    co.capacity = cache_size;
  } else if (mo.fs.spool_dir.empty()) {
    mo.fs.spool_dir = "/tmp/kvfs-test-mount-spool-" + std::to_string(getpid());
  }
  int rc = 0;
  {
    auto stack = BuildMountStack(store, std::move(mo));
    if (!stack.ok()) return Fail(stack.status().ToString());
    store = nullptr;  // the stack holds it, and drops it last
    rc = Serve(*stack, fuse, mountpoint);
  }  // the filesystem (and its handles) goes first, then the reader, the cache, the store
  if (temp_cache) {
    std::error_code ec;
    std::filesystem::remove_all(cache_dir, ec);
  }
  return rc;
}
