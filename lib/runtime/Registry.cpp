#include "runtime/Registry.h"

#include <tuple>

#include "tile/detail/launch.h"
#include "tile/host.h"

namespace tile::runtime {

struct Registry::Image {
  Manifest manifest;
  const void *bytes;
  std::size_t size;
  // What is loaded, per backend; guarded by load_mutex so that one image loads once while
  // launches of other images go on.
  std::mutex load_mutex;
  std::map<const Backend *, ModuleHandle> modules;
  std::map<std::tuple<const Backend *, const KernelInfo *, Registry::Entry>, FunctionHandle> functions;
};

namespace {

std::string signature_text(const KernelInfo &k) {
  if (k.params.empty())
    return "-";
  std::string s;
  for (const ParamSignature &p : k.params)
    s += (s.empty() ? "" : ",") + to_string(p);
  return s;
}

} // namespace

Registry::Registry() = default;
Registry::~Registry() = default;

Registry &Registry::global() {
  // Leaked on purpose: static constructors of other objects fill it before main, and static
  // destructors may still launch kernels.
  static Registry *registry = new Registry();
  return *registry;
}

int Registry::add_image(std::string_view manifest, const void *bytes, std::size_t size) {
  auto image = std::make_unique<Image>();
  image->manifest = parse_manifest(manifest);
  image->bytes = bytes;
  image->size = size;

  std::lock_guard lock(mutex_);
  for (const KernelInfo &k : image->manifest.kernels) {
    Record &r = kernels_[k.key];
    if (!r.bindings.empty() && r.conflict.empty() && r.bindings.front().kernel->params != k.params)
      r.conflict = "its translation units disagree on its parameters (" +
                   signature_text(*r.bindings.front().kernel) + " and " + signature_text(k) +
                   "); rebuild them from the same source";
    bool have_target = false;
    for (const Binding &b : r.bindings)
      have_target |= b.target == image->manifest.target && b.image->manifest.archs == image->manifest.archs;
    if (!have_target)
      r.bindings.push_back(Binding{image->manifest.target, image.get(), &k});
  }
  images_.push_back(std::move(image));
  return int(images_.size()) - 1;
}

std::optional<Registry::Lookup> Registry::find(std::string_view key, std::string_view target,
                                               std::string_view device_arch) const {
  std::lock_guard lock(mutex_);
  auto it = kernels_.find(key);
  if (it == kernels_.end())
    return std::nullopt;
  const Record &r = it->second;
  Lookup l;
  l.display_name = r.bindings.front().kernel->display_name;
  l.conflict = r.conflict;
  int best = 0;
  for (const Binding &b : r.bindings) {
    if (b.target != target)
      continue;
    const int fit = arch_fit(b.image->manifest.archs, device_arch);
    if (fit > best) {
      best = fit;
      l.kernel = b.kernel;
      l.image = b.image;
    }
    l.other_archs_only |= fit == 0;
  }
  if (l.kernel) {
    l.other_archs_only = false;
    return l;
  }
  for (const Binding &b : r.bindings) {
    std::string archs;
    for (const std::string &a : b.image->manifest.archs)
      archs += (archs.empty() ? "" : " ") + a;
    l.targets += (l.targets.empty() ? "" : ", ") + b.target + (archs.empty() ? "" : " (" + archs + ")");
  }
  return l;
}

FunctionHandle Registry::function(Image &image, const KernelInfo &kernel, Backend &backend, Entry entry) {
  std::lock_guard lock(image.load_mutex);
  auto known = image.functions.find({&backend, &kernel, entry});
  if (known != image.functions.end())
    return known->second;
  auto loaded = image.modules.find(&backend);
  if (loaded == image.modules.end())
    loaded = image.modules.emplace(&backend, backend.load_module(image.bytes, image.size)).first;
  const std::string &symbol = entry == Entry::Fallback && kernel.fallback   ? kernel.fallback->symbol
                              : entry == Entry::Unpaired && kernel.unpaired ? kernel.unpaired->symbol
                                                                            : kernel.symbol;
  FunctionHandle fn = backend.find_function(loaded->second, symbol);
  image.functions.emplace(std::make_tuple(&backend, &kernel, entry), fn);
  return fn;
}

} // namespace tile::runtime

namespace tile::rt {

int register_image(const char *manifest, const char *image, std::size_t size) {
  if (!manifest)
    throw tile::error("tile::rt::register_image: null manifest");
  if (!image && size > 0)
    throw tile::error("tile::rt::register_image: null image of " + std::to_string(size) + " bytes");
  try {
    return runtime::Registry::global().add_image(manifest, image, size);
  } catch (const tile::error &e) {
    throw tile::error(std::string("tile::rt::register_image: ") + e.what());
  }
}

} // namespace tile::rt
