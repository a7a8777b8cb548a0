// server-echo: an HTTP/1.1 server that echoes POST bodies, under a steady load
// and then idle; measured are its page faults per request and what it keeps
// resident while idle. The load comes from a second process (this binary with
// --client) so that only the server is sampled. Everything of the server runs
// on the event loop's thread (the main thread).
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "client.h"
#include "mhwl/event_loop.h"
#include "mhwl/proc_self.h"
#include "mhwl/workload.h"
#include "server.h"

extern char** environ;

namespace {

using mhwl::ParamType;

const mhwl::WorkloadSpec kSpec{
    "server-echo",
    "an HTTP echo server under a steady load of large bodies, then idle",
    "000: a server answering 128/256/512 KiB bodies at 5 req/s took 65-309 minor faults per "
    "request before the allocator kept recently used large pages, 2.5-14 after; idle anon RSS "
    "at +10 s / +70 s",
    {
        {"body", ParamType::Choice, "256K", "", 0, -1, {"hello", "128K", "256K", "512K"}, "request body, echoed back"},
        {"rate", ParamType::Double, "5", "20", 0.01, 100000, {}, "requests per second, all connections together"},
        {"connections", ParamType::Int, "1", "", 1, 1024, {}, "keep-alive connections of the load generator"},
        {"duration", ParamType::Double, "10", "1", 0.1, 86400, {}, "seconds of load"},
        {"idle", ParamType::Double, "70", "1", 0.01, 86400, {},
         "seconds without requests after the load; readings at idle/7 and at the end (marks idle+10s and idle+70s "
         "at the default 70)"},
        mhwl::idle_hook_param(),
    },
    {
        {"faults_per_request", "count", "lower", "minor faults of the server during the load (getrusage), per response",
         "faults/request"},
        {"faults_per_request_warm", "count", "lower",
         "the same from the first response of the load on, per later response: the first touch of the buffers left out"},
        {"requests_per_s", "count/s", "higher", "responses the client received, per second of load"},
        {"latency_p50_ms", "ms", "lower", "median request latency, measured by the client (first byte sent to last byte received)"},
        {"latency_p99_ms", "ms", "lower", "99th percentile of the same"},
        {"rss_idle_end_kb", "KiB", "lower", "VmRSS of the server at the end of the idle time (70 s by default)"},
        {"anon_idle_end_kb", "KiB", "lower", "RssAnon of the server at the same moment", "idle anon at end"},
    },
    "load-end",
    {},
    {"workload.faults_per_request_warm", "workload.requests_per_s", "workload.rss_idle_end_kb", "peak_rss_kb"}};

// "idle+10s", "idle+0.429s": the time since the load ended, to three digits.
std::string idle_mark(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "idle+%.3gs", seconds);
  return buf;
}

size_t body_bytes(const std::string& choice) {
  if (choice == "hello") return 5;
  double bytes = 0;
  mhwl::parse_size(choice, bytes);
  return static_cast<size_t>(bytes);
}

// Starts the client with posix_spawn (vfork-like: no copy-on-write of the
// server's pages, whose faults are being counted). It is never waited for: its
// resource usage would otherwise count in the server's wait4 figures.
pid_t spawn_client(const std::vector<std::string>& args, int go_read, int result_write) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    std::string_view v(*e);
    if (v.rfind("LD_PRELOAD=", 0) == 0 || v.rfind("MEMHARNESS_", 0) == 0) continue;
    env.emplace_back(v);
  }
  std::vector<char*> envp, argv;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> a = args;
  for (auto& s : a) argv.push_back(s.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  // The harness's descriptors are inherited on purpose; the client must not hold them.
  for (const char* name : {"MEMHARNESS_MARK_FD", "MEMHARNESS_ACK_FD"})
    if (const char* v = std::getenv(name)) {
      int fd = std::atoi(v);
      if (fd > 3) posix_spawn_file_actions_addclose(&fa, fd);
    }
  posix_spawn_file_actions_adddup2(&fa, go_read, 0);
  posix_spawn_file_actions_adddup2(&fa, result_write, 3);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, "/proc/self/exe", &fa, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::system_error(rc, std::generic_category(), "posix_spawn of the client");
  return pid;
}

// One line from fd, waiting at most timeout_ms; empty on timeout or EOF.
std::string read_line(int fd, std::string& pending, int timeout_ms) {
  for (;;) {
    if (auto eol = pending.find('\n'); eol != std::string::npos) {
      std::string line = pending.substr(0, eol);
      pending.erase(0, eol + 1);
      return line;
    }
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return {};
    char buf[256];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) return {};
    pending.append(buf, static_cast<size_t>(n));
  }
}

struct ClientResult {
  bool ok = false;
  std::string error;
  double completed = 0, errors = 0, elapsed_ms = 0, p50 = 0, p99 = 0;
};

