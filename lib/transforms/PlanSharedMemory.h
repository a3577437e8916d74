// plan-shared-memory: places the block-shared buffers in the block's shared memory (GPU
// targets), so that the codegen only prints their offsets.
//
// Requires: insert-sync (the barriers are final); every block-shared buffer declared by a
//   DeclBuffer.
// Establishes: Kernel::shared_offsets holds every block-shared buffer, at a multiple of the
//   target's shared_alignment; Kernel::shared_bytes is the end of the last;
//   Kernel::shared_reused names the buffers that share bytes with another. Two buffers
//   share bytes only when their lives (the statements of the kernel's top level that touch
//   them) do not overlap and a barrier at the top level lies between the last statement
//   of the first and the first of the second; the pass adds that barrier where the two
//   would share bytes and there is none. Buffers that asynchronous copies fill (their
//   bytes may land after the statement that issued them) and buffers no statement touches
//   share bytes with nothing. Placement is first fit in declaration order. In a paired
//   kernel (Kernel::pair_dim) each buffer not in Kernel::pair_common takes two copies, the
//   second Kernel::pair_stride bytes (its bytes on its alignment) after the first.
#pragma once

#include "ir/IR.h"
#include "ir/Target.h"

namespace tile::transforms {

ir::Kernel plan_shared_memory(const ir::Kernel &kernel, const ir::Target &target);

} // namespace tile::transforms
