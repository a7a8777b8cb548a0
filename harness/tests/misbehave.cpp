// A test workload that crashes, hangs or grows on request.
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "mhwl/workload.h"

namespace {

const mhwl::WorkloadSpec kSpec{
    "misbehave", "misbehaves on request (harness tests only)", "",
    {{"mode", mhwl::ParamType::Choice, "grow", "", 0, -1, {"grow", "crash", "hang", "fail"}, "what to do"}}, {}};

int body(mhwl::Context& ctx) {
  const std::string& mode = ctx.params.text("mode");
  if (mode == "crash") {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::raise(SIGSEGV);
  }
  if (mode == "hang")
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  if (mode == "fail") return 3;
  ctx.report.mark("before");
  const size_t size = 64u << 20;
  char* p = static_cast<char*>(std::malloc(size));
  std::memset(p, 1, size);
  asm volatile("" : : "r"(p) : "memory");  // the compiler may not drop the block
  ctx.report.mark("after");
  std::free(p);
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