ClientResult parse_result(const std::string& line) {
  ClientResult r;
  std::istringstream s(line);
  std::string word;
  s >> word;
  if (word == "done" && (s >> r.completed >> r.errors >> r.elapsed_ms >> r.p50 >> r.p99)) {
    r.ok = true;
  } else {
    r.error = line.empty() ? "the client ended without a result" : "client: " + line;
  }
  return r;
}

int body(mhwl::Context& ctx) {
  const auto& p = ctx.params;
  const double idle_s = p.number("idle");
  std::signal(SIGPIPE, SIG_IGN);

  mhwl::EventLoop loop(ctx.idle);
  echo::Server server(loop);

  int go[2], result[2];
  if (pipe2(go, O_CLOEXEC) < 0 || pipe2(result, O_CLOEXEC) < 0)
    throw std::system_error(errno, std::generic_category(), "pipe2");
  char rate[32], duration[32];
  std::snprintf(rate, sizeof rate, "%.6g", p.number("rate"));
  std::snprintf(duration, sizeof duration, "%.6g", p.number("duration"));
  spawn_client({"server-echo", "--client", std::to_string(server.port()), std::to_string(body_bytes(p.text("body"))),
                rate, std::to_string(p.integer("connections")), duration},
               go[0], result[1]);
  ::close(go[0]);
  ::close(result[1]);

  // The client connects every connection (they wait in the backlog) and says ready.
  std::string pending;
  ClientResult outcome;
  auto give_up = [&](const std::string& why) {
    std::cerr << "server-echo: " << why << "\n";
    for (const auto& m : kSpec.metrics) ctx.report.metric_null(m.name, why);
    return 1;
  };
  if (std::string line = read_line(result[0], pending, 10000); line != "ready")
    return give_up("the client did not get ready: " + parse_result(line).error);

  long faults0 = 0, faults1 = 0;
  uint64_t served0 = 0, served1 = 0;
  mhwl::MemStatus end;
  ctx.report.mark("load-start");
  faults0 = mhwl::minor_faults();
  served0 = server.responses();
  server.note_faults_at_response(served0 + 1);
  if (::write(go[1], "go\n", 3) != 3) throw std::system_error(errno, std::generic_category(), "write to the client");

  const auto idle_early = std::chrono::microseconds(static_cast<int64_t>(idle_s / 7 * 1e6));
  const auto idle_end = std::chrono::microseconds(static_cast<int64_t>(idle_s * 1e6));
  // The marks say when they are taken: idle+10s and idle+70s at the default --idle 70.
  const std::string early_mark = idle_mark(idle_s / 7), end_mark = idle_mark(idle_s);
  auto end_of_load = [&] {
    faults1 = mhwl::minor_faults();
    served1 = server.responses();
    ctx.report.mark("load-end");
    loop.remove_fd(result[0]);
    loop.add_timer(idle_early, false, [&] {
      ctx.report.mark(early_mark);
    });
    loop.add_timer(idle_end, false, [&] {
      end = mhwl::read_mem_status();
      ctx.report.mark(end_mark);
      loop.stop();
    });
  };
  loop.add_fd(result[0], EPOLLIN, [&](uint32_t) {
    char buf[256];
    ssize_t n = ::read(result[0], buf, sizeof buf);
    if (n > 0) pending.append(buf, static_cast<size_t>(n));
    const auto eol = pending.find('\n');
    if (n > 0 && eol == std::string::npos) return;
    outcome = parse_result(eol == std::string::npos ? std::string() : pending.substr(0, eol));
    if (outcome.ok) return end_of_load();
    loop.stop();
  });
  loop.run();

  if (!outcome.ok) return give_up(outcome.error);
  const uint64_t served = served1 - served0;
  if (served == 0) return give_up("the server answered no request");
  ctx.report.metric("faults_per_request", static_cast<double>(faults1 - faults0) / static_cast<double>(served));
  if (served > 1 && server.faults_at_response() >= 0)
    ctx.report.metric("faults_per_request_warm", static_cast<double>(faults1 - server.faults_at_response()) /
                                                     static_cast<double>(served - 1));
  else
    ctx.report.metric_null("faults_per_request_warm", "fewer than two responses during the load");
  ctx.report.metric("requests_per_s", outcome.completed / (outcome.elapsed_ms / 1000.0));
  ctx.report.metric("latency_p50_ms", outcome.p50);
  ctx.report.metric("latency_p99_ms", outcome.p99);
  ctx.report.metric("rss_idle_end_kb", static_cast<double>(end.rss_kb));
  ctx.report.metric("anon_idle_end_kb", static_cast<double>(end.anon_kb));
  if (outcome.errors > 0 || server.bad_requests() > 0) {
    std::cerr << "server-echo: " << outcome.errors << " requests failed at the client, " << server.bad_requests()
              << " bad requests at the server\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The hidden client mode is not a parameter: the harness never asks for it.
  if (argc > 1 && std::strcmp(argv[1], "--client") == 0) return echo::client_main(argc - 2, argv + 2);
  return mhwl::run_workload(argc, argv, kSpec, body);
}
