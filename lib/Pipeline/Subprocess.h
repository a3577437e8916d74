// Running a device compiler as a child process that cannot outlive its welcome.
//
// llvm::sys::ExecuteAndWait cannot serve here: on a timeout it kills the process it started
// but not that process's own children (nvcc runs cicc and ptxas, which run on), and it
// cannot tell anything to clean up when the compiler running it is interrupted. So the
// child runs in a process group of its own, which a time limit kills whole; and while it
// runs, SIGINT, SIGTERM and SIGHUP of this process (Ctrl-C, a build system stopping a job)
// kill that group and remove the child's working directory before the signal takes its
// usual course (the handler that was there before, or the default: exit).
#pragma once

#include <string>
#include <vector>

namespace tile::pipeline {

struct SubprocessOptions {
  std::string program;           // a path
  std::vector<std::string> args; // after the program's name
  std::string output_file;       // stdout and stderr; empty: discarded
  std::string temp_dir;          // non-empty: the child's TMPDIR (where nvcc puts its temporaries)
  unsigned timeout_seconds = 0;  // 0: no limit
  std::string cleanup_dir;       // non-empty: removed, with all it holds, if this process is
                                 // interrupted while the child runs
};

struct SubprocessResult {
  bool started = false;
  bool timed_out = false;   // killed, with its process group, at the time limit
  int exit_code = -1;       // when it exited
  int signal = 0;           // when a signal ended it (not the time limit)
  bool interrupted = false; // this process was interrupted and went on (its handler for the
                            // signal returned): the child was stopped and cleanup_dir removed
  std::string error;        // why it did not start
};

/// Runs `o.program` with `o.args`, stdin from /dev/null, and waits for it and everything it
/// started (the rest of its process group is killed once it has exited).
SubprocessResult run_subprocess(const SubprocessOptions &o);

} // namespace tile::pipeline
