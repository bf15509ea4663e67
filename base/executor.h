// Executor: the one way kvfs runs work on other threads (leveldb's Env::Schedule is the model):
// a fixed set of threads of its own and a FIFO queue of tasks. A class that needs work done off
// its caller's thread owns an Executor and schedules closures on it; it never writes its own
// thread, queue and condition variable.
//
// At Shutdown() (or destruction) the executor either runs what is still queued (kRunQueued: the
// tasks are work somebody waits for) or drops it (kDropQueued: the tasks are advice that lose
// their point when the owner goes away), then joins its threads. A task that must stop early at
// shutdown (a deadline for all that is left) reads its owner's state: the executor has no clock.
//
// Not executors, and why: loops that wait on something other than a task - HttpEngine (libcurl's
// poll), FleetFeed, TierAgent and RefreshingCredentialProvider (a timer, woken early by their own
// conditions), SignalUnmount (signals) - own one thread each.
//
// Thread-safe. Tasks run without any lock of the executor held; a task may Schedule more.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/thread_annotations.h"

namespace kvfs {

class Executor {
 public:
  enum AtShutdown { kRunQueued, kDropQueued };

  // threads < 1 is taken as 1.
  explicit Executor(int threads, AtShutdown at_shutdown = kRunQueued);
  ~Executor() EXCLUDES(mu_);  // Shutdown()
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Queues `task`; returns at once. False (the task is not queued) once Shutdown() has begun.
  bool Schedule(std::function<void()> task) EXCLUDES(mu_);

  // Runs or drops what is queued (AtShutdown), waits for running tasks and joins the threads.
  // Idempotent; not to be called from one of its own tasks.
  void Shutdown() EXCLUDES(mu_);

  size_t queued() const EXCLUDES(mu_);  // tasks not yet started

 private:
  void Run() EXCLUDES(mu_);

  const AtShutdown at_shutdown_;
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<std::function<void()>> tasks_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  Mutex join_mu_;                                          // one Shutdown joins; others wait for it
  std::vector<std::thread> threads_ GUARDED_BY(join_mu_);  // last: they start once all is built
};

}  // namespace kvfs
