// Names for the heap's call stacks, read from the object files by the harness
// after a run (never in the child, never on the allocation path): per frame
// the function, and the file and line where DWARF has them (elfutils libdwfl),
// else the nearest symbol of .symtab, else of .dynsym, else nothing but the
// object and offset. Each object is opened once per process (a file that
// changed is opened again); the cache is the main thread's alone.
// The files read are the program's (its objects, the debug files libdw looks
// for beside them): a run's frames are named in a process of their own,
// killed at a deadline, so that no file a program planted holds the harness.
#pragma once

#include <string>

#include "core/record.h"

namespace mh {

// Fills the frame's function, file, line, source and reason from its object.
// The offset is a return address: the call is looked up at offset - 1.
void symbolize_frame(HeapFrame& frame);
// Whether a frame's object is a file that can be opened (an absolute path), not
// "[vdso]", "?" or another name the kernel gives a mapping.
inline bool is_object_file(const std::string& object) { return !object.empty() && object.front() == '/'; }
// The object's GNU build ID, or null with the reason (unreadable, none). The
// path is as the record keeps it (escape::identity), as is a frame's object.
HeapObject heap_object(const std::string& path);
// How a run's frames are named (options.md: --symbolize-timeout, --debuginfod).
struct SymbolizeSettings {
  // Seconds the naming process may take; past it it is killed and the frames
  // not yet named keep their object and offset, with the reason.
  double timeout_s = 60;
  // Keep DEBUGINFOD_URLS for it: libdw would download debug files named by
  // the program's build IDs from those servers. Off: the variable is removed.
  bool debuginfod = false;
};

// Every frame of the run's heap sites (its marks' and its peak's), and the
// run's table of objects with their build IDs, named in a child process
// (fork) within settings.timeout_s. A stop asked of the harness
// (interrupt.h) ends it at once. Frames it did not name get source "none"
// and the reason; so do their objects.
void symbolize_heap_sites(RunRecord& run, const SymbolizeSettings& settings);

}  // namespace mh
