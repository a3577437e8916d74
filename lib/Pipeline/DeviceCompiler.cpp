#include "Pipeline/DeviceCompiler.h"

#include <cstdlib>
#include <map>
#include <mutex>

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

namespace tile::pipeline {

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace {

bool write_file(const std::string &file, const std::string &text, std::string *error = nullptr) {
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec, fs::OF_None);
  if (!ec) {
    os << text;
    os.close();
    if (os.has_error())
      ec = os.error();
  }
  if (ec && error)
    *error = "cannot write " + file + ": " + ec.message();
  return !ec;
}

bool read_file(const std::string &file, std::string &out) {
  auto buf = llvm::MemoryBuffer::getFile(file, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buf)
    return false;
  out = (*buf)->getBuffer().str();
  return true;
}

/// Runs `program args...` with stdout and stderr into `log_file`; -1 when it cannot start.
int run(const std::string &program, const std::vector<std::string> &args, const std::string &log_file,
        std::string &error) {
  std::vector<llvm::StringRef> argv{program};
  for (auto &a : args)
    argv.push_back(a);
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(log_file),
                                                llvm::StringRef(log_file)};
  bool failed_to_start = false;
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects, 0, 0, &error, &failed_to_start);
  return failed_to_start ? -1 : rc;
}

/// The program to run for `compiler`: itself when it names a path, else found on PATH.
std::string find_program(const std::string &compiler) {
  if (compiler.find('/') != std::string::npos)
    return compiler;
  auto found = llvm::sys::findProgramByName(compiler);
  return found ? *found : std::string();
}

/// A temporary directory of its own; empty on failure.
std::string make_temp_dir(const std::string &target) {
  llvm::SmallString<128> dir;
  if (fs::createUniqueDirectory("tile-" + target, dir))
    return "";
  return std::string(dir);
}

/// Writes `text` to `file` through a temporary file in the same folder and a rename, so
/// that readers see the whole file or none.
void write_atomically(const std::string &file, const std::string &text) {
  llvm::SmallString<256> model(path::parent_path(file));
  path::append(model, "tmp-%%%%%%%%%%%%");
  int fd;
  llvm::SmallString<256> tmp;
  if (fs::createUniqueFile(model, fd, tmp))
    return;
  bool ok;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
    os.close();
    ok = !os.has_error();
    if (!ok)
      os.clear_error();
  }
  if (!ok || fs::rename(tmp, file))
    fs::remove(tmp);
}

void hash_field(llvm::SHA256 &h, llvm::StringRef s) {
  // Length-prefixed, so that no two different field lists hash alike.
  std::string len = std::to_string(s.size()) + ":";
  h.update(len);
  h.update(s);
}

} // namespace

std::string default_cache_dir() {
  llvm::SmallString<256> dir;
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    dir = xdg;
  } else if (const char *home = std::getenv("HOME"); home && *home) {
    dir = home;
    path::append(dir, ".cache");
  } else {
    return "";
  }
  path::append(dir, "tile");
  return std::string(dir);
}

std::string compiler_version(const std::string &compiler) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = versions.find(compiler);
    if (it != versions.end())
      return it->second;
  }
  llvm::SmallString<128> out;
  if (fs::createTemporaryFile("tile-version", "txt", out))
    return "";
  std::string error, text;
  int rc = run(compiler, {"--version"}, std::string(out), error);
  bool ok = rc == 0 && read_file(std::string(out), text);
  fs::remove(out);
  if (!ok)
    return ""; // not remembered: the next call may find it working
  std::lock_guard<std::mutex> lock(mutex);
  versions[compiler] = text;
  return text;
}

std::string device_cache_key(const DeviceCompileJob &job, const std::string &version) {
  llvm::SHA256 h;
  hash_field(h, "tile-device-image 1");
  hash_field(h, job.target);
  hash_field(h, version);
  hash_field(h, std::to_string(job.flags.size()));
  for (auto &f : job.flags)
    hash_field(h, f);
  hash_field(h, job.source);
  hash_field(h, std::to_string(job.headers.size()));
  for (auto &f : job.headers) {
    hash_field(h, f.name);
    hash_field(h, f.text);
  }
  hash_field(h, job.image_suffix);
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

std::string device_source_name(const DeviceCompileJob &job) {
  std::string stem = path::stem(job.name).str();
  if (stem.empty())
    stem = "kernels";
  return stem + job.source_suffix;
}

DeviceCompileResult compile_device_image(const DeviceCompileJob &job) {
  DeviceCompileResult result;
  const std::string source_name = device_source_name(job);

  if (!job.emit_source_dir.empty()) {
    std::string error;
    bool ok = !fs::create_directories(job.emit_source_dir);
    for (size_t i = 0; ok && i <= job.headers.size(); ++i) {
      llvm::SmallString<256> file(job.emit_source_dir);
      path::append(file, i == 0 ? source_name : job.headers[i - 1].name);
      ok = write_file(std::string(file), i == 0 ? job.source : job.headers[i - 1].text, &error);
    }
    if (!ok) {
      result.log = "cannot keep the generated source in " + job.emit_source_dir + (error.empty() ? "" : ": " + error);
      return result;
    }
  }

  const std::string program = find_program(job.compiler);
  if (program.empty()) {
    result.log = "cannot find the device compiler '" + job.compiler + "'";
    return result;
  }
  const std::string version = compiler_version(program);

  // The cache entry, when the cache can be used.
  std::string entry;
  if (job.use_cache) {
    std::string dir = job.cache_dir.empty() ? default_cache_dir() : job.cache_dir;
    if (!dir.empty()) {
      llvm::SmallString<256> sub(dir);
      path::append(sub, job.target);
      if (!fs::create_directories(sub)) {
        llvm::SmallString<256> file(sub);
        path::append(file, device_cache_key(job, version) + job.image_suffix);
        entry = std::string(file);
      }
    }
  }
  if (!entry.empty() && read_file(entry, result.image)) {
    result.ok = true;
    result.cached = true;
    return result;
  }

  const std::string dir = make_temp_dir(job.target);
  if (dir.empty()) {
    result.log = "cannot create a temporary directory for the device compiler";
    return result;
  }
  llvm::SmallString<256> src(dir), image(dir), log(dir);
  path::append(src, source_name);
  path::append(image, "image" + job.image_suffix);
  path::append(log, "compiler.log");
  std::string error;
  bool written = write_file(std::string(src), job.source, &error);
  for (size_t i = 0; written && i < job.headers.size(); ++i) {
    llvm::SmallString<256> file(dir);
    path::append(file, job.headers[i].name);
    written = write_file(std::string(file), job.headers[i].text, &error);
  }
  if (!written) {
    fs::remove_directories(dir);
    result.log = error;
    return result;
  }

  std::vector<std::string> args = job.flags;
  args.push_back("-o");
  args.push_back(std::string(image));
  args.push_back(std::string(src));
  int rc = run(program, args, std::string(log), error);
  read_file(std::string(log), result.log);
  fs::remove(log);
  if (rc != 0 || !read_file(std::string(image), result.image)) {
    if (rc < 0)
      result.log += "cannot run " + program + (error.empty() ? "" : ": " + error) + "\n";
    else if (rc == 0)
      result.log += program + " wrote no image\n";
    result.image.clear();
    result.source_path = std::string(src); // kept, with its headers, for the user to look at
    return result;
  }
  result.ok = true;
  if (!entry.empty())
    write_atomically(entry, result.image);
  fs::remove_directories(dir);
  return result;
}

} // namespace tile::pipeline
