// tile::tensor: a view of global memory (pointer, sizes, strides in elements).
//
// The same type is a kernel parameter and a host value: host code builds it from memory
// it owns (or from a tile::array), kernels read its sizes and elements.
#pragma once

#include <array>
#include <cstdint>
#include <type_traits>

#include "tile/types.h"

namespace tile {

/// Marks an index of `x.at(...)` onto which a dimension of the other operand maps.
struct slice_t {
  int start;
};
constexpr slice_t slice(int start) { return slice_t{start}; }

namespace detail {
template <class I> constexpr bool is_index_v = std::is_integral_v<I> || std::is_same_v<I, slice_t>;
template <class I> constexpr std::int64_t index_start(I i) {
  if constexpr (std::is_same_v<I, slice_t>)
    return i.start;
  else
    return std::int64_t(i);
}
[[noreturn]] void no_plugin(const char *what);
} // namespace detail

/// The region of a buffer whose first corner is `corner`; its extent comes from the other
/// operand of the tile operation it is passed to.
template <class Buffer, int Rank> struct region {
  const Buffer *buffer;
  std::array<std::int64_t, Rank> corner;
};

template <class T, int Rank> class tensor {
  static_assert(Rank >= 1 && Rank <= 4, "tile::tensor supports ranks 1 to 4");

public:
  using element_type = T;
  static constexpr int rank = Rank;

  tensor() = default;
  /// Wraps row-major memory of the given sizes.
  tensor(T *data, std::array<std::int64_t, Rank> sizes) : data_(data), sizes_(sizes) {
    std::int64_t s = 1;
    for (int d = Rank - 1; d >= 0; --d) {
      strides_[d] = s;
      s *= sizes_[d];
    }
  }
  /// Wraps memory with explicit strides (in elements).
  tensor(T *data, std::array<std::int64_t, Rank> sizes, std::array<std::int64_t, Rank> strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  /// A mutable view converts to a read-only one.
  template <class U>
    requires(std::is_same_v<const U, T> && !std::is_same_v<U, T>)
  tensor(const tensor<U, Rank> &t) : data_(t.data()), sizes_(t.sizes()), strides_(t.strides()) {}

  T *data() const { return data_; }
  /// 64 bits: a dimension may hold more than 2^31 elements (`const int n = t.size(0)` in a
  /// kernel narrows it, as C++ does).
  std::int64_t size(int d) const { return sizes_[d]; }
  std::int64_t stride(int d) const { return strides_[d]; }
  const std::array<std::int64_t, Rank> &sizes() const { return sizes_; }
  const std::array<std::int64_t, Rank> &strides() const { return strides_; }
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto s : sizes_)
      n *= s;
    return n;
  }

  /// Element access (in kernels; on the host only for memory the host can read).
  template <class... I>
    requires(sizeof...(I) == Rank && (std::is_integral_v<I> && ...))
  T &operator()(I... idx) const {
    std::int64_t off = 0, k = 0;
    ((off += std::int64_t(idx) * strides_[k++]), ...);
    return data_[off];
  }

  /// Rows `begin` to `end - 1` of dimension 0, both clipped to [0, size(0)], as a tensor of
  /// their own: its row 0 is row `begin`. In a kernel, a tile that reaches past its last row
  /// reads zeros there and writes nothing there, as at any tensor's end.
  tensor rows(std::int64_t begin, std::int64_t end) const {
    begin = begin < 0 ? 0 : begin > sizes_[0] ? sizes_[0] : begin;
    end = end < begin ? begin : end > sizes_[0] ? sizes_[0] : end;
    tensor t = *this;
    t.data_ = data_ + begin * strides_[0];
    t.sizes_[0] = end - begin;
    return t;
  }

  /// The region whose first corner is (idx...); see API.md for `slice`.
  template <class... I>
    requires(sizeof...(I) == Rank && (detail::is_index_v<I> && ...))
  region<tensor, Rank> at(I... idx) const {
    return {this, {detail::index_start(idx)...}};
  }

private:
  T *data_ = nullptr;
  std::array<std::int64_t, Rank> sizes_{};
  std::array<std::int64_t, Rank> strides_{};
};

} // namespace tile
