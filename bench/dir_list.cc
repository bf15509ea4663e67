// What a LIST of the directory store costs at N names (issue 47 item 9): N chunk objects
// "p/chunk-%07d" and 8 fleet-feed entries "p/~kvfs-feed/n-%d" written straight into a root of the
// tree or the flat layout (objstore/dir/dir_key_codec.h), then timed through the store's public
// List: the feed's listing (every mount, every 400 ms), the first page of the chunks, a page from
// the middle. Medians and ranges of --reps repetitions.
//
//   dir_list --names 1000000 --reps 5 --work DIR [--layout tree|flat|both]
//
// Builds against any kvfs that has NewDirStore and List (the flat root is what a kvfs before the
// tree layout reads), so one source measures the code before and after. Results:
// bench/RESULTS-dir-list.md.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "objstore/dir/dir_store.h"

namespace {

void Touch(const std::string& path) {
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0600);
  if (fd < 0 || ::write(fd, "c", 1) != 1) {
    std::perror(path.c_str());
    std::exit(1);
  }
  ::close(fd);
}

// The files a kvfs store of either layout holds for these keys.
void Fill(const std::string& root, bool tree, int names) {
  namespace fs = std::filesystem;
  const std::string objects = root + "/objects";
  const std::string chunks = tree ? objects + "/p=" : objects;
  const std::string feed = tree ? objects + "/p=/~kvfs-feed=" : objects;
  fs::create_directories(feed);
  std::ofstream(root + "/layout") << (tree ? "tree\n" : "flat\n");
  char name[64];
  for (int i = 0; i < names; ++i) {
    std::snprintf(name, sizeof(name), tree ? "/chunk-%07d" : "/p%%2Fchunk-%07d", i);
    Touch(chunks + name);
  }
  for (int i = 0; i < 8; ++i) {
    std::snprintf(name, sizeof(name), tree ? "/n-%d" : "/p%%2F~kvfs-feed%%2Fn-%d", i);
    Touch(feed + name);
  }
}

double CpuSecs() {
  rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct Sample {
  double wall_ms, cpu_ms;
};

Sample Time(const std::function<size_t()>& list, size_t want) {
  const auto t0 = std::chrono::steady_clock::now();
  const double c0 = CpuSecs();
  const size_t got = list();
  const double cpu = CpuSecs() - c0;
  const std::chrono::duration<double, std::milli> wall = std::chrono::steady_clock::now() - t0;
  if (got != want) {
    std::fprintf(stderr, "listed %zu, want %zu\n", got, want);
    std::exit(1);
  }
  return {wall.count(), cpu * 1000};
}

void Report(const char* layout, const char* what, std::vector<Sample> s, int names) {
  auto med = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::vector<double> wall, cpu;
  for (const auto& x : s) wall.push_back(x.wall_ms), cpu.push_back(x.cpu_ms);
  std::printf(
      "{\"layout\": \"%s\", \"names\": %d, \"what\": \"%s\", \"wall_ms_median\": %.3f, "
      "\"wall_ms_min\": %.3f, \"wall_ms_max\": %.3f, \"cpu_ms_median\": %.3f}\n",
      layout, names, what, med(wall), *std::min_element(wall.begin(), wall.end()),
      *std::max_element(wall.begin(), wall.end()), med(cpu));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int names = 100000, reps = 5;
  std::string work = "/tmp/kvfs-dir-list", layouts = "both";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--names")) names = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--work")) work = argv[i + 1];
    if (!std::strcmp(argv[i], "--layout")) layouts = argv[i + 1];
  }
  for (const bool tree : {false, true}) {
    const char* layout = tree ? "tree" : "flat";
    if (layouts != "both" && layouts != layout) continue;
    const std::string root = work + "/" + layout + "-" + std::to_string(names);
    if (!std::filesystem::exists(root + "/layout")) Fill(root, tree, names);
    auto store = kvfs::NewDirStore(root);
    if (!store.ok()) {
      std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
      return 1;
    }
    auto page = [&](const std::string& prefix, const std::string& token) {
      kvfs::ListRequest req;
      req.prefix = prefix;
      req.continuation_token = token;
      auto r = (*store)->List(req);
      if (!r.ok()) {
        std::fprintf(stderr, "%s\n", r.status().ToString().c_str());
        std::exit(1);
      }
      return *r;
    };
    // The token of the page that starts in the middle (the store's own token format).
    std::string middle;
    {
      char key[32];
      std::snprintf(key, sizeof(key), "p/chunk-%07d", names / 2);
      static constexpr char kHex[] = "0123456789abcdef";
      middle = "k";
      for (unsigned char c : std::string(key)) middle += {kHex[c >> 4], kHex[c & 15]};
    }
    std::vector<Sample> feed, first, mid;
    for (int r = 0; r < reps; ++r) {
      feed.push_back(Time([&] { return page("p/~kvfs-feed/", "").objects.size(); }, 8));
      first.push_back(
          Time([&] { return page("p/chunk-", "").objects.size(); }, std::min(names, 1000)));
      mid.push_back(Time([&] { return page("p/chunk-", middle).objects.size(); },
                         std::min(names - names / 2 - 1, 1000)));
    }
    Report(layout, "feed listing (8 entries)", feed, names);
    Report(layout, "first page of 1000 chunks", first, names);
    Report(layout, "a page of 1000 from the middle", mid, names);
  }
  return 0;
}
