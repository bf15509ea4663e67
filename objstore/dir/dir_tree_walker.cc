#include "objstore/dir/dir_tree_walker.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

namespace kvfs::dirstore {
namespace {

bool StartsWith(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(0, p.size(), p) == 0;
}

// A file before a directory of the same string: the key itself sorts before the longer keys
// below the directory.
bool EntryLess(const std::string& as, bool a_dir, const std::string& bs, bool b_dir) {
  const int c = as.compare(bs);  // std::string compares as unsigned bytes
  return c != 0 ? c < 0 : (!a_dir && b_dir);
}

}  // namespace

DirTreeWalker::DirTreeWalker(std::string objects_dir, KeyLayout layout, WalkBounds bounds)
    : objects_dir_(std::move(objects_dir)), layout_(layout), bounds_(std::move(bounds)) {}

Result<std::vector<WalkItem>> DirTreeWalker::Walk() {
  items_.clear();
  if (bounds_.limit == 0) return std::vector<WalkItem>{};
  std::string rel, key_so_far;
  const size_t slash = bounds_.prefix.rfind('/');
  if (layout_ == KeyLayout::kTree && slash != std::string::npos) {
    // Every key under the prefix lies below the directory of its whole segments.
    key_so_far = bounds_.prefix.substr(0, slash + 1);
    KVFS_ASSIGN_OR_RETURN(auto components, EncodeKey(key_so_far, layout_));
    components.pop_back();  // the file of the key ending in '/'
    rel = JoinPath(components);
  }
  KVFS_RETURN_IF_ERROR(
      WalkDir(rel.empty() ? objects_dir_ : objects_dir_ + "/" + rel, rel, key_so_far));
  return std::move(items_);
}

bool DirTreeWalker::WantFile(const std::string& key) const {
  if (!StartsWith(key, bounds_.prefix)) return false;
  if (!bounds_.has_after) return true;
  if (bounds_.after_is_prefix && StartsWith(key, bounds_.after)) return false;
  return key > bounds_.after;
}

bool DirTreeWalker::WantDir(const std::string& s) const {
  if (!StartsWith(s, bounds_.prefix) && !StartsWith(bounds_.prefix, s)) return false;
  if (!bounds_.has_after) return true;
  if (bounds_.after_is_prefix && StartsWith(s, bounds_.after)) return false;
  // Below s are keys starting with s: all before `after` when s is smaller and not its prefix.
  return s >= bounds_.after || StartsWith(bounds_.after, s);
}

Status DirTreeWalker::ReadEntries(const std::string& dir, const std::string& key_so_far,
                                  std::vector<Entry>* out) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::OK();  // removed meanwhile
    return Status::FromErrno(errno, "list directory " + dir);
  }
  struct Closer {
    DIR* d;
    ~Closer() { ::closedir(d); }
  } closer{d};
  while (dirent* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    ++names_read_;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st;
      if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      is_dir = S_ISDIR(st.st_mode);
    }
    Entry entry;
    entry.is_dir = is_dir;
    const char last = name.back();
    if (is_dir) {
      const bool segment = layout_ == KeyLayout::kTree && last == kSegmentMarker;
      if (last != kDirMarker && !segment) continue;  // not written by this store
      auto part = DecodeComponent(name.substr(0, name.size() - 1));
      if (!part) continue;
      entry.s = key_so_far + *part + (segment ? "/" : "");
      if (!WantDir(entry.s)) continue;
    } else {
      if (layout_ == KeyLayout::kTree && name == kEmptyLastSegment) {
        entry.s = key_so_far;
      } else {
        auto part = DecodeComponent(name);
        if (!part) continue;
        entry.s = key_so_far + *part;
      }
      if (entry.s.empty() || !WantFile(entry.s)) continue;
    }
    entry.name = name;
    out->push_back(std::move(entry));
  }
  return Status::OK();
}

void DirTreeWalker::Add(WalkItem item) {
  if (item.is_prefix && !items_.empty() && items_.back().is_prefix &&
      items_.back().key == item.key) {
    return;  // keys of a group already listed
  }
  items_.push_back(std::move(item));
}

Status DirTreeWalker::WalkDir(const std::string& dir, const std::string& rel,
                              const std::string& key_so_far) {
  std::vector<Entry> entries;
  KVFS_RETURN_IF_ERROR(ReadEntries(dir, key_so_far, &entries));
  auto less = [](const Entry& a, const Entry& b) {
    return EntryLess(a.s, a.is_dir, b.s, b.is_dir);
  };
  // Each entry gives at least one item or none, so the page needs at most `limit - have` of them
  // in order; the rest is ordered only if those were not enough.
  auto sorted_end = entries.begin();
  auto order_more = [&] {
    const size_t want = bounds_.limit - items_.size();
    const size_t left = static_cast<size_t>(entries.end() - sorted_end);
    if (left <= 2 * want) {
      std::sort(sorted_end, entries.end(), less);
      sorted_end = entries.end();
    } else {
      std::partial_sort(sorted_end, sorted_end + want, entries.end(), less);
      sorted_end += want;
    }
  };
  const size_t dlen = bounds_.delimiter.size();
  for (auto it = entries.begin(); it != entries.end() && !Full(); ++it) {
    if (it == sorted_end) order_more();
    const std::string child_rel = rel.empty() ? it->name : rel + "/" + it->name;
    const size_t pos =
        dlen == 0 ? std::string::npos : it->s.find(bounds_.delimiter, bounds_.prefix.size());
    if (pos != std::string::npos && pos + dlen <= it->s.size()) {
      // Every key here, and below a directory here, belongs to one common prefix.
      Add({it->s.substr(0, pos + dlen), true, ""});
      continue;
    }
    if (it->is_dir) {
      KVFS_RETURN_IF_ERROR(WalkDir(dir + "/" + it->name, child_rel, it->s));
      continue;
    }
    // Only the canonical spelling of a key counts, so no key is listed twice.
    auto components = EncodeKey(it->s, layout_);
    if (!components.ok() || JoinPath(*components) != child_rel) continue;
    Add({it->s, false, dir + "/" + it->name});
  }
  return Status::OK();
}

}  // namespace kvfs::dirstore
