// The autotuner: several compiled instantiations of a kernel (tile sizes, threads, stages)
// behind one callable that, at the first launch for a shape class on a device, times them
// all on that launch's arguments, keeps the fastest, and remembers the choice on disk.
//
//   static auto gemm = tile::autotune("gemm_bf16",
//                                     tile::candidate("128x256x64 s3", &matmul<128, 256, 64, 3>),
//                                     tile::candidate("128x128x32 s2", &matmul<128, 128, 32, 2>));
//   gemm(A, B, C);
//
// Every candidate is a kernel compiled ahead of time with the rest of the file: tuning runs
// no compiler. The manual: docs/host.md, "Autotuning".
#pragma once

#include <tile/host.h>
#include <tile/tensor.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace tile {

/// One kernel instantiation the autotuner may choose, with the label the tuning cache,
/// tuning files and reports know it by (no tabs or newlines; unique in its autotuner).
template <class Sig> struct tuning_candidate;
template <class... P> struct tuning_candidate<void(P...)> {
  std::string label;
  void (*launch)(P...) = nullptr;
};

/// `tile::candidate("128x256x64 s3", &matmul<128, 256, 64, 3>)`.
template <class... P> tuning_candidate<void(P...)> candidate(std::string label, void (*kernel)(P...)) {
  return {std::move(label), kernel};
}

namespace detail {

/// What the runtime decided for one shape class: the candidate's index, a sentence that
/// says what was chosen and why (the timings, or where the choice was read from), and
/// whether it was timed in this process (else a launch that fails asks again).
struct tuning_decision {
  std::size_t index = 0;
  std::string explanation;
  bool timed = false;
};

/// Chooses among `labels` (of kernels whose parameters `signature` names) for `kernel` and
/// `shape_class` on the current device: from a loaded tuning file, else the tuning cache,
/// else by timing `run(i)` (which launches candidate i on the call's arguments) for each
/// candidate. `failed` (when not npos) is a choice that was recalled and failed to launch:
/// it is not taken again, and the class is tuned anew (with TILE_TUNE=off, the first other
/// candidate that launches). Throws tile::error when every candidate fails.
tuning_decision autotune_choose(const std::string &kernel, const std::string &signature,
                                const std::vector<std::string> &labels, const std::string &shape_class,
                                const std::function<void(std::size_t)> &run, std::size_t failed = std::size_t(-1));
/// Throws tile::error naming `kernel` when a label is empty, repeated or holds a tab or a
/// newline, or there are no candidates.
void check_tuning_labels(const std::string &kernel, const std::vector<std::string> &labels);

template <class T> struct is_tensor_view : std::false_type {};
template <class T, int R> struct is_tensor_view<tensor<T, R>> : std::true_type {};

/// The smallest power of two at least `n` (0 for n <= 0).
inline std::int64_t size_bucket(std::int64_t n) {
  std::int64_t b = 1;
  if (n <= 0)
    return 0;
  while (b < n && b < (std::int64_t(1) << 62))
    b *= 2;
  return b;
}

template <class T> void append_shape_class(std::string &out, const T &x) {
  if constexpr (is_tensor_view<T>::value) {
    if (!out.empty())
      out += ' ';
    for (int d = 0; d < T::rank; ++d)
      out += (d ? "x" : "") + std::to_string(size_bucket(x.size(d)));
  } else if constexpr (std::is_integral_v<T>) {
    if (!out.empty())
      out += ' ';
    out += std::to_string(x);
  }
  // Floating-point scalars and streams do not change which tiles are fastest.
}

} // namespace detail

