// frag-shift: a live heap held flat while its allocation pattern fragments a
// size-class allocator: each phase allocates a burst of one size, frees all
// but one block per --keep-every bytes of it, and moves on to the next,
// larger size. The survivors keep a page (a slab, a span) of every class
// resident; an allocator that can reuse the holes for other sizes (one that
// splits and merges free chunks) keeps RSS flat. A ballast of large blocks and
// a tail of small ones, given up as the survivors' usable bytes grow, holds the
// live heap level. Single-threaded.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <malloc.h>
#include <new>
#include <thread>
#include <vector>

#include "mhwl/touch.h"
#include "mhwl/workload.h"

namespace {

using mhwl::ParamType;

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr size_t kBallastBlock = 256 * 1024;

const mhwl::WorkloadSpec kSpec{
    "frag-shift",
    "a burst per size class, all but one block per page freed, then the next class: the live heap flat, "
    "a size-class allocator's RSS growing",
    "not a seed: fragmentation for the growth verdict (leak or allocator?) to find",
    {
        {"classes", ParamType::Int, "24", "16", 2, 4096, {}, "phases, one size each, spread over --duration"},
        {"min-size", ParamType::Size, "16", "", 1, 1024 * 1024, {}, "the first phase's block size"},
        {"max-size", ParamType::Size, "2K", "", 1, 1024 * 1024, {}, "the last phase's block size (sizes between grow geometrically, multiples of 16)"},
        {"burst", ParamType::Size, "2M", "1M", 4096, 64 * kGiB, {}, "bytes allocated per phase"},
        {"keep-every", ParamType::Size, "4K", "", 16, 64 * 1024 * 1024, {}, "one block kept per this many bytes of a burst"},
        {"duration", ParamType::Double, "60", "3", 0.5, 86400, {}, "seconds between the growth-start and growth-end marks"},
        {"warmup", ParamType::Double, "1", "0.3", 0, 3600, {}, "seconds of idle after the ballast, before the growth-start mark"},
        mhwl::seed_param(),
    },
    {
        {"survivors_kb", "KiB", "", "usable bytes (malloc_usable_size) of the blocks kept at the growth-end mark"},
        {"ballast_left_kb", "KiB", "", "ballast still held at the growth-end mark"},
        {"burst_mb_total", "MB", "", "bytes allocated in all phases"},
    },
    "",
    {},
    {"growth.outside_mb_per_min", "growth.live_mb_per_min", "peak_rss_kb"}};

// The phases' sizes: geometric from min to max, rounded up to 16.
std::vector<size_t> sizes_of(size_t classes, size_t min_size, size_t max_size) {
  std::vector<size_t> out;
  max_size = std::max(min_size, max_size);
  for (size_t k = 0; k < classes; ++k) {
    const double f = classes == 1 ? 0 : double(k) / double(classes - 1);
    const double s = double(min_size) * std::pow(double(max_size) / double(min_size), f);
    out.push_back((static_cast<size_t>(std::ceil(s)) + 15) / 16 * 16);
  }
  return out;
}

void* allocate(size_t n) {
  void* p = std::malloc(n);
  if (!p) throw std::bad_alloc();
  mhwl::touch_pages(p, n);
  return p;
}

// A phase's blocks and the stride of those kept: one block per `keep_every` bytes.
struct Burst {
  size_t blocks, stride;
  // How many are kept: those at stride / 2, stride + stride / 2, ...
  size_t kept() const { return blocks > stride / 2 ? (blocks - stride / 2 - 1) / stride + 1 : 0; }
};
Burst burst_of(size_t size, size_t burst, size_t keep_every) {
  return {std::max<size_t>(1, burst / size), std::max<size_t>(1, keep_every / size)};
}

// One phase: a burst of `size` blocks, all but one per `keep_every` bytes freed.
// Returns the usable bytes kept (what the heap ledger counts).
size_t phase(size_t size, Burst b, std::vector<void*>& kept) {
  std::vector<void*> blocks(b.blocks);
  for (auto& p : blocks) p = allocate(size);
  size_t bytes = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (i % b.stride == b.stride / 2) {
      kept.push_back(blocks[i]);
      bytes += malloc_usable_size(blocks[i]);
    } else {
      std::free(blocks[i]);
    }
  }
  return bytes;
}

