// The autotuner's runtime side (include/tile/autotune.h): where choices come from (tuning
// files, the tuning cache, timing), how candidates are timed, and the files' format.
//
// A tuning file or cache is text, one choice a line, fields separated by tabs:
//   DEVICE \t KERNEL \t CANDIDATE-SET \t SHAPE-CLASS \t CHOICE \t MILLISECONDS
// DEVICE is "cuda sm_90 NVIDIA H200" (target, architecture, product), CANDIDATE-SET a hash of
// the candidates' labels in order (a choice among other candidates is not used), CHOICE a
// label. Lines starting with '#' and empty lines are comments. A later line for the same
// key wins. The cache is appended to one line at a time (each line one write).
#include "runtime/Backend.h"
#include "runtime/Device.h"

#include <tile/autotune.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace tile {
namespace {

struct Entry {
  std::string choice;
  double ms = 0;
  std::string origin; // the file it came from ("" when timed in this process)
};

/// DEVICE, KERNEL, CANDIDATE-SET, SHAPE-CLASS.
using Key = std::tuple<std::string, std::string, std::string, std::string>;

struct Tables {
  std::mutex mutex;
  std::map<Key, Entry> loaded;     // tuning files and embedded tables
  std::map<Key, Entry> cache;      // the tuning cache
  std::map<Key, Entry> decided;    // made or recalled in this process (tuning::save)
  bool cache_read = false;
  bool env_file_read = false;
};

Tables &tables() {
  static Tables t;
  return t;
}

std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

bool log_tuning() {
  const std::string v = "," + env("TILE_LOG") + ",";
  return v.find(",tuning,") != std::string::npos;
}

/// TILE_TUNE: "on" (default), "off" (never time) or "record" (time every class again and
/// write the choices to TILE_TUNING_FILE).
enum class Mode { on, off, record };
Mode mode() {
  const std::string v = env("TILE_TUNE");
  if (v.empty() || v == "on" || v == "1")
    return Mode::on;
  if (v == "off" || v == "0")
    return Mode::off;
  if (v == "record")
    return Mode::record;
  throw tile::error("TILE_TUNE=" + v + ": write on, off or record");
}

std::string cache_path() {
  if (std::string p = env("TILE_TUNING_CACHE"); !p.empty())
    return p;
  std::string base = env("XDG_CACHE_HOME");
  if (base.empty()) {
    const std::string home = env("HOME");
    if (home.empty())
      return {};
    base = home + "/.cache";
  }
  return base + "/tile/tuning.tsv";
}

/// FNV-1a, 64 bits, of the kernels' parameter types and the labels in order: which
/// candidates a choice was made among.
std::string candidate_set(const std::string &signature, const std::vector<std::string> &labels) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const std::string &l : [&] {
         std::vector<std::string> all{signature};
         all.insert(all.end(), labels.begin(), labels.end());
         return all;
       }()) {
    for (unsigned char c : l + '\n')
      h = (h ^ c) * 0x100000001b3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::string device_key(const runtime::Backend &b) {
  std::string k = b.target();
  if (std::string a = b.arch(); !a.empty())
    k += " " + a;
  if (std::string p = b.product(); !p.empty())
    k += " " + p;
  for (char &c : k)
    if (c == '\t' || c == '\n' || c == '\r')
      c = ' ';
  return k;
}

std::vector<std::string> split_tabs(const std::string &line) {
  std::vector<std::string> f;
  std::size_t start = 0;
  for (;;) {
    const std::size_t tab = line.find('\t', start);
    f.push_back(line.substr(start, tab - start));
    if (tab == std::string::npos)
      return f;
    start = tab + 1;
  }
}

/// Parses a tuning file's text into `into`. Malformed lines throw (strict) or are skipped.
void parse(std::string_view text, const std::string &origin, std::map<Key, Entry> &into, bool strict) {
  std::istringstream in{std::string(text)};
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.empty() || line[0] == '#')
      continue;
    std::vector<std::string> f = split_tabs(line);
    char *end = nullptr;
    const double ms = f.size() == 6 ? std::strtod(f[5].c_str(), &end) : 0;
    const bool ok = f.size() == 6 && !f[0].empty() && !f[1].empty() && f[2].size() == 16 && !f[4].empty() &&
                    end && *end == 0 && ms >= 0;
    if (!ok) {
      if (strict)
        throw tile::error("tile: " + origin + ":" + std::to_string(n) +
                          ": not a tuning entry (DEVICE, KERNEL, CANDIDATE-SET, SHAPE-CLASS, CHOICE and "
                          "MILLISECONDS, separated by tabs)");
      continue;
    }
    into[Key{f[0], f[1], f[2], f[3]}] = Entry{f[4], ms, origin};
  }
}

