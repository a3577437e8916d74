// tile's CUDA device library: what generated CUDA code includes. Self-contained (CUDA's own
// headers only). The part the GPU targets share is tile_gpu.h (targets/common/include),
// for which this header defines the CUDA port first; then the instructions only NVIDIA GPUs
// have (ldmatrix, mma.sync, wgmma, mbarriers, bulk tensor copies, cp.async). Generated code
// spells element types tile_cuda::bf16 and so on, calls the math and atomic functions of
// tile_gpu.h, and gets its block's indices from block_index().
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace tile_gpu {

using bf16 = __nv_bfloat16;
using f16 = __half;

namespace port {

template <int N> struct bytes_of;
template <> struct bytes_of<16> { using type = uint4; };
template <> struct bytes_of<8> { using type = uint2; };
template <> struct bytes_of<4> { using type = unsigned; };
template <> struct bytes_of<2> { using type = unsigned short; };

// (The host's side, memcpy, lets host code of a .cu file include this header too: bench/proto.)
__host__ __device__ __forceinline__ uint32_t float_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
#endif
}
__host__ __device__ __forceinline__ float bits_float(uint32_t u) {
#ifdef __CUDA_ARCH__
  return __uint_as_float(u);
#else
  float f;
  memcpy(&f, &u, 4);
  return f;
#endif
}

__device__ __forceinline__ float to_float(bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(f16 v) { return __half2float(v); }
__device__ __forceinline__ bf16 to_bf16(float v) { return __float2bfloat16_rn(v); }
__device__ __forceinline__ bf16 to_bf16(double v) { return __double2bfloat16(v); }
__device__ __forceinline__ f16 to_f16(float v) { return __float2half_rn(v); }
__device__ __forceinline__ f16 to_f16(double v) { return __double2half(v); }

// exp2 in float is one MUFU.EX2 (ex2.approx.ftz: at most 2 ulp, the same instruction exp2f
// uses, without its rescaling of results below 2^-126, which flush to zero): the online
// softmax of attention spends an exponential per score.
__device__ __forceinline__ float exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

/// The lanes of a last, partial warp exchange among themselves.
template <class T> __device__ __forceinline__ T shfl_xor(T v, int mask) {
  const unsigned first = threadIdx.x & ~31u, lanes = blockDim.x - first;
  const unsigned members = lanes >= 32 ? 0xffffffffu : (1u << lanes) - 1;
  return __shfl_xor_sync(members, v, mask);
}

__device__ __forceinline__ long long atomic_max_i64(long long *p, long long v) { return atomicMax(p, v); }
__device__ __forceinline__ long long atomic_min_i64(long long *p, long long v) { return atomicMin(p, v); }

} // namespace port
} // namespace tile_gpu

#include "tile_gpu.h"

namespace tile_cuda {

using namespace tile_gpu;

// ---------------------------------------------------------------------------------------
// Tensor cores (sm_80 and later): the instructions lower-mma's nodes print as. Which
// registers and addresses each lane passes is decided in the IR (lib/transforms/LowerMma).
// ---------------------------------------------------------------------------------------

namespace detail {
__device__ __forceinline__ unsigned smem_address(const void *p) {
  return unsigned(__cvta_generic_to_shared(p));
}
} // namespace detail

/// ldmatrix of 1, 2 or 4 8 x 8 matrices of 16-bit elements (Trans: transposed); `p` is the
/// lane's row address in shared memory.
template <bool Trans> __device__ __forceinline__ void ldmatrix_x1(unsigned &r0, const void *p) {
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n" : "=r"(r0) : "r"(detail::smem_address(p)));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r0) : "r"(detail::smem_address(p)));
}
template <bool Trans> __device__ __forceinline__ void ldmatrix_x2(unsigned &r0, unsigned &r1, const void *p) {
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r0), "=r"(r1)
                 : "r"(detail::smem_address(p)));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
                 : "=r"(r0), "=r"(r1)
                 : "r"(detail::smem_address(p)));
}
template <bool Trans>
__device__ __forceinline__ void ldmatrix_x4(unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3, const void *p) {
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(detail::smem_address(p)));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(detail::smem_address(p)));
}

