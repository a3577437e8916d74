#include "runtime/Device.h"

#include <charconv>
#include <cstdlib>
#include <mutex>

#include "runtime/CpuBackend.h"
#include "runtime/CudaBackend.h"
#include "runtime/HipBackend.h"

namespace tile::runtime {

namespace {

// The process-wide current device, chosen on first use (TILE_DEVICE is read once).
std::mutex current_mutex;
std::optional<tile::device> current;

/// Why no device of kind `b` is usable, or empty when `b` has backends. GPU backends plug in
/// here: they load their driver with dlopen and report its absence as the reason.
std::string unavailable_backend(tile::backend b) {
  switch (b) {
  case tile::backend::cpu:
    return "";
  case tile::backend::cuda: {
    std::string why;
    return cuda_device_count(why) > 0 ? "" : why;
  }
  case tile::backend::hip: {
    std::string why;
    return hip_device_count(why) > 0 ? "" : why;
  }
  }
  return "unknown backend";
}

/// How many devices of kind `b` exist (0 when the backend is unavailable).
int device_count(tile::backend b) {
  if (!unavailable_backend(b).empty())
    return 0;
  std::string why;
  return b == tile::backend::cpu ? 1 : b == tile::backend::cuda ? cuda_device_count(why) : hip_device_count(why);
}

const char *backend_label(tile::backend b) {
  switch (b) {
  case tile::backend::cpu:
    return "CPU";
  case tile::backend::cuda:
    return "CUDA";
  case tile::backend::hip:
    return "HIP";
  }
  return "unknown";
}

} // namespace

std::optional<tile::device> parse_device(std::string_view text) {
  size_t colon = text.find(':');
  std::string_view kind = text.substr(0, colon);
  tile::device d;
  if (kind == "cpu")
    d.backend = tile::backend::cpu;
  else if (kind == "cuda")
    d.backend = tile::backend::cuda;
  else if (kind == "hip")
    d.backend = tile::backend::hip;
  else
    return std::nullopt;
  if (colon == std::string_view::npos)
    return d;
  // The CPU is a single device: "cpu:0" is not a spelling the documentation offers.
  if (d.backend == tile::backend::cpu)
    return std::nullopt;
  std::string_view index = text.substr(colon + 1);
  if (index.empty() || index.front() < '0' || index.front() > '9')
    return std::nullopt;
  auto [end, ec] = std::from_chars(index.data(), index.data() + index.size(), d.index);
  if (ec != std::errc() || end != index.data() + index.size())
    return std::nullopt;
  return d;
}

std::string unavailable_reason(const tile::device &d) {
  if (std::string why = unavailable_backend(d.backend); !why.empty())
    return why;
  int count = device_count(d.backend);
  if (d.index < 0 || d.index >= count)
    return "there is no " + std::string(backend_label(d.backend)) + " device " +
           std::to_string(d.index) + " (this machine has " + std::to_string(count) + ")";
  return "";
}

tile::device choose_device(const char *tile_device_env) {
  if (tile_device_env && *tile_device_env) { // set but empty counts as unset
    std::string value = tile_device_env;
    std::optional<tile::device> d = parse_device(value);
    if (!d)
      throw tile::error("TILE_DEVICE=" + value + ": expected cpu, cuda[:N] or hip[:N]");
    if (std::string why = unavailable_reason(*d); !why.empty())
      throw tile::error("TILE_DEVICE=" + value + ": " + why);
    return *d;
  }
  for (tile::backend gpu : {tile::backend::cuda, tile::backend::hip})
    if (device_count(gpu) > 0)
      return tile::device{gpu, 0};
  return tile::device{tile::backend::cpu, 0};
}

Backend &backend_for(const tile::device &d) {
  if (std::string why = unavailable_reason(d); !why.empty())
    throw tile::error(d.name() + ": " + why);
  switch (d.backend) {
  case tile::backend::cpu:
    return cpu_backend();
  case tile::backend::cuda:
    return cuda_backend(d.index);
  case tile::backend::hip:
    return hip_backend(d.index);
  }
  throw tile::error(d.name() + ": no backend drives this device");
}

} // namespace tile::runtime

namespace tile {

std::string device::name() const {
  switch (backend) {
  case tile::backend::cpu:
    return index == 0 ? "cpu" : "cpu:" + std::to_string(index);
  case tile::backend::cuda:
    return "cuda:" + std::to_string(index);
  case tile::backend::hip:
    return "hip:" + std::to_string(index);
  }
  return "device:" + std::to_string(index);
}

std::string device::architecture() const { return runtime::backend_for(*this).arch(); }

std::string device::product() const { return runtime::backend_for(*this).product(); }

device current_device() {
  std::lock_guard lock(runtime::current_mutex);
  if (!runtime::current)
    runtime::current = runtime::choose_device(std::getenv("TILE_DEVICE"));
  return *runtime::current;
}

void set_device(const device &d) {
  if (std::string why = runtime::unavailable_reason(d); !why.empty())
    throw error("tile::set_device(" + d.name() + "): " + why);
  std::lock_guard lock(runtime::current_mutex);
  runtime::current = d;
}

void set_device(tile::backend b, int index) {
  set_device(device{b, index});
}

void synchronize() {
  runtime::backend_for(current_device()).synchronize();
}

} // namespace tile
