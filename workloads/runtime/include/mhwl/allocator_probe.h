// Finds out, from inside the workload, which allocator serves malloc and what it
// offers (version, statistics, collect, idle hand-off). Everything is looked up
// with dlsym at run time: no workload links an allocator.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace mhwl {

struct AllocatorIdentity {
  std::string name;     // glibc, jemalloc, mimalloc, tcmalloc, scav, or "unknown"
  std::string version;  // as the allocator reports it; empty when it has no way to say
  std::string library;  // the file that defines the malloc this process calls
};

AllocatorIdentity probe_allocator();

// The allocator's own counters as JSON, or nullopt when it exposes none we read.
std::optional<nlohmann::ordered_json> allocator_stats();

// Asks the allocator to give free memory back now (scav_collect(true),
// mi_collect(true), jemalloc arena purge, tcmalloc release, malloc_trim(0)).
// Returns the name of the call used, or nullopt when there is none.
std::optional<std::string> allocator_collect();

// The idle hand-off API of the preloaded allocator, when it exports one.
struct IdleApi {
  void (*start)() = nullptr;
  void (*end)() = nullptr;
  bool available() const { return start && end; }
};
IdleApi find_idle_api();

}  // namespace mhwl