// The ballast, in usable bytes (what the heap ledger counts, the allocator's
// rounding included): blocks of kBallastBlock and a tail of kPiece blocks, so
// that it can be given up to within a piece.
class Ballast {
 public:
  explicit Ballast(size_t bytes) {
    while (held() + kBallastBlock <= bytes) blocks_.add(kBallastBlock);
    shrink_to(bytes);
  }
  Ballast(const Ballast&) = delete;
  Ballast& operator=(const Ballast&) = delete;
  // Holds at most `bytes`, and less only by part of a piece.
  void shrink_to(size_t bytes) {
    while (!blocks_.empty() && blocks_.usable > bytes) blocks_.drop();
    while (!tail_.empty() && held() > bytes) tail_.drop();
    while (held() < bytes) {
      tail_.add(kPiece);
      if (held() > bytes) {
        tail_.drop();
        break;
      }
    }
  }
  size_t held() const { return blocks_.usable + tail_.usable; }

 private:
  static constexpr size_t kPiece = 4096;
  // Blocks of one kind and the sum of their usable sizes.
  struct Blocks {
    std::vector<void*> list;
    size_t usable = 0;
    ~Blocks() {
      for (void* p : list) std::free(p);
    }
    bool empty() const { return list.empty(); }
    void add(size_t n) {
      list.push_back(allocate(n));
      usable += malloc_usable_size(list.back());
    }
    void drop() {
      usable -= malloc_usable_size(list.back());
      std::free(list.back());
      list.pop_back();
    }
  };
  Blocks blocks_, tail_;
};

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const auto sizes = sizes_of(static_cast<size_t>(p.integer("classes")), static_cast<size_t>(p.integer("min-size")),
                              static_cast<size_t>(p.integer("max-size")));
  const auto burst = static_cast<size_t>(p.integer("burst")), keep = static_cast<size_t>(p.integer("keep-every"));
  // The ballast: twice what all phases will keep (the allocator rounds each
  // survivor up: glibc's 16-byte blocks are 24 usable bytes), given up as the
  // survivors' usable bytes grow; the list of the kept blocks reserved ahead,
  // so that it does not grow in the live heap either.
  size_t to_keep = 0, kept_blocks = 0;
  for (size_t s : sizes) {
    to_keep += burst_of(s, burst, keep).kept() * s;
    kept_blocks += burst_of(s, burst, keep).kept();
  }
  Ballast ballast(2 * to_keep);
  const size_t level = ballast.held();
  std::vector<void*> kept;
  kept.reserve(kept_blocks);
  ctx.report.mark("start");
  std::this_thread::sleep_for(std::chrono::duration<double>(p.number("warmup")));

  using Clock = std::chrono::steady_clock;
  const auto from = Clock::now();
  const double step = p.number("duration") / double(sizes.size());
  ctx.report.mark("growth-start");
  size_t survivors = 0;
  double total = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    std::this_thread::sleep_until(from + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(step * (double(k) + 0.5))));
    survivors += phase(sizes[k], burst_of(sizes[k], burst, keep), kept);
    total += double(burst);
    ballast.shrink_to(level - std::min(level, survivors));
  }
  std::this_thread::sleep_until(from + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(p.number("duration"))));
  ctx.report.mark("growth-end");
  ctx.report.metric("survivors_kb", double(survivors) / 1024);
  ctx.report.metric("ballast_left_kb", double(ballast.held()) / 1024);
  ctx.report.metric("burst_mb_total", total / 1e6);
  for (void* b : kept) std::free(b);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
