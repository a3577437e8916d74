// Device memory and copies, forwarded to the device's backend.
#include "runtime/Device.h"
#include "tile/host.h"

namespace tile::rt {

void *allocate(const device &d, std::size_t bytes) {
  runtime::Backend &backend = runtime::backend_for(d);
  try {
    return backend.allocate(bytes);
  } catch (const tile::error &e) {
    throw tile::error("tile: " + d.name() + ": " + e.what());
  }
}

void deallocate(const device &d, void *p) noexcept {
  if (!p)
    return;
  try {
    runtime::backend_for(d).deallocate(p);
  } catch (...) {
    // A device that went away leaves nothing to free.
  }
}

void copy_to_device(const device &d, void *dst, const void *src, std::size_t bytes) {
  runtime::Backend &backend = runtime::backend_for(d);
  try {
    backend.copy_to_device(dst, src, bytes);
  } catch (const tile::error &e) {
    throw tile::error("tile: copy of " + std::to_string(bytes) + " bytes to " + d.name() + ": " +
                      e.what());
  }
}

void copy_to_host(const device &d, void *dst, const void *src, std::size_t bytes) {
  runtime::Backend &backend = runtime::backend_for(d);
  try {
    backend.copy_to_host(dst, src, bytes);
  } catch (const tile::error &e) {
    throw tile::error("tile: copy of " + std::to_string(bytes) + " bytes from " + d.name() + ": " +
                      e.what());
  }
}

} // namespace tile::rt
