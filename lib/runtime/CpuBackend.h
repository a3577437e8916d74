// The CPU backend: host memory, images that are shared objects loaded from memory, and
// launches that spread blocks over the runtime's thread pool.
#pragma once

#include "runtime/Backend.h"

namespace tile::runtime {

class ThreadPool;

class CpuBackend final : public Backend {
public:
  /// Launches run on `pool`; null: ThreadPool::global(), made on the first launch.
  explicit CpuBackend(ThreadPool *pool = nullptr) : pool_(pool) {}

  tile::device device() const override { return tile::device{tile::backend::cpu, 0}; }
  const char *target() const override { return "cpu"; }
  /// The "model name" of /proc/cpuinfo.
  std::string product() const override;

  /// 64-byte aligned; zero bytes give a unique non-null pointer.
  void *allocate(std::size_t bytes) override;
  void deallocate(void *p) noexcept override;
  void copy_to_device(void *dst, const void *src, std::size_t bytes) override;
  void copy_to_host(void *dst, const void *src, std::size_t bytes) override;

  /// Writes the ELF image to a memfd and dlopens it through /proc/self/fd.
  ModuleHandle load_module(const void *image, std::size_t size) override;
  FunctionHandle find_function(ModuleHandle module, const std::string &symbol) override;
  /// Synchronous: returns when every block has run. A block's ctx->fail becomes a
  /// tile::error thrown here.
  void launch(FunctionHandle fn, const LaunchConfig &config, const rt::kernel_arg *args,
              int nargs) override;
  /// Launches are synchronous, so there is nothing to wait for.
  void synchronize() override {}

private:
  ThreadPool *pool_;
};

/// The process's CPU backend.
CpuBackend &cpu_backend();

} // namespace tile::runtime
