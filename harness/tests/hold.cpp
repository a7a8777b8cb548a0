// Two builds of one small program for comparisons of two commands: it holds
// HOLD_MB MB (a compile-time constant, so builds differ as a program's base
// and head do), every page touched, for MS milliseconds (argv[1], default
// 300), then frees them and exits 0. HOLD_NOISE_MB=N in the environment adds
// a random 0-N MB, drawn from the clock: a run-to-run spread of known size.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <unistd.h>
#include <vector>

#ifndef HOLD_MB
#error "build with -DHOLD_MB=N"
#endif

namespace {

constexpr size_t kMB = 1000 * 1000;  // the harness's MB

size_t noise_bytes() {
  const char* text = std::getenv("HOLD_NOISE_MB");
  const double most = text ? std::strtod(text, nullptr) : 0;
  if (!(most > 0)) return 0;
  std::mt19937_64 rng(uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^ uint64_t(getpid()));
  return size_t(std::uniform_real_distribution<double>(0, most)(rng) * double(kMB));
}

}  // namespace

int main(int argc, char** argv) {
  const int ms = argc > 1 ? std::atoi(argv[1]) : 300;
  const size_t bytes = size_t(HOLD_MB) * kMB + noise_bytes();
  // One block: glibc maps it on its own and gives it back at free.
  char* held = static_cast<char*>(std::malloc(bytes));
  if (!held) return 3;
  const long page = sysconf(_SC_PAGESIZE);
  for (size_t i = 0; i < bytes; i += size_t(page)) held[i] = char(i);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  std::free(held);
  return 0;
}
