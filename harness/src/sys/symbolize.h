// Names for the heap's call stacks, read from the object files by the harness
// after a run (never in the child, never on the allocation path): per frame
// the function, and the file and line where DWARF has them (elfutils libdwfl),
// else the nearest symbol of .symtab, else of .dynsym, else nothing but the
// object and offset. Each object is opened once per harness process (a file
// that changed is opened again); the cache is the main thread's alone.
#pragma once

#include <string>

#include "core/record.h"

namespace mh {

// Fills the frame's function, file, line, source and reason from its object.
// The offset is a return address: the call is looked up at offset - 1.
void symbolize_frame(HeapFrame& frame);
// The object's GNU build ID, or null with the reason (unreadable, none). The
// path is as the record keeps it (escape::identity), as is a frame's object.
HeapObject heap_object(const std::string& path);
// Every frame of the run's heap sites (its marks' and its peak's), and the
// run's table of objects with their build IDs.
void symbolize_heap_sites(RunRecord& run);

}  // namespace mh
