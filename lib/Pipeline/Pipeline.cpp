#include "Pipeline/Pipeline.h"

#include <algorithm>
#include <sstream>

#include "Pipeline/DeviceCompiler.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "targets/cpu/CpuCodegen.h"
#include "targets/cpu/CpuCompiler.h"
#include "transforms/LowerTileOps.h"

namespace tile::pipeline {

const std::vector<std::string> &pass_names(const std::string &target) {
  static const std::vector<std::string> cpu = {"frontend", "lower-tile-ops", "codegen"};
  (void)target;
  return cpu;
}

bool is_pass_name(const std::string &name) {
  auto &names = pass_names("cpu");
  return std::find(names.begin(), names.end(), name) != names.end();
}

namespace {

bool listed(const std::vector<std::string> &list, const std::string &pass) {
  return std::find(list.begin(), list.end(), pass) != list.end() ||
         std::find(list.begin(), list.end(), "all") != list.end();
}

/// The manifest of an image (format: lib/runtime/Manifest.h).
std::string manifest(const std::string &target, const std::vector<ir::Kernel> &kernels,
                     const std::vector<std::string> &symbols) {
  std::ostringstream os;
  os << "tile-image 1\ntarget " << target << "\n";
  for (size_t i = 0; i < kernels.size(); ++i) {
    const ir::Kernel &k = kernels[i];
    os << "kernel " << k.key << " " << symbols[i] << " " << k.threads << " ";
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
    os << " " << k.display_name << "\n";
  }
  return os.str();
}

/// Runs one pass over every kernel with printing and verification around it.
class PassRunner {
public:
  PassRunner(const Options &o, const std::function<void(const std::string &)> &dump, Result &r)
      : opts_(o), dump_(dump), result_(r) {}

  /// False when the pipeline stops after this pass.
  bool run(const std::string &name, std::vector<ir::Kernel> &kernels,
           const std::function<ir::Kernel(const ir::Kernel &)> &pass) {
    if (listed(opts_.print_before, name))
      print("before", name, kernels);
    if (pass)
      for (auto &k : kernels) {
        k = pass(k);
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
    for (auto &k : kernels)
      dump_("// -----// IR " + std::string(when) + " " + name + " //----- //\n" + ir::to_string(k));
  }
  const Options &opts_;
  const std::function<void(const std::string &)> &dump_;
  Result &result_;
};

void dump_source(const std::function<void(const std::string &)> &dump, const std::string &pass,
                 const std::string &source) {
  dump("// -----// source after " + pass + " //----- //\n" + source);
}

void run_cpu(std::vector<ir::Kernel> kernels, const std::string &unit, const Options &opts,
             const std::function<void(const std::string &)> &dump, Result &result) {
  PassRunner passes(opts, dump, result);
  if (!passes.run("frontend", kernels, nullptr))
    return;
  if (!passes.run("lower-tile-ops", kernels, transforms::lower_tile_ops))
    return;

  std::string source = cpu::emit_source(kernels);
  if (listed(opts.print_after, "codegen"))
    dump_source(dump, "codegen", source);
  if (opts.stop_after == "codegen" || opts.syntax_only)
    return;

  std::vector<std::string> symbols;
  for (auto &k : kernels)
    symbols.push_back(cpu::kernel_symbol(k));
  cpu::CompileOptions co;
  co.cxx = opts.cxx;
  co.cache_dir = opts.cache_dir;
  co.emit_source_dir = opts.emit_source_dir;
  DeviceCompileResult compiled = cpu::compile_cpu_image(source, unit, co);
  if (!compiled.ok) {
    std::string text = "the CPU compiler failed on the code generated for " + unit;
    if (!compiled.source_path.empty())
      text += " (generated source kept at " + compiled.source_path + ")";
    text += ":\n" + compiled.log;
    result.messages.push_back({Message::Error, kernels.empty() ? "" : kernels[0].key, text});
    return;
  }
  if (opts.verbose)
    result.messages.push_back({Message::Remark, "",
                               "tile: cpu image of " + unit + " (" + std::to_string(kernels.size()) + " kernel" +
                                   (kernels.size() == 1 ? "" : "s") + ") " +
                                   (compiled.cached ? "loaded from cache, no device compiler run" : "compiled")});
  result.images.push_back({"cpu", manifest("cpu", kernels, symbols), std::move(compiled.image)});
}

} // namespace

Result run(const std::vector<ir::Kernel> &kernels, const std::string &unit, const Options &opts,
           const std::function<void(const std::string &)> &dump) {
  Result result;
  if (opts.target_cpu)
    run_cpu(kernels, unit, opts, dump, result);
  return result;
}

} // namespace tile::pipeline
