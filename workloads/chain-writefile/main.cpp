// chain-writefile: concurrent chains of awaited file writes, each with a heap copy.
// The main thread runs an event loop; each chain copies its input, hands the copy
// to a pool worker that writes it to the chain's file, and the completion (on the
// loop) frees the copy and starts the chain's next write. Chain state is touched by
// the loop thread only; a worker touches the one Write it was handed.
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "mhwl/event_loop.h"
#include "mhwl/files.h"
#include "mhwl/proc_self.h"
#include "mhwl/thread_pool.h"
#include "mhwl/workload.h"

namespace {

using mhwl::ParamType;

const mhwl::WorkloadSpec kSpec{
    "chain-writefile",
    "chains of awaited file writes, each write with its own heap copy of the input",
    "001: chains (1, 16, 64) of awaited writes of 16 KiB..600 KiB copies; with 16 chains of "
    "300 KiB the JS thread took 2.96 page faults per write when it freed the copies and 5.78 "
    "when the pool thread did",
    {
        {"chains", ParamType::Int, "16", "4", 1, 4096, {}, "chains running at once, each awaiting its previous write"},
        {"size", ParamType::Size, "300K", "64K", 16 * 1024, 32.0 * 1024 * 1024, {}, "bytes per write (each write copies them)"},
        {"writes", ParamType::Int, "100", "10", 1, 1000000, {}, "writes per chain"},
        {"threads", ParamType::Int, "4", "2", 1, 256, {}, "pool threads doing the writes"},
        {"release-on-pool", ParamType::Bool, "false", "", 0, -1, {},
         "free each copy on the pool thread right after its write instead of in the completion"},
        {"dir", ParamType::String, "", "", 0, -1, {}, "parent of the private temporary directory (default $TMPDIR or /tmp)"},
        mhwl::idle_hook_param(),
        mhwl::seed_param(),
    },
    {
        {"faults_per_write", "count", "lower",
         "minor page faults of the whole process (getrusage) from the first write to the last completion, per write",
         "faults/write"},
        {"ms_per_write", "ms", "lower", "wall time over the same span, per write", "ms/write"},
        {"writes", "count", "", "writes completed"},
    },
    "all-done",
    {},
    {"peak_rss_kb", "minflt"}};

struct Write {
  size_t chain;
  char* copy;
  int error = 0;
};

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const size_t chains = static_cast<size_t>(p.integer("chains"));
  const size_t size = static_cast<size_t>(p.integer("size"));
  const size_t per_chain = static_cast<size_t>(p.integer("writes"));
  const bool release_on_pool = p.flag("release-on-pool");

  mhwl::TempDir dir("memharness-chain", p.text("dir"));
  std::vector<std::string> path_of(chains);
  for (size_t c = 0; c < chains; ++c) path_of[c] = dir.path() + "/chain-" + std::to_string(c);

  // The caller's input, alive for the whole run (the string a script would hold).
  std::vector<char> input(size);
  for (auto& ch : input) ch = static_cast<char>(' ' + ctx.rng() % 95);

  std::vector<size_t> started(chains, 0);
  size_t done = 0, failed = 0;
  const size_t total = chains * per_chain;
  double wall_ms = 0;
  long faults = 0;
  {
    mhwl::EventLoop loop(ctx.idle);
    mhwl::ThreadPool pool(static_cast<size_t>(p.integer("threads")), "pool", ctx.idle);

    std::function<void(size_t)> start_write;
    auto complete = [&](Write* w) {
      std::free(w->copy);  // null when the pool already released it
      if (w->error) {
        std::cerr << "write " << path_of[w->chain] << ": " << std::strerror(w->error) << "\n";
        ++failed;
      }
      const size_t chain = w->chain;
      delete w;
      if (started[chain] < per_chain) start_write(chain);
      if (++done == total) loop.stop();
    };
    start_write = [&](size_t chain) {
      ++started[chain];
      auto* w = new Write{chain, static_cast<char*>(std::malloc(size))};
      if (!w->copy) throw std::bad_alloc();
      std::memcpy(w->copy, input.data(), size);
      pool.submit([&, w] {
        w->error = mhwl::write_file(path_of[w->chain], w->copy, size);
        if (release_on_pool) {
          std::free(w->copy);
          w->copy = nullptr;
        }
        loop.post([&, w] { complete(w); });
      });
    };

    ctx.report.mark("start");
    const long faults0 = mhwl::minor_faults();
    const auto t0 = std::chrono::steady_clock::now();
    loop.post([&] {
      for (size_t c = 0; c < chains; ++c) start_write(c);
    });
    loop.run();
    wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    faults = mhwl::minor_faults() - faults0;
    ctx.report.mark("all-done");
  }

  ctx.report.metric("ms_per_write", wall_ms / static_cast<double>(done));
  ctx.report.metric("faults_per_write", static_cast<double>(faults) / static_cast<double>(done));
  ctx.report.metric("writes", static_cast<double>(done));

  // Outside the measured span: each chain's file holds the input of its last write.
  std::vector<char> back;
  size_t verified = 0;
  for (size_t c = 0; c < chains; ++c)
    if (mhwl::read_file(path_of[c], back) == 0 && back == input) ++verified;
  if (failed || verified != chains) {
    std::cerr << "chain-writefile: " << failed << " writes failed, " << verified << " of " << chains
              << " files hold the input\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