/// A wgmma matrix descriptor (sm_90a) of the shared tile at `p`: start address, leading and
/// stride byte offsets (each in 16-byte units), and the layout type of its swizzle (1: 128
/// bytes, 2: 64, 3: 32) (targets/cuda/HOPPER-NOTES.md, section 1).
__device__ __forceinline__ uint64_t gmma_desc(const void *p, uint32_t lbo, uint32_t sbo, uint32_t swizzle) {
  const uint64_t start = (detail::smem_address(p) & 0x3FFFF) >> 4;
  return start | (uint64_t((lbo & 0x3FFFF) >> 4) << 16) | (uint64_t((sbo & 0x3FFFF) >> 4) << 32) |
         (uint64_t(swizzle & 3) << 62);
}
/// wgmma's ordering (sm_90a): fence before a batch, commit it, wait for all but Pending.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int Pending> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}
/// After a wgmma wait, a register of its operands: the compiler keeps every later access
/// after the wait (it cannot see that the asm of the instruction finished only there).
__device__ __forceinline__ void pin_register(float &x) { asm volatile("" : "+f"(x)::"memory"); }
__device__ __forceinline__ void pin_register(unsigned &x) { asm volatile("" : "+r"(x)::"memory"); }
template <class T> __device__ __forceinline__ void pin_register(T &x) {
  static_assert(sizeof(T) == 2, "a 16-bit register");
  unsigned short v;
  memcpy(&v, &x, 2);
  asm volatile("" : "+h"(v)::"memory");
  memcpy(&x, &v, 2);
}
/// This thread's shared-memory writes made visible to the asynchronous proxy (the tensor
/// cores' and copy engine's reads), for after a barrier.
__device__ __forceinline__ void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// ---------------------------------------------------------------------------------------
// mbarriers and bulk tensor copies (TMA, sm_90): a 64-bit barrier in shared memory counts
// arrivals and bytes; a phase completes when both reach zero, and waiters wait for the phase
// of a parity (targets/cuda/HOPPER-NOTES.md, sections 7 and 8).
// ---------------------------------------------------------------------------------------

/// One thread initializes: `count` arrivals complete a phase. Then a barrier of the block.
__device__ __forceinline__ void mbarrier_init(uint64_t *bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(detail::smem_address(bar)), "r"(count) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
/// Arrives once, and makes the phase wait for `bytes` more of copies completing on it.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t *bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(detail::smem_address(bar)), "r"(bytes)
               : "memory");
}
/// A tensor map (CUtensorMap: 128 opaque bytes the driver encodes on the host), passed to a
/// kernel by value as a __grid_constant__ parameter.
struct alignas(64) tensor_map {
  unsigned char bytes[128];
};
/// Waits for the first Threads threads of the block (named barrier Id), not the others.
template <int Id, int Threads> __device__ __forceinline__ void named_barrier() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(Id), "n"(Threads) : "memory");
}
/// Hardware barrier `id` of Threads threads whose id is known only at run time: sync waits
/// for them all, arrive counts this thread and goes on.
template <int Threads> __device__ __forceinline__ void named_barrier_sync(int id) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(Threads) : "memory");
}
template <int Threads> __device__ __forceinline__ void named_barrier_arrive(int id) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "n"(Threads) : "memory");
}
/// A warpgroup's registers per thread raised or lowered to N (setmaxnreg, sm_90a).
template <int N> __device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> __device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
/// A persistent grid's next tile (one thread of the producer): the launch's blocks took
/// their first tiles by index, the others go in turn, counted in `count` (zeroed by the
/// runtime before the launch). Stored into `slot` for the consumers (the producer then
/// arrives on an mbarrier, which releases the store to those that wait on it).
__device__ __forceinline__ int32_t next_tile(unsigned *count, int32_t *slot) {
  const int32_t t = int32_t(gridDim.x + atomicAdd(count, 1u));
  *slot = t;
  return t;
}
/// The tile the producer stored into `slot` (read after the wait on its mbarrier).
__device__ __forceinline__ int32_t received_tile(const int32_t *slot) { return *static_cast<const volatile int32_t *>(slot); }
/// Arrives once.
__device__ __forceinline__ void mbarrier_arrive(uint64_t *bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(detail::smem_address(bar)) : "memory");
}
/// Waits until the phase of `parity` has completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t *bar, unsigned parity) {
  asm volatile("{\n.reg .pred done;\nwait_%=:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
               "@!done bra wait_%=;\n}\n" ::"r"(detail::smem_address(bar)),
               "r"(parity)
               : "memory");
}
/// One box of the tensor `map` describes (a __grid_constant__ kernel parameter), at element
/// coordinates innermost first, into shared memory at `dst`; its bytes complete on `bar`.
/// Parts of the box outside the tensor arrive as zeros.
template <int Rank>
__device__ __forceinline__ void bulk_tensor_load(void *dst, const void *map, uint64_t *bar, const int (&c)[Rank]) {
  const unsigned d = detail::smem_address(dst), b = detail::smem_address(bar);
  const uint64_t m = reinterpret_cast<uint64_t>(map);
  if constexpr (Rank == 1)
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2}], "
                 "[%3];\n" ::"r"(d),
                 "l"(m), "r"(c[0]), "r"(b)
                 : "memory");
  else if constexpr (Rank == 2)
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
                 "[%4];\n" ::"r"(d),
                 "l"(m), "r"(c[0]), "r"(c[1]), "r"(b)
                 : "memory");
  else if constexpr (Rank == 3)
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, "
                 "%4}], [%5];\n" ::"r"(d),
                 "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(b)
                 : "memory");
  else {
    static_assert(Rank == 4, "bulk tensor copies of rank 1 to 4");
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, "
                 "%4, %5}], [%6];\n" ::"r"(d),
                 "l"(m), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "r"(b)
                 : "memory");
  }
}

