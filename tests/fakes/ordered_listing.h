// ListOrderedKeys: S3's ListObjectsV2 over an ordered map of keys (the fakes' listing): keys in
// ascending byte order from `prefix` on, a delimiter folding keys into common prefixes, at most
// max_keys entries a page, and a continuation token (the last key or common prefix returned)
// after which the next page resumes.
//
// Thread-safety: a pure function of its arguments; the caller guards the map.
#pragma once

#include <iterator>
#include <string>

#include "objstore/object_store.h"

namespace kvfs {

// `objects`: a std::map from key to anything; `info(key, value)` makes the ObjectInfo listed.
// req.max_keys must be positive.
template <typename Map, typename InfoFn>
ListResult ListOrderedKeys(const Map& objects, const ListRequest& req, InfoFn info) {
  ListResult out;
  // The continuation token is the last key or common prefix returned; resume strictly after it
  // (and after every key that a returned common prefix covered).
  auto it = objects.lower_bound(req.prefix);
  const std::string& token = req.continuation_token;
  if (!token.empty()) {
    it = objects.upper_bound(token);
    if (!req.delimiter.empty() && token.size() >= req.delimiter.size() &&
        token.compare(token.size() - req.delimiter.size(), req.delimiter.size(), req.delimiter) ==
            0) {
      while (it != objects.end() && it->first.compare(0, token.size(), token) == 0) ++it;
    }
  }
  int count = 0;
  std::string last;
  for (; it != objects.end(); ++it) {
    const std::string& key = it->first;
    if (key.compare(0, req.prefix.size(), req.prefix) != 0) break;
    if (count == req.max_keys) {
      out.truncated = true;
      out.next_continuation_token = last;
      break;
    }
    if (!req.delimiter.empty()) {
      size_t pos = key.find(req.delimiter, req.prefix.size());
      if (pos != std::string::npos) {
        std::string cp = key.substr(0, pos + req.delimiter.size());
        out.common_prefixes.push_back(cp);
        last = cp;
        ++count;
        while (std::next(it) != objects.end() &&
               std::next(it)->first.compare(0, cp.size(), cp) == 0) {
          ++it;
        }
        continue;
      }
    }
    out.objects.push_back(info(key, it->second));
    last = key;
    ++count;
  }
  return out;
}

}  // namespace kvfs
