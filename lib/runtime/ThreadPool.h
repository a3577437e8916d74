// The CPU backend's thread pool: runs the blocks of a launch on every core.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <pthread.h>
#include <type_traits>
#include <vector>

namespace tile::runtime {

class ThreadPool {
public:
  /// Worker stacks are large because generated code keeps tile buffers on the stack.
  static constexpr std::size_t default_stack_bytes = std::size_t(64) << 20;

  /// `parallelism` counts the calling thread: the pool starts parallelism - 1 workers (fewer
  /// if the system refuses to create more threads).
  explicit ThreadPool(int parallelism, std::size_t stack_bytes = default_stack_bytes);
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;
  ~ThreadPool();

  /// The process's pool, made on first use with TILE_NUM_THREADS threads (default: the
  /// hardware's concurrency). Never destroyed, so launches from static destructors work.
  /// Throws tile::error when TILE_NUM_THREADS is malformed.
  static ThreadPool &global();

  /// Threads that run work: the workers plus the calling thread.
  int parallelism() const { return int(workers_.size()) + 1; }

  /// Calls body(i) for each i in [0, count), handing indices out one at a time to the workers
  /// and the calling thread; returns when every call has returned. `body` must not throw.
  /// Several threads may call this at once: their jobs share the workers.
  template <class F> void parallel_for(std::int64_t count, F &&body) {
    using Body = std::remove_reference_t<F>;
    run(
        count, [](void *b, std::int64_t i) { (*static_cast<Body *>(b))(i); },
        const_cast<void *>(static_cast<const void *>(&body)));
  }

private:
  struct Job;
  void run(std::int64_t count, void (*fn)(void *, std::int64_t), void *body);
  static void run_indices(Job &job);
  static void *worker_main(void *pool);
  void work();

  std::mutex mutex_;
  std::condition_variable work_ready_; // a job was queued, or the pool stops
  std::condition_variable job_left_;   // a worker let go of a job
  std::deque<Job *> jobs_;             // jobs that may still have indices to hand out
  bool stopping_ = false;
  std::vector<pthread_t> workers_;
};

} // namespace tile::runtime
