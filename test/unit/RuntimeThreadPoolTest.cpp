#include <algorithm>
#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <pthread.h>
#include <thread>
#include <vector>

#include "runtime/ThreadPool.h"

namespace tile::runtime {
namespace {

TEST(RuntimeThreadPool, RunsEveryIndexOnce) {
  ThreadPool pool(4);
  const int n = 10000;
  std::atomic<int> total{0};
  std::vector<std::atomic<int>> seen(n);
  pool.parallel_for(n, [&](std::int64_t i) {
    total.fetch_add(1, std::memory_order_relaxed);
    seen[i].fetch_add(1, std::memory_order_relaxed);
  });
  EXPECT_EQ(total.load(), n);
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](auto &s) { return s.load() == 1; }));
}

TEST(RuntimeThreadPool, RunsInParallel) {
  ThreadPool pool(4);
  ASSERT_GE(pool.parallelism(), 2);
  std::atomic<int> running{0}, most{0};
  pool.parallel_for(4, [&](std::int64_t) {
    int now = running.fetch_add(1) + 1;
    int seen = most.load();
    while (now > seen && !most.compare_exchange_weak(seen, now)) {
    }
    // Wait (bounded) for another index to run alongside this one.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (most.load() < 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::yield();
    running.fetch_sub(1);
  });
  EXPECT_GE(most.load(), 2);
}

TEST(RuntimeThreadPool, WorkersHaveLargeStacks) {
  ThreadPool pool(3);
  const pthread_t caller = pthread_self();
  std::atomic<std::size_t> smallest{SIZE_MAX};
  std::atomic<int> on_workers{0};
  pool.parallel_for(64, [&](std::int64_t) {
    // Slow every index down so that the workers take a share.
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (pthread_equal(pthread_self(), caller))
      return;
    pthread_attr_t attr;
    std::size_t size = 0;
    pthread_getattr_np(pthread_self(), &attr);
    pthread_attr_getstacksize(&attr, &size);
    pthread_attr_destroy(&attr);
    std::size_t s = smallest.load();
    while (size < s && !smallest.compare_exchange_weak(s, size)) {
    }
    on_workers.fetch_add(1);
  });
  ASSERT_GT(on_workers.load(), 0);
  EXPECT_GE(smallest.load(), ThreadPool::default_stack_bytes);
}

TEST(RuntimeThreadPool, ServesSeveralCallersAtOnce) {
  ThreadPool pool(3);
  std::atomic<long> sum{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int round = 0; round < 20; ++round)
        pool.parallel_for(100, [&](std::int64_t i) { sum.fetch_add(i + 1); });
    });
  for (auto &t : callers)
    t.join();
  EXPECT_EQ(sum.load(), 4L * 20 * 5050);
}

TEST(RuntimeThreadPool, SingleThreadRunsOnTheCaller) {
  ThreadPool pool(1);
  EXPECT_EQ(pool.parallelism(), 1);
  const pthread_t caller = pthread_self();
  int count = 0;
  pool.parallel_for(100, [&](std::int64_t) {
    EXPECT_TRUE(pthread_equal(pthread_self(), caller));
    ++count;
  });
  EXPECT_EQ(count, 100);
  pool.parallel_for(0, [&](std::int64_t) { ++count; });
  EXPECT_EQ(count, 100);
}

} // namespace
} // namespace tile::runtime
