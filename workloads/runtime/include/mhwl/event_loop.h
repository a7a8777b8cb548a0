// A single-threaded event loop on epoll with an eventfd for cross-thread posts
// and timerfds for timers. Only the loop thread runs callbacks; post() may be
// called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>

#include "mhwl/idle.h"

namespace mhwl {

class EventLoop {
 public:
  using Callback = std::function<void()>;
  using FdCallback = std::function<void(uint32_t events)>;

  explicit EventLoop(IdleHooks hooks = {});
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  void post(Callback fn);  // any thread
  // Returns a timer id. A repeating timer fires every interval until cancelled.
  int add_timer(std::chrono::microseconds interval, bool repeat, Callback fn);
  void cancel_timer(int id);
  void add_fd(int fd, uint32_t events, FdCallback fn);
  void remove_fd(int fd);

  void run();   // until stop()
  void stop();  // loop thread, or any thread through post()
  uint64_t turns() const { return turns_; }

 private:
  void drain_posts();
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  bool stopping_ = false;
  uint64_t turns_ = 0;
  IdleHooks hooks_;
  std::mutex mu_;
  std::deque<Callback> posted_;
  std::map<int, FdCallback> fds_;
  std::map<int, int> timer_fd_of_;  // timer id -> timerfd
  int next_timer_ = 1;
};

}  // namespace mhwl
