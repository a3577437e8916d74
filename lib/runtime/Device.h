// Device names, the choice of the current device, and the backend behind each device.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "runtime/Backend.h"
#include "tile/host.h"

namespace tile::runtime {

/// Parses "cpu", "cuda", "cuda:N", "hip" or "hip:N" (N decimal); nullopt for anything else.
std::optional<tile::device> parse_device(std::string_view text);

/// Why `d` cannot be used in this process ("no CUDA backend is available in this build"), or
/// an empty string when it can.
std::string unavailable_reason(const tile::device &d);

/// The default device given the value of TILE_DEVICE (null or empty: unset): that device when it is
/// set, else the first available GPU, else the CPU. Throws tile::error naming the value when
/// it is malformed or names a device that cannot be used.
tile::device choose_device(const char *tile_device_env);

/// The backend that drives `d`; throws tile::error ("cuda:0: <why>") when there is none.
Backend &backend_for(const tile::device &d);

} // namespace tile::runtime
