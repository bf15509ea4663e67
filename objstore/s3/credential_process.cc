#include "objstore/s3/credential_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "objstore/s3/credential_fetch.h"
#include "objstore/s3/json_object.h"

namespace kvfs::s3 {
namespace {

// Runs `command` through the shell, as the AWS CLI does (the setting is a command line), in a
// process group of its own, and returns what it prints. Past `timeout_ms` the whole group is
// killed: a command that never answers (a prompt nobody sees, a hung helper it started) would
// otherwise hang the mount, whose first fetch waits for it. The command line itself is never
// put into messages: it may carry a token or a password.
Result<std::string> RunCredentialProcess(const std::string& command, const std::string& what,
                                         int timeout_ms) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status::FromErrno(errno, what + ": pipe");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);  // dup2 clears CLOEXEC
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group: a timeout kills what it started too
  const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
  pid_t pid = -1;
  // posix_spawn, not fork: the daemon has threads, and the child must not touch their locks.
  const int err =
      posix_spawn(&pid, "/bin/sh", &actions, &attr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    return Status::FromErrno(err, what + ": cannot start /bin/sh");
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  auto left_ms = [&deadline] {
    auto d = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<int64_t>(0, d.count()));
  };
  std::string out;
  bool timed_out = false;
  for (;;) {  // until end of file: every process holding the pipe is done with it
    pollfd p{fds[0], POLLIN, 0};
    const int n = poll(&p, 1, left_ms());
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) {
      timed_out = true;
      break;
    }
    char buf[4096];
    const ssize_t got = n > 0 ? read(fds[0], buf, sizeof(buf)) : -1;
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    if (out.size() < (1u << 20)) out.append(buf, static_cast<size_t>(got));  // a bounded answer
  }
  close(fds[0]);
  int st = 0;
  while (!timed_out) {  // it closed its output; it still has to exit in time
    const pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return Status::FromErrno(errno, what + ": waitpid");
    if (left_ms() == 0) {
      timed_out = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (timed_out) {
    kill(-pid, SIGKILL);  // the group: the shell and whatever it started
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return Status::Unavailable(what + " did not answer within " +
                               std::to_string(timeout_ms / 1000) +
                               " s (credential_process_timeout_secs); it was killed");
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    return Status::PermissionDenied(what + " failed (" +
                                    (WIFEXITED(st)
                                         ? "exit status " + std::to_string(WEXITSTATUS(st))
                                         : "killed by signal " + std::to_string(WTERMSIG(st))) +
                                    ")");
  }
  return out;
}

}  // namespace

CredentialFetch ProcessFetch(const std::string& command, const std::string& what, int timeout_ms) {
  return [command, what, timeout_ms]() -> Result<TemporaryCredentials> {
    KVFS_ASSIGN_OR_RETURN(std::string out, RunCredentialProcess(command, what, timeout_ms));
    const std::optional<JsonObject> j = JsonObject::Parse(out);
    if (!j || j->Integer("Version") != 1) {
      return Status::Internal(what + ": the output is not a JSON object with \"Version\": 1");
    }
    auto str = [&](const char* k) { return j->String(k); };
    TemporaryCredentials t;
    t.creds = {str("AccessKeyId"), str("SecretAccessKey"), str("SessionToken"), what};
    if (t.creds.access_key_id.empty() || t.creds.secret_access_key.empty()) {
      return Status::Internal(what + ": the output lacks AccessKeyId or SecretAccessKey");
    }
    if (!str("Expiration").empty()) {
      KVFS_ASSIGN_OR_RETURN(t.expiration, ParseExpiration(str("Expiration"), what));
    }
    return t;
  };
}

}  // namespace kvfs::s3