std::string format_line(const Key &k, const Entry &e) {
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.6g", e.ms);
  return std::get<0>(k) + '\t' + std::get<1>(k) + '\t' + std::get<2>(k) + '\t' + std::get<3>(k) + '\t' + e.choice +
         '\t' + ms + '\n';
}

const char *header = "# tile tuning file: DEVICE, KERNEL, CANDIDATE-SET, SHAPE-CLASS, CHOICE, MILLISECONDS "
                     "(tab-separated; later lines win)\n";

void make_parents(const std::string &path) {
  for (std::size_t i = 1; i < path.size(); ++i)
    if (path[i] == '/')
      ::mkdir(path.substr(0, i).c_str(), 0755);
}

/// Appends one line with one write (O_APPEND: concurrent writers do not interleave within
/// a line). Returns "" or why it could not.
std::string append_line(const std::string &path, const std::string &line) {
  make_parents(path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return std::strerror(errno);
  struct stat st {};
  std::string text = line;
  if (::fstat(fd, &st) == 0 && st.st_size == 0)
    text = header + text;
  const ssize_t w = ::write(fd, text.data(), text.size());
  const int err = errno;
  ::close(fd);
  return w == static_cast<ssize_t>(text.size()) ? "" : (w < 0 ? std::strerror(err) : "a short write");
}

/// The whole of the regular file at `path`, at most 64 MiB (a tuning file is a few lines a
/// kernel); `why` says why not, else stays empty. (A directory or a device such as
/// /dev/zero is refused, not read for ever.)
std::string read_tuning_text(const std::string &path, std::string &why) {
  constexpr off_t limit = off_t(64) << 20;
  why.clear();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why = std::strerror(errno);
    return {};
  }
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) != 0)
    why = std::strerror(errno);
  else if (S_ISDIR(st.st_mode))
    why = "it is a directory";
  else if (!S_ISREG(st.st_mode))
    why = "it is not a regular file";
  else if (st.st_size > limit)
    why = "it is larger than 64 MiB";
  else {
    text.resize(std::size_t(st.st_size));
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t r = ::read(fd, text.data() + done, text.size() - done);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0) {
        why = r < 0 ? std::strerror(errno) : "it became shorter while read";
        break;
      }
      done += std::size_t(r);
    }
  }
  ::close(fd);
  return why.empty() ? text : std::string();
}

/// Reads TILE_TUNING_FILE once; a file that cannot be read or is malformed throws, at this
/// decision and every later one, and none of its lines is used.
void load_env_file_locked(Tables &t) {
  if (t.env_file_read)
    return;
  const std::string path = env("TILE_TUNING_FILE");
  if (path.empty() || mode() == Mode::record) { // record writes it
    t.env_file_read = true;
    return;
  }
  std::string why;
  std::string text = read_tuning_text(path, why);
  if (!why.empty())
    throw tile::error("tile: TILE_TUNING_FILE=" + path + " cannot be read: " + why);
  std::map<Key, Entry> entries;
  parse(text, path, entries, /*strict=*/true);
  for (auto &[k, e] : entries)
    t.loaded[k] = e;
  t.env_file_read = true;
}

void read_cache_locked(Tables &t) {
  if (t.cache_read)
    return;
  t.cache_read = true;
  const std::string path = cache_path();
  if (path.empty())
    return;
  std::string why;
  std::string text = read_tuning_text(path, why);
  if (why.empty()) // (a cache that cannot be read is as none: its kernels are tuned again)
    parse(text, path, t.cache, /*strict=*/false); // a damaged line is tuned again
}

std::string ms_text(double ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g ms", ms);
  return b;
}

