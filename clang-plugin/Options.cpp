#include "Options.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Program.h"

#include "ir/Target.h"
#include "targets/cuda/CudaCompiler.h"
#include "targets/hip/HipCompiler.h"

namespace tile::plugin {

namespace {
std::vector<std::string> split(llvm::StringRef s, char sep) {
  llvm::SmallVector<llvm::StringRef> parts;
  s.split(parts, sep, -1, /*KeepEmpty=*/false);
  return {parts.begin(), parts.end()};
}

bool parse_targets(llvm::StringRef value, pipeline::Options &o, std::string &problem) {
  o.targets_given = true;
  o.target_cpu = o.target_cuda = o.target_hip = false;
  for (const std::string &t : split(value, ',')) {
    auto [kind, archs] = llvm::StringRef(t).split(':');
    if (kind == "cpu" && archs.empty()) {
      o.target_cpu = true;
    } else if (kind == "cuda") {
      o.target_cuda = true;
      o.cuda_archs = archs.empty() ? std::vector<std::string>{"sm_90a", "sm_80"} : split(archs, '+');
    } else if (kind == "hip") {
      o.target_hip = true;
      o.hip_archs = archs.empty() ? std::vector<std::string>{"gfx90a"} : split(archs, '+');
    } else {
      problem = "unknown target '" + t + "' in targets=; write targets=cpu, cuda:sm_90a+sm_80 or hip:gfx90a, "
                "separated by commas";
      return false;
    }
  }
  if (o.target_cuda) {
    cuda::cuda_compile_flags(o.cuda_archs, problem);
    if (!problem.empty())
      return false;
  }
  if (o.target_hip) {
    hip::hip_compile_flags(o.hip_archs, problem);
    if (!problem.empty())
      return false;
  }
  return true;
}
} // namespace

bool parse_options(const std::vector<std::string> &args, pipeline::Options &o, std::string &problem) {
  for (const std::string &arg : args) {
    auto [name, value] = llvm::StringRef(arg).split('=');
    bool has_value = arg.find('=') != std::string::npos;
    auto need_value = [&]() {
      if (has_value && !value.empty())
        return true;
      problem = "option '" + name.str() + "' needs a value: -fplugin-arg-tile-" + name.str() + "=VALUE";
      return false;
    };
    // A whole number from lo to hi, or a problem naming what was expected.
    auto bounded = [&](unsigned lo, unsigned hi, const std::string &what, unsigned &out) {
      if (!need_value())
        return false;
      if (value.getAsInteger(10, out) || out < lo || out > hi) {
        problem = name.str() + "=" + value.str() + ": expected " + what;
        return false;
      }
      return true;
    };
    if (name == "targets") {
      if (!need_value() || !parse_targets(value, o, problem))
        return false;
    } else if (name == "print-after" || name == "print-before") {
      if (!need_value())
        return false;
      for (const std::string &p : split(value, ',')) {
        if (p != "all" && !pipeline::is_pass_name(p)) {
          problem = "unknown pass '" + p + "' in " + name.str() + "=; the passes are:";
          for (const char *target : {"cpu", "cuda, hip"}) {
            problem += std::string(" (") + target + ")";
            for (const std::string &n : pipeline::pass_names(target == std::string("cpu") ? "cpu" : "cuda"))
              problem += " " + n;
          }
          return false;
        }
        (name == "print-after" ? o.print_after : o.print_before).push_back(p);
      }
    } else if (name == "stop-after") {
      if (!need_value())
        return false;
      if (!pipeline::is_pass_name(value.str())) {
        problem = "unknown pass '" + value.str() + "' in stop-after=";
        return false;
      }
      o.stop_after = value.str();
    } else if (name == "emit-source") {
      if (!need_value())
        return false;
      o.emit_source_dir = value.str();
    } else if (name == "cache") {
      if (!need_value())
        return false;
      o.cache_dir = value.str();
    } else if (name == "nvcc" || name == "hipcc" || name == "cxx") {
      if (!need_value())
        return false;
      (name == "nvcc" ? o.nvcc : name == "hipcc" ? o.hipcc : o.cxx) = value.str();
    } else if (name == "compile-timeout") {
      unsigned seconds = 0;
      if (!bounded(1, 604800, "a whole number of seconds from 1 to 604800", seconds))
        return false;
      o.compile_timeout = seconds;
    } else if (name == "verbose") {
      o.verbose = !has_value || value == "1" || value == "true";
    } else if (name == "remarks") {
      o.remarks = !has_value || value == "1" || value == "true";
    } else if (name == "check-bounds") {
      if (has_value && value != "1" && value != "true" && value != "0" && value != "false") {
        problem = "check-bounds=" + value.str() + ": expected check-bounds (every element access to a tensor "
                  "checks its index at run time) or check-bounds=0";
        return false;
      }
      o.check_bounds = !has_value || value == "1" || value == "true";
    } else if (name == "gemm") {
      if (!need_value())
        return false;
      if (value != "fma" && value != "auto" && value != "mma" && value != "wgmma") {
        problem = "gemm=" + value.str() + ": expected gemm=auto (the default: tensor cores where the gemm fits them, "
                  "on sm_90a Hopper's wgmma where it takes the gemm), gemm=mma (tensor cores through mma.sync only) "
                  "or gemm=fma (every gemm on FMA)";
        return false;
      }
      o.gemm_fma = value == "fma";
      o.gemm_wgmma = value == "auto" || value == "wgmma";
    } else if (name == "warp-specialize") {
      if (!need_value())
        return false;
      if (value != "on" && value != "off") {
        problem = "warp-specialize=" + value.str() + ": expected warp-specialize=on (the default: on sm_90a a "
                  "producer warpgroup runs a pipelined loop's copies as bulk tensor copies) or warp-specialize=off";
        return false;
      }
      o.warp_specialize = value == "on";
    } else if (name == "overlap-gemms") {
      if (!need_value())
        return false;
      if (value != "on" && value != "off") {
        problem = "overlap-gemms=" + value.str() + ": expected overlap-gemms=on (a warp-specialized loop's last "
                  "gemm runs on into the next iteration) or overlap-gemms=off (the default)";
        return false;
      }
      o.overlap_gemms = value == "on";
    } else if (name == "pingpong") {
      if (!need_value())
        return false;
      if (value != "on" && value != "off") {
        problem = "pingpong=" + value.str() + ": expected pingpong=on (a warp-specialized loop's two consumer "
                  "warpgroups take turns at the tensor cores; the default) or pingpong=off";
        return false;
      }
      o.pingpong = value == "on";
    } else if (name == "bulk-store") {
      if (!need_value())
        return false;
      if (value != "on" && value != "off") {
        problem = "bulk-store=" + value.str() + ": expected bulk-store=on (a warp-specialized kernel's epilogue "
                  "copies into tensors go by bulk tensor stores; the default) or bulk-store=off";
        return false;
      }
      o.bulk_store = value == "on";
    } else if (name == "pair-blocks") {
      if (!need_value())
        return false;
      if (value != "on" && value != "off" && value != "auto") {
        problem = "pair-blocks=" + value.str() + ": expected pair-blocks=auto (the default: a warp-specialized "
                  "loop of one gemm has two of the grid's blocks run by a launched block, a consumer warpgroup "
                  "each, that load the tiles they share once, where the grid fills the SMs), pair-blocks=on "
                  "(every loop that can, at every launch) or pair-blocks=off";
        return false;
      }
      o.pair_blocks = value == "on"    ? transforms::PairBlocks::On
                      : value == "off" ? transforms::PairBlocks::Off
                                       : transforms::PairBlocks::Auto;
    } else if (name == "multicast") {
      if (!need_value())
        return false;
      if (value != "on" && value != "off") {
        problem = "multicast=" + value.str() + ": expected multicast=on (a warp-specialized loop's tiles that "
                  "neighbouring blocks share are loaded once for both, in clusters of two) or multicast=off (the "
                  "default)";
        return false;
      }
      o.multicast = value == "on";
    } else if (name == "toolchain") {
      if (!need_value())
        return false;
      o.toolchain = value.str();
    } else if (name == "print-toolchain") {
      o.print_toolchain = !has_value || value == "1" || value == "true";
    } else if (name == "stages") {
      unsigned n = 0;
      if (!bounded(1, 16, "a stage count from 1 to 16 for every pipelined loop", n))
        return false;
      o.stages = int(n);
    } else {
      problem = "unknown option '" + name.str() + "'; the options are targets=, print-after=, print-before=, "
                "stop-after=, emit-source=, cache=, compile-timeout=, nvcc=, hipcc=, cxx=, gemm=, warp-specialize=, overlap-gemms=, pingpong=, bulk-store=, multicast=, pair-blocks=, stages=, "
                "toolchain=, print-toolchain, check-bounds, verbose and "
                "remarks";
      return false;
    }
  }
  // The default targets: the CPU, CUDA when there is an nvcc to build it with, and HIP when
  // there is a hipcc.
  if (!o.targets_given) {
    o.target_cuda = !o.nvcc.empty() || !cuda::default_nvcc().empty();
    o.target_hip = !o.hipcc.empty() || !hip::default_hipcc().empty();
    if (o.target_hip && o.hip_archs.empty())
      o.hip_archs = ir::default_gpu_archs("hip");
  }
  return true;
}

} // namespace tile::plugin
