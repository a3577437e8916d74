#include "runtime/ThreadPool.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <string>
#include <thread>

#include "tile/host.h"

namespace tile::runtime {

struct ThreadPool::Job {
  void (*fn)(void *, std::int64_t);
  void *body;
  std::int64_t count;
  std::atomic<std::int64_t> next{0};
  int workers = 0; // workers inside run_indices for this job; guarded by the pool's mutex
};

namespace {

int threads_from_env() {
  const char *env = std::getenv("TILE_NUM_THREADS");
  if (!env || !*env) { // set but empty counts as unset
    unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : int(std::min(n, 4096u));
  }
  std::string_view text = env;
  int n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n < 1 || n > 4096)
    throw tile::error("TILE_NUM_THREADS=" + std::string(text) +
                      ": expected a number of threads from 1 to 4096");
  return n;
}

} // namespace

ThreadPool::ThreadPool(int parallelism, std::size_t stack_bytes) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, stack_bytes);
  for (int i = 1; i < parallelism; ++i) {
    pthread_t thread;
    // A refused thread only costs parallelism: the calling thread always runs work.
    if (pthread_create(&thread, &attr, &ThreadPool::worker_main, this) != 0)
      break;
    workers_.push_back(thread);
  }
  pthread_attr_destroy(&attr);
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (pthread_t thread : workers_)
    pthread_join(thread, nullptr);
}

ThreadPool &ThreadPool::global() {
  // Leaked on purpose: idle workers block forever, and a launch from a static destructor
  // still finds the pool.
  static ThreadPool *pool = new ThreadPool(threads_from_env());
  return *pool;
}

void ThreadPool::run_indices(Job &job) {
  for (;;) {
    std::int64_t i = job.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= job.count)
      return;
    job.fn(job.body, i);
  }
}

void ThreadPool::run(std::int64_t count, void (*fn)(void *, std::int64_t), void *body) {
  if (count <= 0)
    return;
  if (count == 1 || workers_.empty()) {
    for (std::int64_t i = 0; i < count; ++i)
      fn(body, i);
    return;
  }
  Job job{fn, body, count};
  {
    std::lock_guard lock(mutex_);
    jobs_.push_back(&job);
  }
  work_ready_.notify_all();
  run_indices(job);
  // Every index is handed out. Unqueue the job so no other worker joins, then wait for the
  // workers still running one of its indices.
  std::unique_lock lock(mutex_);
  if (auto it = std::find(jobs_.begin(), jobs_.end(), &job); it != jobs_.end())
    jobs_.erase(it);
  job_left_.wait(lock, [&] { return job.workers == 0; });
}

void *ThreadPool::worker_main(void *pool) {
  static_cast<ThreadPool *>(pool)->work();
  return nullptr;
}

void ThreadPool::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty())
      return; // stopping
    Job *job = jobs_.front();
    if (job->next.load(std::memory_order_relaxed) >= job->count) {
      jobs_.pop_front(); // nothing left to hand out; its caller is finishing it
      continue;
    }
    ++job->workers;
    lock.unlock();
    run_indices(*job);
    lock.lock();
    if (--job->workers == 0)
      job_left_.notify_all();
  }
}

} // namespace tile::runtime
