// The live heap's call sites (--heap-sample) as its readers see them: a run's
// sites at its peak, a frame's name, which frames are the allocator's own,
// the sites matched across runs by their frames' names, and folded stacks.
// Pure functions over the record.
#pragma once

#include <string>
#include <vector>

#include "core/record.h"

namespace mh {

// The run's sites at its peak: heap_sites_peak when the run kept it, else
// those of the mark (with sites) whose sample has the largest heap_live_kb;
// null without any. `where`, when given, says which: "peak" or the mark's name.
const HeapSites* peak_sites(const RunRecord& r, std::string* where = nullptr);
// The sites of a mark by name, or of the peak (mark ""); null when there are none.
const HeapSites* sites_at(const RunRecord& r, const std::string& mark);

// A frame's name: its function where known, else its object's file name and
// the offset ("libfoo.so+0x1a2b"), never a bare address.
std::string frame_name(const HeapFrame& f);
// frame_name shortened for a terminal (template arguments and parameter
// lists elided), with " (file:line)" where DWARF gave them.
std::string frame_label(const HeapFrame& f);

// Whether a frame is inside the allocation call rather than the program: the
// heap ledger's, the preloaded allocator's (`allocator_library`, "" for
// glibc), libc's malloc family, libstdc++'s operator new.
bool allocator_frame(const HeapFrame& f, const std::string& allocator_library);
// The site's frames from the innermost outside the allocator outwards.
std::vector<const HeapFrame*> program_frames(const HeapSite& s, const std::string& allocator_library);
// The innermost program frame and `callers` of its callers, frame_label's,
// " <- " between; "[no frames outside the allocator]" when there is none.
// What frame_label appends to a name found only in a stripped object's dynamic
// symbol table: the nearest exported function before the address, not the
// function the address is in.
inline constexpr const char* kDynsymMark = "*";
// The line that says so under a table whose labels have such a name.
std::string stripped_names_note();
std::string site_label(const HeapSite& s, const std::string& allocator_library, size_t callers = 2);
// What matches one site across runs and builds: the names of its program
// frames (functions where known: offsets differ between two builds), joined.
std::string site_key(const HeapSite& s, const std::string& allocator_library);

// Folded stacks (flamegraph.pl, inferno, speedscope): a line per site, frames
// root first separated by ';', a space, the estimated live bytes; every other
// site summed as one "[other call sites]" line.
std::string folded_stacks(const HeapSites& h);
// One site's stack as a folded line begins: frame names root first, ';'
// between (a ';' inside a name becomes ','); "[no frames]" without any.
std::string folded_stack(const HeapSite& s);

}  // namespace mh
