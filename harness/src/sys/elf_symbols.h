// Reading a shared library's dynamic symbol table without loading it: is the
// library an allocator at all (does it define malloc)? Where is the heap
// ledger's counter block in it? Pure file reading.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace mh {

// True when the 64-bit ELF file at `path` defines (not merely uses) the
// dynamic symbol `name`; false with the reason otherwise.
bool defines_dynamic_symbol(const std::string& path, const std::string& name, std::string& why_not);
// The value (address relative to the load base of a shared library whose
// first segment is at 0) of the dynamic symbol `name` the file defines.
std::optional<uint64_t> dynamic_symbol_value(const std::string& path, const std::string& name, std::string& why_not);

}  // namespace mh
