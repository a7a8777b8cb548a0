// The echo server: a listening socket on 127.0.0.1 and its keep-alive
// connections, all driven by one EventLoop. Each request body is read into its
// own heap buffer and answered from a second one (head + copy of the body), the
// two large blocks per request a runtime's server makes. Loop thread only.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "mhwl/event_loop.h"

namespace echo {

class Server {
 public:
  explicit Server(mhwl::EventLoop& loop);  // binds an ephemeral port; throws on failure
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  uint16_t port() const { return port_; }
  uint64_t responses() const { return responses_; }  // fully written
  uint64_t bad_requests() const { return bad_; }
  // The server's minor faults read when response number n (counted from the start)
  // was fully written; -1 until then. Set before that response.
  void note_faults_at_response(uint64_t n) { faults_at_n_ = n; }
  long faults_at_response() const { return faults_at_; }

 private:
  struct Conn;
  void accept_all();
  void drive(Conn& c);  // reads, answers and writes until the socket would block
  bool flush(Conn& c);  // false while output is pending
  void respond(Conn& c);
  void close_conn(int fd);

  mhwl::EventLoop& loop_;
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  uint64_t responses_ = 0;
  uint64_t bad_ = 0;
  uint64_t faults_at_n_ = 0;
  long faults_at_ = -1;
  std::map<int, std::unique_ptr<Conn>> conns_;
};

}  // namespace echo
