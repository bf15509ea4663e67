// raw_s3: the raw object-store limit for the KV-chunk workload - the same chunk names and bytes
// as bench/kvbench.py, moved by a native client with no filesystem in between:
//   write      one whole-object PUT per chunk, `threads` chunks at a time
//   ttfb       a 1-byte ranged GET of a chunk not read before
//   read_cold  each chunk as ranged GETs of --part-mib, all in flight, `threads` chunks at a time,
//              verified against the expected bytes after the timed phase
//   lookup_positive / lookup_negative   HEAD of existing / missing keys, `threads` at a time
// Prints JSON lines in kvbench.py's format. Credentials: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY.
//
// usage: raw_s3 --endpoint URL --bucket B [--region R] [--sizes 8,32,64] [--chunks 4]
//          [--ttfb-chunks 2] [--threads 1,4] [--part-mib 8] [--lookup-seconds 2] [--tag r0]
//          [--system raw-s3] [--rep 0] [--client auto|kvfs|curl] [--out FILE]
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/raw/content.h"
#include "bench/raw/json_line.h"
#include "bench/raw/raw_client.h"

namespace kvbench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr uint64_t kMiB = 1 << 20;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::vector<int> IntList(const std::string& s) {
  std::vector<int> out;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string::npos) comma = s.size();
    out.push_back(std::atoi(s.substr(pos, comma - pos).c_str()));
    pos = comma + 1;
  }
  return out;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  long k = std::lround(p / 100.0 * v.size() + 0.5) - 1;
  return v[std::clamp<long>(k, 0, static_cast<long>(v.size()) - 1)];
}

struct Args {
  RawConfig cfg;
  std::vector<int> sizes{8, 32, 64};
  std::vector<int> threads{1, 4};
  int chunks = 4;
  int ttfb_chunks = 2;
  int part_mib = 8;
  double lookup_seconds = 2;
  std::string tag = "r0", system = "raw-s3", client = "auto", out;
  int rep = 0;
};

// Runs fn(i) for i in [0, n) on `threads` workers, each with its own client. Returns the wall
// time; failures are counted in *errors and the first message kept in *note.
template <typename Fn>
double RunParallel(int n, int threads, const RawClientFactory& factory, Fn fn, int* errors,
                   std::string* note) {
  std::atomic<int> next{0}, errs{0};
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int t = 0; t < threads; ++t) clients.push_back(factory());
  std::string first_error;
  std::atomic_flag have_error = ATOMIC_FLAG_INIT;
  auto t0 = Clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&, t] {
      for (int i; (i = next++) < n;) {
        kvfs::Status st = fn(*clients[t], i);
        if (!st.ok()) {
          ++errs;
          if (!have_error.test_and_set()) first_error = st.ToString();
        }
      }
    });
  }
  for (auto& th : ts) th.join();
  double wall = Since(t0);
  *errors = errs;
  *note = first_error;
  return wall;
}

class RawBench {
 public:
  RawBench(Args a, RawClientFactory factory, std::string client_name, FILE* out)
      : a_(std::move(a)),
        factory_(std::move(factory)),
        client_(std::move(client_name)),
        out_(out) {}

  void Run() {
    JsonLine info = Base("info");
    info.Str("client", client_)
        .Str("bucket", a_.cfg.bucket)
        .Str("tag", a_.tag)
        .Num("part_mib", a_.part_mib);
    Emit(info);
    for (int threads : a_.threads) {
      for (int size : a_.sizes) {
        Content c(static_cast<uint64_t>(size) * kMiB);
        std::vector<std::string> names, ttfb;
        for (int i = 0; i < a_.chunks; ++i)
          names.push_back(ChunkName(a_.tag, 'b', size, threads, i));
        for (int i = 0; i < a_.ttfb_chunks; ++i) {
          ttfb.push_back(ChunkName(a_.tag, 't', size, threads, i));
        }
        Write(c, size, threads, names);
        PutUntimed(c, ttfb);
        Ttfb(size, threads, ttfb);
        ReadCold(c, size, threads, names);
        all_names_.insert(all_names_.end(), names.begin(), names.end());
      }
      Lookups(threads);
      all_names_.clear();
    }
  }

 private:
  JsonLine Base(const char* phase) {
    JsonLine j;
    j.Str("system", a_.system).Num("rep", a_.rep).Str("phase", phase);
    return j;
  }
  void Emit(const JsonLine& j) {
    std::fprintf(out_, "%s\n", j.Done().c_str());
    std::fflush(out_);
  }

