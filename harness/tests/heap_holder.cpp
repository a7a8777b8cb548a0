// A program that holds a known heap, for the heap ledger's tests: blocks from
// new, new[], aligned new and malloc, their usable sizes summed and reported
// (workload.usable_kb), held at the mark "allocated", all freed by "freed".
// `fork`: a child frees what it inherited, allocates its own and holds it
// while the parent marks "both" (child_usable_kb). `exec`: runs itself again
// by exec, the new image doing the plain run. `sites`: two call sites hold
// 3:1 of the heap (load_index, parse_rows), for the sampled call sites
// (`sites MB`: load_index holds MB MiB instead of 48).
// `outside`: between the marks "growth-start" and "growth-end" (3 s) starts a
// thread every 100 ms that touches 1 MiB of its stack and waits, and touches
// 2 MiB of a mapping named "[anon:holder cache]" (where the kernel names
// mappings): memory outside the live heap that is not malloc's.
// `version`: marks "start", then writes another layout version into the
// ledger's counters (as a ledger of another build would have) and marks "other".
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memharness/ledger.h>
#include <memharness/mark.h>
#include <new>
#include <atomic>
#include <chrono>
#include <thread>
#include <string>
#include <vector>

namespace {

struct alignas(256) Aligned {
  char bytes[3000];
};

struct Held {
  std::vector<char*> arrays;
  std::vector<int*> singles;
  std::vector<Aligned*> aligned;
  std::vector<void*> mallocs;
  size_t usable = 0;
};

// The pointer arrays, made before the start mark: the heap held after it is
// only the blocks the program reports.
void prepare(Held& h) {
  h.arrays.reserve(4096);
  h.singles.reserve(4096);
  h.aligned.reserve(4096);
  h.mallocs.reserve(4096);
}

// About `mb` MiB in a mix of sizes and entry points, every page touched.
void hold(Held& h, size_t mb) {
  size_t total = 0;
  for (size_t i = 0; total < mb << 20; ++i) {
    const size_t n = 100 + (i * 7919) % 60000;
    char* a = new char[n];
    std::memset(a, 1, n);
    h.arrays.push_back(a);
    int* s = new int(int(i));
    h.singles.push_back(s);
    auto* al = new Aligned;
    std::memset(al->bytes, 2, sizeof al->bytes);
    h.aligned.push_back(al);
    void* m = std::malloc(n / 2 + 8);
    std::memset(m, 3, n / 2 + 8);
    h.mallocs.push_back(m);
    h.usable += malloc_usable_size(a) + malloc_usable_size(s) + malloc_usable_size(al) + malloc_usable_size(m);
    total += n + sizeof(int) + sizeof(Aligned) + n / 2 + 8;
  }
}

// Every block freed; the pointer arrays stay.
void release(Held& h) {
  for (auto* a : h.arrays) delete[] a;
  for (auto* s : h.singles) delete s;
  for (auto* al : h.aligned) delete al;
  for (auto* m : h.mallocs) std::free(m);
  h.arrays.clear();
  h.singles.clear();
  h.aligned.clear();
  h.mallocs.clear();
  h.usable = 0;
}

int plain() {
  Held h;
  prepare(h);
  memharness_mark("start");
  hold(h, 24);
  memharness_metric("usable_kb", double(h.usable) / 1024);
  memharness_mark("allocated");
  release(h);
  memharness_mark("freed");
  return 0;
}

int forking() {
  Held h, own;
  prepare(h);
  prepare(own);
  memharness_mark("start");
  hold(h, 16);
  memharness_metric("usable_kb", double(h.usable) / 1024);
  memharness_mark("allocated");
  int ready[2], done[2];
  if (pipe(ready) != 0 || pipe(done) != 0) return 1;
  const pid_t child = fork();
  if (child < 0) return 1;
  if (child == 0) {
    release(h);  // the child's copy of the parent's blocks
    hold(own, 8);
    memharness_metric("child_usable_kb", double(own.usable) / 1024);
    char c = 1;
    (void)!write(ready[1], &c, 1);
    (void)!read(done[0], &c, 1);  // held until the parent has marked
    _exit(0);
  }
  char c;
  (void)!read(ready[0], &c, 1);
  memharness_mark("both");
  (void)!write(done[1], &c, 1);
  waitpid(child, nullptr, 0);
  release(h);
  memharness_mark("freed");
  return 0;
}

// Each holder allocates from its own frame (noinline), its blocks' usable
// bytes returned. The blocks are kept (and freed at the end).
__attribute__((noinline)) size_t load_index(std::vector<void*>& keep, size_t bytes) {
  size_t usable = 0;
  for (size_t held = 0; held < bytes; held += 256 << 10) {
    keep.push_back(std::malloc(256 << 10));
    usable += malloc_usable_size(keep.back());
  }
  return usable;
}

__attribute__((noinline)) size_t parse_rows(std::vector<void*>& keep, size_t bytes) {
  size_t usable = 0;
  for (size_t held = 0; held < bytes; held += 4 << 10) {
    keep.push_back(std::malloc(4 << 10));
    usable += malloc_usable_size(keep.back());
  }
  return usable;
}

// `index_mb`: what load_index holds (two runs that differ in one site).
int sites(size_t index_mb) {
  std::vector<void*> index, rows;
  index.reserve(4096);
  rows.reserve(8192);
  memharness_mark("start");
  memharness_metric("load_index_kb", double(load_index(index, index_mb << 20)) / 1024);
  memharness_metric("parse_rows_kb", double(parse_rows(rows, 16 << 20)) / 1024);
  memharness_mark("allocated");
  for (auto* p : index) std::free(p);
  for (auto* p : rows) std::free(p);
  memharness_mark("freed");
  return 0;
}

int other_version() {
  memharness_mark("start");
  auto* ledger = static_cast<char*>(dlsym(RTLD_DEFAULT, "memharness_ledger"));
  if (!ledger) return 1;
  const uint32_t other = MEMHARNESS_LEDGER_VERSION - 1;
  std::memcpy(ledger + offsetof(memharness_ledger, version), &other, sizeof other);
  memharness_mark("other");
  return 0;
}

}  // namespace

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

// A thread whose stack holds 1 MiB of touched memory until `done`.
void stack_holder(const std::atomic<bool>& done) {
  volatile char block[1 << 20];
  for (size_t i = 0; i < sizeof block; i += 4096) block[i] = 1;
  while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

int outside() {
  memharness_mark("growth-start");
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  constexpr size_t kNamed = 2 << 20;
  void* named = mmap(nullptr, kNamed, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (named == MAP_FAILED) return 1;
  prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, reinterpret_cast<unsigned long>(named), kNamed, "holder cache");
  for (int i = 0; i < 30; ++i) {
    threads.emplace_back(stack_holder, std::cref(done));
    std::memset(static_cast<char*>(named) + size_t(i) * (kNamed / 30), 1, kNamed / 30);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  memharness_mark("growth-end");
  done = true;
  for (auto& t : threads) t.join();
  munmap(named, kNamed);
  return 0;
}

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "plain";
  if (mode == "plain") return plain();
  if (mode == "fork") return forking();
  if (mode == "sites") return sites(argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 48);
  if (mode == "version") return other_version();
  if (mode == "outside") return outside();
  if (mode == "exec") {
    // Some heap before the exec: the new image must not count it.
    Held before;
    prepare(before);
    hold(before, 8);
    execl("/proc/self/exe", argv[0], "plain", static_cast<char*>(nullptr));
    return 127;
  }
  return 2;
}
