// The registry of device images: filled by the static constructors that the plugin adds to
// user object files, read by launches. Images are loaded on their first launch.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/Backend.h"
#include "runtime/Manifest.h"

namespace tile::runtime {

class Registry {
public:
  /// One registered image; it stays until the process exits.
  struct Image;

  /// What a launch of one kernel on one target needs. Pointers stay valid for the registry's
  /// lifetime.
  struct Lookup {
    std::string_view display_name;
    /// The kernel's entry in an image for the target asked for; null when it has none.
    const KernelInfo *kernel = nullptr;
    Image *image = nullptr;
    /// When `kernel` is null: the targets it has images for, comma-separated, each with the
    /// architectures of its images where they name any ("cpu, cuda (sm_90a)").
    std::string targets;
    /// When `kernel` is null: whether the target has images, none for the device's architecture.
    bool other_archs_only = false;
    /// Non-empty when translation units registered the kernel with different signatures.
    std::string conflict;
  };

  Registry();
  ~Registry();
  Registry(const Registry &) = delete;
  Registry &operator=(const Registry &) = delete;

  /// The registry that tile::rt::register_image fills. Never destroyed.
  static Registry &global();

  /// Adds an image whose `size` bytes at `bytes` outlive the registry (they are static data of
  /// the object that registers them). For each kernel, target and list of architectures the
  /// first registration is kept and later ones are ignored. Throws tile::error for a
  /// malformed manifest, leaving the registry unchanged. Returns the image's index.
  int add_image(std::string_view manifest, const void *bytes, std::size_t size);

  /// The kernel registered under `key`, with its entry for `target` on a device of
  /// architecture `device_arch` (empty: any): of the images that can run there, the one
  /// that fits best (arch_fit), the first registered among equals; nullopt when the key is
  /// unknown.
  std::optional<Lookup> find(std::string_view key, std::string_view target, std::string_view device_arch = {}) const;

  /// The entry of `kernel` in `image` on `backend`, loading the image there on first use.
  /// Thread-safe. Throws tile::error with the backend's cause when loading fails (and tries
  /// again on the next call).
  /// `entry`: the kernel's own, its fallback (KernelInfo::fallback) or its entry without
  /// pairs (KernelInfo::unpaired); the kernel's own where it has no such entry.
  enum class Entry { Own, Fallback, Unpaired };
  FunctionHandle function(Image &image, const KernelInfo &kernel, Backend &backend, Entry entry = Entry::Own);

private:
  struct Binding {
    std::string target;
    Image *image;
    const KernelInfo *kernel;
  };
  struct Record {
    std::vector<Binding> bindings; // one per target and architectures, in registration order
    std::string conflict;
  };

  /// Lets find() look a key up without copying it.
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Image>> images_;
  std::unordered_map<std::string, Record, KeyHash, std::equal_to<>> kernels_;
};

} // namespace tile::runtime
