// tile/dlpack.h on the CPU device: views of DLPack tensors (each check's message), the
// element types, exports of arrays and views, round trips; tile::stream from a handle.
#include <cstdint>
#include <gtest/gtest.h>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "tile/dlpack.h"
#include "tile/tile.h"

namespace {

/// The tests run on the CPU device, whatever the process's device was (restored after).
class Dlpack : public ::testing::Test {
protected:
  void SetUp() override {
    previous_ = tile::current_device();
    tile::set_device(tile::backend::cpu);
  }
  void TearDown() override { tile::set_device(*previous_); }

private:
  std::optional<tile::device> previous_;
};

/// A DLTensor over `data` with the given shape (and strides: null for row-major).
DLTensor dl(void *data, std::vector<std::int64_t> &shape, std::vector<std::int64_t> *strides = nullptr,
            DLDataType dtype = {kDLFloat, 32, 1}) {
  DLTensor t{};
  t.data = data;
  t.device = {kDLCPU, 0};
  t.ndim = int(shape.size());
  t.dtype = dtype;
  t.shape = shape.data();
  t.strides = strides ? strides->data() : nullptr;
  t.byte_offset = 0;
  return t;
}

/// The message of the tile::error that `f` throws ("" when it throws none).
template <class F> std::string error_of(F &&f) {
  try {
    f();
  } catch (const tile::error &e) {
    return e.what();
  }
  return "";
}

#define EXPECT_HAS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

TEST_F(Dlpack, ViewsRowMajorMemoryWhenStridesAreNull) {
  std::vector<float> v(2 * 3 * 4);
  std::vector<std::int64_t> shape{2, 3, 4};
  DLTensor t = dl(v.data(), shape);
  auto x = tile::from_dlpack<float, 3>(t, "x");
  EXPECT_EQ(x.data(), v.data());
  EXPECT_EQ(x.sizes(), (std::array<std::int64_t, 3>{2, 3, 4}));
  EXPECT_EQ(x.strides(), (std::array<std::int64_t, 3>{12, 4, 1}));
}

TEST_F(Dlpack, UsesStridesAndByteOffset) {
  // A [3, 4] view, transposed, of a [4, 3] buffer, starting at element 2.
  std::vector<double> v(20);
  std::iota(v.begin(), v.end(), 0.0);
  std::vector<std::int64_t> shape{3, 4}, strides{1, 3};
  DLTensor t = dl(v.data(), shape, &strides, {kDLFloat, 64, 1});
  t.byte_offset = 2 * sizeof(double);
  auto x = tile::from_dlpack<const double, 2>(t);
  EXPECT_EQ(x.data(), v.data() + 2);
  EXPECT_EQ(x.strides(), (std::array<std::int64_t, 2>{1, 3}));
  EXPECT_EQ(x(2, 3), 2.0 + 2 + 9);
}

TEST_F(Dlpack, TakesNegativeStridesEmptyDimensionsAndManagedTensors) {
  std::vector<float> v(6);
  std::vector<std::int64_t> shape{2, 3}, strides{-3, -1};
  DLTensor t = dl(v.data(), shape, &strides);
  t.byte_offset = 5 * sizeof(float); // the last element: the view runs backwards
  auto x = tile::from_dlpack<float, 2>(t);
  EXPECT_EQ(&x(0, 0), &v[5]);
  EXPECT_EQ(&x(1, 2), &v[0]);

  std::vector<std::int64_t> empty_shape{0, 5};
  DLTensor e = dl(nullptr, empty_shape); // no elements: a null pointer is fine
  EXPECT_EQ((tile::from_dlpack<float, 2>(e).numel()), 0);

  DLManagedTensor m{};
  m.dl_tensor = dl(v.data(), shape);
  EXPECT_EQ((tile::from_dlpack<const float, 2>(&m, "m").data()), v.data());
  EXPECT_HAS(error_of([] { tile::from_dlpack<float, 2>(static_cast<const DLManagedTensor *>(nullptr), "m"); }),
             "m: null DLManagedTensor");
}

TEST_F(Dlpack, MapsEveryElementType) {
  auto same = [](DLDataType a, DLDataType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; };
  using tile::dlpack_dtype;
  EXPECT_TRUE(same(dlpack_dtype<float>(), {kDLFloat, 32, 1}));
  EXPECT_TRUE(same(dlpack_dtype<const double>(), {kDLFloat, 64, 1}));
  EXPECT_TRUE(same(dlpack_dtype<tile::f16>(), {kDLFloat, 16, 1}));
  EXPECT_TRUE(same(dlpack_dtype<tile::bf16>(), {kDLBfloat, 16, 1}));
  EXPECT_TRUE(same(dlpack_dtype<std::int8_t>(), {kDLInt, 8, 1}));
  EXPECT_TRUE(same(dlpack_dtype<std::int16_t>(), {kDLInt, 16, 1}));
  EXPECT_TRUE(same(dlpack_dtype<std::int32_t>(), {kDLInt, 32, 1}));
  EXPECT_TRUE(same(dlpack_dtype<std::int64_t>(), {kDLInt, 64, 1}));
  EXPECT_TRUE(same(dlpack_dtype<std::uint8_t>(), {kDLUInt, 8, 1}));
  EXPECT_TRUE(same(dlpack_dtype<std::uint32_t>(), {kDLUInt, 32, 1}));
  EXPECT_TRUE(same(dlpack_dtype<bool>(), {6, 8, 1})); // DLPack 0.8's kDLBool
  using tile::dlpack_dtype_name;
  EXPECT_EQ(dlpack_dtype_name({kDLBfloat, 16, 1}), "bfloat16");
  EXPECT_EQ(dlpack_dtype_name({6, 8, 1}), "bool");
  EXPECT_EQ(dlpack_dtype_name({kDLFloat, 32, 4}), "float32x4");

  std::vector<std::int64_t> shape{4};
  std::vector<std::uint16_t> h(4);
  DLTensor b = dl(h.data(), shape, nullptr, {kDLBfloat, 16, 1});
  EXPECT_EQ(static_cast<void *>(tile::from_dlpack<tile::bf16, 1>(b).data()), h.data());
  EXPECT_HAS(error_of([&] { tile::from_dlpack<tile::f16, 1>(b, "h"); }),
             "h: expected elements of float16, got bfloat16");
  std::vector<std::uint8_t> bytes(4);
  DLTensor u8 = dl(bytes.data(), shape, nullptr, {kDLUInt, 8, 1});
  EXPECT_HAS(error_of([&] { tile::from_dlpack<bool, 1>(u8, "flags"); }), "flags: expected elements of bool, got uint8");
}

TEST_F(Dlpack, RefusesOtherDevicesNamingTheArgument) {
  std::vector<float> v(4);
  std::vector<std::int64_t> shape{4};
  DLTensor t = dl(v.data(), shape);
  t.device = {kDLCUDA, 1};
  EXPECT_HAS(error_of([&] { tile::from_dlpack<float, 1>(t, "a"); }),
             "tile::from_dlpack: a: expected memory of the current device cpu (kDLCPU:0), got kDLCUDA:1");
  t.device = {kDLOpenCL, 0};
  EXPECT_HAS(error_of([&] { tile::from_dlpack<float, 1>(t, "a"); }), "a: memory of kDLOpenCL:0, which no tile backend");
  // Host memory of a GPU runtime is the CPU's.
  t.device = {kDLCUDAHost, 0};
  EXPECT_EQ((tile::from_dlpack<float, 1>(t).data()), v.data());

  EXPECT_EQ(tile::device_of(DLDevice{kDLCUDA, 3}), (tile::device{tile::backend::cuda, 3}));
  EXPECT_EQ(tile::device_of(DLDevice{kDLCUDAManaged, 2}), (tile::device{tile::backend::cuda, 2}));
  EXPECT_EQ(tile::device_of(DLDevice{kDLROCM, 1}), (tile::device{tile::backend::hip, 1}));
  EXPECT_EQ(tile::device_of(DLDevice{kDLCPU, 0}), (tile::device{tile::backend::cpu, 0}));
  const DLDevice cuda = tile::to_dlpack_device({tile::backend::cuda, 5});
  EXPECT_EQ(cuda.device_type, kDLCUDA);
  EXPECT_EQ(cuda.device_id, 5);
  EXPECT_EQ(tile::to_dlpack_device({tile::backend::hip, 0}).device_type, kDLROCM);
}

TEST_F(Dlpack, RefusesMismatchesNamingTheArgument) {
  std::vector<float> v(12);
  std::vector<std::int64_t> shape{3, 4};
  DLTensor t = dl(v.data(), shape);
  EXPECT_HAS(error_of([&] { tile::from_dlpack<double, 2>(t, "x"); }), "x: expected elements of float64, got float32");
  EXPECT_HAS(error_of([&] { tile::from_dlpack<std::int32_t, 2>(t, "x"); }), "x: expected elements of int32, got float32");
  DLTensor lanes = t;
  lanes.dtype.lanes = 4;
  EXPECT_HAS(error_of([&] { tile::from_dlpack<float, 2>(lanes, "x"); }), "x: expected elements of float32, got float32x4");
  EXPECT_HAS(error_of([&] { tile::from_dlpack<float, 3>(t, "x"); }), "x: expected 3 dimensions, got 2");
  EXPECT_HAS(error_of([&] { tile::from_dlpack<float, 1>(t, "x"); }), "x: expected 1 dimensions, got 2");

  std::vector<std::int64_t> negative{3, -4};
  DLTensor n = dl(v.data(), negative);
  EXPECT_HAS(error_of([&] { tile::from_dlpack<float, 2>(n, "x"); }), "x: size 1 is negative (-4)");
  std::vector<std::int64_t> huge{std::int64_t(1) << 40, std::int64_t(1) << 40};
  DLTensor h = dl(v.data(), huge);
  EXPECT_HAS(error_of([&] { tile::from_dlpack<float, 2>(h, "x"); }), "x: the number of elements overflows 64 bits");

  DLTensor null = dl(nullptr, shape);
  EXPECT_HAS(error_of([&] { tile::from_dlpack<float, 2>(null, "x"); }), "x: null data pointer for a tensor with elements");

  DLTensor misaligned = t;
  misaligned.byte_offset = 2;
  EXPECT_HAS(error_of([&] { tile::from_dlpack<float, 2>(misaligned, "x"); }),
             "x: data + byte_offset is not aligned to the 4 bytes of an element of float32");
  DLTensor odd = t;
  odd.data = reinterpret_cast<char *>(v.data()) + 1;
  odd.byte_offset = 3; // together aligned
  EXPECT_EQ((tile::from_dlpack<float, 2>(odd).data()), v.data() + 1);

  // A broadcast (stride 0) can be read, not written.
  std::vector<std::int64_t> broadcast{0, 1};
  DLTensor b = dl(v.data(), shape, &broadcast);
  EXPECT_EQ((tile::from_dlpack<const float, 2>(b).stride(0)), 0);
  EXPECT_HAS(error_of([&] { tile::from_dlpack<float, 2>(b, "out"); }), "out: dimension 0 has 3 elements at stride 0");
}

TEST_F(Dlpack, ExportsArraysWithTheirMemory) {
  tile::array<std::int32_t, 2> a({3, 5});
  std::vector<std::int32_t> host(15);
  std::iota(host.begin(), host.end(), 7);
  a.copy_from(host);
  std::int32_t *data = a.data();

  DLManagedTensor *m = tile::to_dlpack(std::move(a));
  EXPECT_EQ(a.data(), nullptr); // moved out
  ASSERT_NE(m, nullptr);
  const DLTensor &t = m->dl_tensor;
  EXPECT_EQ(t.data, data);
  EXPECT_EQ(t.device.device_type, kDLCPU);
  EXPECT_EQ(t.ndim, 2);
  EXPECT_EQ(t.dtype.code, kDLInt);
  EXPECT_EQ(t.dtype.bits, 32);
  EXPECT_EQ(t.dtype.lanes, 1);
  EXPECT_EQ(t.shape[0], 3);
  EXPECT_EQ(t.shape[1], 5);
  ASSERT_NE(t.strides, nullptr);
  EXPECT_EQ(t.strides[0], 5);
  EXPECT_EQ(t.strides[1], 1);
  EXPECT_EQ(t.byte_offset, 0u);

  // Round trip: the view of the export is the array's memory.
  auto back = tile::from_dlpack<const std::int32_t, 2>(m, "back");
  EXPECT_EQ(back.data(), data);
  EXPECT_EQ(back(2, 4), 7 + 14);
  m->deleter(m); // frees the array's memory (the sanitized suite checks that it does)

  tile::array<float, 1> empty({0});
  DLManagedTensor *e = tile::to_dlpack(std::move(empty));
  EXPECT_EQ(e->dl_tensor.shape[0], 0);
  EXPECT_EQ((tile::from_dlpack<float, 1>(e).numel()), 0);
  e->deleter(e);
}

TEST_F(Dlpack, ExportsViewsWithoutTheirMemory) {
  std::vector<tile::bf16> v(4 * 6);
  tile::tensor<const tile::bf16, 2> view(v.data() + 1, {3, 4}, {1, 6}); // transposed, offset
  DLManagedTensor *m = tile::to_dlpack(view);
  EXPECT_EQ(m->dl_tensor.data, v.data() + 1);
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLBfloat);
  EXPECT_EQ(m->dl_tensor.strides[0], 1);
  EXPECT_EQ(m->dl_tensor.strides[1], 6);
  auto back = tile::from_dlpack<tile::bf16, 2>(m);
  EXPECT_EQ(back.data(), v.data() + 1);
  EXPECT_EQ(back.sizes(), view.sizes());
  EXPECT_EQ(back.strides(), view.strides());
  m->deleter(m); // the vector's memory stays

  DLManagedTensor *g = tile::to_dlpack(view, tile::device{tile::backend::cuda, 2});
  EXPECT_EQ(g->dl_tensor.device.device_type, kDLCUDA);
  EXPECT_EQ(g->dl_tensor.device.device_id, 2);
  g->deleter(g);
}

TEST(DlpackStream, FromAHandle) {
  EXPECT_EQ(tile::stream::from_handle(0).native(), nullptr);
  EXPECT_EQ(tile::stream::from_handle(0x1230).native(), reinterpret_cast<void *>(0x1230));
  int x = 0;
  EXPECT_EQ(tile::stream(&x).native(), static_cast<void *>(&x));
}

} // namespace
