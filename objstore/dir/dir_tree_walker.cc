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
                                  size_t want, const Done& done, std::vector<Entry>* out,
                                  bool* more) {
  *more = false;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT || errno == ENOTDIR) return Status::OK();  // removed meanwhile
    return Status::FromErrno(errno, "list directory " + dir);
  }
  struct Closer {
    DIR* d;
    ~Closer() { ::closedir(d); }
  } closer{d};
  // A max-heap of the smallest entries so far: front() is the largest kept.
  auto less = [](const Entry& a, const Entry& b) {
    return EntryLess(a.s, a.is_dir, b.s, b.is_dir);
  };
  std::string s;  // reused: most names are decoded and dropped without an allocation
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
    s = key_so_far;
    const char last = name.back();
    if (is_dir) {
      const bool segment = layout_ == KeyLayout::kTree && last == kSegmentMarker;
      if (last != kDirMarker && !segment) continue;  // not written by this store
      if (!DecodeComponentTo(name.substr(0, name.size() - 1), &s)) continue;
      if (segment) s.push_back('/');
      if (!WantDir(s)) continue;
    } else {
      if (layout_ != KeyLayout::kTree || name != kEmptyLastSegment) {
        if (!DecodeComponentTo(name, &s)) continue;
      }
      if (s.empty() || !WantFile(s)) continue;
    }
    if (done.any && (!EntryLess(done.last, done.last_is_dir, s, is_dir) ||
                     (!done.group.empty() && StartsWith(s, done.group)))) {
      continue;
    }
    if (out->size() == want) {
      *more = true;
      if (!EntryLess(s, is_dir, out->front().s, out->front().is_dir)) continue;
      std::pop_heap(out->begin(), out->end(), less);
      out->pop_back();
    }
    out->push_back(Entry{s, std::string(name), is_dir});
    std::push_heap(out->begin(), out->end(), less);
  }
  std::sort_heap(out->begin(), out->end(), less);
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
  const size_t dlen = bounds_.delimiter.size();
  Done done;
  for (;;) {
    // Each entry gives the page one item at most (a directory, or a group of keys, may give
    // none new); when its entries gave too few, the next pass reads on from the last one.
    std::vector<Entry> entries;
    bool more = false;
    KVFS_RETURN_IF_ERROR(
        ReadEntries(dir, key_so_far, bounds_.limit - items_.size(), done, &entries, &more));
    for (const Entry& e : entries) {
      done.any = true;
      done.last = e.s;
      done.last_is_dir = e.is_dir;
      const size_t pos =
          dlen == 0 ? std::string::npos : e.s.find(bounds_.delimiter, bounds_.prefix.size());
      if (pos != std::string::npos && pos + dlen <= e.s.size()) {
        // Every key here, and below a directory here, belongs to one common prefix.
        done.group = e.s.substr(0, pos + dlen);
        Add({done.group, true, ""});
      } else if (e.is_dir) {
        KVFS_RETURN_IF_ERROR(
            WalkDir(dir + "/" + e.name, rel.empty() ? e.name : rel + "/" + e.name, e.s));
      } else {
        // Only the canonical spelling of a key counts, so no key is listed twice.
        auto components = EncodeKey(e.s, layout_);
        const std::string child_rel = rel.empty() ? e.name : rel + "/" + e.name;
        if (components.ok() && JoinPath(*components) == child_rel) {
          Add({e.s, false, dir + "/" + e.name});
        }
      }
      if (Full()) return Status::OK();
    }
    if (!more) return Status::OK();
  }
}

}  // namespace kvfs::dirstore
