// Allocator verification for a program the harness did not write ("maps"):
// which files are mapped in the process (/proc/PID/maps) against the library
// the harness preloaded. The built-in workloads say themselves which library
// serves malloc ("probe"); a program cannot, so the harness looks at it from
// outside. Pure functions on the maps text, and MapsWatch, which reads one
// process's maps for one run's driver; main thread only (the harness starts
// no threads).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/record.h"

namespace mh {

// The files mapped in a process, in the order of their first mapping.
std::vector<std::string> mapped_files(std::string_view maps_text);

// What one reading of the maps says, once the loader has finished (libc is
// mapped): `library` ("" for glibc) is the preload asked for.
struct MapsVerdict {
  bool loaded = false;    // the loader had mapped libc: a verdict is possible
  bool verified = false;
  std::string served_by;  // the file serving malloc when verified
  std::string reason;     // why not verified
};
// `defines_malloc` says whether a mapped file exports malloc (elf_symbols in
// the harness, a stub in tests). A program is served by the preload when it is
// mapped (preloads come first in symbol lookup after the executable) and the
// executable does not define malloc itself; by glibc when no mapped file but
// libc defines malloc.
MapsVerdict judge_maps(const std::vector<std::string>& files, const std::string& executable, const std::string& library,
                       bool (*defines_malloc)(const std::string&));

// Heaps a process keeps apart from malloc's, named by what is mapped: "pymalloc"
// when the executable is a CPython interpreter (python3, python3.12: Debian's is
// linked statically) or a libpython is mapped (a program that embeds Python).
// Sorted, each once.
std::vector<std::string> other_heaps(const std::vector<std::string>& files, const std::string& executable);

// Reads /proc/PID/maps of one process again and again: right after its exec
// (until the loader has mapped libc, or the process is gone) and then now and
// then, so that a program that execs another without LD_PRELOAD is caught.
class MapsWatch {
 public:
  MapsWatch(int pid, std::string library, std::string proc_root = "/proc");
  // Reads the maps in a tight loop until the loader is done, the process has
  // no memory any more, or `limit_ms` passed; for a program that exits at once
  // (/bin/true). Returns true when a verdict was reached.
  bool right_after_exec(double limit_ms = 200);
  // One more reading (the executable may have changed by an exec).
  void check();
  // Writes the verdict and the other heaps seen into the allocator record
  // (verified_by "maps").
  void apply(AllocatorRecord& a) const;

 private:
  bool read_once();
  int pid_;
  std::string library_, root_;
  MapsVerdict verdict_;
  std::string failure_;  // a reading that found the preload gone (sticks)
  std::vector<std::string> other_heaps_;  // of every reading (an exec may add one)
  int reads_ = 0;
};

}  // namespace mh
