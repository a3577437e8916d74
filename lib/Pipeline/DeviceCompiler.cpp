#include "Pipeline/DeviceCompiler.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string_view>
#include <unistd.h>

#include "Pipeline/Subprocess.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"
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

/// The time every file the compiler reads carries (compilers record it in debug info).
const llvm::sys::TimePoint<> fixed_file_time = llvm::sys::toTimePoint(946684800); // 2000-01-01

/// Writes `text` to `file`; with `fixed_time`, the file's times are set to fixed_file_time.
bool write_file(const std::string &file, const std::string &text, std::string *error = nullptr,
                bool fixed_time = false) {
  int fd = -1;
  std::error_code ec = fs::openFileForWrite(file, fd, fs::CD_CreateAlways, fs::OF_None);
  if (!ec) {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
    os.flush();
    if (!os.has_error() && fixed_time)
      ec = fs::setLastAccessAndModificationTime(fd, fixed_file_time);
    os.close();
    if (os.has_error()) {
      ec = os.error();
      os.clear_error();
    }
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

/// The program to run for `compiler`: itself when it names a path, else found on PATH.
std::string find_program(const std::string &compiler) {
  if (compiler.find('/') != std::string::npos)
    return compiler;
  auto found = llvm::sys::findProgramByName(compiler);
  return found ? *found : std::string();
}

/// The directory the compiler works in: $TMPDIR/tile-TARGET-KEY, so that the same input
/// compiles at the same path. When that one is taken (the same input compiling now, or a
/// failure's kept source) a unique one; one left by a killed build (older than a compile
/// may run) is removed and taken. Empty on failure.
std::string make_job_dir(const std::string &target, const std::string &key, unsigned timeout_seconds) {
  llvm::SmallString<256> dir;
  path::system_temp_directory(/*erasedOnReboot=*/true, dir);
  path::append(dir, "tile-" + target + "-" + key);
  const std::string name(dir);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!fs::create_directory(name, /*IgnoreExisting=*/false, fs::perms::owner_all))
      return name;
    fs::file_status st;
    if (attempt > 0 || fs::status(name, st, /*follow=*/false) || st.getUser() != ::getuid() ||
        st.type() != fs::file_type::directory_file)
      break;
    const auto age = std::chrono::system_clock::now() - st.getLastModificationTime();
    if (age < std::chrono::seconds(std::int64_t(timeout_seconds) + 120) || fs::remove_directories(name))
      break;
  }
  llvm::SmallString<256> unique;
  if (fs::createUniqueDirectory("tile-" + target, unique))
    return "";
  return std::string(unique);
}

/// Removes what `dir` holds but the files named in `keep`.
void remove_all_but(const std::string &dir, const std::set<std::string> &keep) {
  std::error_code ec;
  std::vector<std::string> doomed;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (!keep.count(path::filename(it->path()).str()))
      doomed.push_back(it->path());
  for (auto &p : doomed)
    if (fs::remove(p))
      fs::remove_directories(p);
}

/// Writes `bytes` to `file` through a temporary file in the same folder, synced to disk
/// before the rename, so that readers (and the file after a crash) hold the whole entry or
/// none. Why it could not, or "".
std::string write_atomically(const std::string &file, const std::string &bytes) {
  llvm::SmallString<256> model(path::parent_path(file));
  path::append(model, "tmp-%%%%%%%%%%%%.part");
  llvm::Expected<fs::TempFile> temp = fs::TempFile::create(model); // removed on a signal, too
  if (!temp)
    return llvm::toString(temp.takeError());
  std::string why;
  {
    llvm::raw_fd_ostream os(temp->FD, /*shouldClose=*/false);
    os << bytes;
    os.flush();
    if (os.has_error()) {
      why = os.error().message();
      os.clear_error();
    }
  }
  if (why.empty() && ::fsync(temp->FD) != 0)
    why = std::string("fsync: ") + std::strerror(errno);
  if (!why.empty()) {
    llvm::consumeError(temp->discard());
    return why;
  }
  if (llvm::Error e = temp->keep(file))
    return llvm::toString(std::move(e));
  return "";
}

void hash_field(llvm::SHA256 &h, llvm::StringRef s) {
  // Length-prefixed, so that no two different field lists hash alike.
  std::string len = std::to_string(s.size()) + ":";
  h.update(len);
  h.update(s);
}

std::string sha256_hex(llvm::StringRef bytes) {
  return llvm::toHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes)), /*LowerCase=*/true);
}

constexpr llvm::StringLiteral entry_magic = "tile-cache-entry 2";

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

