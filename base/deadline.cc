#include "base/deadline.h"

#include <chrono>
#include <utility>

namespace kvfs {
namespace {

thread_local int64_t t_deadline_ms = 0;
thread_local std::string t_source;

}  // namespace

int64_t MonotonicMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t ThreadDeadlineMs() { return t_deadline_ms; }

const std::string& ThreadDeadlineSource() { return t_source; }

ScopedDeadline::ScopedDeadline(int64_t timeout_ms, std::string source, Mode mode)
    : saved_deadline_(t_deadline_ms), saved_source_(t_source) {
  if (mode == kReplace) {
    t_deadline_ms = 0;
    t_source.clear();
  }
  if (timeout_ms <= 0) return;
  const int64_t deadline = MonotonicMs() + timeout_ms;
  if (t_deadline_ms == 0 || deadline < t_deadline_ms) {
    t_deadline_ms = deadline;
    t_source = std::move(source);
  }
}

ScopedDeadline::~ScopedDeadline() {
  t_deadline_ms = saved_deadline_;
  t_source = std::move(saved_source_);
}

std::function<void()> KeepingDeadline(std::function<void()> run, std::function<void()> late) {
  return [deadline_ms = t_deadline_ms, source = t_source, run = std::move(run),
          late = std::move(late)] {
    if (deadline_ms == 0) return run();
    const int64_t left = deadline_ms - MonotonicMs();
    if (left <= 0) return late();
    const ScopedDeadline scope(left, source);
    run();
  };
}

}  // namespace kvfs
