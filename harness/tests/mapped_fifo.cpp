// A program that leaves a FIFO where the harness looks for the objects its
// heap's call stacks go through: it loads LIB (argv[1], the test's copy of
// dl_plugin) and keeps what the library allocated; with "deleted" (argv[2])
// it then unlinks LIB and makes a FIFO at "LIB (deleted)", the name its maps
// now give the mapping ("kept": the library stays, the test plants its FIFO
// at the library's debug file). Then the mark "held": the live heap's call
// sites are recorded there, and at the exit stop.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memharness/mark.h>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: mapped_fifo LIB deleted|kept\n");
    return 2;
  }
  const std::string lib = argv[1], how = argv[2];
  void* handle = dlopen(lib.c_str(), RTLD_NOW);
  if (!handle) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  auto work = reinterpret_cast<void* (*)(size_t)>(dlsym(handle, "plugin_work"));
  if (!work) return 1;
  std::vector<void*> kept;
  for (size_t round = 0; round < 256; ++round) kept.push_back(work(round));
  if (how == "deleted" && (unlink(lib.c_str()) != 0 || mkfifo((lib + " (deleted)").c_str(), 0600) != 0)) {
    std::perror(lib.c_str());
    return 1;
  }
  memharness_mark("held");
  return 0;  // the blocks and the library are held to the end
}
