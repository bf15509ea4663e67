// Listing of the directory store: walk, sort by key bytes, then cut one page.
// Each page walks the (prefix-pruned) tree again, like a stateless S3 server does; the
// continuation token names the last key or common prefix returned.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "objstore/dir/dir_file_util.h"
#include "objstore/dir/dir_key_codec.h"
#include "objstore/dir/dir_store_impl.h"

namespace kvfs::dirstore {
namespace {

constexpr int kMaxPage = 1000;  // S3's cap on max-keys

std::string ToHex(const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) out += {kHex[c >> 4], kHex[c & 15]};
  return out;
}

std::optional<std::string> FromHex(std::string_view s) {
  if (s.size() % 2 != 0) return std::nullopt;
  auto val = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < s.size(); i += 2) {
    int hi = val(s[i]), lo = val(s[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

bool StartsWith(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(0, p.size(), p) == 0;
}

}  // namespace

Status DirStore::CollectKeys(const std::string& dir, const std::string& key_so_far,
                             const std::string& prefix, std::vector<std::string>* keys) const {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return Status::OK();  // removed by a concurrent delete
    return Status::FromErrno(errno, "list directory " + dir);
  }
  struct Closer {
    DIR* d;
    ~Closer() { ::closedir(d); }
  } closer{d};
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st;
      if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      is_dir = S_ISDIR(st.st_mode);
    }
    bool marked = !name.empty() && name.back() == kDirMarker;
    if (is_dir != marked) continue;  // not written by this store
    auto part = DecodeComponent(marked ? std::string_view(name).substr(0, name.size() - 1)
                                       : std::string_view(name));
    if (!part) continue;
    std::string key = key_so_far + *part;
    if (is_dir) {
      // Descend only where keys with the prefix can be.
      if (StartsWith(key, prefix) || StartsWith(prefix, key)) {
        KVFS_RETURN_IF_ERROR(CollectKeys(dir + "/" + name, key, prefix, keys));
      }
      continue;
    }
    if (!StartsWith(key, prefix)) continue;
    // Only the canonical spelling of a key counts, so no key is listed twice.
    auto components = EncodeKey(key);
    if (!components.ok()) continue;
    std::string expect = objects_dir_ + "/" + JoinPath(*components);
    if (expect != dir + "/" + name) continue;
    keys->push_back(std::move(key));
  }
  return Status::OK();
}

Result<ListResult> DirStore::List(const ListRequest& req) {
  ListResult out;
  if (req.max_keys <= 0) return out;
  int max_keys = std::min(req.max_keys, kMaxPage);

  // The token is "k<hex key>" after a key or "p<hex prefix>" after a common prefix.
  std::string after;
  bool after_prefix = false;
  if (!req.continuation_token.empty()) {
    auto decoded = FromHex(std::string_view(req.continuation_token).substr(1));
    char kind = req.continuation_token[0];
    if (!decoded || (kind != 'k' && kind != 'p')) {
      return Status::InvalidArgument("invalid continuation token for " + Describe());
    }
    after = *decoded;
    after_prefix = kind == 'p';
  }

  std::vector<std::string> keys;
  KVFS_RETURN_IF_ERROR(CollectKeys(objects_dir_, "", req.prefix, &keys));
  std::sort(keys.begin(), keys.end());  // std::string compares as unsigned bytes

  auto begin = keys.begin();
  if (!req.continuation_token.empty()) {
    begin = std::upper_bound(keys.begin(), keys.end(), after);
    if (after_prefix) {
      while (begin != keys.end() && StartsWith(*begin, after)) ++begin;
    }
  }

  int count = 0;
  std::string last;
  bool last_is_prefix = false;
  for (auto it = begin; it != keys.end(); ++it) {
    const std::string& key = *it;
    std::string common;
    if (!req.delimiter.empty()) {
      size_t pos = key.find(req.delimiter, req.prefix.size());
      if (pos != std::string::npos) common = key.substr(0, pos + req.delimiter.size());
    }
    if (!common.empty() && last_is_prefix && common == last) continue;  // same group
    if (count == max_keys) {
      out.truncated = true;
      out.next_continuation_token = (last_is_prefix ? "p" : "k") + ToHex(last);
      break;
    }
    if (!common.empty()) {
      out.common_prefixes.push_back(common);
      last = common;
      last_is_prefix = true;
    } else {
      auto path = ObjectPath(key);
      struct stat st;
      if (!path.ok() || ::stat(path->c_str(), &st) != 0) continue;  // deleted meanwhile
      out.objects.push_back(InfoFromStat(key, st));
      last = key;
      last_is_prefix = false;
    }
    ++count;
  }
  return out;
}

}  // namespace kvfs::dirstore
