// Echo server on epoll, edge-triggered (see server.h): every callback reads and
// writes until EAGAIN, so no readiness is lost between two edges.
#include "server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "http.h"
#include "mhwl/proc_self.h"

namespace echo {

struct Server::Conn {
  int fd = -1;
  std::string in;        // bytes of the next request head (and any pipelined rest)
  char* body = nullptr;  // the request body, malloc'd at its full length
  size_t body_len = 0, body_have = 0;
  bool in_body = false;
  char* out = nullptr;  // the response, malloc'd
  size_t out_len = 0, out_off = 0;
  bool close_after = false;
  ~Conn() {
    std::free(body);
    std::free(out);
  }
};

Server::Server(mhwl::EventLoop& loop) : loop_(loop) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::system_error(errno, std::generic_category(), "socket");
  int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 || ::listen(listen_fd_, 128) < 0 ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) < 0) {
    int e = errno;
    ::close(listen_fd_);
    throw std::system_error(e, std::generic_category(), "bind/listen on 127.0.0.1");
  }
  port_ = ntohs(addr.sin_port);
  loop_.add_fd(listen_fd_, EPOLLIN, [this](uint32_t) { accept_all(); });
}

Server::~Server() {
  for (auto& [fd, c] : conns_) {
    loop_.remove_fd(fd);
    ::close(fd);
  }
  loop_.remove_fd(listen_fd_);
  ::close(listen_fd_);
}

void Server::accept_all() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return;  // EAGAIN, or an error the next connection may not have
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    auto conn = std::make_unique<Conn>();
    conn->fd = fd;
    Conn* c = conn.get();
    conns_[fd] = std::move(conn);
    loop_.add_fd(fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, [this, c](uint32_t events) {
      if (events & EPOLLERR) return close_conn(c->fd);
      drive(*c);
    });
    drive(*c);  // data may have come with the connection
  }
}

void Server::close_conn(int fd) {
  loop_.remove_fd(fd);
  ::close(fd);
  conns_.erase(fd);  // frees any half-read body or unsent response
}

bool Server::flush(Conn& c) {
  while (c.out_off < c.out_len) {
    ssize_t n = ::send(c.fd, c.out + c.out_off, c.out_len - c.out_off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
      c.close_after = true;  // the peer is gone: drop the response
      break;
    }
    c.out_off += static_cast<size_t>(n);
  }
  if (c.out_off == c.out_len && c.out) ++responses_;
  std::free(c.out);
  if (faults_at_n_ && responses_ == faults_at_n_ && faults_at_ < 0) faults_at_ = mhwl::minor_faults();
  c.out = nullptr;
  c.out_len = c.out_off = 0;
  return true;
}

void Server::respond(Conn& c) {
  char head[128];
  const int head_len = std::snprintf(head, sizeof head,
                                     "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
                                     "Content-Length: %zu\r\n\r\n",
                                     c.body_len);
  c.out_len = static_cast<size_t>(head_len) + c.body_len;
  c.out = static_cast<char*>(std::malloc(c.out_len));
  if (!c.out) throw std::bad_alloc();
  std::memcpy(c.out, head, static_cast<size_t>(head_len));
  if (c.body_len) std::memcpy(c.out + head_len, c.body, c.body_len);
  c.out_off = 0;
  std::free(c.body);
  c.body = nullptr;
  c.body_len = c.body_have = 0;
  c.in_body = false;
}

void Server::drive(Conn& c) {
  char buf[16 * 1024];
  for (;;) {
    if (c.out && !flush(c)) return;  // the next EPOLLOUT edge comes back here
    if (c.close_after) return close_conn(c.fd);

    if (!c.in_body) {
      Head h;
      switch (parse_head(c.in, h)) {
        case ParseResult::Bad:
          ++bad_;
          return close_conn(c.fd);
        case ParseResult::Ok: {
          c.close_after = h.close;
          c.body_len = h.content_length;
          c.body = c.body_len ? static_cast<char*>(std::malloc(c.body_len)) : nullptr;
          if (c.body_len && !c.body) throw std::bad_alloc();
          const size_t have = std::min(c.body_len, c.in.size() - h.head_len);
          if (have) std::memcpy(c.body, c.in.data() + h.head_len, have);
          c.body_have = have;
          c.in.erase(0, h.head_len + have);
          c.in_body = true;
          if (c.body_have == c.body_len) respond(c);
          continue;
        }
        case ParseResult::Incomplete:
          break;
      }
    }

    // Body bytes go straight into the body buffer; head bytes through buf.
    char* dst = c.in_body ? c.body + c.body_have : buf;
    const size_t room = c.in_body ? c.body_len - c.body_have : sizeof buf;
    ssize_t n = ::recv(c.fd, dst, room, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      return close_conn(c.fd);
    }
    if (n == 0) return close_conn(c.fd);  // the client is done with this connection
    if (c.in_body) {
      c.body_have += static_cast<size_t>(n);
      if (c.body_have == c.body_len) respond(c);
    } else {
      c.in.append(buf, static_cast<size_t>(n));
    }
  }
}

}  // namespace echo