std::string find_program(const std::string &name, const char *path, const char *home, const std::string &fallback_dir) {
  auto executable = [](const std::string &file) {
    return fs::is_regular_file(file) && fs::can_execute(file);
  };
  if (path) {
    std::string_view p = path;
    while (!p.empty()) {
      size_t colon = p.find(':');
      std::string dir(p.substr(0, colon));
      p = colon == std::string_view::npos ? std::string_view() : p.substr(colon + 1);
      if (!dir.empty() && executable(dir + "/" + name))
        return dir + "/" + name;
    }
  }
  if (home && *home && executable(std::string(home) + "/bin/" + name))
    return std::string(home) + "/bin/" + name;
  if (!fallback_dir.empty() && executable(fallback_dir + "/" + name))
    return fallback_dir + "/" + name;
  return "";
}

std::string compiler_version(const std::string &compiler, unsigned timeout_seconds) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = versions.find(compiler);
    if (it != versions.end())
      return it->second;
  }
  llvm::SmallString<128> model;
  path::system_temp_directory(/*erasedOnReboot=*/true, model);
  path::append(model, "tile-version-%%%%%%%%.txt");
  llvm::Expected<fs::TempFile> out = fs::TempFile::create(model);
  if (!out) {
    llvm::consumeError(out.takeError());
    return "";
  }
  SubprocessOptions o;
  o.program = compiler;
  o.args = {"--version"};
  o.output_file = out->TmpName;
  o.timeout_seconds = timeout_seconds;
  SubprocessResult r = run_subprocess(o);
  std::string text;
  bool ok = r.started && !r.timed_out && r.exit_code == 0 && read_file(out->TmpName, text);
  llvm::consumeError(out->discard());
  if (!ok)
    return ""; // not remembered: the next call may find it working
  std::lock_guard<std::mutex> lock(mutex);
  versions[compiler] = text;
  return text;
}

std::string device_cache_key(const DeviceCompileJob &job, const std::string &version) {
  llvm::SHA256 h;
  hash_field(h, "tile-device-image 3");
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
  hash_field(h, std::to_string(job.key_extras.size()));
  for (auto &e : job.key_extras)
    hash_field(h, e);
  return llvm::toHex(h.final(), /*LowerCase=*/true);
}

std::string encode_cache_entry(const std::string &key, const std::string &image, const std::string &log) {
  return entry_magic.str() + "\nkey " + key + "\nsize " + std::to_string(image.size()) + "\nlog " +
         std::to_string(log.size()) + "\nsha256 " + sha256_hex(image + log) + "\n\n" + image + log;
}