/// Median milliseconds of one launch of candidate i: after a warm-up launch, 5 samples of
/// as many launches in a row as take about 2 ms (at least 1), each followed by a wait.
double time_candidate(const std::function<void(std::size_t)> &run, std::size_t i) {
  using clock = std::chrono::steady_clock;
  auto elapsed = [](clock::time_point a) { return std::chrono::duration<double, std::milli>(clock::now() - a).count(); };
  run(i); // loads the image
  tile::synchronize();
  auto t0 = clock::now();
  run(i);
  tile::synchronize();
  const double warm = std::max(elapsed(t0), 1e-4);
  const int reps = static_cast<int>(std::clamp(2.0 / warm, 1.0, 1000.0));
  std::vector<double> samples;
  for (int s = 0; s < 5; ++s) {
    t0 = clock::now();
    for (int r = 0; r < reps; ++r)
      run(i);
    tile::synchronize();
    samples.push_back(elapsed(t0) / reps);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

} // namespace

namespace detail {

void check_tuning_labels(const std::string &kernel, const std::vector<std::string> &labels) {
  if (labels.empty())
    throw tile::error("tile::autotune '" + kernel + "': no candidates");
  if (kernel.empty() || kernel.find_first_of("\t\n\r") != std::string::npos)
    throw tile::error("tile::autotune: the name '" + kernel + "' is empty or holds a tab or a line break");
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].empty() || labels[i].find_first_of("\t\n\r") != std::string::npos)
      throw tile::error("tile::autotune '" + kernel + "': the label of candidate " + std::to_string(i) +
                        " ('" + labels[i] + "') is empty or holds a tab or a line break");
    for (std::size_t j = 0; j < i; ++j)
      if (labels[j] == labels[i])
        throw tile::error("tile::autotune '" + kernel + "': candidates " + std::to_string(j) + " and " +
                          std::to_string(i) + " are both labelled '" + labels[i] + "'");
  }
}

