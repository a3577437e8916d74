// The host API: devices, streams, owning arrays, errors.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tile/tensor.h"
#include "tile/types.h"

namespace tile {

/// Every failure of the runtime: the message names the kernel (where there is one), the
/// device and the cause.
class error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

enum class backend { cpu, cuda, hip };

struct device {
  tile::backend backend = tile::backend::cpu;
  int index = 0;
  /// "cpu", "cuda:0", ...
  std::string name() const;
  /// The architecture the runtime picks a kernel's image by: "sm_90", "sm_80", ... for
  /// CUDA (from the compute capability), "" for the CPU. Throws tile::error where the
  /// device is not available. For choosing tile shapes per architecture in host code.
  std::string architecture() const;
  /// What the device is, as its vendor names it: "NVIDIA H200", an AMD GPU's marketing
  /// name, the CPU's model name; "" where it cannot be told. Throws tile::error where the
  /// device is not available.
  std::string product() const;
  friend bool operator==(const device &, const device &) = default;
};

/// The device kernels launch on and arrays allocate on: TILE_DEVICE when set, else the
/// first GPU, else the CPU.
device current_device();
void set_device(tile::backend b, int index = 0);
void set_device(const device &d);

/// A stream of the current device: wraps a cudaStream_t / hipStream_t (null: the default
/// stream). On the CPU, work runs in order on the calling thread's stream.
class stream {
public:
  stream() = default;
  template <class P> explicit stream(P *native) : native_(static_cast<void *>(native)) {}
  /// A stream from a native handle given as an integer (PyTorch's
  /// `torch.cuda.current_stream().cuda_stream`, CuPy's `Stream.ptr`); 0: the default stream.
  static stream from_handle(std::uintptr_t handle) { return stream(reinterpret_cast<void *>(handle)); }
  void *native() const { return native_; }

private:
  void *native_ = nullptr;
};

/// Waits for all work launched on the current device.
void synchronize();

namespace rt {
void *allocate(const device &d, std::size_t bytes);
void deallocate(const device &d, void *p) noexcept;
/// Copies between host memory and memory of `d`.
void copy_to_device(const device &d, void *dst, const void *src, std::size_t bytes);
void copy_to_host(const device &d, void *dst, const void *src, std::size_t bytes);
} // namespace rt

/// An owning allocation on the device that was current when it was made.
template <class T, int Rank> class array {
public:
  explicit array(std::array<std::int64_t, Rank> sizes) : device_(current_device()), sizes_(sizes) {
    data_ = static_cast<T *>(rt::allocate(device_, checked_bytes(sizes_)));
  }
  array(const array &) = delete;
  array &operator=(const array &) = delete;
  array(array &&o) noexcept : device_(o.device_), data_(o.data_), sizes_(o.sizes_) { o.data_ = nullptr; }
  array &operator=(array &&o) noexcept {
    std::swap(device_, o.device_);
    std::swap(data_, o.data_);
    std::swap(sizes_, o.sizes_);
    return *this;
  }
  ~array() {
    if (data_)
      rt::deallocate(device_, data_);
  }

  T *data() const { return data_; }
  std::int64_t size(int d) const { return sizes_[d]; }
  const std::array<std::int64_t, Rank> &sizes() const { return sizes_; }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto s : sizes_)
      n *= s;
    return n;
  }
  const tile::device &device() const { return device_; }

  /// Copies numel() elements from host memory.
  void copy_from(std::span<const T> host) {
    if (std::int64_t(host.size()) != numel())
      throw error("tile::array::copy_from: " + std::to_string(host.size()) +
                  " elements given, the array holds " + std::to_string(numel()));
    rt::copy_to_device(device_, data_, host.data(), bytes());
  }
  /// Waits for work on the array's device, then copies it to the host.
  std::vector<T> to_vector() const {
    if constexpr (std::is_same_v<T, bool>) {
      // std::vector<bool> packs its bits: copy through a plain buffer.
      std::vector<unsigned char> bytes_copy(static_cast<std::size_t>(numel()));
      rt::copy_to_host(device_, bytes_copy.data(), data_, bytes());
      return std::vector<bool>(bytes_copy.begin(), bytes_copy.end());
    } else {
      std::vector<T> v(static_cast<std::size_t>(numel()));
      rt::copy_to_host(device_, v.data(), data_, bytes());
      return v;
    }
  }

  operator tensor<T, Rank>() const { return tensor<T, Rank>(data_, sizes_); }
  operator tensor<const T, Rank>() const { return tensor<const T, Rank>(data_, sizes_); }

private:
  /// The bytes of an array of `sizes`; throws tile::error, naming the sizes, for a negative
  /// size and for a count of elements or bytes past 64 bits (which would otherwise wrap
  /// around to a small allocation that kernels then write past).
  static std::size_t checked_bytes(const std::array<std::int64_t, Rank> &sizes) {
    auto fail = [&](const std::string &why) {
      std::string t = "tile::array of sizes (";
      for (int d = 0; d < Rank; ++d)
        t += (d ? ", " : "") + std::to_string(sizes[d]);
      throw error(t + "): " + why);
    };
    for (auto s : sizes)
      if (s < 0)
        fail("negative size");
    // In order, as numel() multiplies: then numel() of every array is exact.
    std::int64_t n = 1, bytes = 0;
    for (auto s : sizes)
      if (__builtin_mul_overflow(n, s, &n))
        fail("the number of elements overflows 64 bits");
    if (__builtin_mul_overflow(n, std::int64_t(sizeof(T)), &bytes))
      fail(std::to_string(n) + " elements of " + std::to_string(sizeof(T)) + " bytes overflow 64 bits");
    return std::size_t(bytes);
  }

  std::size_t bytes() const { return std::size_t(numel()) * sizeof(T); }
  tile::device device_;
  T *data_ = nullptr;
  std::array<std::int64_t, Rank> sizes_;
};

} // namespace tile
