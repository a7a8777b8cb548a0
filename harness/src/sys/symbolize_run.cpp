// Naming a run's heap frames in a process of their own (see symbolize.h): a
// fork of the harness (which has no other thread by then) names each frame
// with symbolize_frame and writes it down a pipe as soon as it has it; the
// harness reads until the child ends, its deadline passes or the harness is
// asked to stop, then kills it. What came back is kept, the rest is unnamed
// with the reason. Main thread only.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <set>
#include <tuple>
#include <vector>

#include "sys/interrupt.h"
#include "sys/symbolize.h"

namespace mh {

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kAskedToStop = "the harness was asked to stop first";

// The run's frames, in the order the child names them.
std::vector<HeapFrame*> frames_of(RunRecord& run) {
  std::vector<HeapFrame*> out;
  auto add = [&](HeapSites& sites) {
    for (auto& site : sites.top)
      for (auto& f : site.frames) out.push_back(&f);
  };
  for (auto& m : run.marks)
    if (m.heap_sites) add(*m.heap_sites);
  if (run.heap_sites_peak) add(*run.heap_sites_peak);
  return out;
}

// The pipe's messages: a 32-bit length, then a tag ('F' a frame, 'O' an
// object) and its fields, each number 32 bits, each string its length and
// its bytes as they are (names are made valid text where they reach a record).
class Message {
 public:
  explicit Message(char tag) { body_.push_back(tag); }
  Message& num(uint32_t v) {
    body_.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  Message& str(const std::string& s) {
    num(uint32_t(s.size()));
    body_ += s;
    return *this;
  }
  // False when the reader went away.
  bool send(int fd) const {
    const auto size = uint32_t(body_.size());
    std::string all(reinterpret_cast<const char*>(&size), sizeof size);
    all += body_;
    for (size_t done = 0; done < all.size();) {
      const ssize_t n = write(fd, all.data() + done, all.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += size_t(n);
    }
    return true;
  }

 private:
  std::string body_;
};

// One message's fields read in order; ok() false once one ran past its end.
class Fields {
 public:
  Fields(const char* p, size_t n) : p_(p), end_(p + n) {}
  uint32_t num() {
    uint32_t v = 0;
    if (size_t(end_ - p_) < sizeof v) return fail(), 0;
    std::memcpy(&v, p_, sizeof v);
    p_ += sizeof v;
    return v;
  }
  std::string str() {
    const uint32_t n = num();
    if (!ok_ || size_t(end_ - p_) < n) return fail(), std::string();
    std::string s(p_, n);
    p_ += n;
    return s;
  }
  bool ok() const { return ok_; }

 private:
  void fail() { ok_ = false; }
  const char* p_;
  const char* end_;
  bool ok_ = true;
};

// The child: names every frame and sends it, and each object the first time
// a frame names it. Never returns.
[[noreturn]] void name_in_child(int fd, pid_t parent, const std::vector<HeapFrame*>& frames,
                                const SymbolizeSettings& settings, const sigset_t& mask) {
  // It dies with the harness, whatever ends the harness; signals meant for
  // the harness (a terminal's Ctrl-C) reach only the harness, which kills it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);
  setpgid(0, 0);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  // libdw asks the servers this names for the debug files of build IDs the program chose.
  if (!settings.debuginfod) unsetenv("DEBUGINFOD_URLS");
  try {
    std::set<std::string> sent;
    for (uint32_t i = 0; i < frames.size(); ++i) {
      HeapFrame f = *frames[i];
      symbolize_frame(f);
      if (!Message('F').num(i).str(f.function).str(f.file).num(uint32_t(f.line)).str(f.source).str(f.reason).send(fd))
        _exit(1);
      if (!is_object_file(f.object) || !sent.insert(f.object).second) continue;
      const HeapObject o = heap_object(f.object);
      if (!Message('O').str(f.object).num(o.build_id ? 1 : 0).str(o.build_id.value_or("")).str(o.reason).send(fd))
        _exit(1);
    }
  } catch (...) {
    _exit(1);
  }
  _exit(0);
}

// The harness's side: what the child sent, applied to the run as it comes.
class Results {
 public:
  Results(RunRecord& run, std::vector<HeapFrame*>& frames) : run_(run), frames_(frames), named_(frames.size()) {}
  void add(const char* data, size_t n) {
    buf_.append(data, n);
    size_t at = 0;
    for (uint32_t size = 0; buf_.size() - at >= sizeof size; at += sizeof size + size) {
      std::memcpy(&size, buf_.data() + at, sizeof size);
      if (buf_.size() - at - sizeof size < size) break;
      apply(buf_.data() + at + sizeof size, size);
    }
    buf_.erase(0, at);
  }
  // Frames and objects the child did not name: their object and offset, and why.
  void finish(const std::string& why) {
    for (size_t i = 0; i < frames_.size(); ++i) {
      HeapFrame& f = *frames_[i];
      if (!named_[i]) {
        f.function.clear();
        f.file.clear();
        f.line = 0;
        f.source = "none";
        f.reason = "not named: " + why;
      }
      if (is_object_file(f.object) && !run_.heap_objects.count(f.object))
        run_.heap_objects.emplace(f.object, HeapObject{std::nullopt, "not read: " + why});
    }
  }

 private:
  void apply(const char* p, size_t n) {
    if (n == 0) return;
    Fields in(p + 1, n - 1);
    if (*p == 'F') {
      const uint32_t i = in.num();
      HeapFrame got;
      got.function = in.str();
      got.file = in.str();
      got.line = int(in.num());
      got.source = in.str();
      got.reason = in.str();
      if (!in.ok() || i >= frames_.size()) return;
      HeapFrame& f = *frames_[i];
      std::tie(f.function, f.file, f.line, f.source, f.reason) =
          std::tie(got.function, got.file, got.line, got.source, got.reason);
      named_[i] = true;
    } else if (*p == 'O') {
      std::string path = in.str();
      const bool has_id = in.num() != 0;
      std::string id = in.str(), reason = in.str();
      if (!in.ok()) return;
      run_.heap_objects[path] = HeapObject{has_id ? std::optional<std::string>(id) : std::nullopt, reason};
    }
  }

  RunRecord& run_;
  std::vector<HeapFrame*>& frames_;
  std::vector<bool> named_;
  std::string buf_;
};

// Reads the child's results until it closes the pipe; "" then, else why it
// was given up (the deadline, a stop asked of the harness).
std::string read_until_done(int fd, Results& results, const SymbolizeSettings& settings) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(settings.timeout_s);
  char chunk[16384];
  for (;;) {
    if (interrupt::requested()) return kAskedToStop;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0)
      return fmt::format("naming the call sites' frames took longer than --symbolize-timeout {} s", settings.timeout_s);
    pollfd fds[2] = {{fd, POLLIN, 0}, {interrupt::wake_fd(), POLLIN, 0}};
    if (poll(fds, 2, int(std::min<int64_t>(left, 1000))) < 0 && errno != EINTR)
      return std::string("poll: ") + std::strerror(errno);
    if (!(fds[0].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n > 0) results.add(chunk, size_t(n));
    else if (n == 0) return "";
    else if (errno != EINTR && errno != EAGAIN) return std::string("read: ") + std::strerror(errno);
  }
}

// Why a child that closed its pipe did not name everything ("" when it ended well).
std::string how_it_ended(int status) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  if (WIFSIGNALED(status)) return fmt::format("the process naming them ended by signal {}", WTERMSIG(status));
  return fmt::format("the process naming them failed (exit {})", WEXITSTATUS(status));
}

}  // namespace

void symbolize_heap_sites(RunRecord& run, const SymbolizeSettings& settings) {
  std::vector<HeapFrame*> frames = frames_of(run);
  if (frames.empty()) return;
  Results results(run, frames);
  if (interrupt::requested()) return results.finish(kAskedToStop);
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) return results.finish(std::string("no pipe to name them: ") + std::strerror(errno));
  const pid_t parent = getpid();
  // The child must not take a stop meant for the harness into the harness's handler.
  sigset_t stops, before;
  sigemptyset(&stops);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stops, sig);
  sigprocmask(SIG_BLOCK, &stops, &before);
  const pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    name_in_child(p[1], parent, frames, settings, before);
  }
  sigprocmask(SIG_SETMASK, &before, nullptr);
  close(p[1]);
  if (pid < 0) {
    close(p[0]);
    return results.finish(std::string("no process to name them: ") + std::strerror(errno));
  }
  std::string why = read_until_done(p[0], results, settings);
  close(p[0]);
  if (!why.empty()) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (why.empty()) why = how_it_ended(status);
  results.finish(why.empty() ? "the process naming them did not send it" : why);
}

}  // namespace mh
