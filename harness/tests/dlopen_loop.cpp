// Loads and unloads a small library (libdl_plugin.so, beside this program)
// a few hundred times while a second thread allocates and frees, for the
// ledger's sampling inside the loader (test_heap_sites.py, with
// --heap-sample 1: every allocation unwinds). Marks "start", "looped" (the
// blocks the library handed out still held) and "freed".
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memharness/mark.h>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string beside_this_program(const char* name) {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return name;
  std::string path(self, size_t(n));
  return path.substr(0, path.rfind('/') + 1) + name;
}

void churn(const std::atomic<bool>& stop) {
  std::vector<void*> ring(256, nullptr);
  for (size_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
    void*& slot = ring[i % ring.size()];
    std::free(slot);
    slot = std::malloc(16 + (i * 7919) % 8192);
  }
  for (void* p : ring) std::free(p);
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 300;
  const std::string plugin = beside_this_program("libdl_plugin.so");
  std::vector<void*> kept;
  kept.reserve(size_t(rounds));
  memharness_mark("start");
  std::atomic<bool> stop{false};
  std::thread other(churn, std::cref(stop));
  for (int i = 0; i < rounds; ++i) {
    void* lib = dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      std::fprintf(stderr, "dlopen %s: %s\n", plugin.c_str(), dlerror());
      return 1;
    }
    auto* work = reinterpret_cast<void* (*)(size_t)>(dlsym(lib, "plugin_work"));
    if (!work) return 1;
    kept.push_back(work(size_t(i)));
    dlclose(lib);
  }
  stop = true;
  other.join();
  memharness_mark("looped");
  for (void* p : kept) std::free(p);
  memharness_mark("freed");
  return 0;
}
