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
# A cache of compiled images shared by the suite's runs (the cache tests use their own).
config.environment["XDG_CACHE_HOME"] = os.path.join(config.tile_binary_dir, "test", "cache")
config.environment["TILE_DEVICE"] = "cpu"
for var in ["HOME", "TMPDIR", "TILE_NUM_THREADS"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]

tile_cxx = os.path.join(config.tile_binary_dir, "bin", "tile-c++")
plugin = os.path.join(config.tile_binary_dir, "lib", "libtile.so")
include = os.path.join(config.tile_source_dir, "include")
config.substitutions.append(("%tile-cxx", tile_cxx))
# clang++ with the plugin but without tile-c++ (what CMake users get).
config.substitutions.append(("%clangxx-plugin", "%s -std=c++20 -fplugin=%s -I%s" % (config.tile_clangxx, plugin, include)))
config.substitutions.append(("%clangxx", config.tile_clangxx))
config.substitutions.append(("%include", include))
config.substitutions.append(("%plugin", plugin))
config.substitutions.append(("%tile-src", config.tile_source_dir))
config.substitutions.append(("%tile-bin", config.tile_binary_dir))

if config.nvcc and os.path.exists(config.nvcc):
    config.available_features.add("nvcc")
    config.substitutions.append(("%nvcc", config.nvcc))