/// The callable tile::autotune returns. Launching it launches the chosen candidate.
template <class Sig> class autotuner;
template <class... P> class autotuner<void(P...)> {
public:
  using candidate_type = tuning_candidate<void(P...)>;
  /// A shape class from the launch's arguments: launches of one class share a choice.
  using shape_class_function = std::function<std::string(const std::remove_cvref_t<P> &...)>;

  autotuner(std::string name, std::vector<candidate_type> candidates)
      : name_(std::move(name)), candidates_(std::move(candidates)) {
    for (const candidate_type &c : candidates_)
      labels_.push_back(c.label);
    detail::check_tuning_labels(name_, labels_);
  }

  /// Replaces the default shape class: each tensor's sizes rounded up to powers of two
  /// ("2048x4096 4096x1024"), then integer scalars as they are.
  autotuner &shape_class(shape_class_function f) {
    shape_class_ = std::move(f);
    return *this;
  }

  /// Launches the candidate chosen for these arguments' shape class on the current
  /// device, timing the candidates first where no choice is known (each runs several
  /// times on these arguments: see the manual on what that asks of the kernel). The
  /// arguments convert to the kernels' parameters as in a call of a kernel.
  void operator()(P... p) {
    const decision d = choose(p...);
    try {
      candidates_[d.index].launch(p...);
    } catch (const tile::error &) {
      if (d.timed)
        throw;
      // A choice read from a file or the cache (or TILE_TUNE=off's first candidate) that
      // does not launch here: choose again without it.
      candidates_[choose(p..., d.index).index].launch(p...);
    }
  }

  /// The label of the candidate chosen for these arguments (tuning first if need be).
  std::string choice(P... p) { return labels_[choose(p...).index]; }

  /// What the decision of the last launch (or choice()) was, and why.
  std::string explanation() const {
    std::lock_guard lock(mutex_);
    return explanation_;
  }
  const std::string &name() const { return name_; }
  const std::vector<candidate_type> &candidates() const { return candidates_; }

  /// The shape class of these arguments.
  std::string shape_class_of(const std::remove_cvref_t<P> &...p) const {
    if (shape_class_)
      return shape_class_(p...);
    std::string s;
    (detail::append_shape_class(s, p), ...);
    return s;
  }

private:
  using decision = detail::tuning_decision;

  /// The decision for these arguments; `failed`: a recalled choice that did not launch.
  decision choose(const std::remove_cvref_t<P> &...p, std::size_t failed = std::size_t(-1)) {
    const std::string cls = shape_class_of(p...);
    const std::string key = current_device().name() + '\t' + cls;
    std::lock_guard lock(mutex_);
    if (auto it = chosen_.find(key); it != chosen_.end() && failed == std::size_t(-1)) {
      explanation_ = it->second.explanation;
      return it->second;
    }
    decision d = detail::autotune_choose(
        name_, typeid(void (*)(P...)).name(), labels_, cls, [&](std::size_t i) { candidates_[i].launch(p...); },
        failed);
    explanation_ = d.explanation;
    chosen_[key] = d;
    return d;
  }

  std::string name_;
  std::vector<candidate_type> candidates_;
  std::vector<std::string> labels_;
  shape_class_function shape_class_;
  mutable std::mutex mutex_;
  std::map<std::string, decision> chosen_; // device name and shape class -> decision
  std::string explanation_;
};

/// An autotuner named `name` (the key of its choices in tuning caches and files) over
/// candidates of one signature.
template <class... P, class... More>
autotuner<void(P...)> autotune(std::string name, tuning_candidate<void(P...)> first, More... more) {
  static_assert((std::is_same_v<More, tuning_candidate<void(P...)>> && ...),
                "tile::autotune: every candidate is a kernel with the same parameters");
  return autotuner<void(P...)>(std::move(name), {std::move(first), std::move(more)...});
}

/// Tuning files: choices made on some device, written by a run with TILE_TUNE=record, and
/// read back so that a program uses them without timing.
namespace tuning {
/// Reads the entries of a tuning file's text (from `#embed`, say); `origin` names it in
/// errors and explanations. A malformed line throws tile::error naming `origin` and the line.
void load(std::string_view text, const std::string &origin = "an embedded tuning table");
/// Reads a tuning file. Throws tile::error when it cannot be read or is malformed.
void load_file(const std::string &path);
/// Writes every choice loaded or made in this process to `path` (a tuning file).
void save(const std::string &path);
/// Forgets the tuning files loaded and the tuning cache read: the next choice reads
/// TILE_TUNING_FILE and the cache again. (Choices an autotuner already made stay with it.)
void reset();
} // namespace tuning

} // namespace tile
