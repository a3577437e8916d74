// DLPack interchange: tile::tensor views of DLPack tensors (PyTorch, CuPy, JAX, NumPy, ...)
// and tile memory exported as DLPack tensors. Include it explicitly (tile/tile.h does not):
//
//   #include <tile/tile.h>
//   #include <tile/dlpack.h>      // needs <dlpack/dlpack.h> (Debian: libdlpack-dev)
//
//   auto A = tile::from_dlpack<const float, 2>(managed, "a");   // a view, no copy
//   DLManagedTensor *out = tile::to_dlpack(std::move(array));   // ownership moves out
//
// Header-only: the runtime has no DLPack dependency. Written against DLPack 0.6 (the
// version Debian ships); later headers work too. See docs/host.md, "DLPack".
#pragma once

#include <dlpack/dlpack.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

#include "tile/host.h"
#include "tile/tensor.h"
#include "tile/types.h"

namespace tile {

namespace detail {

/// DLPack 0.8's kDLBool, which the 0.6 header does not name.
inline constexpr std::uint8_t dlpack_bool_code = 6;

template <class T> inline constexpr bool dependent_false_v = false;

} // namespace detail

/// The DLPack type of a tile element type (const ignored): float32 {kDLFloat, 32, 1},
/// bfloat16 {kDLBfloat, 16, 1}, bool {6 (DLPack 0.8's kDLBool), 8, 1}, ... 8-bit floats
/// have no DLPack 0.6 code: a compile error.
template <class T> constexpr DLDataType dlpack_dtype() {
  using U = std::remove_cv_t<T>;
  constexpr dtype d = detail::dtype_of<U>::value;
  if constexpr (d == dtype::f8e4m3 || d == dtype::f8e5m2)
    static_assert(detail::dependent_false_v<T>, "tile::f8e4m3 and tile::f8e5m2 have no DLPack type code (DLPack 0.6 "
                                        "has none for 8-bit floats): view such memory as uint8_t");
  DLDataType t{};
  t.lanes = 1;
  t.bits = std::uint8_t(8 * sizeof(U));
  switch (d) {
  case dtype::f32:
  case dtype::f64:
  case dtype::f16:
    t.code = kDLFloat;
    break;
  case dtype::bf16:
    t.code = kDLBfloat;
    break;
  case dtype::i8:
  case dtype::i16:
  case dtype::i32:
  case dtype::i64:
    t.code = kDLInt;
    break;
  case dtype::u8:
  case dtype::u16:
  case dtype::u32:
  case dtype::u64:
    t.code = kDLUInt;
    break;
  case dtype::b1:
    t.code = detail::dlpack_bool_code;
    t.bits = 8;
    break;
  default:
    break;
  }
  return t;
}

/// "float32", "bfloat16", "int64", "uint8", "bool", ... (PyTorch's and NumPy's names);
/// lanes other than 1 as "float32x4".
inline std::string dlpack_dtype_name(DLDataType t) {
  std::string s;
  switch (t.code) {
  case kDLInt:
    s = "int";
    break;
  case kDLUInt:
    s = "uint";
    break;
  case kDLFloat:
    s = "float";
    break;
  case kDLBfloat:
    s = "bfloat";
    break;
  case kDLComplex:
    s = "complex";
    break;
  case kDLOpaqueHandle:
    s = "opaque";
    break;
  case detail::dlpack_bool_code:
    s = "bool";
    break;
  default:
    s = "(type code " + std::to_string(unsigned(t.code)) + ")";
  }
  if (t.code != detail::dlpack_bool_code || t.bits != 8)
    s += std::to_string(unsigned(t.bits));
  if (t.lanes != 1)
    s += "x" + std::to_string(unsigned(t.lanes));
  return s;
}

namespace detail {

/// "kDLCPU", "kDLCUDA:1", ...
inline std::string dlpack_device_name(DLDevice d) {
  std::string s;
  switch (int(d.device_type)) {
  case kDLCPU:
    s = "kDLCPU";
    break;
  case kDLCUDA:
    s = "kDLCUDA";
    break;
  case kDLCUDAHost:
    s = "kDLCUDAHost";
    break;
  case kDLCUDAManaged:
    s = "kDLCUDAManaged";
    break;
  case kDLROCM:
    s = "kDLROCM";
    break;
  case kDLROCMHost:
    s = "kDLROCMHost";
    break;
  case kDLOpenCL:
    s = "kDLOpenCL";
    break;
  case kDLVulkan:
    s = "kDLVulkan";
    break;
  case kDLMetal:
    s = "kDLMetal";
    break;
  default:
    s = "DLPack device type " + std::to_string(int(d.device_type));
  }
  return s + ":" + std::to_string(d.device_id);
}

inline std::string dlpack_hex(std::uintptr_t v) {
  std::string s;
  do {
    s.insert(s.begin(), "0123456789abcdef"[v % 16]);
    v /= 16;
  } while (v);
  return "0x" + s;
}

[[noreturn]] inline void dlpack_fail(const char *name, const std::string &what) {
  throw error(std::string("tile::from_dlpack: ") + (name ? name : "tensor") + ": " + what);
}

/// The DLPack tensor that `to_dlpack` hands out (its manager_ctx): the managed tensor, the
/// shape and strides it points to, and what it keeps alive.
template <class Owned, int Rank> struct dlpack_export {
  DLManagedTensor managed{};
  std::int64_t shape[Rank]{};
  std::int64_t strides[Rank]{};
  Owned owned;
  explicit dlpack_export(Owned o) : owned(std::move(o)) {}
  static void deleter(DLManagedTensor *self) noexcept {
    delete static_cast<dlpack_export *>(self->manager_ctx);
  }
};
struct dlpack_nothing {};

template <class Owned, class T, std::size_t Rank>
DLManagedTensor *make_dlpack(Owned owned, T *data, const std::array<std::int64_t, Rank> &sizes,
                             const std::array<std::int64_t, Rank> &strides, DLDevice dev) {
  using E = dlpack_export<Owned, int(Rank)>;
  E *e = new E(std::move(owned));
  for (std::size_t d = 0; d < Rank; ++d) {
    e->shape[d] = sizes[d];
    e->strides[d] = strides[d];
  }
  DLTensor &t = e->managed.dl_tensor;
  t.data = const_cast<void *>(static_cast<const void *>(data));
  t.device = dev;
  t.ndim = int(Rank);
  t.dtype = dlpack_dtype<T>();
  t.shape = e->shape;
  t.strides = e->strides;
  t.byte_offset = 0;
  e->managed.manager_ctx = e;
  e->managed.deleter = &E::deleter;
  return &e->managed;
}

} // namespace detail

/// The DLPack device of a tile device: kDLCPU (device_id 0), kDLCUDA or kDLROCM with the
/// device's index.
inline DLDevice to_dlpack_device(const device &d) {
  DLDevice r{};
  switch (d.backend) {
  case backend::cpu:
    r.device_type = kDLCPU;
    r.device_id = 0;
    break;
  case backend::cuda:
    r.device_type = kDLCUDA;
    r.device_id = d.index;
    break;
  case backend::hip:
    r.device_type = kDLROCM;
    r.device_id = d.index;
    break;
  }
  return r;
}

/// The tile device whose kernels can run on memory of the DLPack device `d`: the CPU for
/// kDLCPU, kDLCUDAHost and kDLROCMHost (host memory), cuda:N for kDLCUDA and
/// kDLCUDAManaged, hip:N for kDLROCM. Others throw tile::error naming `name`. For host
/// code that chooses the device from its arguments: `tile::set_device(tile::device_of(t))`.
inline device device_of(DLDevice d, const char *name = "tensor") {
  switch (int(d.device_type)) {
  case kDLCPU:
  case kDLCUDAHost:
  case kDLROCMHost:
    return device{backend::cpu, 0};
  case kDLCUDA:
  case kDLCUDAManaged:
    return device{backend::cuda, d.device_id};
  case kDLROCM:
    return device{backend::hip, d.device_id};
  default:
    detail::dlpack_fail(name, "memory of " + detail::dlpack_device_name(d) +
                                  ", which no tile backend reaches (tile takes kDLCPU, kDLCUDAHost, "
                                  "kDLROCMHost, kDLCUDA, kDLCUDAManaged and kDLROCM)");
  }
}
inline device device_of(const DLTensor &t, const char *name = "tensor") { return device_of(t.device, name); }

/// A view of the DLPack tensor `t` as a tile::tensor<T, Rank>, for kernels on the current
/// device. Nothing is copied and nothing is owned: `t`'s memory must outlive the view's
/// use (for a DLManagedTensor, until its deleter is called). Throws tile::error, whose
/// message names `name` and says what was expected and what was given, where
///  - the memory is not the current device's (kDLCPU, kDLCUDAHost or kDLROCMHost for the
///    CPU; kDLCUDA or kDLCUDAManaged with device_id N for cuda:N; kDLROCM for hip:N),
///  - the element type is not T's (code, bits and lanes: float32, bfloat16, int64, ...),
///  - ndim is not Rank, a size is negative,
///  - data + byte_offset is not aligned to T, or is null while the tensor has elements,
///  - T is not const and a dimension of more than one element has stride 0 (a broadcast:
///    the kernel's writes would race).
/// Null strides mean row-major (compact); strides are in elements, as DLPack defines
/// them, and may be negative (the view then reaches below data) or non-compact.
template <class T, int Rank> tensor<T, Rank> from_dlpack(const DLTensor &t, const char *name = "tensor") {
  using detail::dlpack_fail;
  static_assert(Rank >= 1 && Rank <= 4, "tile::tensor supports ranks 1 to 4");
  const device cur = current_device();
  const device here = device_of(t.device, name);
  if (here != cur)
    dlpack_fail(name, "expected memory of the current device " + cur.name() + " (" +
                          detail::dlpack_device_name(to_dlpack_device(cur)) + "), got " +
                          detail::dlpack_device_name(t.device));
  const DLDataType want = dlpack_dtype<T>();
  if (t.dtype.code != want.code || t.dtype.bits != want.bits || t.dtype.lanes != want.lanes)
    dlpack_fail(name, "expected elements of " + dlpack_dtype_name(want) + ", got " +
                          dlpack_dtype_name(t.dtype));
  if (t.ndim != Rank)
    dlpack_fail(name, "expected " + std::to_string(Rank) + " dimensions, got " + std::to_string(t.ndim));
  if (!t.shape)
    dlpack_fail(name, "null shape");
  std::array<std::int64_t, Rank> sizes{}, strides{};
  bool empty = false;
  for (int d = 0; d < Rank; ++d) {
    sizes[d] = t.shape[d];
    if (sizes[d] < 0)
      dlpack_fail(name, "size " + std::to_string(d) + " is negative (" + std::to_string(sizes[d]) + ")");
    empty |= sizes[d] == 0;
  }
  if (t.strides) {
    for (int d = 0; d < Rank; ++d)
      strides[d] = t.strides[d];
  } else {
    std::int64_t s = 1;
    for (int d = Rank - 1; d >= 0; --d) {
      strides[d] = s;
      if (__builtin_mul_overflow(s, sizes[d], &s))
        dlpack_fail(name, "the number of elements overflows 64 bits");
    }
  }
  if constexpr (!std::is_const_v<T>)
    if (!empty)
      for (int d = 0; d < Rank; ++d)
        if (strides[d] == 0 && sizes[d] > 1)
          dlpack_fail(name, "dimension " + std::to_string(d) + " has " + std::to_string(sizes[d]) +
                                " elements at stride 0, a broadcast, which a kernel cannot write (view it as "
                                "tile::tensor<const T, Rank> to read it)");
  const std::uintptr_t base = reinterpret_cast<std::uintptr_t>(t.data);
  std::uintptr_t addr = 0;
  if (__builtin_add_overflow(base, std::uintptr_t(t.byte_offset), &addr))
    dlpack_fail(name, "data + byte_offset (" + std::to_string(t.byte_offset) + ") overflows the address space");
  if (!base && !empty)
    dlpack_fail(name, "null data pointer for a tensor with elements");
  if (addr % alignof(T) != 0)
    dlpack_fail(name, "data + byte_offset is not aligned to the " + std::to_string(alignof(T)) +
                          " bytes of an element of " + dlpack_dtype_name(want) + " (data " +
                          detail::dlpack_hex(base) + ", byte_offset " + std::to_string(t.byte_offset) + ")");
  return tensor<T, Rank>(reinterpret_cast<T *>(addr), sizes, strides);
}

/// The same, of the DLTensor a DLManagedTensor holds (a null pointer throws tile::error).
/// The managed tensor stays the caller's: the view never calls its deleter.
template <class T, int Rank> tensor<T, Rank> from_dlpack(const DLManagedTensor *t, const char *name = "tensor") {
  if (!t)
    detail::dlpack_fail(name, "null DLManagedTensor");
  return from_dlpack<T, Rank>(t->dl_tensor, name);
}

/// Exports an array: ownership of its memory moves into the returned DLManagedTensor,
/// whose deleter (called once by the consumer, e.g. PyTorch's from_dlpack) frees it on
/// the array's device. The tensor is row-major, with shape and strides set, byte_offset 0.
/// Work launched on the array before may still be running: DLPack 0.6 has no stream, so
/// the consumer must run on the same stream or synchronize first.
template <class T, int Rank> DLManagedTensor *to_dlpack(array<T, Rank> &&a) {
  const DLDevice dev = to_dlpack_device(a.device());
  T *data = a.data();
  const std::array<std::int64_t, Rank> sizes = a.sizes();
  const tensor<T, Rank> row_major(data, sizes);
  return detail::make_dlpack(std::move(a), data, sizes, row_major.strides(), dev);
}

/// Exports a view without ownership: the returned DLManagedTensor's deleter frees only
/// what describes the view (shape and strides), never the memory, which must outlive the
/// consumer's use of it. `dev` is the device that holds the memory (a tile::tensor does
/// not know it). A view of const elements is exported writable: DLPack 0.6 has no
/// read-only flag.
template <class T, int Rank>
DLManagedTensor *to_dlpack(const tensor<T, Rank> &view, const device &dev = current_device()) {
  return detail::make_dlpack(detail::dlpack_nothing{}, view.data(), view.sizes(), view.strides(),
                             to_dlpack_device(dev));
}

} // namespace tile