tuning_decision autotune_choose(const std::string &kernel, const std::string &signature,
                                const std::vector<std::string> &labels, const std::string &shape_class,
                                const std::function<void(std::size_t)> &run, std::size_t failed_choice) {
  const Mode m = mode();
  if (shape_class.find_first_of("\t\n\r") != std::string::npos)
    throw tile::error("tile::autotune '" + kernel + "': the shape class '" + shape_class +
                      "' holds a tab or a line break, which tuning files cannot hold");
  const std::string record_path = env("TILE_TUNING_FILE");
  if (m == Mode::record && record_path.empty())
    throw tile::error("tile: TILE_TUNE=record writes the choices to TILE_TUNING_FILE, which is not set");
  const tile::device dev = current_device();
  runtime::Backend &backend = runtime::backend_for(dev);
  const Key key{device_key(backend), kernel, candidate_set(signature, labels), shape_class};
  const std::string what = "tile::autotune '" + kernel + "' on " + dev.name() + " (" + std::get<0>(key) +
                           "), shape class [" + shape_class + "]: ";
  const bool retry = failed_choice < labels.size();
  Tables &t = tables();
  auto index_of = [&](const std::string &label) {
    return std::size_t(std::find(labels.begin(), labels.end(), label) - labels.begin());
  };
  auto done = [&](tuning_decision r, const Entry *e) {
    if (e) { // what tuning::save writes
      std::lock_guard lock(t.mutex);
      t.decided[key] = *e;
    }
    if (log_tuning())
      std::cerr << r.explanation << '\n';
    return r;
  };

  tuning_decision d;
  std::string again; // why a recalled choice is not taken
  if (retry)
    again = "'" + labels[failed_choice] + "', recalled, failed to launch here; ";
  if (m != Mode::record && !retry) {
    std::optional<Entry> found;
    {
      std::lock_guard lock(t.mutex);
      load_env_file_locked(t);
      read_cache_locked(t);
      for (auto *table : {&t.loaded, &t.cache}) {
        auto it = table->find(key);
        if (it == table->end() || index_of(it->second.choice) == labels.size())
          continue;
        found = it->second;
        d.explanation = what + "'" + it->second.choice + "' from " +
                        (table == &t.loaded ? "the tuning file " : "the tuning cache ") + it->second.origin +
                        " (timed there at " + ms_text(it->second.ms) + ")";
        break;
      }
    }
    if (found) {
      d.index = index_of(found->choice);
      return done(d, &*found);
    }
  }
  if (m == Mode::off) {
    // Nothing is timed: the first candidate (after a recalled one that failed, the first
    // other one that launches).
    if (!retry) {
      d.explanation = what + "'" + labels[0] + "', the first candidate: no tuning entry for this class, and " +
                      "TILE_TUNE=off times nothing";
      return done(d, nullptr);
    }
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (i == failed_choice)
        continue;
      try {
        run(i);
        tile::synchronize();
      } catch (const tile::error &e) {
        again += "'" + labels[i] + "' failed: " + e.what() + "; ";
        continue;
      }
      d.index = i;
      d.timed = true; // it launched here
      d.explanation = what + again + "'" + labels[i] + "', the first that launches (TILE_TUNE=off times nothing)";
      return done(d, nullptr);
    }
    throw tile::error("tile::autotune '" + kernel + "' on " + dev.name() + ": no candidate launches: " + again);
  }

  // Time every candidate on the call's arguments, without holding the tables (a candidate
  // may itself launch another autotuner). Work launched before is waited for first, outside
  // the candidates' errors: its failure is the caller's, not a candidate's.
  tile::synchronize();
  std::vector<double> ms(labels.size(), -1);
  std::vector<std::string> failed(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i == failed_choice) {
      failed[i] = "recalled, it failed to launch here";
      continue;
    }
    try {
      ms[i] = time_candidate(run, i);
    } catch (const tile::error &e) {
      failed[i] = e.what();
      try {
        tile::synchronize(); // a launch that failed leaves nothing behind to wait for
      } catch (const tile::error &) {
      }
    }
  }
  std::size_t best = labels.size();
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (ms[i] >= 0 && (best == labels.size() || ms[i] < ms[best]))
      best = i;
  if (best == labels.size()) {
    std::string why = "tile::autotune '" + kernel + "' on " + dev.name() + ": every candidate failed:";
    for (std::size_t i = 0; i < labels.size(); ++i)
      why += "\n  " + labels[i] + ": " + failed[i];
    throw tile::error(why);
  }
  d.index = best;
  d.timed = true;
  d.explanation = what + again + "'" + labels[best] + "', timed fastest at " + ms_text(ms[best]) + " (";
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (i == best)
      continue;
    d.explanation += std::string(d.explanation.back() == '(' ? "" : "; ") + "'" + labels[i] + "' " +
                     (ms[i] >= 0 ? ms_text(ms[i]) : "failed: " + failed[i]);
  }
  d.explanation += d.explanation.back() == '(' ? "the only candidate)" : ")";
  const Entry e{labels[best], ms[best], ""};
  const std::string line = format_line(key, e);
  {
    std::lock_guard lock(t.mutex);
    if (const std::string path = cache_path(); !path.empty()) {
      t.cache[key] = Entry{e.choice, e.ms, path};
      if (std::string why = append_line(path, line); !why.empty())
        d.explanation += "; the tuning cache " + path + " could not be written: " + why;
    }
  }
  if (m == Mode::record) {
    if (std::string why = append_line(record_path, line); !why.empty())
      throw tile::error("tile: TILE_TUNING_FILE=" + record_path + " cannot be written: " + why);
    d.explanation += "; recorded in " + record_path;
  }
  return done(d, &e);
}

} // namespace detail

namespace tuning {

void load(std::string_view text, const std::string &origin) {
  Tables &t = tables();
  std::map<Key, Entry> entries;
  parse(text, origin, entries, /*strict=*/true);
  std::lock_guard lock(t.mutex);
  for (auto &[k, e] : entries)
    t.loaded[k] = e;
}

void load_file(const std::string &path) {
  std::string why;
  std::string text = read_tuning_text(path, why);
  if (!why.empty())
    throw tile::error("tile: the tuning file " + path + " cannot be read: " + why);
  load(text, path);
}

void save(const std::string &path) {
  Tables &t = tables();
  std::string text = header;
  {
    std::lock_guard lock(t.mutex);
    for (const auto &[k, e] : t.decided)
      text += format_line(k, e);
  }
  make_parents(path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out)
    throw tile::error("tile: the tuning file " + path + " cannot be written");
}

void reset() {
  Tables &t = tables();
  std::lock_guard lock(t.mutex);
  t.loaded.clear();
  t.cache.clear();
  t.decided.clear();
  t.cache_read = t.env_file_read = false;
}

} // namespace tuning
} // namespace tile
