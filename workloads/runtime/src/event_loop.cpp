// EventLoop: epoll + eventfd + timerfd (see event_loop.h).
#include "mhwl/event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>

namespace mhwl {

namespace {
[[noreturn]] void fail(const char* what) { throw std::system_error(errno, std::generic_category(), what); }
}  // namespace

EventLoop::EventLoop(IdleHooks hooks) : hooks_(hooks) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) fail("epoll_create1");
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) fail("eventfd");
  add_fd(wake_fd_, EPOLLIN, [this](uint32_t) {
    uint64_t n;
    while (::read(wake_fd_, &n, sizeof n) > 0) {
    }
    drain_posts();
  });
}

EventLoop::~EventLoop() {
  for (auto& [id, fd] : timer_fd_of_) ::close(fd);
  if (wake_fd_ >= 0) ::close(wake_fd_);
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

void EventLoop::post(Callback fn) {
  {
    std::lock_guard lock(mu_);
    posted_.push_back(std::move(fn));
  }
  uint64_t one = 1;
  ssize_t r = ::write(wake_fd_, &one, sizeof one);
  (void)r;  // EAGAIN means the counter is already non-zero: the loop will wake
}

void EventLoop::drain_posts() {
  std::deque<Callback> batch;
  {
    std::lock_guard lock(mu_);
    batch.swap(posted_);
  }
  for (auto& fn : batch) fn();
}

int EventLoop::add_timer(std::chrono::microseconds interval, bool repeat, Callback fn) {
  int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (tfd < 0) fail("timerfd_create");
  itimerspec spec{};
  auto us = std::max<int64_t>(interval.count(), 1);
  spec.it_value = {static_cast<time_t>(us / 1000000), static_cast<long>(us % 1000000) * 1000};
  if (repeat) spec.it_interval = spec.it_value;
  if (timerfd_settime(tfd, 0, &spec, nullptr) < 0) fail("timerfd_settime");
  int id = next_timer_++;
  timer_fd_of_[id] = tfd;
  add_fd(tfd, EPOLLIN, [this, tfd, id, repeat, fn = std::move(fn)](uint32_t) {
    uint64_t expirations;
    if (::read(tfd, &expirations, sizeof expirations) <= 0) return;
    if (!repeat) cancel_timer(id);
    fn();
  });
  return id;
}

void EventLoop::cancel_timer(int id) {
  auto it = timer_fd_of_.find(id);
  if (it == timer_fd_of_.end()) return;
  remove_fd(it->second);
  ::close(it->second);
  timer_fd_of_.erase(it);
}

void EventLoop::add_fd(int fd, uint32_t events, FdCallback fn) {
  epoll_event ev{};
  ev.events = events;
  ev.data.fd = fd;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) < 0) fail("epoll_ctl add");
  fds_[fd] = std::move(fn);
}

void EventLoop::remove_fd(int fd) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  fds_.erase(fd);
}

void EventLoop::stop() { stopping_ = true; }

void EventLoop::run() {
  stopping_ = false;
  epoll_event events[64];
  while (!stopping_) {
    // A loop with only its wake fd left waits for another thread: a long wait.
    const bool long_wait = fds_.size() <= 1;
    hooks_.start(long_wait);
    int n = epoll_wait(epoll_fd_, events, 64, -1);
    hooks_.end(long_wait);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("epoll_wait");
    }
    ++turns_;
    for (int i = 0; i < n && !stopping_; ++i) {
      auto it = fds_.find(events[i].data.fd);
      if (it == fds_.end()) continue;  // removed by an earlier callback of this turn
      auto fn = it->second;            // the callback may remove itself
      fn(events[i].events);
    }
  }
}

}  // namespace mhwl