  // CPU seconds this process has used (all threads): the client's cost, to compare with a
  // filesystem's daemon + reader (kvbench.py's cpu_ms_per_mib).
  static double CpuSeconds() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
    return sec(ru.ru_utime) + sec(ru.ru_stime);
  }
  static double CpuMsPerMib(double cpu0, double mib) {
    return mib > 0 ? (CpuSeconds() - cpu0) * 1e3 / mib : 0;
  }

  void Write(const Content& c, int size, int threads, const std::vector<std::string>& names) {
    std::vector<double> lat(names.size());
    int errors = 0;
    std::string note;
    const double cpu0 = CpuSeconds();
    double wall = RunParallel(
        static_cast<int>(names.size()), threads, factory_,
        [&](RawClient& cl, int i) {
          auto t0 = Clock::now();
          kvfs::Status st = cl.Put(names[i], c.Chunk(names[i]), c.size());
          lat[i] = Since(t0);
          return st;
        },
        &errors, &note);
    int ok = static_cast<int>(names.size()) - errors;
    const double cpu_ms = CpuMsPerMib(cpu0, static_cast<double>(ok) * size);
    JsonLine j = Base("write");
    j.Num("size_mib", size)
        .Num("threads", threads)
        .Num("chunks", names.size())
        .Num("bytes", ok * c.size())
        .Num("seconds", wall)
        .Num("mib_s", ok * size / wall)
        .Num("put_p50_ms", Percentile(lat, 50) * 1e3)
        .Num("put_p99_ms", Percentile(lat, 99) * 1e3)
        .Num("cpu_ms_per_mib", cpu_ms)
        .Num("errors", errors);
    if (!note.empty()) j.Str("note", note);
    Emit(j);
  }

  void PutUntimed(const Content& c, const std::vector<std::string>& names) {
    auto cl = factory_();
    for (const auto& n : names) {
      kvfs::Status st = cl->Put(n, c.Chunk(n), c.size());
      if (!st.ok()) std::fprintf(stderr, "raw_s3: %s\n", st.ToString().c_str());
    }
  }

  void Ttfb(int size, int threads, const std::vector<std::string>& names) {
    auto cl = factory_();
    std::vector<double> lat;
    int errors = 0;
    char byte;
    for (const auto& n : names) {
      auto t0 = Clock::now();
      kvfs::Status st = cl->Get(n, &byte, 1, 1);
      if (st.ok())
        lat.push_back(Since(t0));
      else
        ++errors;
    }
    JsonLine j = Base("ttfb");
    j.Num("size_mib", size)
        .Num("threads", threads)
        .Num("chunks", lat.size())
        .Num("ttfb_p50_ms", Percentile(lat, 50) * 1e3)
        .Num("ttfb_max_ms", lat.empty() ? 0 : *std::max_element(lat.begin(), lat.end()) * 1e3)
        .Num("errors", errors);
    Emit(j);
  }

  void ReadCold(const Content& c, int size, int threads, const std::vector<std::string>& names) {
    // One pre-faulted destination per chunk, so verification happens after the timed phase.
    std::vector<std::unique_ptr<char[]>> bufs;
    for (size_t i = 0; i < names.size(); ++i) {
      bufs.emplace_back(new char[c.size()]);
      std::memset(bufs.back().get(), 0, c.size());
    }
    std::vector<bool> ok(names.size());
    std::vector<double> lat(names.size());
    int errors = 0;
    std::string note;
    uint64_t part = static_cast<uint64_t>(a_.part_mib) * kMiB;
    const double cpu0 = CpuSeconds();
    double wall = RunParallel(
        static_cast<int>(names.size()), threads, factory_,
        [&](RawClient& cl, int i) {
          auto t0 = Clock::now();
          kvfs::Status st = cl.Get(names[i], bufs[i].get(), c.size(), part);
          lat[i] = Since(t0);  // first request to last byte: one load
          ok[i] = st.ok();
          return st;
        },
        &errors, &note);
    const double cpu1 = CpuSeconds();  // before the verification below, which is not the client's
    int verify_errors = 0, good = 0;
    for (size_t i = 0; i < names.size(); ++i) {
      if (!ok[i]) continue;
      if (std::memcmp(bufs[i].get(), c.Chunk(names[i]), c.size()) != 0)
        ++verify_errors;
      else
        ++good;
    }
    JsonLine j = Base("read_cold");
    j.Num("size_mib", size)
        .Num("threads", threads)
        .Num("chunks", names.size())
        .Num("bytes", good * c.size())
        .Num("seconds", wall)
        .Num("mib_s", good * size / wall)
        .Num("load_p50_ms", Percentile(lat, 50) * 1e3)
        .Num("load_p99_ms", Percentile(lat, 99) * 1e3)
        .Num("cpu_ms_per_mib",
             good > 0 ? (cpu1 - cpu0) * 1e3 / (static_cast<double>(good) * size) : 0)
        .Num("errors", errors)
        .Num("verify_errors", verify_errors);
    if (!note.empty()) j.Str("note", note);
    Emit(j);
  }

  void Lookups(int threads) {
    if (all_names_.empty()) return;
    for (bool positive : {true, false}) {
      std::atomic<long> ops{0}, wrong{0};
      std::vector<std::thread> ts;
      auto t0 = Clock::now();
      auto deadline = t0 + std::chrono::duration<double>(a_.lookup_seconds);
      for (int t = 0; t < threads; ++t) {
        ts.emplace_back([&, t] {
          auto cl = factory_();
          for (long i = 0; Clock::now() < deadline; ++i) {
            std::string key = positive ? all_names_[(t + i * threads) % all_names_.size()]
                                       : ChunkName(a_.tag + "-missing", 'n', t, threads, i);
            auto r = cl->Exists(key);
            if (!r.ok() || *r != positive) ++wrong;
            ++ops;
          }
        });
      }
      for (auto& th : ts) th.join();
      double wall = Since(t0);
      JsonLine j = Base(positive ? "lookup_positive" : "lookup_negative");
      j.Num("threads", threads)
          .Num("ops", ops.load())
          .Num("seconds", wall)
          .Num("ops_s", ops / wall)
          .Num("errors", wrong.load());
      Emit(j);
    }
  }

  Args a_;
  RawClientFactory factory_;
  std::string client_;
  FILE* out_;
  std::vector<std::string> all_names_;
};

