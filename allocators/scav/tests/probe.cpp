// probe.cpp - a small program linked with scav_static that the tests run in a fresh
// process: "alloc" allocates across the classes and frees it all; "chain" does the same
// and runs itself as a child, which runs one more ("chain1"), so a test sees what a
// process tree prints. Exit 0 when every allocation succeeded.
#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "alloc";
  int r = alloc();
  if (!strcmp(mode, "chain")) r |= run_child("chain1");
  else if (!strcmp(mode, "chain1")) r |= run_child("alloc");
  return r;
}
