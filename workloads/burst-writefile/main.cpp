// burst-writefile: a burst of pending file writes whose jobs hold large copies.
// The main thread runs an event loop; in one turn it starts --calls writes, each
// with its own heap copy of the input; pool workers write the copies to files and
// post completions back; the completions, in later turns, free the copies (or the
// worker frees its copy right after the write with --release-on-pool).
// With --input utf16 (the default) the input is a UTF-16 string and each call's
// copy is its UTF-8 encoding, made on the main thread, as a script runtime does
// for a string argument; --input bytes copies a byte buffer as it is.
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "mhwl/event_loop.h"
#include "mhwl/files.h"
#include "mhwl/thread_pool.h"
#include "mhwl/workload.h"

namespace {

using mhwl::ParamType;

const mhwl::WorkloadSpec kSpec{
    "burst-writefile",
    "a burst of pending file writes whose jobs each hold a large heap copy of their input",
    "001: 300 pending writeFile calls of a 1.5 MiB string peak at 503 MB; freeing the copy on "
    "the pool thread brings it to 69 MB",
    {
        {"calls", ParamType::Int, "300", "20", 1, 100000, {}, "writes started in one turn"},
        {"size", ParamType::Size, "1.5M", "256K", 2, 1024.0 * 1024 * 1024, {}, "bytes per write (each call copies them)"},
        {"input", ParamType::Choice, "utf16", "", 0, -1, {"utf16", "bytes"},
         "utf16: each call encodes a UTF-16 string to a UTF-8 copy of --size bytes; bytes: each call copies a byte buffer"},
        {"threads", ParamType::Int, "4", "2", 1, 256, {}, "pool threads doing the writes"},
        {"release-on-pool", ParamType::Bool, "false", "", 0, -1, {},
         "free each copy on the pool thread right after its write instead of on the main thread"},
        {"dir", ParamType::String, "", "", 0, -1, {}, "parent of the private temporary directory (default $TMPDIR or /tmp)"},
        mhwl::idle_hook_param(),
        mhwl::seed_param(),
    },
    {
        {"calls", "count", "", "writes started"},
        {"bytes_written", "bytes", "", "bytes the writes put in files"},
        {"burst_ms", "ms", "lower", "from the first call to the last completion"},
        {"files_verified", "count", "", "files read back after the window that hold exactly the input"},
    },
    "all-done",
    {},
    {"peak_rss_kb", "rss_area_mb_s", "final_rss_kb"}};

// UTF-16 to UTF-8, the work a runtime does to turn a string argument into bytes.
// Unpaired surrogates become U+FFFD. Returns the bytes written (at most 3 per unit).
size_t encode_utf8(const std::u16string& in, char* out) {
  char* o = out;
  for (size_t i = 0; i < in.size(); ++i) {
    uint32_t c = in[i];
    if (c >= 0xD800 && c <= 0xDBFF && i + 1 < in.size() && in[i + 1] >= 0xDC00 && in[i + 1] <= 0xDFFF) {
      c = 0x10000 + ((c - 0xD800) << 10) + (in[++i] - 0xDC00);
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = 0xFFFD;
    }
    if (c < 0x80) {
      *o++ = char(c);
    } else if (c < 0x800) {
      *o++ = char(0xC0 | (c >> 6));
      *o++ = char(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      *o++ = char(0xE0 | (c >> 12));
      *o++ = char(0x80 | ((c >> 6) & 0x3F));
      *o++ = char(0x80 | (c & 0x3F));
    } else {
      *o++ = char(0xF0 | (c >> 18));
      *o++ = char(0x80 | ((c >> 12) & 0x3F));
      *o++ = char(0x80 | ((c >> 6) & 0x3F));
      *o++ = char(0x80 | (c & 0x3F));
    }
  }
  return size_t(o - out);
}

struct Call {
  size_t index;
  char* copy;
  int error = 0;
};

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const size_t calls = static_cast<size_t>(p.integer("calls"));
  const size_t size = static_cast<size_t>(p.integer("size"));
  const bool release_on_pool = p.flag("release-on-pool");

  mhwl::TempDir dir("memharness-burst", p.text("dir"));
  auto path_of = [&](size_t i) { return dir.path() + "/" + std::to_string(i); };

  // The caller's own input, alive for the whole burst (like the string a script
  // holds): a byte buffer, or a string of two-byte characters (Greek and
  // Cyrillic, U+0391..U+04FF) whose UTF-8 encoding is exactly `size` bytes.
  const bool utf16 = p.text("input") == "utf16";
  std::vector<char> input(size);
  std::u16string text;
  if (utf16) {
    text.resize(size / 2);
    for (auto& c : text) c = char16_t(0x391 + ctx.rng() % (0x4FF - 0x391));
    if (size % 2) text.push_back(u'.');
    input.resize(encode_utf8(text, input.data()));
  } else {
    for (auto& c : input) c = static_cast<char>(' ' + ctx.rng() % 95);
  }

  size_t done = 0, failed = 0;
  uint64_t bytes_written = 0;
  double burst_ms = 0;
  {
    mhwl::EventLoop loop(ctx.idle);
    mhwl::ThreadPool pool(static_cast<size_t>(p.integer("threads")), "pool", ctx.idle);
    ctx.report.mark("start");
    const auto t0 = std::chrono::steady_clock::now();

    auto complete = [&](Call* call) {
      std::free(call->copy);  // null when the pool already released it
      if (call->error) {
        std::cerr << "write " << path_of(call->index) << ": " << std::strerror(call->error) << "\n";
        ++failed;
      } else {
        bytes_written += size;
      }
      delete call;
      if (++done == calls) {
        burst_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        ctx.report.mark("all-done");
        loop.stop();
      }
    };

    loop.post([&] {
      for (size_t i = 0; i < calls; ++i) {
        auto* call = new Call{i, static_cast<char*>(std::malloc(size))};
        if (!call->copy) throw std::bad_alloc();
        if (utf16) encode_utf8(text, call->copy);
        else std::memcpy(call->copy, input.data(), size);
        pool.submit([&, call] {
          call->error = mhwl::write_file(path_of(call->index), call->copy, size);
          if (release_on_pool) {
            std::free(call->copy);
            call->copy = nullptr;
          }
          loop.post([&, call] { complete(call); });
        });
      }
      ctx.report.mark("all-started");
    });
    loop.run();
  }

  ctx.report.metric("calls", static_cast<double>(calls));
  ctx.report.metric("bytes_written", static_cast<double>(bytes_written));
  ctx.report.metric("burst_ms", burst_ms);

  // Outside the measured window: every file must hold exactly the input.
  size_t verified = 0;
  std::vector<char> back;
  for (size_t i = 0; i < calls; ++i) {
    if (mhwl::read_file(path_of(i), back) == 0 && back == input) ++verified;
  }
  ctx.report.metric("files_verified", static_cast<double>(verified));
  if (failed || verified != calls) {
    std::cerr << "burst-writefile: " << failed << " writes failed, " << verified << " of " << calls
              << " files hold the input\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return mhwl::run_workload(argc, argv, kSpec, body); }
