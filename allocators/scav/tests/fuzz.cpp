// fuzz.cpp - libFuzzer target (preset scav-fuzz: clang, ASan, scav_prefixed with its
// invariant checks). The input is a program of operations on 64 slots: malloc,
// calloc, realloc, posix_memalign, aligned_alloc and free, frees and allocations on a
// second thread, hand-offs of this thread's heap while the other forces a collect, and
// collects. A shadow of each slot (size, alignment, seed) checks after every step
// that the block is aligned, that its usable size covers the request, and that its
// contents (a pattern from the seed) survived: what realloc kept, and what other
// blocks' traffic did not overwrite.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>

#include "api.h"
#include "pattern.h"

namespace {

struct Slot {
  unsigned char* p = nullptr;
  size_t n = 0;
  size_t align = 0;
  uint32_t seed = 0;
};

constexpr unsigned kSlots = 64;
Slot g_slots[kSlots];

[[noreturn]] void fail(const char* what, const Slot& s) {
  fprintf(stderr, "fuzz: %s: block %p, %zu bytes, alignment %zu\n", what, static_cast<void*>(s.p), s.n, s.align);
  abort();
}

void check(const Slot& s) {
  if (!s.p) return;
  if (reinterpret_cast<uintptr_t>(s.p) % s.align != 0) fail("misaligned", s);
  if (api::usable_size(s.p) < s.n) fail("usable size below the request", s);
  if (!scav_test::pattern_intact(s.p, s.n, s.seed, s.n)) fail("contents changed", s);
}

void release(Slot& s) {
  check(s);
  api::free(s.p);
  s = Slot{};
}

void set(Slot& s, void* p, size_t n, size_t align, uint32_t seed) {
  if (!p) {
    if (n < (size_t(1) << 40)) fail("allocation failed", Slot{nullptr, n, align, seed});
    return;
  }
  s = Slot{static_cast<unsigned char*>(p), n, align, seed};
  if (reinterpret_cast<uintptr_t>(p) % align != 0) fail("misaligned", s);
  scav_test::pattern_fill(s.p, n, seed);
}

// The second thread: runs one task at a time for the fuzzing thread and waits.
class Helper {
 public:
  Helper() : t_([this] { loop(); }) {}
  void run(std::function<void()> f) {
    std::unique_lock<std::mutex> l(m_);
    task_ = std::move(f);
    cv_.notify_all();
    cv_.wait(l, [this] { return !task_; });
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> l(m_);
    for (;;) {
      cv_.wait(l, [this] { return bool(task_); });
      task_();
      task_ = nullptr;
      cv_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::function<void()> task_;
  std::thread t_;
};

Helper& helper() {
  static Helper* h = new Helper;
  return *h;
}

class Input {
 public:
  Input(const uint8_t* d, size_t n) : d_(d), n_(n) {}
  bool more() const { return i_ < n_; }
  uint8_t byte() { return i_ < n_ ? d_[i_++] : 0; }
  // Sizes across all classes and into huge blocks, small ones most often.
  size_t size() {
    uint8_t k = byte();
    size_t v = size_t(byte()) | size_t(byte()) << 8;
    switch (k % 8) {
      case 0: return v % 17;                 // 0..16
      case 1: case 2: return v % 1025;       // small classes
      case 3: return v % 16385;              // up to 16 KiB
      case 4: return v * 8 % (512 * 1024);   // medium and large
      case 5: return 512 * 1024 + v * 16;    // huge, up to 1.5 MiB
      default: return v % 257;
    }
  }

 private:
  const uint8_t* d_;
  size_t n_;
  size_t i_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t len) {
  Input in(data, len);
  uint32_t seed = 1;
  while (in.more()) {
    uint8_t op = in.byte() % 12;
    Slot& s = g_slots[in.byte() % kSlots];
    seed = seed * 2654435761u + 1;
    switch (op) {
      case 0: {
        release(s);
        size_t n = in.size();
        set(s, api::malloc(n), n, 16, seed);
        break;
      }
      case 1: {
        release(s);
        size_t n = in.size();
        auto* p = static_cast<unsigned char*>(api::calloc(1, n));
        for (size_t i = 0; i < n; i++)
          if (p && p[i]) fail("calloc not zeroed", Slot{p, n, 16, 0});
        set(s, p, n, 16, seed);
        break;
      }
      case 2: {  // realloc: the common prefix survives, the rest is ours to fill
        check(s);
        size_t n = in.size();
        void* q = api::realloc(s.p, n);
        if (!q && n) fail("realloc failed", s);
        if (!n) {
          if (q) api::free(q);
          s = Slot{};
          break;
        }
        Slot moved{static_cast<unsigned char*>(q), s.n < n ? s.n : n, 16, s.seed};
        if (s.p && !scav_test::pattern_intact(moved.p, s.n, s.seed, moved.n)) fail("realloc lost contents", moved);
        set(s, q, n, 16, seed);
        break;
      }
      case 3: {
        release(s);
        size_t align = size_t(8) << (in.byte() % 15);  // 8 .. 128 KiB
        size_t n = in.size();
        void* p = nullptr;
        if (api::posix_memalign(&p, align, n)) fail("posix_memalign failed", Slot{nullptr, n, align, 0});
        set(s, p, n, align, seed);
        break;
      }
      case 4: {
        release(s);
        size_t align = size_t(16) << (in.byte() % 12);
        size_t n = (in.size() + align - 1) & ~(align - 1);
        set(s, api::aligned_alloc(align, n), n, align, seed);
        break;
      }
      case 5:
        release(s);
        break;
      case 6:  // a remote free
        check(s);
        helper().run([p = s.p] { api::free(p); });
        s = Slot{};
        break;
      case 7: {  // a block of the other thread's heap, freed here later
        release(s);
        size_t n = in.size();
        void* p = nullptr;
        helper().run([&] { p = api::malloc(n); });
        set(s, p, n, 16, seed);
        break;
      }
      case 8:  // hand off this thread's heap while the other forces a collect
        scav_thread_idle_start();
        helper().run([] { scav_collect(true); });
        scav_thread_idle_end();
        break;
      case 9:
        scav_collect(in.byte() % 4 == 0);
        break;
      default:
        check(s);
        break;
    }
  }
  for (Slot& s : g_slots) release(s);
  return 0;
}
