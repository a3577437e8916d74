#include "Pipeline/Pipeline.h"

#include <algorithm>
#include <stdexcept>
#include <sstream>

#include "Pipeline/DeviceCompiler.h"
#include "Pipeline/Toolchain.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "ir/Visitor.h"
#include "targets/cpu/CpuCodegen.h"
#include "targets/cpu/CpuCompiler.h"
#include "targets/cuda/CudaCodegen.h"
#include "targets/cuda/CudaCompiler.h"
#include "targets/common/GpuLimits.h"
#include "targets/hip/HipCodegen.h"
#include "targets/hip/HipCompiler.h"
#include "transforms/BindThreads.h"
#include "transforms/InferLayout.h"
#include "transforms/InjectPipeline.h"
#include "transforms/InsertSync.h"
#include "transforms/PlanSharedMemory.h"
#include "transforms/LowerThreadLoops.h"
#include "transforms/LowerVectorAccess.h"
#include "transforms/CheckBounds.h"
#include "transforms/RollFallbackLoops.h"
#include "transforms/LowerFragments.h"
#include "transforms/LowerGemm.h"
#include "transforms/LowerMma.h"
#include "transforms/LowerTileOps.h"
#include "transforms/WarpSpecialize.h"

namespace tile::pipeline {

const std::vector<std::string> &pass_names(const std::string &target) {
  static const std::vector<std::string> cpu = {"frontend", "check-bounds", "lower-tile-ops", "codegen"};
  static const std::vector<std::string> cuda = {"frontend",        "check-bounds", "infer-layout", "warp-specialize", "lower-tile-ops", "lower-gemm",
                                                "lower-fragments", "bind-threads", "inject-pipeline", "insert-sync",
                                                "plan-shared-memory", "lower-thread-loops", "lower-vector-access",
                                                "roll-fallback-loops", "lower-mma",         "codegen"};
  return target == "cuda" || target == "hip" ? cuda : cpu; // the GPU targets share one pass list
}

bool is_pass_name(const std::string &name) {
  for (const char *target : {"cpu", "cuda"}) {
    auto &names = pass_names(target);
    if (std::find(names.begin(), names.end(), name) != names.end())
      return true;
  }
  return false;
}

namespace {

bool listed(const std::vector<std::string> &list, const std::string &pass) {
  return std::find(list.begin(), list.end(), pass) != list.end() ||
         std::find(list.begin(), list.end(), "all") != list.end();
}

/// The manifest of an image (format: lib/runtime/Manifest.h).
std::string manifest(const std::string &target, const std::vector<std::string> &archs,
                     const std::vector<ir::Kernel> &kernels, const std::vector<std::string> &symbols,
                     const std::vector<std::int64_t> &shared_bytes) {
  std::ostringstream os;
  os << "tile-image 2\ntarget " << target << "\n";
  if (!archs.empty()) {
    os << "archs";
    for (const std::string &a : archs)
      os << " " << a;
    os << "\n";
  }
  for (size_t i = 0; i < kernels.size(); ++i) {
    const ir::Kernel &k = kernels[i];
    if (!k.fallback_of.empty() || !k.unpaired_of.empty())
      continue; // listed under its kernel
    os << "kernel " << k.key << " " << symbols[i] << " " << k.launch_threads() << " " << shared_bytes[i]
       << " ";
    if (k.params.empty())
      os << "-";
    for (size_t p = 0; p < k.params.size(); ++p) {
      if (p)
        os << ",";
      if (k.params[p].tensor)
        os << "t" << ir::dtype_code(k.params[p].tensor->dtype) << "x" << k.params[p].tensor->rank();
      else
        os << "s" << ir::dtype_code(k.params[p].scalar->type);
    }
    // The name ends the line: no character of it may end the line early.
    std::string name = k.display_name;
    for (char &c : name)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        c = ' ';
    os << " " << name << "\n";
    for (const ir::Kernel::TensorMap &m : k.tensor_maps) {
      os << "tmap " << m.param << " " << m.swizzle_bytes << " ";
      for (size_t d = 0; d < m.box.size(); ++d)
        os << (d ? "x" : "") << m.box[d];
      os << (m.optional ? " optional\n" : "\n");
    }
    if (k.persistent)
      os << "persistent\n";
    if (k.cluster > 1)
      os << "cluster " << k.cluster << "\n";
    if (k.pair_dim >= 0)
      os << "pair " << k.pair_dim << "\n";
    for (size_t u = 0; u < kernels.size(); ++u)
      if (kernels[u].unpaired_of == k.key)
        os << "unpaired " << symbols[u] << " " << kernels[u].launch_threads() << " " << shared_bytes[u] << " "
           << kernels[u].blocks_per_sm << "\n";
    for (size_t f = 0; f < kernels.size(); ++f)
      if (kernels[f].fallback_of == k.key)
        os << "fallback " << symbols[f] << " " << kernels[f].launch_threads() << " "
           << shared_bytes[f] << "\n";
  }
  return os.str();
}

/// Runs one pass over every kernel with printing and verification around it.
class PassRunner {
public:
  PassRunner(const Options &o, const std::function<void(const std::string &)> &dump, Result &r)
      : opts_(o), dump_(dump), result_(r) {}