int Main(int argc, char** argv) {
  Args a;
  std::map<std::string, std::string> kv;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strncmp(argv[i], "--", 2) != 0) {
      std::fprintf(stderr, "raw_s3: unexpected argument '%s' (options are --name value)\n",
                   argv[i]);
      return 2;
    }
    kv[argv[i] + 2] = argv[i + 1];
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "raw_s3: option '%s' has no value\n", argv[argc - 1]);
    return 2;
  }
  auto get = [&](const char* k, const std::string& def) {
    auto it = kv.find(k);
    std::string v = it == kv.end() ? def : it->second;
    kv.erase(k);
    return v;
  };
  a.cfg.endpoint = get("endpoint", "");
  a.cfg.bucket = get("bucket", "");
  a.cfg.region = get("region", "us-east-1");
  a.sizes = IntList(get("sizes", "8,32,64"));
  a.threads = IntList(get("threads", "1,4"));
  a.chunks = std::atoi(get("chunks", "4").c_str());
  a.ttfb_chunks = std::atoi(get("ttfb-chunks", "2").c_str());
  a.part_mib = std::max(1, std::atoi(get("part-mib", "8").c_str()));
  a.lookup_seconds = std::atof(get("lookup-seconds", "2").c_str());
  a.tag = get("tag", "r0");
  a.system = get("system", "raw-s3");
  a.rep = std::atoi(get("rep", "0").c_str());
  a.client = get("client", "auto");
  a.out = get("out", "");
  if (!kv.empty()) {
    std::fprintf(stderr, "raw_s3: unknown option --%s\n", kv.begin()->first.c_str());
    return 2;
  }
  const char* ak = std::getenv("AWS_ACCESS_KEY_ID");
  const char* sk = std::getenv("AWS_SECRET_ACCESS_KEY");
  if (a.cfg.endpoint.empty() || a.cfg.bucket.empty() || !ak || !sk) {
    std::fprintf(stderr,
                 "raw_s3: needs --endpoint, --bucket and AWS_ACCESS_KEY_ID / "
                 "AWS_SECRET_ACCESS_KEY in the environment\n");
    return 2;
  }
  a.cfg.access_key = ak;
  a.cfg.secret_key = sk;

  RawClientFactory factory;
  std::string client_name;
  if (a.client != "curl") {
    auto f = StoreClientFactory(a.cfg);
    if (f.ok()) {
      factory = std::move(f).value();
      client_name = "kvfs-s3";
    } else if (a.client == "kvfs") {
      std::fprintf(stderr, "raw_s3: kvfs S3 store: %s\n", f.status().ToString().c_str());
      return 1;
    } else {
      std::fprintf(stderr, "raw_s3: kvfs S3 store not usable (%s); using libcurl\n",
                   f.status().ToString().c_str());
    }
  }
  if (!factory) {
    factory = CurlClientFactory(a.cfg);
    client_name = "libcurl";
  }
  FILE* out = a.out.empty() ? stdout : std::fopen(a.out.c_str(), "a");
  if (!out) {
    std::perror(a.out.c_str());
    return 1;
  }
  RawBench(a, std::move(factory), client_name, out).Run();
  if (out != stdout) std::fclose(out);
  return 0;
}

}  // namespace
}  // namespace kvbench

int main(int argc, char** argv) { return kvbench::Main(argc, argv); }
