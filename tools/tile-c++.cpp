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
//
// Compiler caches (docs/compiling.md, "Build caches and distributed builds"): with
// TILE_CXX_LAUNCHER=ccache (or sccache, ...) it runs `ccache clang++ -fplugin=... ARGS
// -fplugin-arg-tile-toolchain=HEX`, where HEX is the toolchain fingerprint the plugin reports
// for these arguments (lib/Pipeline/Toolchain.h: the device compilers' versions and the host
// CPU), so that the cache, which hashes the plugin file and the command line, misses when a
// device compiler or the CPU changes. `tile-c++ --launch LAUNCHER... -- COMPILER ARGS` does
// the same as a CMake compiler launcher (CMAKE_CXX_COMPILER_LAUNCHER), for a COMPILER that is
// clang++ with -fplugin=.../libtile.so or tile-c++ itself.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <fcntl.h>
#include <sys/wait.h>
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

bool is_tile_arg(const std::string &a) { return starts_with(a, "-fplugin-arg-tile-"); }

/// The words of a command written in one string (TILE_CXX_LAUNCHER="ccache").
std::vector<std::string> words(const char *text) {
  std::vector<std::string> out;
  std::istringstream in(text ? text : "");
  for (std::string w; in >> w;)
    out.push_back(w);
  return out;
}

