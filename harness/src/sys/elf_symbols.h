// Reading a shared library's dynamic symbol table without loading it: is the
// library an allocator at all (does it define malloc)? Pure file reading.
#pragma once

#include <string>

namespace mh {

// True when the 64-bit ELF file at `path` defines (not merely uses) the
// dynamic symbol `name`; false with the reason otherwise.
bool defines_dynamic_symbol(const std::string& path, const std::string& name, std::string& why_not);

}  // namespace mh
