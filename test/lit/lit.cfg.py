# lit configuration of tile's test suite. Run through ctest (test/CMakeLists.txt) or as
#   lit.py -sv --param tile_site_config=BUILD/test/lit/lit.site.cfg.py test/lit
import os
import lit.formats
import lit.util

site = lit_config.params.get("tile_site_config")
if site and not getattr(config, "tile_binary_dir", None):
    lit_config.load_config(config, site)

config.name = "tile"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cpp"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tile_binary_dir, "test", "lit")

config.environment["PATH"] = os.pathsep.join([config.llvm_tools_dir, config.environment.get("PATH", "")])
# The suite's cache of compiled images, shared by its runs (the cache tests use their own):
# TILE_TEST_CACHE_HOME in test/CMakeLists.txt.
config.environment["XDG_CACHE_HOME"] = config.cache_home
config.environment["TILE_DEVICE"] = "cpu"
for var in ["HOME", "TMPDIR", "TILE_NUM_THREADS", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]

tile_cxx = os.path.join(config.tile_binary_dir, "bin", "tile-c++")
plugin = os.path.join(config.tile_binary_dir, "lib", "libtile.so")
include = os.path.join(config.tile_source_dir, "include")
config.substitutions.append(("%tile-cxx", tile_cxx))
clangxx = config.tile_clangxx
clangxx_plugin = "%s -std=c++20 -fplugin=%s -I%s" % (config.tile_clangxx, plugin, include)
if config.sanitize.upper() in ("ON", "1", "TRUE", "YES"):
    # Sanitized tile (cmake/TileSanitize.cmake): programs are compiled and linked with the
    # runtime's sanitizers, and clang is started with the ASan runtime the plugin needs
    # (tile-c++ does both itself).
    config.available_features.add("sanitize")
    clangxx = "%s %s" % (clangxx, config.sanitize_flags)
    lsan = os.environ.get("LSAN_OPTIONS", "")
    if "suppressions=" not in lsan:
        lsan = ":".join(o for o in [lsan, "suppressions=" + config.lsan_suppressions, "print_suppressions=0"] if o)
    clangxx_plugin = "env LD_PRELOAD=%s LSAN_OPTIONS=%s %s %s" % (config.sanitize_runtime, lsan, clangxx_plugin,
                                                                  config.sanitize_flags)
# clang++ with the plugin but without tile-c++ (what CMake users get).
config.substitutions.append(("%clangxx-plugin", clangxx_plugin))
config.substitutions.append(("%clangxx", clangxx))
config.substitutions.append(("%include", include))
config.substitutions.append(("%plugin", plugin))
config.substitutions.append(("%tile-src", config.tile_source_dir))
config.substitutions.append(("%tile-bin", config.tile_binary_dir))

# ccache: the compiler cache tests (driver/ccache.cpp).
ccache = lit.util.which("ccache", config.environment["PATH"])
if ccache:
    config.available_features.add("ccache")
    config.substitutions.append(("%ccache", ccache))
if config.nvcc and os.path.exists(config.nvcc):
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", config.nvcc))
# The HIP target's code objects: compiled by hipcc, unbundled and disassembled with LLVM's tools.
if all(p and os.path.exists(p) for p in (config.hipcc, config.offload_bundler, config.llvm_objdump)):
    config.available_features.add("hipcc")
    config.substitutions.append(("%hipcc", config.hipcc))
    config.substitutions.append(("%offload-bundler", config.offload_bundler))
    config.substitutions.append(("%llvm-objdump", config.llvm_objdump))
# tile/dlpack.h's tests need the DLPack header (Debian: libdlpack-dev).
if any(os.path.exists(os.path.join(d, "dlpack", "dlpack.h")) for d in ("/usr/include", "/usr/local/include")):
    config.available_features.add("dlpack")
