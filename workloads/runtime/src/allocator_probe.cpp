// Allocator identification by the symbols the library serving malloc exports.
#include "mhwl/allocator_probe.h"

#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <malloc.h>
#include <memharness/ledger.h>

#include <cstdint>
#include <cstring>

namespace mhwl {

namespace {

// The file defining symbol `name` as this process resolves it, or "".
std::string defining_file(void* addr) {
  Dl_info info{};
  if (!addr || !dladdr(addr, &info) || !info.dli_fname) return {};
  return info.dli_fname;
}

// A symbol of `library` itself (not of its dependencies), or nullptr.
void* own_symbol(const std::string& library, const char* name) {
  void* addr = dlsym(RTLD_DEFAULT, name);
  if (!addr || defining_file(addr) != library) return nullptr;
  return addr;
}

// The file whose malloc serves the process. Behind the heap ledger (--ledger)
// malloc is the ledger's, which counts and forwards: the allocator is the one
// it forwards to.
std::string serving_file() {
  void* malloc_fn = dlsym(RTLD_DEFAULT, "malloc");
  const std::string file = defining_file(malloc_fn);
  auto* ledger = static_cast<const memharness_ledger*>(dlsym(RTLD_DEFAULT, "memharness_ledger"));
  if (ledger && ledger->next_malloc && defining_file(const_cast<memharness_ledger*>(ledger)) == file)
    return defining_file(reinterpret_cast<void*>(static_cast<uintptr_t>(ledger->next_malloc)));
  return file;
}

template <class F>
F sym(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
}

using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);
using TcVersion = const char* (*)(int*, int*, const char**);
using MiVersion = int (*)();
using StrFn = const char* (*)();
using TcProperty = int (*)(const char*, size_t*);

}  // namespace

AllocatorIdentity probe_allocator() {
  AllocatorIdentity id;
  id.library = serving_file();
  if (void* f = own_symbol(id.library, "scav_version")) {
    id.name = "scav";
    id.version = reinterpret_cast<StrFn>(f)();
  } else if (void* f = own_symbol(id.library, "mallctl")) {
    id.name = "jemalloc";
    const char* v = nullptr;
    size_t len = sizeof v;
    if (reinterpret_cast<Mallctl>(f)("version", &v, &len, nullptr, 0) == 0 && v) id.version = v;
  } else if (void* f = own_symbol(id.library, "mi_version")) {
    id.name = "mimalloc";
    // 217 is 2.1.7; from 3.4 on two digits each for minor and patch (30403 is 3.4.3).
    const int v = reinterpret_cast<MiVersion>(f)();
    const int digit = v >= 10000 ? 100 : 10;
    id.version = std::to_string(v / (digit * digit)) + "." + std::to_string(v / digit % digit) + "." +
                 std::to_string(v % digit);
  } else if (void* f = own_symbol(id.library, "tc_version")) {
    id.name = "tcmalloc";
    int major = 0, minor = 0;
    const char* patch = nullptr;
    const char* v = reinterpret_cast<TcVersion>(f)(&major, &minor, &patch);
    id.version = v ? v : std::to_string(major) + "." + std::to_string(minor);
  } else if (own_symbol(id.library, "__malloc_end_pointer")) {
    // snmalloc's shim (override/malloc.cc) exports this bound query; no other
    // allocator does. snmalloc has no version call: the version stays empty.
    id.name = "snmalloc";
  } else if (own_symbol(id.library, "gnu_get_libc_version")) {
    id.name = "glibc";
    id.version = gnu_get_libc_version();
  } else {
    id.name = "unknown";
  }
  return id;
}

std::optional<nlohmann::ordered_json> allocator_stats() {
  if (auto f = sym<size_t (*)(char*, size_t)>("scav_stats_json")) {
    char buf[4096];
    size_t n = f(buf, sizeof buf);
    if (n >= sizeof buf) return std::nullopt;
    auto j = nlohmann::ordered_json::parse(buf, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
  }
  if (auto ctl = sym<Mallctl>("mallctl")) {
    uint64_t epoch = 1;
    size_t len = sizeof epoch;
    ctl("epoch", &epoch, &len, &epoch, len);
    nlohmann::ordered_json j;
    for (const char* key : {"allocated", "active", "resident", "mapped", "retained"}) {
      size_t v = 0;
      len = sizeof v;
      std::string name = std::string("stats.") + key;
      if (ctl(name.c_str(), &v, &len, nullptr, 0) == 0) j[key] = v;
    }
    return j;
  }
  if (auto prop = sym<TcProperty>("MallocExtension_GetNumericProperty")) {
    nlohmann::ordered_json j;
    for (const char* key : {"generic.current_allocated_bytes", "generic.heap_size",
                            "tcmalloc.pageheap_free_bytes", "tcmalloc.pageheap_unmapped_bytes"}) {
      size_t v = 0;
      if (prop(key, &v)) j[key] = v;
    }
    return j;
  }
  return std::nullopt;
}

std::optional<std::string> allocator_collect() {
  if (auto f = sym<void (*)(bool)>("scav_collect")) {
    f(true);
    return "scav_collect(true)";
  }
  if (auto f = sym<void (*)(bool)>("mi_collect")) {
    f(true);
    return "mi_collect(true)";
  }
  if (auto ctl = sym<Mallctl>("mallctl")) {
    // MALLCTL_ARENAS_ALL is 4096 in jemalloc 5.
    ctl("arena.4096.purge", nullptr, nullptr, nullptr, 0);
    return "mallctl(arena.<all>.purge)";
  }
  if (auto f = sym<void (*)()>("MallocExtension_ReleaseFreeMemory")) {
    f();
    return "MallocExtension_ReleaseFreeMemory()";
  }
  malloc_trim(0);
  return "malloc_trim(0)";
}

IdleApi find_idle_api() {
  IdleApi api;
  api.start = sym<void (*)()>("scav_thread_idle_start");
  api.end = sym<void (*)()>("scav_thread_idle_end");
  return api;
}

}  // namespace mhwl
