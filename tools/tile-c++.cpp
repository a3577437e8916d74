// tile-c++: compiles single-source tile programs, as nvcc and hipcc do for theirs.
//
// Runs clang++ 19 with the given arguments plus -std=c++20 (unless a -std= is given), the
// tile plugin, tile's include directory and, when linking, tile's runtime. Paths are found
// relative to this executable (PREFIX/bin/tile-c++ -> PREFIX/lib, PREFIX/include), which
// holds for the install tree and the build tree alike.
//
// Built with TILE_SANITIZE (cmake/TileSanitize.cmake), it also compiles and links with the
// sanitizers the runtime was built with, and starts clang with the ASan runtime preloaded,
// which the sanitized plugin needs.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

bool starts_with(const std::string &s, const char *p) { return s.rfind(p, 0) == 0; }

/// Whether the arguments ask for a link step (no -c, -S, -E, -fsyntax-only, -M/-MM).
bool links(const std::vector<std::string> &args) {
  for (auto &a : args)
    if (a == "-c" || a == "-S" || a == "-E" || a == "-fsyntax-only" || a == "-M" || a == "-MM" || a == "--version")
      return false;
  return true;
}

#ifdef TILE_SANITIZE_RUNTIME
/// Preloads the ASan runtime into clang, before whatever is preloaded already. The linker
/// clang starts inherits it; its leaks are suppressed unless LSAN_OPTIONS names other
/// suppressions.
void preload_sanitizer_runtime() {
  std::string preload = TILE_SANITIZE_RUNTIME;
  if (const char *old = std::getenv("LD_PRELOAD"); old && *old)
    preload += std::string(":") + old;
  setenv("LD_PRELOAD", preload.c_str(), 1);
  const char *lsan = std::getenv("LSAN_OPTIONS");
  std::string options = lsan ? lsan : "";
  if (options.find("suppressions=") == std::string::npos) {
    // Quietly: a compiler's stderr is read by people and tests.
    options += std::string(options.empty() ? "" : ":") + "suppressions=" + TILE_LSAN_SUPPRESSIONS +
               ":print_suppressions=0";
    setenv("LSAN_OPTIONS", options.c_str(), 1);
  }
}
#endif

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  fs::path self = fs::canonical("/proc/self/exe");
  fs::path prefix = self.parent_path().parent_path();
  fs::path lib = prefix / "lib";
  fs::path include = prefix / "include";
  if (!fs::exists(include / "tile" / "tile.h"))
    include = TILE_SOURCE_INCLUDE_DIR; // the build tree
  fs::path plugin = lib / "libtile.so";
  if (!fs::exists(plugin)) {
    std::fprintf(stderr, "tile-c++: the tile plugin is missing: %s\n", plugin.c_str());
    return 2;
  }
  const char *cxx_env = std::getenv("TILE_CXX");
  std::string cxx = cxx_env && *cxx_env ? cxx_env : TILE_CLANGXX;

  std::vector<std::string> cmd = {cxx};
  bool has_std = false;
  for (auto &a : args)
    has_std |= starts_with(a, "-std=");
  if (!has_std)
    cmd.push_back("-std=c++20");
  cmd.push_back("-fplugin=" + plugin.string());
  cmd.push_back("-I" + include.string());
#ifdef TILE_SANITIZE_RUNTIME
  std::istringstream sanitize_flags(TILE_SANITIZE_FLAGS);
  for (std::string f; sanitize_flags >> f;)
    cmd.push_back(f);
  preload_sanitizer_runtime();
#endif
  cmd.insert(cmd.end(), args.begin(), args.end());
  if (links(args) && !args.empty()) {
    cmd.push_back("-L" + lib.string());
    cmd.push_back("-Wl,-rpath," + lib.string());
    cmd.push_back("-ltile_runtime");
    cmd.push_back("-ldl");
    cmd.push_back("-lpthread");
  }
  if (const char *v = std::getenv("TILE_CXX_VERBOSE"); v && *v) {
    for (auto &c : cmd)
      std::fprintf(stderr, "%s ", c.c_str());
    std::fprintf(stderr, "\n");
  }
  std::vector<char *> cargv;
  for (auto &c : cmd)
    cargv.push_back(c.data());
  cargv.push_back(nullptr);
  execv(cxx.c_str(), cargv.data());
  std::fprintf(stderr, "tile-c++: cannot run %s: %s\n", cxx.c_str(), std::strerror(errno));
  return 2;
}
