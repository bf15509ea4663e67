#include "objstore/s3/s3_xml.h"

#include <tinyxml2.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <ctime>

namespace kvfs::s3 {
namespace {

using tinyxml2::XMLDocument;
using tinyxml2::XMLElement;

std::string Text(const XMLElement* parent, const char* name) {
  const XMLElement* e = parent ? parent->FirstChildElement(name) : nullptr;
  const char* t = e ? e->GetText() : nullptr;
  return t ? t : "";
}

// Parses `body` and checks the root element's name. tinyxml2 needs a NUL-terminated copy anyway.
Status ParseDoc(std::string_view body, const char* root_name, XMLDocument* doc,
                const XMLElement** root) {
  if (doc->Parse(body.data(), body.size()) != tinyxml2::XML_SUCCESS) {
    return Status::Internal(std::string("malformed XML in S3 response (expected <") + root_name +
                            ">): " + doc->ErrorStr());
  }
  *root = doc->RootElement();
  if (*root == nullptr || std::string_view((*root)->Name()) != root_name) {
    return Status::Internal(std::string("unexpected S3 response: expected <") + root_name +
                            ">, got <" + (*root ? (*root)->Name() : "") + ">");
  }
  return Status::OK();
}

// Opaque tokens we send back in a query (UploadId, NextContinuationToken): S3's are a few hundred
// bytes at most; a longer one is a broken reply, not something to put into every request.
constexpr size_t kMaxTokenBytes = 8192;

bool IsTrue(const std::string& s) { return s == "true" || s == "True" || s == "1"; }

int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<WriteResultDoc> ParseWriteResult(std::string_view body, const char* root_name) {
  WriteResultDoc out;
  if (ParseErrorXml(body, &out.error)) {
    out.is_error = true;
    return out;
  }
  XMLDocument doc;
  const XMLElement* root = nullptr;
  Status st = ParseDoc(body, root_name, &doc, &root);
  if (!st.ok()) return st;
  out.etag = StripQuotes(Text(root, "ETag"));
  out.mtime_sec = ParseIso8601(Text(root, "LastModified"));
  return out;
}

}  // namespace

bool ParseObjectSize(std::string_view s, uint64_t* out) {
  uint64_t v = 0;
  const char* end = s.data() + s.size();
  // from_chars takes no sign, no space, no "0x"; it reports overflow past 2^64-1.
  auto [ptr, ec] = std::from_chars(s.data(), end, v);
  if (s.empty() || ec != std::errc() || ptr != end || v > uint64_t{INT64_MAX}) return false;
  *out = v;
  return true;
}

std::string StripQuotes(std::string_view etag) {
  if (etag.size() >= 2 && etag.front() == '"' && etag.back() == '"') {
    etag = etag.substr(1, etag.size() - 2);
  }
  return std::string(etag);
}

int64_t ParseIso8601(std::string_view s) {
  std::tm tm{};
  const std::string str(s);
  // Field widths keep sscanf's %d from overflowing; the ranges keep the arithmetic below (and
  // timegm) in bounds whatever the server sends (found by tests/fuzz: year -2147483648).
  if (std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6 ||
      tm.tm_year < 1 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
      tm.tm_hour < 0 || tm.tm_hour > 24 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 ||
      tm.tm_sec > 60) {
    return 0;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<int64_t>(timegm(&tm));
}

std::string UrlDecode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexVal(s[i + 1]) >= 0 && HexVal(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexVal(s[i + 1]) * 16 + HexVal(s[i + 2])));
      i += 2;
    } else if (s[i] == '+') {
      out.push_back(' ');
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

bool ParseErrorXml(std::string_view body, S3ErrorDoc* out) {
  if (body.find("<Error") == std::string_view::npos) return false;
  XMLDocument doc;
  if (doc.Parse(body.data(), body.size()) != tinyxml2::XML_SUCCESS) return false;
  const XMLElement* root = doc.RootElement();
  if (root == nullptr || std::string_view(root->Name()) != "Error") return false;
  out->code = Text(root, "Code");
  out->message = Text(root, "Message");
  out->request_id = Text(root, "RequestId");
  out->resource = Text(root, "Resource");
  return true;
}

Result<ListResult> ParseListObjectsV2(std::string_view body) {
  XMLDocument doc;
  const XMLElement* root = nullptr;
  Status st = ParseDoc(body, "ListBucketResult", &doc, &root);
  if (!st.ok()) return st;
  const bool url_encoded = Text(root, "EncodingType") == "url";
  auto decode = [url_encoded](std::string s) { return url_encoded ? UrlDecode(s) : s; };

  ListResult out;
  for (const XMLElement* c = root->FirstChildElement("Contents"); c;
       c = c->NextSiblingElement("Contents")) {
    ObjectInfo info;
    info.key = decode(Text(c, "Key"));
    const std::string size = Text(c, "Size");
    if (!ParseObjectSize(size, &info.size)) {
      return Status::Internal("S3 listing: object '" + info.key.substr(0, 256) +
                              "' has an invalid <Size> '" + size.substr(0, 32) + "' (expected 0.." +
                              std::to_string(INT64_MAX) + ")");
    }
    info.etag = StripQuotes(Text(c, "ETag"));
    info.mtime_sec = ParseIso8601(Text(c, "LastModified"));
    out.objects.push_back(std::move(info));
  }
  for (const XMLElement* p = root->FirstChildElement("CommonPrefixes"); p;
       p = p->NextSiblingElement("CommonPrefixes")) {
    out.common_prefixes.push_back(decode(Text(p, "Prefix")));
  }
  out.truncated = IsTrue(Text(root, "IsTruncated"));
  out.next_continuation_token = Text(root, "NextContinuationToken");
  if (out.truncated && out.next_continuation_token.empty()) {
    return Status::Internal("S3 listing is truncated but has no NextContinuationToken");
  }
  if (out.next_continuation_token.size() > kMaxTokenBytes) {
    return Status::Internal("S3 listing has a NextContinuationToken of " +
                            std::to_string(out.next_continuation_token.size()) +
                            " bytes (at most " + std::to_string(kMaxTokenBytes) + " expected)");
  }
  return out;
}

Result<std::string> ParseInitiateMultipartUpload(std::string_view body) {
  XMLDocument doc;
  const XMLElement* root = nullptr;
  Status st = ParseDoc(body, "InitiateMultipartUploadResult", &doc, &root);
  if (!st.ok()) return st;
  std::string id = Text(root, "UploadId");
  if (id.empty()) return Status::Internal("InitiateMultipartUploadResult without UploadId");
  if (id.size() > kMaxTokenBytes) {
    return Status::Internal("InitiateMultipartUploadResult has an UploadId of " +
                            std::to_string(id.size()) + " bytes (at most " +
                            std::to_string(kMaxTokenBytes) + " expected)");
  }
  return id;
}

Result<WriteResultDoc> ParseCompleteMultipartUpload(std::string_view body) {
  return ParseWriteResult(body, "CompleteMultipartUploadResult");
}

Result<WriteResultDoc> ParseCopyObjectResult(std::string_view body) {
  return ParseWriteResult(body, "CopyObjectResult");
}

Result<UploadList> ParseListMultipartUploads(std::string_view body) {
  XMLDocument doc;
  const XMLElement* root = nullptr;
  Status st = ParseDoc(body, "ListMultipartUploadsResult", &doc, &root);
  if (!st.ok()) return st;
  UploadList out;
  for (const XMLElement* u = root->FirstChildElement("Upload"); u;
       u = u->NextSiblingElement("Upload")) {
    out.uploads.push_back(
        {Text(u, "Key"), Text(u, "UploadId"), ParseIso8601(Text(u, "Initiated"))});
  }
  out.truncated = IsTrue(Text(root, "IsTruncated"));
  out.next_key_marker = Text(root, "NextKeyMarker");
  out.next_upload_id_marker = Text(root, "NextUploadIdMarker");
  return out;
}

std::string BuildCompleteMultipartXml(const std::vector<CompletedPart>& parts) {
  // Plain string building: the document is fixed apart from numbers and ETags (escaped).
  std::string xml = "<CompleteMultipartUpload xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">";
  for (const CompletedPart& p : parts) {
    xml += "<Part><PartNumber>" + std::to_string(p.part_number) + "</PartNumber><ETag>\"";
    for (char c : StripQuotes(p.etag)) {
      switch (c) {
        case '&':
          xml += "&amp;";
          break;
        case '<':
          xml += "&lt;";
          break;
        case '>':
          xml += "&gt;";
          break;
        case '"':
          xml += "&quot;";
          break;
        default:
          xml.push_back(c);
      }
    }
    xml += "\"</ETag></Part>";
  }
  return xml + "</CompleteMultipartUpload>";
}

}  // namespace kvfs::s3