  /// `target` tags the printouts of passes after the frontend's.
  void set_target(std::string target) { target_ = std::move(target); }

  /// False when the pipeline stops after this pass.
  bool run(const std::string &name, std::vector<ir::Kernel> &kernels,
           const std::function<ir::Kernel(const ir::Kernel &)> &pass) {
    if (listed(opts_.print_before, name))
      print("before", name, kernels);
    if (pass)
      for (auto &k : kernels) {
        try {
          k = pass(k);
        } catch (const std::logic_error &e) { // a pass met what an earlier one promised away
          result_.messages.push_back({Message::Error, k.key,
                                      "internal error in tile kernel '" + k.display_name + "' in pass " + name + ": " +
                                          e.what() + "; please report this"});
          continue;
        }
        auto problems = ir::verify(k);
        if (!problems.empty())
          result_.messages.push_back({Message::Error, k.key,
                                      "internal error in tile kernel '" + k.display_name + "' after pass " + name +
                                          ": " + problems[0] + "; please report this"});
      }
    if (listed(opts_.print_after, name))
      print("after", name, kernels);
    return opts_.stop_after != name && result_.ok();
  }

private:
  void print(const char *when, const std::string &name, const std::vector<ir::Kernel> &kernels) {
    const std::string tag = name == "frontend" || target_.empty() ? "" : " [" + target_ + "]";
    for (auto &k : kernels)
      dump_("// -----// IR " + std::string(when) + " " + name + tag + " //----- //\n" + ir::to_string(k));
  }
  std::string target_;
  const Options &opts_;
  const std::function<void(const std::string &)> &dump_;
  Result &result_;
};

void dump_source(const std::function<void(const std::string &)> &dump, const std::string &pass,
                 const std::string &target, const std::string &source) {
  dump("// -----// source after " + pass + " [" + target + "] //----- //\n" + source);
}

/// Adds the image `compiled` for `target` to `result`, or the error of its compiler
/// (`compiler` names it in the message), and the verbose remarks. `archs`: the manifest's
/// architectures (empty: the image serves every device of the target).
void add_image(const std::string &target, const char *compiler, DeviceCompileResult compiled,
               const std::vector<ir::Kernel> &kernels, const std::vector<std::string> &symbols,
               const std::vector<std::int64_t> &shared_bytes, const std::string &unit, const Options &opts,
               Result &result, const std::vector<std::string> &archs = {}) {
  if (opts.verbose)
    for (const std::string &note : compiled.notes)
      result.messages.push_back({Message::Remark, "", note});
  const std::string kernel = kernels.empty() ? "" : kernels[0].key;
  const std::string kept =
      compiled.source_path.empty() ? "" : " (generated source kept at " + compiled.source_path + ")";
  if (compiled.timed_out) {
    const std::string limit = std::to_string(opts.compile_timeout) + " second" + (opts.compile_timeout == 1 ? "" : "s");
    std::string text = std::string(compiler) + " (" + compiled.program + ") did not finish within " + limit +
                       " on the code generated for " + unit + " and was stopped" + kept;
    if (!compiled.log.empty())
      text += ":\n" + compiled.log;
    result.messages.push_back(
        {Message::Error, kernel, text,
         "make the kernels of this file smaller (tile::unroll of a large extent copies its body that many times), "
         "or allow more time with -fplugin-arg-tile-compile-timeout=SECONDS"});
    return;
  }
  if (!compiled.ok) {
    std::string text = std::string(compiler) + " failed on the code generated for " + unit + kept;
    text += ":\n" + compiled.log;
    result.messages.push_back({Message::Error, kernel, text});
    return;
  }
  std::string for_archs;
  for (const std::string &a : archs)
    for_archs += (for_archs.empty() ? " for " : " ") + a;
  if (opts.verbose)
    result.messages.push_back({Message::Remark, "",
                               "tile: " + target + " image" + for_archs + " of " + unit + " (" + std::to_string(kernels.size()) +
                                   " kernel" + (kernels.size() == 1 ? "" : "s") + ") " +
                                   (compiled.cached ? "loaded from cache, no device compiler run" : "compiled")});
  result.images.push_back({target, manifest(target, archs, kernels, symbols, shared_bytes), std::move(compiled.image)});
}

void run_cpu(std::vector<ir::Kernel> kernels, const std::string &unit, const Options &opts,
             const std::function<void(const std::string &)> &dump, Result &result) {
  PassRunner passes(opts, dump, result);
  passes.set_target("cpu");
  if (!passes.run("lower-tile-ops", kernels,
                  [](const ir::Kernel &k) { return transforms::lower_tile_ops(k, transforms::IndexWidth::Wide); }))
    return;

  std::string source = cpu::emit_source(kernels);
  if (listed(opts.print_after, "codegen"))
    dump_source(dump, "codegen", "cpu", source);
  if (opts.stop_after == "codegen" || opts.syntax_only)
    return;

  std::vector<std::string> symbols;
  for (auto &k : kernels)
    symbols.push_back(cpu::kernel_symbol(k));
  cpu::CompileOptions co;
  co.cxx = opts.cxx;
  co.extra_flags = opts.sanitize_flags;
  co.cache_dir = opts.cache_dir;
  co.emit_source_dir = opts.emit_source_dir;
  co.timeout_seconds = opts.compile_timeout;
  add_image("cpu", "the CPU compiler", cpu::compile_cpu_image(source, unit, co), kernels, symbols,
            std::vector<std::int64_t>(kernels.size(), 0), unit, opts, result);
}

/// Gives `a` and `b` the same tensor maps where one's are the other's and some optional ones
/// more (a bulk store that one of them makes and the other does not): the other takes them
/// too, unused, so that the runtime's one set of maps serves either entry. False where they
/// differ otherwise.
bool same_tensor_maps(ir::Kernel &a, ir::Kernel &b) {
  const auto same = [](const ir::Kernel::TensorMap &x, const ir::Kernel::TensorMap &y) {
    return x.param == y.param && x.box == y.box && x.swizzle_bytes == y.swizzle_bytes && x.optional == y.optional;
  };
  ir::Kernel &fewer = a.tensor_maps.size() <= b.tensor_maps.size() ? a : b;
  const ir::Kernel &more = &fewer == &a ? b : a;
  for (size_t m = 0; m < more.tensor_maps.size(); ++m)
    if (m < fewer.tensor_maps.size() ? !same(fewer.tensor_maps[m], more.tensor_maps[m]) : !more.tensor_maps[m].optional)
      return false;
  fewer.tensor_maps = more.tensor_maps;
  if (!fewer.maps_missing && more.maps_missing)
    fewer.maps_missing = ir::make_var("maps_missing", ir::ScalarType::I32);
  return true;
}

/// The entry without pairs of `paired` (pair-blocks=auto), warp-specialized from its
/// laid-out IR with pairs off, appended to `kernels`; the paired kernel's remark says
/// where each runs. Where the two cannot take the same tensor maps (the runtime encodes one
/// set for either), the kernel is not paired: `paired` becomes the entry without pairs.
void add_unpaired(const ir::Kernel &laid_out, transforms::WarpSpecializeOptions o, ir::Kernel &paired,
                  std::vector<ir::Kernel> &kernels, const ir::Target &target) {
  o.pair_blocks = transforms::PairBlocks::Off;
  ir::Kernel alone = transforms::warp_specialize(laid_out, target, o);
  if (alone.blocks_per_sm <= 0 || !same_tensor_maps(alone, paired)) {
    const std::uint32_t at = paired.remarks.empty() ? 0 : paired.remarks.front().loc;
    paired = std::move(alone);
    paired.remarks.push_back({at, "blocks not paired: the kernel's entry without pairs would take other tensor "
                                  "maps (pair-blocks=on pairs them at every launch)"});
    return;
  }
  for (auto &r : paired.remarks)
    if (r.text.rfind("blocks in pairs", 0) == 0)
      r.text += "; launched so where the grid has more blocks than the SMs hold alone at once (" +
                std::to_string(alone.blocks_per_sm) + " an SM), else one by one from the kernel's entry without pairs";
  alone.unpaired_of = alone.key;
  alone.remarks.clear();
  kernels.push_back(std::move(alone));
}

/// The passes' remarks (-fplugin-arg-tile-remarks), once per architecture they hold for,
/// and per kernel its shared memory (when the codegen ran) and estimated registers.
void add_remarks(const std::string &target, const std::vector<std::string> &archs,
                 const std::vector<ir::Kernel> &kernels, const std::vector<std::int64_t> &shared_bytes,
                 Result &result) {
  for (const std::string &arch : archs) {
    const std::string tag = "[" + target + ":" + arch + "] ";
    for (size_t i = 0; i < kernels.size(); ++i) {
      const ir::Kernel &k = kernels[i];
      if (!k.fallback_of.empty() || !k.unpaired_of.empty())
        continue; // the same program, said once
      for (auto &r : k.remarks)
        result.messages.push_back({Message::Remark, k.key, tag + r.text, "", r.loc});
      if (i < shared_bytes.size()) {
        // Registers: the thread's arrays (fragments, locals) in 32-bit words, plus a few for
        // indices and addresses; nvcc's figure (ptxas -v) is the exact one.
        const std::int64_t words = (targets::thread_storage(k).bytes + 3) / 4;
        result.messages.push_back({Message::Remark, k.key,
                                   tag + "kernel '" + k.display_name + "': " + std::to_string(shared_bytes[i]) +
                                       " bytes of shared memory, about " + std::to_string(words + 24) +
                                       " registers per thread (estimated)"});
      }
    }
  }
}

/// What ptxas said of each entry of a CUDA image (nvcc's log, kept with cached images too):
/// a remark per kernel and architecture with its registers, stack and spills, and one for
/// each performance message ptxas gave about it (wgmma serialized, say).
void add_ptxas_remarks(const std::string &log, const std::vector<ir::Kernel> &kernels,
                       const std::vector<std::string> &symbols, Result &result) {
  for (const cuda::PtxasReport &r : cuda::parse_ptxas_report(log)) {
    const auto at = std::find(symbols.begin(), symbols.end(), r.symbol);
    if (at == symbols.end() || r.registers < 0)
      continue; // not one of the unit's kernels
    const ir::Kernel &k = kernels[at - symbols.begin()];
    const std::string who = "[cuda:" + r.arch + "] kernel '" + k.display_name + "'" +
                            (!k.fallback_of.empty()   ? " (its fallback without tensor maps)"
                             : !k.unpaired_of.empty() ? " (its entry without pairs)"
                                                      : "");
    std::string text = who + ": " + std::to_string(r.registers) + " registers a thread (ptxas), ";
    text += r.stack_bytes ? std::to_string(r.stack_bytes) + " bytes of stack, " : "no stack, ";
    text += r.spill_store_bytes || r.spill_load_bytes
                ? "spills: " + std::to_string(r.spill_store_bytes) + " bytes stored, " +
                      std::to_string(r.spill_load_bytes) + " bytes loaded"
                : "no spills";
    result.messages.push_back({Message::Remark, k.key, text});
    for (const std::string &m : r.messages)
      result.messages.push_back({Message::Remark, k.key, who + ": ptxas: " + m});
  }
}

/// The GPU pipelines, `kind` "cuda" or "hip": the same passes, each reading the target's
/// facts (warp size, tensor-core instruction, async copies, TMA); what differs is the
/// codegen and the device compiler at the end.
void run_gpu(const std::string &kind, const std::vector<ir::Kernel> &frontend_kernels, const std::string &unit,
             const Options &opts, const std::function<void(const std::string &)> &dump, Result &result) {
  const bool hip = kind == "hip";
  const std::vector<std::string> &given = hip ? opts.hip_archs : opts.cuda_archs;
  const std::vector<std::string> &archs = given.empty() ? ir::default_gpu_archs(kind) : given;
  // Architectures of one lowering class share a pipeline and a generated source (their
  // Target is the facts they share); each class gets its own image, which the runtime
  // chooses by the device's architecture.
  // wgmma is a lowering of gemms only: a unit without one keeps a single class where the
  // architectures otherwise agree.
  ir::GemmUse gemms;
  gemms.warpgroup = opts.gemm_wgmma;
  for (const ir::Kernel &k : frontend_kernels)
    ir::for_each_node(
        k.body, [](const ir::Expr &) {},
        [&](const ir::Stmt &s) {
          if (auto g = s->as<ir::GemmNode>()) {
            const std::pair types{g->a.buffer->dtype, g->b.buffer->dtype};
            if (std::find(gemms.operand_types.begin(), gemms.operand_types.end(), types) == gemms.operand_types.end())
              gemms.operand_types.push_back(types);
          }
        });
  const std::vector<std::vector<std::string>> classes = ir::gpu_arch_classes(kind, archs, gemms);
  struct Build {
    std::vector<std::string> archs;
    std::vector<ir::Kernel> kernels;
    targets::GpuSource source;
  };
  std::vector<Build> builds;
  for (const std::vector<std::string> &cls : classes) {
    std::string tag = kind;
    if (classes.size() > 1)
      for (size_t i = 0; i < cls.size(); ++i)
        tag += (i ? "+" : ":") + cls[i];
    PassRunner passes(opts, dump, result);
    passes.set_target(tag);
    const ir::Target target = ir::common_gpu_target(kind, cls);
    std::vector<ir::Kernel> kernels = frontend_kernels;
    transforms::InferLayoutOptions layout_options;
    layout_options.tensor_cores = !opts.gemm_fma;
    layout_options.warpgroup_mma = opts.gemm_wgmma;
    // warp-specialize; a kernel it gives tensor maps also goes on without them (its
    // fallback, built from its laid-out IR), which the runtime launches where a tensor
    // cannot be described by one. With pair-blocks=auto, a kernel it pairs also goes on
    // unpaired, which the runtime launches where the grid is too small for pairs.
    auto warp_specialize = [&] {
      const std::vector<ir::Kernel> laid_out = kernels;
      transforms::WarpSpecializeOptions o;
      o.stages = opts.stages;
      o.overlap_gemms = opts.overlap_gemms;
      o.pingpong = opts.pingpong;
      o.bulk_store = opts.bulk_store;
      o.multicast = opts.multicast;
      o.pair_blocks = opts.pair_blocks;
      const bool go_on = passes.run("warp-specialize", kernels, [&](const ir::Kernel &k) {
        return opts.warp_specialize ? transforms::warp_specialize(k, target, o) : k;
      });
      for (size_t i = 0; i < laid_out.size(); ++i) {
        if (kernels[i].tensor_maps.empty())
          continue;
        if (kernels[i].pair_dim >= 0 && opts.pair_blocks == transforms::PairBlocks::Auto)
          add_unpaired(laid_out[i], o, kernels[i], kernels, target);
        if (kernels[i].tensor_maps.empty())
          continue; // (no fallback without maps to fall back from)
        ir::Kernel fallback = laid_out[i];
        fallback.fallback_of = fallback.key;
        fallback.remarks.clear();
        kernels.push_back(std::move(fallback));
      }
      return go_on;
    };
    if (!passes.run("infer-layout", kernels,
                    [&](const ir::Kernel &k) { return transforms::infer_layout(k, target, layout_options); }) ||
        !warp_specialize() ||
        !passes.run("lower-tile-ops", kernels,
                    [](const ir::Kernel &k) { return transforms::lower_tile_ops(k, transforms::IndexWidth::Narrow); }) ||
        !passes.run("lower-gemm", kernels, transforms::lower_gemm) ||
        !passes.run("lower-fragments", kernels,
                    [&](const ir::Kernel &k) { return transforms::lower_fragments(k, target); }) ||
        !passes.run("bind-threads", kernels, [&](const ir::Kernel &k) { return transforms::bind_threads(k, target); }) ||
        !passes.run("inject-pipeline", kernels,
                    [&](const ir::Kernel &k) { return transforms::inject_pipeline(k, opts.stages); }) ||
        !passes.run("insert-sync", kernels, transforms::insert_sync) ||
        !passes.run("plan-shared-memory", kernels,
                    [&](const ir::Kernel &k) { return transforms::plan_shared_memory(k, target); }) ||
        !passes.run("lower-thread-loops", kernels, transforms::lower_thread_loops) ||
        !passes.run("lower-vector-access", kernels,
                    [&](const ir::Kernel &k) { return transforms::lower_vector_access(k, target); }) ||
        !passes.run("roll-fallback-loops", kernels, transforms::roll_fallback_loops) ||
        !passes.run("lower-mma", kernels, [&](const ir::Kernel &k) { return transforms::lower_mma(k, target); })) {
      if (opts.remarks && result.ok())
        add_remarks(kind, cls, kernels, {}, result);
      if (!result.ok())
        return;
      continue; // stopped after a pass: the other classes print theirs too
    }

    std::vector<std::int64_t> shared_bytes;
    for (auto &k : kernels)
      shared_bytes.push_back(k.shared_bytes);
    if (opts.remarks)
      add_remarks(kind, cls, kernels, shared_bytes, result);
    targets::GpuSource source = hip ? hip::emit_source(kernels, target) : cuda::emit_source(kernels, target);
    if (listed(opts.print_after, "codegen"))
      dump_source(dump, "codegen", tag, source.text);
    builds.push_back({cls, std::move(kernels), std::move(source)});
  }
  // Each kernel's needs against every architecture at once: one that fits some of them is
  // a warning, not an error of the class that it does not fit.
  // (A kernel's fallback, where a class has one, needs no more than the kernel.)
  for (size_t i = 0; !builds.empty() && i < frontend_kernels.size(); ++i) {
    std::vector<targets::KernelBuild> per_class;
    for (const Build &b : builds)
      for (const ir::Kernel &k : b.kernels)
        if (k.key == frontend_kernels[i].key && k.fallback_of.empty() && k.unpaired_of.empty())
          per_class.push_back({&k, k.shared_bytes, b.archs});
    // (CUDA runs first: a kernel it could not run is an error there already.)
    for (auto &p : targets::check_limits(kind, per_class, hip && opts.target_cuda))
      result.messages.push_back({p.warning ? Message::Warning : Message::Error, frontend_kernels[i].key, p.message, p.note});
  }
  if (!result.ok() || builds.size() < classes.size())
    return;
  // Classes whose lowering came out the same (sm_90a's gemms all on mma.sync, say) share
  // one image.
  for (size_t i = 0; i < builds.size(); ++i)
    for (size_t j = i + 1; j < builds.size();)
      if (builds[j].source.text == builds[i].source.text) {
        builds[i].archs.insert(builds[i].archs.end(), builds[j].archs.begin(), builds[j].archs.end());
        builds.erase(builds.begin() + j);
      } else {
        ++j;
      }
  if (opts.stop_after == "codegen" || opts.syntax_only)
    return;

  for (Build &b : builds) {
    std::vector<std::string> symbols;
    for (auto &k : b.kernels)
      symbols.push_back(hip ? hip::kernel_symbol(k) : cuda::kernel_symbol(k));
    // With several images, each names its architectures, and its generated file its first
    // (unit.sm_75.cu).
    const bool several = builds.size() > 1;
    std::string name = unit;
    if (several) {
      const size_t slash = name.find_last_of('/'), dot = name.rfind('.');
      name.insert(dot == std::string::npos || (slash != std::string::npos && dot < slash) ? name.size() : dot,
                  "." + b.archs[0]);
    }
    if (hip) {
      hip::CompileOptions co;
      co.hipcc = opts.hipcc;
      co.archs = b.archs;
      co.cache_dir = opts.cache_dir;
      co.emit_source_dir = opts.emit_source_dir;
      co.timeout_seconds = opts.compile_timeout;
      add_image("hip", "hipcc", hip::compile_hip_image(b.source.text, name, co), b.kernels, symbols,
                b.source.shared_bytes, unit, opts, result, several ? b.archs : std::vector<std::string>{});
      continue;
    }
    cuda::CompileOptions co;
    co.nvcc = opts.nvcc;
    co.archs = b.archs;
    co.cache_dir = opts.cache_dir;
    co.emit_source_dir = opts.emit_source_dir;
    co.timeout_seconds = opts.compile_timeout;
    pipeline::DeviceCompileResult compiled = cuda::compile_cuda_image(b.source.text, name, co);
    if (opts.remarks && compiled.ok)
      add_ptxas_remarks(compiled.log, b.kernels, symbols, result);
    add_image("cuda", "nvcc", std::move(compiled), b.kernels, symbols,
              b.source.shared_bytes, unit, opts, result, several ? cuda::image_archs(b.archs) : std::vector<std::string>{});
  }
}

} // namespace

Result run(const std::vector<ir::Kernel> &kernels, const std::string &unit, const Options &opts,
           const std::function<void(const std::string &)> &dump) {
  Result result;
  // A fingerprint on the command line (tile-c++ adds it for a compiler cache) is what this
  // compile's images are cached under: built by other device compilers or for another CPU
  // (a compile on another machine, a compiler changed since), they would be stored under a
  // key that does not describe them.
  if (!opts.toolchain.empty() && !opts.syntax_only && opts.stop_after.empty()) {
    ToolchainFingerprint here = toolchain_fingerprint(opts);
    if (here.hash != opts.toolchain) {
      result.messages.push_back(
          {Message::Error, "",
           "tile: the device compilers or the CPU of this compile are not those of its toolchain fingerprint "
           "(-fplugin-arg-tile-toolchain=" + opts.toolchain + "; here it is " + here.hash +
               "): a compiler cache would keep its images under a key that does not describe them",
           "compile where tile-c++ took the fingerprint (with distcc, on machines with the same device compilers "
           "and CPU), or leave -fplugin-arg-tile-toolchain= to tile-c++; -fplugin-arg-tile-print-toolchain prints "
           "what goes into it"});
      return result;
    }
  }
  // The frontend's IR is the same for every target: printed once.
  std::vector<ir::Kernel> verified = kernels;
  PassRunner frontend(opts, dump, result);
  if (!frontend.run("frontend", verified, nullptr))
    return result;
  // check-bounds is every target's: it runs once, before the targets' own passes.
  transforms::CheckBoundsOptions check;
  check.on = opts.check_bounds;
  check.where = opts.where;
  if (!frontend.run("check-bounds", verified, [&](const ir::Kernel &k) { return transforms::check_bounds(k, check); }))
    return result;
  // With stop-after, only the targets whose pipeline has that pass run.
  auto runs = [&](const char *target) {
    auto &names = pass_names(target);
    return opts.stop_after.empty() || std::find(names.begin(), names.end(), opts.stop_after) != names.end();
  };
  if (opts.target_cpu && runs("cpu"))
    run_cpu(verified, unit, opts, dump, result);
  if (opts.target_cuda && runs("cuda") && result.ok())
    run_gpu("cuda", verified, unit, opts, dump, result);
  if (opts.target_hip && runs("hip") && result.ok())
    run_gpu("hip", verified, unit, opts, dump, result);
  return result;
}

} // namespace tile::pipeline
