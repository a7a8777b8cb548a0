// Load generator (see client.h): an open-loop schedule of POSTs at a fixed rate
// over keep-alive connections; request k is due at k / rate seconds after "go"
// and goes out on the next idle connection. Latency is taken per request from
// the first byte sent to the last byte of the echoed body received.
#include "client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "http.h"

namespace echo {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kResultFd = 3;

void say(const std::string& line) {
  std::string l = line + "\n";
  for (size_t off = 0; off < l.size();) {
    ssize_t n = ::write(kResultFd, l.data() + off, l.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

int fail(const std::string& why) {
  say("error " + why);
  std::fprintf(stderr, "server-echo client: %s\n", why.c_str());
  return 1;
}

enum class State { Idle, Sending, Receiving };

struct Conn {
  int fd = -1;
  State state = State::Idle;
  size_t sent = 0;
  std::string head;
  bool head_done = false;
  size_t expect = 0, got = 0;
  bool mismatch = false;
  Clock::time_point t_send;
};

double pct(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(q * static_cast<double>(v.size()) + 0.999999);
  return v[std::min(v.size(), std::max<size_t>(rank, 1)) - 1];
}

}  // namespace

int client_main(int argc, char** argv) {
  if (argc != 5) return fail("usage: --client PORT BODY_BYTES RATE CONNECTIONS DURATION_S");
  const int port = std::atoi(argv[0]);
  const size_t body_len = std::strtoull(argv[1], nullptr, 10);
  const double rate = std::atof(argv[2]);
  const int nconn = std::atoi(argv[3]);
  const double duration_s = std::atof(argv[4]);
  if (port <= 0 || rate <= 0 || nconn <= 0) return fail("bad arguments");

  std::string body(body_len, '\0');
  if (body_len == 5) body = "hello";
  else
    for (size_t i = 0; i < body_len; ++i) body[i] = static_cast<char>('a' + (i * 7 + i / 4096) % 26);
  const std::string request = "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
                              "Content-Length: " + std::to_string(body_len) + "\r\n\r\n" + body;

  std::vector<Conn> conns(static_cast<size_t>(nconn));
  for (auto& c : conns) {
    c.fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (c.fd < 0 || ::connect(c.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0)
      return fail(std::string("connect: ") + std::strerror(errno));
    int one = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK);
  }
  say("ready");
  char go[8];
  if (::read(0, go, sizeof go) <= 0) return 0;  // the server went away before the load

  const auto t0 = Clock::now();
  const auto end = t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(duration_s));
  const auto hard_end = end + std::chrono::seconds(10);
  const auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
  auto next_due = t0;
  size_t rr = 0, errors = 0;
  std::vector<double> latencies_ms;
  auto last_done = t0;
  char buf[64 * 1024];

  for (;;) {
    auto now = Clock::now();
    const bool busy = std::any_of(conns.begin(), conns.end(), [](const Conn& c) { return c.state != State::Idle; });
    if (now >= end && !busy) break;
    if (now >= hard_end) {
      errors += static_cast<size_t>(std::count_if(conns.begin(), conns.end(), [](const Conn& c) { return c.state != State::Idle; }));
      break;
    }
    // Start every request that is due, while an idle connection takes it.
    while (now < end && now >= next_due) {
      Conn* idle = nullptr;
      for (size_t i = 0; i < conns.size() && !idle; ++i) {
        Conn& c = conns[(rr + i) % conns.size()];
        if (c.state == State::Idle && c.fd >= 0) idle = &c;
      }
      if (!idle) break;
      rr = static_cast<size_t>(idle - conns.data()) + 1;
      const int fd = idle->fd;
      *idle = Conn{};
      idle->fd = fd;
      idle->state = State::Sending;
      idle->t_send = now;
      next_due += period;
    }

    std::vector<pollfd> pfds;
    for (auto& c : conns)
      pfds.push_back({c.fd, static_cast<short>(c.state == State::Sending ? POLLOUT : POLLIN), 0});
    int timeout_ms = 50;
    if (now < end) {
      auto until_due = std::chrono::duration_cast<std::chrono::milliseconds>(next_due - now).count();
      timeout_ms = static_cast<int>(std::clamp<long long>(until_due, 0, 50));
    }
    if (::poll(pfds.data(), pfds.size(), timeout_ms) < 0 && errno != EINTR) return fail("poll");

    for (size_t i = 0; i < conns.size(); ++i) {
      Conn& c = conns[i];
      if (!pfds[i].revents || c.fd < 0) continue;
      if (c.state == State::Sending) {
        ssize_t n = ::send(c.fd, request.data() + c.sent, request.size() - c.sent, MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
        if (n < 0) return fail(std::string("send: ") + std::strerror(errno));
        c.sent += static_cast<size_t>(n);
        if (c.sent == request.size()) c.state = State::Receiving;
        continue;
      }
      ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) return fail("the server closed a connection");
      if (c.state != State::Receiving) return fail("bytes from the server with no request outstanding");
      size_t off = 0;
      if (!c.head_done) {
        c.head.append(buf, static_cast<size_t>(n));
        Head h;
        ParseResult r = parse_head(c.head, h);
        if (r == ParseResult::Bad) return fail("bad response head");
        if (r == ParseResult::Incomplete) continue;
        c.head_done = true;
        c.expect = h.content_length;
        off = static_cast<size_t>(n) - (c.head.size() - h.head_len);
        if (c.expect != body_len) c.mismatch = true;
      }
      const size_t take = std::min(static_cast<size_t>(n) - off, c.expect - c.got);
      if (c.got + take <= body.size() && std::memcmp(buf + off, body.data() + c.got, take) != 0) c.mismatch = true;
      c.got += take;
      if (c.got == c.expect) {
        const auto t = Clock::now();
        if (c.mismatch) ++errors;
        else latencies_ms.push_back(std::chrono::duration<double, std::milli>(t - c.t_send).count());
        last_done = t;
        c.state = State::Idle;
      }
    }
  }

  for (auto& c : conns) ::close(c.fd);
  const double elapsed_ms = std::chrono::duration<double, std::milli>(std::max(last_done, end) - t0).count();
  char line[160];
  std::snprintf(line, sizeof line, "done %zu %zu %.3f %.4f %.4f", latencies_ms.size(), errors, elapsed_ms,
                pct(latencies_ms, 0.50), pct(latencies_ms, 0.99));
  say(line);
  return 0;
}

}  // namespace echo
