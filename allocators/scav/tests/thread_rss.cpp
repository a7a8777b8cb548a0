// thread_rss.cpp - the resident memory a thread costs under whichever malloc is loaded
// (run it plain, and with LD_PRELOAD=libscav.so). For each pattern it starts kThreads
// threads that allocate and then wait, and prints the growth of VmRSS per thread, in
// KiB: what a thread that allocates costs in all (its stack, the C library's per-thread
// state, the allocator's), and for reference what a thread that allocates nothing
// costs. The pattern is the argument, one per process (a second round would reuse the
// first round's arenas or heaps):
//   classes18 - one block in each of the 18 smallest classes (16..320 bytes)
//   one       - a single 64-byte block
// Prints "<pattern> <KiB per thread> bare <KiB per bare thread>". Does not link scav.
#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kThreads = 32;

long rss_kib() {
  FILE* f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "VmRSS:", 6)) v = atol(line + 6);
  fclose(f);
  return v;
}

pthread_barrier_t g_ready, g_done;
int g_pattern;

void* worker(void*) {
  void* keep[18] = {};
  if (g_pattern == 1) {
    static const size_t sizes[18] = {16, 32, 48, 64, 80, 96, 112, 128, 144, 160,
                                     176, 192, 208, 224, 240, 256, 288, 320};
    for (int i = 0; i < 18; i++) {
      keep[i] = malloc(sizes[i]);
      memset(keep[i], 1, sizes[i]);
    }
  } else if (g_pattern == 2) {
    keep[0] = malloc(64);
    memset(keep[0], 1, 64);
  }
  pthread_barrier_wait(&g_ready);
  pthread_barrier_wait(&g_done);
  for (void* p : keep) free(p);
  return nullptr;
}

// RSS growth per thread while kThreads threads of this pattern are alive.
double per_thread(int pattern) {
  g_pattern = pattern;
  pthread_barrier_init(&g_ready, nullptr, kThreads + 1);
  pthread_barrier_init(&g_done, nullptr, kThreads + 1);
  pthread_t t[kThreads];
  long before = rss_kib();
  for (pthread_t& th : t) pthread_create(&th, nullptr, worker, nullptr);
  pthread_barrier_wait(&g_ready);
  long after = rss_kib();
  pthread_barrier_wait(&g_done);
  for (pthread_t& th : t) pthread_join(th, nullptr);
  pthread_barrier_destroy(&g_ready);
  pthread_barrier_destroy(&g_done);
  return double(after - before) / kThreads;
}

}  // namespace

int main(int argc, char** argv) {
  int pattern = argc > 1 && !strcmp(argv[1], "classes18") ? 1 : argc > 1 && !strcmp(argv[1], "one") ? 2 : 0;
  if (!pattern) {
    fprintf(stderr, "usage: scav_thread_rss classes18|one\n");
    return 2;
  }
  // Warm up: the first threads pay for stacks the later ones reuse from glibc's cache.
  per_thread(0);
  double bare = per_thread(0);
  double cost = per_thread(pattern);
  printf("%s %.1f bare %.1f\n", argv[1], cost, bare);
  return 0;
}