// Clusters (sm_90): blocks launched in clusters of 2 along x (Kernel::cluster) share tiles
// that one loads for both (multicast) and hand their stages back to each other.
struct cluster_place {
  int32_t rank, blocks; // the block's rank in its cluster; the cluster's blocks (1 or 2)
  block3 partner;       // the other block's tile indices (this block's own in a cluster of 1)
};
__device__ __forceinline__ cluster_place cluster_place_of(int64_t panel) {
  cluster_place c;
  unsigned rank, blocks;
  asm("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
  asm("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(blocks));
  c.rank = int32_t(rank);
  c.blocks = int32_t(blocks);
  c.partner = block_index_of(panel, blocks > 1 ? blockIdx.x ^ 1u : blockIdx.x, blockIdx.y, blockIdx.z);
  return c;
}
/// Every thread of every block of the cluster (a block's own barrier where it has no
/// cluster), the mbarriers initialized before it then ready for the others' arrivals.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
/// The warp (all of it, converged) arrives once for each of its threads on the barrier at
/// `bar`'s place in the block of rank `block` of the cluster, once its reads are done. (A
/// release at the block's scope: the reads it orders are of the warp's own shared memory and
/// complete, which is all the other block's producer waits for; a cluster-scope release made
/// every arrival a memory barrier that stalled the warps, bench/NOTES.md session 33.)
__device__ __forceinline__ void mbarrier_arrive_cluster_warp(uint64_t *bar, int32_t block) {
  __syncwarp();
  if ((threadIdx.x & 31) == 0)
    asm volatile("{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote], 32;\n}\n" ::"r"(
                     detail::smem_address(bar)),
                 "r"(block)
                 : "memory");
}
/// A bulk tensor load that the blocks of `mask` (bit r: rank r) of the cluster each receive
/// at `dst`'s place, completing on their barrier at `bar`'s place.
template <int Rank>
__device__ __forceinline__ void bulk_tensor_load_multicast(void *dst, const void *map, uint64_t *bar, const int (&c)[Rank],
                                                           int32_t mask) {
  const unsigned d = detail::smem_address(dst), b = detail::smem_address(bar);
  const uint64_t m = reinterpret_cast<uint64_t>(map);
  const unsigned short cta_mask = (unsigned short)mask;
  if constexpr (Rank == 1) {
    asm volatile("cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
                 "[%1, {%3}], [%2], %4;\n" ::"r"(d),
                 "l"(m), "r"(b), "r"(c[0]), "h"(cta_mask)
                 : "memory");
  } else if constexpr (Rank == 2) {
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
                 "[%1, {%3, %4}], [%2], %5;\n" ::"r"(d),
                 "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "h"(cta_mask)
                 : "memory");
  } else if constexpr (Rank == 3) {
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
                 "[%1, {%3, %4, %5}], [%2], %6;\n" ::"r"(d),
                 "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "h"(cta_mask)
                 : "memory");
  } else {
    static_assert(Rank == 4, "bulk tensor copies of rank 1 to 4");
    asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], "
                 "[%1, {%3, %4, %5, %6}], [%2], %7;\n" ::"r"(d),
                 "l"(m), "r"(b), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]), "h"(cta_mask)
                 : "memory");
  }
}

/// Shared memory at `src` (in the map's swizzle) into one box of the tensor `map` describes,
/// at element coordinates innermost first; elements of the box outside the tensor are not
/// written. It reads `src` asynchronously: until bulk_store_wait of the issuing thread.
/// The threads that wrote `src` fence their writes for the asynchronous proxy
/// (fence_proxy_async_shared) before a barrier that the issuing thread passes too.
template <int Rank> __device__ __forceinline__ void bulk_tensor_store(const void *map, const void *src, const int (&c)[Rank]) {
  const unsigned s = detail::smem_address(src);
  const uint64_t m = reinterpret_cast<uint64_t>(map);
  if constexpr (Rank == 2)
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];\n" ::"l"(m), "r"(s),
                 "r"(c[0]), "r"(c[1])
                 : "memory");
  else if constexpr (Rank == 3)
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(m),
                 "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2])
                 : "memory");
  else {
    static_assert(Rank == 4, "bulk tensor stores of rank 2 to 4");
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.tile.bulk_group [%0, {%2, %3, %4, %5}], [%1];\n" ::"l"(m),
                 "r"(s), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3])
                 : "memory");
  }
}
/// Closes a group of the bulk stores this thread issued since the last.
__device__ __forceinline__ void bulk_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
/// Returns once this thread's committed bulk stores have read their shared memory.
__device__ __forceinline__ void bulk_store_wait() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }

// ---------------------------------------------------------------------------------------
// Asynchronous copies into shared memory (sm_80 and later): cp.async of 4, 8 or 16 bytes,
// grouped by commits; a wait lets a thread see its own groups' bytes (a barrier then lets
// every thread see them).
// ---------------------------------------------------------------------------------------

template <int N> __device__ __forceinline__ void cp_async(void *shared_dst, const void *global_src) {
  static_assert(N == 4 || N == 8 || N == 16, "cp.async moves 4, 8 or 16 bytes");
  const unsigned dst = detail::smem_address(shared_dst);
  if constexpr (N == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(global_src) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(global_src), "n"(N) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int Pending> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}
} // namespace tile_cuda
