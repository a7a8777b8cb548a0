// secure_test.cpp - SCAV_SECURE=1 (set by CTest for this binary): double frees, frees
// of pointers scav did not hand out and interior pointers abort with a message that
// names the pointer, and correct programs run as before. Links scav_static.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "scav.h"
#include "test_util.h"

using scav_test::hex;

namespace {

TEST(Secure, DoubleFreeWithALiveNeighbourAborts) {
  void* a = malloc(64);
  void* b = malloc(64);
  EXPECT_DEATH(
      {
        free(a);
        free(a);
      },
      "double free.*" + hex(a));
  free(a);
  free(b);
}

TEST(Secure, RemoteDoubleFreeAborts) {
  void* a = malloc(200);
  void* b = malloc(200);
  EXPECT_DEATH(
      {
        std::thread([a] { free(a); }).join();
        std::thread([a] { free(a); }).join();
      },
      "double free.*" + hex(a));
  free(a);
  free(b);
}

// A page's only block, freed twice: the first free parks it in the class's cache.
TEST(Secure, LoneBlockDoubleFreeAborts) {
  void* a = malloc(3000);
  EXPECT_DEATH(
      {
        free(a);
        free(a);
      },
      "double free.*" + hex(a));
  EXPECT_DEATH(
      {
        free(a);
        a = realloc(a, 100);
      },
      "freed block.*" + hex(a));
  free(a);
}

TEST(Secure, InteriorPointerAborts) {
  char* a = static_cast<char*>(malloc(256));
  void* b = malloc(256);
  EXPECT_DEATH(free(a + 16), "invalid pointer.*" + hex(a + 16));
  EXPECT_DEATH(free(a + 8), "invalid pointer.*" + hex(a + 8));
  free(a);
  free(b);
}

TEST(Secure, PointerScavDidNotHandOutAborts) {
  static char not_ours[4096] __attribute__((aligned(4096)));
  void* p = not_ours + 128;
  EXPECT_DEATH(free(p), "invalid pointer.*" + hex(p));
  char* huge = static_cast<char*>(malloc(4 << 20));
  EXPECT_DEATH(free(huge + 64), "invalid pointer.*" + hex(huge + 64));
  free(huge);
  EXPECT_DEATH(free(huge), "double free.*" + hex(huge));
}

// Correct programs must not trip the checks: aligned blocks, realloc, cross-thread
// frees, cached blocks taken and put back.
TEST(Secure, CorrectProgramRuns) {
  std::mt19937_64 rng(7);
  std::vector<void*> live;
  for (int i = 0; i < 200000; i++) {
    uint64_t r = rng();
    if (live.size() < 2000 && (r & 3) != 0) {
      size_t n = 1 + (r >> 8) % ((r & 64) ? 600000 : 2000);
      void* p;
      switch ((r >> 4) % 4) {
        case 0: p = malloc(n); break;
        case 1: p = calloc(1, n); break;
        case 2: p = aligned_alloc(size_t(64) << ((r >> 40) % 8), n); break;
        default: p = realloc(malloc(n / 2 + 1), n); break;
      }
      ASSERT_NE(p, nullptr);
      live.push_back(p);
    } else if (!live.empty()) {
      size_t k = (r >> 16) % live.size();
      free(live[k]);
      live[k] = live.back();
      live.pop_back();
    }
  }
  std::thread t([&] {
    for (void* p : live) free(p);
  });
  t.join();
  scav_collect(true);
}

}  // namespace
