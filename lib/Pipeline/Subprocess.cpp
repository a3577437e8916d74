#include "Pipeline/Subprocess.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <mutex>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "Pipeline/ChildEnvironment.h"

extern char **environ;

namespace tile::pipeline {

namespace {

constexpr int handled_signals[] = {SIGINT, SIGTERM, SIGHUP};

/// A child that runs now, as the signal handler sees it. `state`: 0 free, 1 being filled or
/// emptied, 2 running; the handler reads only running ones.
struct Running {
  std::atomic<int> state{0};
  pid_t group = 0;
  char dir[4096] = {};
};
Running running[32];

struct sigaction previous[NSIG];
std::atomic<bool> handler_installed[NSIG];
std::mutex install_mutex;

/// Removes what the directory open as `fd` holds, `depth` levels of subdirectories deep.
/// Only async-signal-safe calls (getdents64, unlinkat, openat), for the signal handler.
void remove_contents(int fd, int depth) {
  alignas(8) char buf[4096];
  // Listing while removing may skip entries: pass again until a pass removes nothing.
  for (int pass = 0; pass < 64; ++pass) {
    if (::lseek(fd, 0, SEEK_SET) < 0)
      return;
    bool removed = false;
    for (;;) {
      const ssize_t n = ::getdents64(fd, buf, sizeof buf);
      if (n <= 0)
        break;
      for (ssize_t off = 0; off < n;) {
        const auto *d = reinterpret_cast<const struct dirent64 *>(buf + off);
        off += d->d_reclen;
        const char *name = d->d_name;
        if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0)))
          continue;
        if (::unlinkat(fd, name, 0) == 0) {
          removed = true;
        } else if (depth > 0 && (errno == EISDIR || errno == EPERM)) {
          const int sub = ::openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub >= 0) {
            remove_contents(sub, depth - 1);
            ::close(sub);
          }
          removed |= ::unlinkat(fd, name, AT_REMOVEDIR) == 0;
        }
      }
    }
    if (!removed)
      return;
  }
}

/// Kills every running child's process group, waits for each child, removes its
/// directory, then hands the signal to the handler that was there before (or the default
/// action).
void on_signal(int sig) {
  const int saved_errno = errno;
  for (Running &r : running)
    if (r.state.load(std::memory_order_acquire) == 2)
      ::kill(-r.group, SIGKILL);
  for (Running &r : running) {
    if (r.state.load(std::memory_order_acquire) != 2)
      continue;
    ::waitpid(r.group, nullptr, 0); // the group's leader is our child
    if (r.dir[0]) {
      const int fd = ::open(r.dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd >= 0) {
        remove_contents(fd, 8);
        ::close(fd);
      }
      ::rmdir(r.dir);
    }
  }
  handler_installed[sig].store(false);
  ::sigaction(sig, &previous[sig], nullptr);
  errno = saved_errno;
  // Pending until this handler returns (the signal is blocked in it), then delivered to the
  // handler restored above.
  ::raise(sig);
}

/// Installs on_signal for the signals that end a build, in front of what handles them now;
/// an ignored signal (nohup) stays ignored.
void install_handlers() {
  std::lock_guard lock(install_mutex);
  for (int sig : handled_signals) {
    if (handler_installed[sig].load())
      continue;
    struct sigaction current;
    if (::sigaction(sig, nullptr, &current) != 0)
      continue;
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN)
      continue;
    struct sigaction mine;
    std::memset(&mine, 0, sizeof mine);
    mine.sa_handler = on_signal;
    sigemptyset(&mine.sa_mask);
    for (int s : handled_signals)
      sigaddset(&mine.sa_mask, s);
    previous[sig] = current;
    if (::sigaction(sig, &mine, nullptr) == 0)
      handler_installed[sig].store(true);
  }
}

Running *claim_slot(pid_t group, const std::string &dir) {
  for (Running &r : running) {
    int expected = 0;
    if (!r.state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel))
      continue;
    r.group = group;
    r.dir[0] = 0;
    if (dir.size() < sizeof r.dir)
      std::memcpy(r.dir, dir.c_str(), dir.size() + 1);
    r.state.store(2, std::memory_order_release);
    return &r;
  }
  return nullptr; // more children than slots: this one is not cleaned up on a signal
}

void release_slot(Running *r) {
  if (!r)
    return;
  r->state.store(1, std::memory_order_release);
  r->state.store(0, std::memory_order_release);
}

} // namespace

SubprocessResult run_subprocess(const SubprocessOptions &o) {
  SubprocessResult result;
  install_handlers();

  std::vector<std::string> arg_storage = {o.program};
  arg_storage.insert(arg_storage.end(), o.args.begin(), o.args.end());
  std::vector<char *> argv;
  for (auto &a : arg_storage)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  // Without a sanitizer runtime preloaded into clang (ChildEnvironment.h).
  std::vector<std::string> env_storage;
  for (std::string &e : device_compiler_environment(environ))
    if (o.temp_dir.empty() || e.compare(0, 7, "TMPDIR=") != 0)
      env_storage.push_back(std::move(e));
  if (!o.temp_dir.empty())
    env_storage.push_back("TMPDIR=" + o.temp_dir);
  std::vector<char *> envp;
  for (auto &e : env_storage)
    envp.push_back(e.data());
  envp.push_back(nullptr);

  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1,
                                   o.output_file.empty() ? "/dev/null" : o.output_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setpgroup(&attr, 0); // a group of its own, led by the child
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);

  // No signal handler runs between the start and the registration of the child.
  sigset_t block, old_mask;
  sigemptyset(&block);
  for (int s : handled_signals)
    sigaddset(&block, s);
  pthread_sigmask(SIG_BLOCK, &block, &old_mask);
  pid_t pid = 0;
  const int spawn_error =
      posix_spawn(&pid, o.program.c_str(), &files, &attr, argv.data(), envp.data());
  Running *slot = spawn_error == 0 ? claim_slot(pid, o.cleanup_dir) : nullptr;
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (spawn_error != 0) {
    result.error = std::strerror(spawn_error);
    return result;
  }
  result.started = true;

  // Wait for the child to exit without reaping it: while it is a zombie its process group
  // still exists, and whatever it left running in the group is killed below.
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::seconds(o.timeout_seconds);
  auto nap = std::chrono::microseconds(500);
  bool reaped_elsewhere = false;
  for (;;) {
    siginfo_t info;
    std::memset(&info, 0, sizeof info);
    if (::waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
      if (errno == EINTR)
        continue;
      reaped_elsewhere = true; // by the signal handler
      break;
    }
    if (info.si_pid == pid)
      break;
    if (o.timeout_seconds && clock::now() >= deadline) {
      result.timed_out = true;
      break;
    }
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(20000));
  }
  ::kill(-pid, SIGKILL);
  int status = 0;
  if (!reaped_elsewhere)
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  release_slot(slot);
  if (reaped_elsewhere)
    result.interrupted = true;
  else if (WIFEXITED(status))
    result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status) && !result.timed_out)
    result.signal = WTERMSIG(status);
  return result;
}

} // namespace tile::pipeline
