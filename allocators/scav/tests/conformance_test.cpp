// conformance_test.cpp - the malloc family's contract: alignment, zero sizes, realloc,
// calloc, errors, usable sizes, operator new. Linked with scav_static, so everything in
// this process (gtest included) allocates from scav.
#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "scav.h"
#include "test_util.h"

namespace {

bool aligned(const void* p, size_t a) { return (reinterpret_cast<uintptr_t>(p) & (a - 1)) == 0; }

// Every size up to 64 KiB and a sweep of larger ones crosses every class boundary.
std::vector<size_t> sizes() {
  std::vector<size_t> v;
  for (size_t n = 0; n <= 4096; n++) v.push_back(n);
  for (size_t n = 4096; n <= 1100 * 1024; n += n / 16 + 1) v.push_back(n);
  v.push_back(512 * 1024);
  v.push_back(512 * 1024 + 1);
  return v;
}

TEST(Conformance, MallocAlignmentAndUsableSize) {
  for (size_t n : sizes()) {
    void* p = malloc(n);
    ASSERT_NE(p, nullptr) << n;
    EXPECT_TRUE(aligned(p, 16)) << n;
    size_t u = malloc_usable_size(p);
    EXPECT_GE(u, n) << n;
    // Bounded waste: above 128 bytes at most 1/8 of the block (not for huge blocks,
    // which are rounded to pages).
    if (n > 128 && n <= 512 * 1024) {
      EXPECT_LE(u - n, u / 8) << n;
    }
    memset(p, 0xab, n);
    free(p);
  }
}

TEST(Conformance, ZeroSizes) {
  void* a = malloc(0);
  void* b = malloc(0);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NE(a, b);
  free(a);
  free(b);
  void* c = calloc(0, 10);
  ASSERT_NE(c, nullptr);
  free(c);
  free(nullptr);
  void* r = realloc(nullptr, 0);
  free(r);
  void* m = aligned_alloc(64, 0);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(aligned(m, 64));
  free(m);
}

TEST(Conformance, AlignedAllocations) {
  for (size_t a = 8; a <= (1 << 20); a *= 2) {
    for (size_t n : {size_t(1), size_t(8), a / 2 + 1, a, a + 1, size_t(3000), size_t(70000),
                     size_t(600000)}) {
      void* p = nullptr;
      ASSERT_EQ(posix_memalign(&p, a, n), 0) << a << " " << n;
      EXPECT_TRUE(aligned(p, a)) << a << " " << n;
      EXPECT_GE(malloc_usable_size(p), n);
      memset(p, 1, n);
      void* q = aligned_alloc(a, n);
      ASSERT_NE(q, nullptr);
      EXPECT_TRUE(aligned(q, a)) << a << " " << n;
      memset(q, 2, n);
      void* r = memalign(a, n);
      ASSERT_NE(r, nullptr);
      EXPECT_TRUE(aligned(r, a)) << a << " " << n;
      EXPECT_GE(malloc_usable_size(r), n);
      memset(r, 3, n);
      EXPECT_EQ(static_cast<unsigned char*>(p)[n - 1], 1);
      free(p);
      free(q);
      free(r);
    }
  }
  void* p;
  EXPECT_EQ(posix_memalign(&p, 24, 10), EINVAL);
  EXPECT_EQ(posix_memalign(&p, 4, 10), EINVAL);
  void* m = memalign(48, 100);  // glibc rounds to 64
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(aligned(m, 64));
  free(m);
}

TEST(Conformance, ManyAlignedFreedFromOtherThread) {
  std::vector<void*> v;
  for (int i = 0; i < 2000; i++) {
    void* p = aligned_alloc(256, 100 + i % 300);  // padded path: interior pointers
    ASSERT_TRUE(aligned(p, 256));
    v.push_back(p);
  }
  std::thread t([&] {
    for (void* p : v) free(p);
  });
  t.join();
}

TEST(Conformance, VallocPvalloc) {
  long page = sysconf(_SC_PAGESIZE);
  void* v = valloc(100);
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(aligned(v, size_t(page)));
  void* pv = pvalloc(100);
  ASSERT_NE(pv, nullptr);
  EXPECT_TRUE(aligned(pv, size_t(page)));
  EXPECT_GE(malloc_usable_size(pv), size_t(page));
  free(v);
  free(pv);
}

TEST(Conformance, ReallocKeepsContents) {
  // Grow through every regime (small, medium, large, huge) and shrink back.
  size_t n = 1;
  unsigned char* p = static_cast<unsigned char*>(malloc(n));
  p[0] = 7;
  size_t filled = 1;
  while (n < (8u << 20)) {
    size_t m = n * 3 / 2 + 1;
    p = static_cast<unsigned char*>(realloc(p, m));
    ASSERT_NE(p, nullptr);
    for (size_t i = 0; i < filled; i++) ASSERT_EQ(p[i], (unsigned char)(i * 7 + 7)) << n;
    for (size_t i = filled; i < m; i++) p[i] = (unsigned char)(i * 7 + 7);
    filled = m;
    n = m;
  }
  while (n > 1) {
    n = n / 3;
    if (!n) n = 1;
    p = static_cast<unsigned char*>(realloc(p, n));
    ASSERT_NE(p, nullptr);
    for (size_t i = 0; i < n; i++) ASSERT_EQ(p[i], (unsigned char)(i * 7 + 7)) << n;
  }
  free(p);
}

TEST(Conformance, ReallocInPlace) {
  void* p = malloc(100);
  size_t u = malloc_usable_size(p);
  EXPECT_EQ(realloc(p, u), p);   // grows within its block
  EXPECT_EQ(realloc(p, 90), p);  // small shrink stays
  void* h = malloc(4 << 20);
  memset(h, 5, 4 << 20);
  void* h2 = realloc(h, 64 << 20);  // mremap
  ASSERT_NE(h2, nullptr);
  EXPECT_EQ(static_cast<unsigned char*>(h2)[(4 << 20) - 1], 5);
  free(h2);
  void* r = realloc(p, 0);  // frees, like glibc
  EXPECT_EQ(r, nullptr);
}

// A block grown a few bytes at a time moves to at least a quarter more each time, so
// it is copied a few times per doubling, not once per size class (8 per doubling).
TEST(Conformance, ReallocGrowthMovesGeometrically) {
  void* p = malloc(16);
  int moves = 0;
  for (size_t n = 32; n <= 64 * 1024; n += 16) {
    void* q = realloc(p, n);
    ASSERT_NE(q, nullptr);
    static_cast<char*>(q)[n - 1] = 1;
    EXPECT_GE(malloc_usable_size(q), n);
    if (q != p) moves++;
    p = q;
  }
  free(p);
  EXPECT_LE(moves, 40) << moves;  // 8 classes per doubling would be about 80
}

TEST(Conformance, CallocZeroesAndOverflows) {
  for (size_t n : {size_t(1), size_t(100), size_t(5000), size_t(200000), size_t(3 << 20)}) {
    // Dirty the memory first so a recycled block would show.
    void* d = malloc(n);
    memset(d, 0xff, n);
    free(d);
    unsigned char* p = static_cast<unsigned char*>(calloc(n, 1));
    ASSERT_NE(p, nullptr);
    for (size_t i = 0; i < n; i++) ASSERT_EQ(p[i], 0) << n << " at " << i;
    free(p);
  }
  volatile size_t half = SIZE_MAX / 2;  // volatile: the compiler would warn at compile time
  errno = 0;
  EXPECT_EQ(calloc(half, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(reallocarray(nullptr, half, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(Conformance, HugeRequestsFail) {
  volatile size_t big = SIZE_MAX;
  errno = 0;
  EXPECT_EQ(malloc(big), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(malloc(big - 4096), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  void* p = &p;
  EXPECT_EQ(posix_memalign(&p, 64, big), ENOMEM);
  errno = 0;
  EXPECT_EQ(realloc(nullptr, big), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  void* q = malloc(10);
  errno = 0;
  EXPECT_EQ(realloc(q, big), nullptr);  // q stays valid
  EXPECT_EQ(errno, ENOMEM);
  free(q);
}

TEST(Conformance, OperatorNewDelete) {
  int* a = new int(5);
  EXPECT_EQ(*a, 5);
  delete a;
  int* b = new int[1000];
  delete[] b;
  struct alignas(256) Over {
    char c[300];
  };
  Over* o = new Over;
  EXPECT_TRUE(aligned(o, 256));
  delete o;
  Over* oa = new Over[5];
  EXPECT_TRUE(aligned(oa, 256));
  delete[] oa;
  volatile size_t big = SIZE_MAX / 4;
  EXPECT_EQ(new (std::nothrow) char[big], nullptr);
  char* volatile sink = nullptr;
  EXPECT_THROW({ sink = new char[big]; }, std::bad_alloc);
  EXPECT_EQ(sink, nullptr);
}

TEST(Conformance, ApiBasics) {
  EXPECT_STREQ(scav_version(), "0.1.0");
  char small[8];
  size_t need = scav_stats_json(small, sizeof small);
  EXPECT_GT(need, sizeof small);
  EXPECT_EQ(strlen(small), sizeof small - 1);
  std::vector<char> buf(need + 1);
  EXPECT_EQ(scav_stats_json(buf.data(), buf.size()), need);
  std::string s(buf.data());
  EXPECT_EQ(s.front(), '{');
  EXPECT_EQ(s.back(), '}');
  EXPECT_EQ(s.find('\n'), std::string::npos);
  for (const char* k : {"allocated", "committed", "resident_estimate", "purged", "purge_passes",
                        "scavenger_wakes", "scavenger_turns", "pages_freed", "purge_pending",
                        "os_mmaps", "os_munmaps", "huge_cached"})
    EXPECT_NE(s.find(std::string("\"") + k + "\":"), std::string::npos) << k;
  EXPECT_GT(scav_test::stat("allocated"), 0);
  EXPECT_GT(scav_test::stat("committed"), 0);
}

TEST(Conformance, ThreadExitReusesHeaps) {
  for (int i = 0; i < 50; i++) {
    std::thread t([] {
      void* p = malloc(100);
      free(p);
    });
    t.join();
  }
  // Each exited thread's heap is adopted by the next one.
  EXPECT_LE(scav_test::stat("heaps"), 10);
}

// Blocks above 1 KiB get pages of more than one slice: 128 KiB up to 2 KiB, 256 KiB
// up to 8 KiB. A thread's first block of a class takes one page, the blocks a page of
// that size holds fill it (one page-aligned window), and the next block takes a second
// page. The thread is new (no heap has exited in this process before it), so it
// starts without pages; the count read is of pages taken, which the scavenger's
// releases do not move.
TEST(Conformance, PagesGrowWithTheirBlocks) {
  std::thread t([] {
    struct Case {
      size_t size;
      uintptr_t page;
    } cases[] = {{900, 64 << 10}, {1900, 128 << 10}, {3500, 256 << 10}, {7000, 256 << 10}};
    std::vector<void*> blocks;
    blocks.reserve(128);  // before the counts: the list takes no page while they are read
    for (const Case& c : cases) {
      const int64_t before = scav_test::stat("pages_allocated");
      blocks.push_back(malloc(c.size));
      ASSERT_NE(blocks[0], nullptr);
      EXPECT_EQ(scav_test::stat("pages_allocated") - before, 1) << c.size;
      const size_t per_page = c.page / malloc_usable_size(blocks[0]);
      while (blocks.size() < per_page) blocks.push_back(malloc(c.size));
      EXPECT_EQ(scav_test::stat("pages_allocated") - before, 1) << c.size;
      const uintptr_t first = reinterpret_cast<uintptr_t>(blocks[0]) & ~(c.page - 1);
      for (void* b : blocks) EXPECT_EQ(reinterpret_cast<uintptr_t>(b) & ~(c.page - 1), first) << c.size;
      blocks.push_back(malloc(c.size));
      EXPECT_EQ(scav_test::stat("pages_allocated") - before, 2) << c.size;
      for (void* b : blocks) free(b);
      blocks.clear();
    }
  });
  t.join();
}

}  // namespace