std::optional<CacheEntry> decode_cache_entry(const std::string &bytes, const std::string &key, std::string &problem) {
  llvm::StringRef rest(bytes);
  // The next header line, which must start with `name` and a space.
  auto field = [&](llvm::StringRef name) -> std::optional<llvm::StringRef> {
    const size_t end = rest.find('\n');
    if (end == llvm::StringRef::npos)
      return std::nullopt;
    llvm::StringRef line = rest.take_front(end);
    if (!name.empty() && !(line.consume_front(name) && line.consume_front(" ")))
      return std::nullopt;
    rest = rest.drop_front(end + 1);
    return line;
  };
  auto magic = field("");
  if (!magic || *magic != entry_magic || rest.empty()) {
    problem = bytes.empty() ? "it is empty" : "it is not a tile cache entry";
    return std::nullopt;
  }
  auto k = field("key"), size = k ? field("size") : std::nullopt, log = size ? field("log") : std::nullopt,
       sum = log ? field("sha256") : std::nullopt;
  std::uint64_t n = 0, l = 0;
  if (!sum || size->getAsInteger(10, n) || log->getAsInteger(10, l) || !rest.consume_front("\n")) {
    problem = "its header is damaged";
    return std::nullopt;
  }
  if (*k != key) {
    problem = "it holds the image of another key";
    return std::nullopt;
  }
  if (rest.size() != n + l) {
    problem = "it holds " + std::to_string(rest.size()) + " bytes of an image of " + std::to_string(n) +
              (l ? " and a log of " + std::to_string(l) : "");
    return std::nullopt;
  }
  if (sha256_hex(rest) != *sum) {
    problem = "its image does not match its SHA-256";
    return std::nullopt;
  }
  return CacheEntry{rest.take_front(n).str(), rest.drop_front(n).str()};
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
  result.program = program.empty() ? job.compiler : program;
  if (program.empty()) {
    result.log = "cannot find the device compiler '" + job.compiler + "'";
    return result;
  }
  const std::string version = compiler_version(program, std::min(job.timeout_seconds, 60u));
  const std::string key = device_cache_key(job, version);

  // The cache entry, when the cache can be used. A compiler that cannot say its version
  // cannot be told from another in the key: its images are not cached.
  std::string entry;
  if (job.use_cache && version.empty()) {
    result.notes.push_back("tile: cannot tell the version of " + program + " ('" + program +
                           " --version' failed); compiling without the image cache, whose keys hold it");
  } else if (job.use_cache) {
    std::string dir = job.cache_dir.empty() ? default_cache_dir() : job.cache_dir;
    if (dir.empty()) {
      result.notes.push_back("tile: no image cache: neither XDG_CACHE_HOME nor HOME is set; name one with "
                             "-fplugin-arg-tile-cache=DIR");
    } else {
      llvm::SmallString<256> sub(dir);
      path::append(sub, job.target);
      if (std::error_code ec = fs::create_directories(sub)) {
        result.notes.push_back("tile: cannot use the image cache " + std::string(sub) + ": " + ec.message() +
                               "; compiling without it");
      } else {
        llvm::SmallString<256> file(sub);
        path::append(file, key + job.image_suffix);
        entry = std::string(file);
      }
    }
  }
  if (std::string bytes; !entry.empty() && read_file(entry, bytes)) {
    std::string problem;
    if (auto cached = decode_cache_entry(bytes, key, problem)) {
      result.image = std::move(cached->image);
      result.log = std::move(cached->log);
      result.ok = true;
      result.cached = true;
      return result;
    }
    result.notes.push_back("tile: the cached image " + entry + " is damaged (" + problem +
                           "); compiling it again to replace it");
  }

  const std::string dir = make_job_dir(job.target, key, job.timeout_seconds);
  if (dir.empty()) {
    result.log = "cannot create a temporary directory for the device compiler";
    return result;
  }
  llvm::SmallString<256> src(dir), image(dir), log(dir);
  path::append(src, source_name);
  path::append(image, "image" + job.image_suffix);
  path::append(log, "compiler.log");
  std::set<std::string> kept = {source_name};
  std::string error;
  bool written = write_file(std::string(src), job.source, &error, /*fixed_time=*/true);
  for (size_t i = 0; written && i < job.headers.size(); ++i) {
    llvm::SmallString<256> file(dir);
    path::append(file, job.headers[i].name);
    kept.insert(job.headers[i].name);
    written = write_file(std::string(file), job.headers[i].text, &error, /*fixed_time=*/true);
  }
  if (!written) {
    fs::remove_directories(dir);
    result.log = error;
    return result;
  }

  SubprocessOptions run;
  run.program = program;
  run.args = job.flags;
  run.args.insert(run.args.end(), {"-o", std::string(image), std::string(src)});
  run.output_file = std::string(log);
  run.temp_dir = dir; // nvcc's own temporaries go there too, and go with it
  run.timeout_seconds = job.timeout_seconds;
  run.cleanup_dir = dir;
  SubprocessResult ran = run_subprocess(run);
  if (ran.interrupted) { // the signal handler stopped the compiler and removed its directory
    fs::remove_directories(dir);
    result.log = "the build was interrupted while " + program + " ran\n";
    return result;
  }
  read_file(std::string(log), result.log);
  if (!ran.started || ran.timed_out || ran.exit_code != 0 || !read_file(std::string(image), result.image)) {
    if (!ran.started)
      result.log += "cannot run " + program + (ran.error.empty() ? "" : ": " + ran.error) + "\n";
    else if (ran.signal)
      result.log += program + " was ended by signal " + std::to_string(ran.signal) + "\n";
    else if (ran.exit_code == 0 && !ran.timed_out)
      result.log += program + " wrote no image\n";
    result.timed_out = ran.timed_out;
    result.image.clear();
    remove_all_but(dir, kept);
    result.source_path = std::string(src); // kept, with its headers, for the user to look at
    return result;
  }
  result.ok = true;
  const std::string kept_log = job.cached_log ? job.cached_log(result.log) : "";
  if (!entry.empty())
    if (std::string why = write_atomically(entry, encode_cache_entry(key, result.image, kept_log)); !why.empty())
      result.notes.push_back("tile: cannot write to the image cache " + std::string(path::parent_path(entry)) +
                             ": " + why + "; the next build compiles this image again");
  fs::remove_directories(dir);
  return result;
}

} // namespace tile::pipeline
