// probe.cpp - a small program linked with scav_static that the tests run in a fresh
// process: "alloc" allocates across the classes and frees it all; "chain" does the same
// and runs itself as a child, which runs one more ("chain1"), so a test sees what a
// process tree prints; "vmflags" prints to stderr the VmFlags of the mapping that holds
// a 32 KiB block (the arena's), as /proc/self/smaps has them. Exit 0 when every
// allocation succeeded.
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int alloc() {
  void* keep[64];
  for (int i = 0; i < 64; i++) {
    size_t n = size_t(16) << (i % 18);
    keep[i] = malloc(n);
    if (!keep[i]) return 1;
    memset(keep[i], i, n);
  }
  for (void* p : keep) free(p);
  return 0;
}

int run_child(const char* mode) {
  pid_t pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", "scav_probe", mode, (char*)nullptr);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int vmflags() {
  void* p = malloc(32 * 1024);
  if (!p) return 1;
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  FILE* f = fopen("/proc/self/smaps", "r");
  if (!f) return 1;
  char line[512];
  bool inside = false;
  int r = 1;
  while (fgets(line, sizeof line, f)) {
    uintptr_t lo, hi;
    // Only a mapping's first line reads as two hex numbers and a dash.
    if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) == 2) inside = lo <= a && a < hi;
    else if (inside && !strncmp(line, "VmFlags:", 8)) {
      fputs(line, stderr);
      r = 0;
      break;
    }
  }
  fclose(f);
  free(p);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "alloc";
  if (!strcmp(mode, "vmflags")) return vmflags();
  int r = alloc();
  if (!strcmp(mode, "chain")) r |= run_child("chain1");
  else if (!strcmp(mode, "chain1")) r |= run_child("alloc");
  return r;
}