/// Runs `argv` (found on PATH) with stdin and stderr on /dev/null; its stdout, or nothing
/// when it cannot run or fails.
bool capture(const std::vector<std::string> &argv, std::string &out) {
  int fds[2];
  if (::pipe(fds) != 0)
    return false;
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return false;
  }
  if (pid == 0) {
    int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 2);
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    ::close(fds[1]);
    std::vector<char *> cargv;
    for (auto &a : argv)
      cargv.push_back(const_cast<char *>(a.c_str()));
    cargv.push_back(nullptr);
    ::execvp(cargv[0], cargv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      break;
    out.append(buf, size_t(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/// The toolchain fingerprint (lib/Pipeline/Toolchain.h) of a compile by `cxx` with `plugin`
/// and the tile options among `args`, as the plugin reports it; empty when it cannot be had
/// (the compile itself then says what is wrong with the options).
std::string toolchain_fingerprint(const std::string &cxx, const std::string &plugin,
                                  const std::vector<std::string> &args) {
  std::vector<std::string> probe = {cxx, "-fplugin=" + plugin};
  for (auto &a : args)
    if (is_tile_arg(a) && !starts_with(a, "-fplugin-arg-tile-toolchain="))
      probe.push_back(a);
  probe.insert(probe.end(), {"-fplugin-arg-tile-print-toolchain", "-fsyntax-only", "-x", "c++", "/dev/null"});
  std::string out;
  if (!capture(probe, out))
    return "";
  const std::string tag = "fingerprint ";
  size_t at = out.rfind(tag);
  if (at == std::string::npos || (at != 0 && out[at - 1] != '\n'))
    return "";
  std::string hex = out.substr(at + tag.size());
  while (!hex.empty() && (hex.back() == '\n' || hex.back() == '\r'))
    hex.pop_back();
  if (hex.size() != 64 || hex.find_first_not_of("0123456789abcdef") != std::string::npos)
    return "";
  return hex;
}

/// Whether this process was started by a compiler cache (`ccache tile-c++ ...`), which then
/// hashes tile-c++ alone: not the plugin, the clang it runs or the device compilers.
bool run_by_compiler_cache() {
  std::error_code ec;
  fs::path parent = fs::read_symlink("/proc/" + std::to_string(::getppid()) + "/exe", ec);
  if (ec)
    return false;
  const std::string name = parent.filename().string();
  return name == "ccache" || name == "sccache";
}

/// Runs `cmd` (cmd[0] is found on PATH when it names no path); returns only on failure.
int exec(const std::vector<std::string> &cmd) {
  if (const char *v = std::getenv("TILE_CXX_VERBOSE"); v && *v) {
    for (auto &c : cmd)
      std::fprintf(stderr, "%s ", c.c_str());
    std::fprintf(stderr, "\n");
  }
  std::vector<char *> cargv;
  for (auto &c : cmd)
    cargv.push_back(const_cast<char *>(c.c_str()));
  cargv.push_back(nullptr);
  ::execvp(cargv[0], cargv.data());
  std::fprintf(stderr, "tile-c++: cannot run %s: %s\n", cmd[0].c_str(), std::strerror(errno));
  return 2;
}

/// `tile-c++ --launch LAUNCHER... -- COMPILER ARGS...`: runs LAUNCHER... COMPILER ARGS, with
/// the toolchain fingerprint added when ARGS load the tile plugin; a COMPILER that is
/// tile-c++ runs with TILE_CXX_LAUNCHER set to the launcher instead.
int launch(const std::vector<std::string> &args) {
  size_t sep = 1;
  while (sep < args.size() && args[sep] != "--")
    ++sep;
  if (sep + 1 >= args.size()) {
    std::fprintf(stderr, "tile-c++: write --launch LAUNCHER... -- COMPILER ARGS... (as in "
                         "CMAKE_CXX_COMPILER_LAUNCHER=\"tile-c++;--launch;ccache;--\")\n");
    return 2;
  }
  std::vector<std::string> launcher(args.begin() + 1, args.begin() + sep);
  const std::string compiler = args[sep + 1];
  std::vector<std::string> rest(args.begin() + sep + 2, args.end());
  if (starts_with(fs::path(compiler).filename().string(), "tile-c++")) {
    std::string joined;
    for (auto &w : launcher)
      joined += (joined.empty() ? "" : " ") + w;
    setenv("TILE_CXX_LAUNCHER", joined.c_str(), 1);
    std::vector<std::string> cmd = {compiler};
    cmd.insert(cmd.end(), rest.begin(), rest.end());
    return exec(cmd);
  }
  std::string plugin;
  for (auto &a : rest)
    if (starts_with(a, "-fplugin=") && fs::path(a.substr(9)).filename() == "libtile.so")
      plugin = a.substr(9);
  std::vector<std::string> cmd = launcher;
  cmd.push_back(compiler);
  cmd.insert(cmd.end(), rest.begin(), rest.end());
  if (!plugin.empty()) {
    std::string fp = toolchain_fingerprint(compiler, plugin, rest);
    if (fp.empty()) // without it the cache could not tell device compilers apart: not used
      cmd.erase(cmd.begin(), cmd.begin() + std::ptrdiff_t(launcher.size()));
    else
      cmd.push_back("-fplugin-arg-tile-toolchain=" + fp);
  }
  return exec(cmd);
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
  if (!args.empty() && args[0] == "--launch")
    return launch(args);
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
  // A compiler cache (TILE_CXX_LAUNCHER) runs clang itself, with the toolchain fingerprint
  // on the command line it hashes; without a fingerprint (the plugin's options are wrong,
  // which the compile then says) it is not used.
  const std::vector<std::string> launcher = words(std::getenv("TILE_CXX_LAUNCHER"));
  if (!launcher.empty()) {
    std::string fp = toolchain_fingerprint(cxx, plugin.string(), args);
    if (!fp.empty()) {
      cmd.push_back("-fplugin-arg-tile-toolchain=" + fp);
      cmd.insert(cmd.begin(), launcher.begin(), launcher.end());
    }
  } else if (std::find(args.begin(), args.end(), "-c") != args.end() && run_by_compiler_cache() &&
             !std::getenv("TILE_CXX_QUIET_CACHE")) {
    std::fprintf(stderr, "tile-c++: warning: a compiler cache runs tile-c++ and hashes it alone, not the tile "
                         "plugin, clang or the device compilers, so it can hand out stale objects when they change; "
                         "set TILE_CXX_LAUNCHER=ccache (or sccache) and run tile-c++ without it (docs/compiling.md, "
                         "\"Build caches and distributed builds\")\n");
  }
  return exec(cmd);
}
