// A fixed pool of worker threads taking jobs from one queue. Workers park on a
// condition variable when the queue is empty; a worker that stays idle past the
// idle timeout takes the long wait (where the handoff idle hook applies).
// submit() may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mhwl/idle.h"

namespace mhwl {

class ThreadPool {
 public:
  using Job = std::function<void()>;

  ThreadPool(size_t threads, std::string name, IdleHooks hooks = {},
             std::chrono::milliseconds idle_timeout = std::chrono::milliseconds(10));
  ~ThreadPool();  // finishes queued jobs, then joins
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void submit(Job job);
  size_t size() const { return workers_.size(); }

 private:
  void worker(size_t index);
  std::string name_;
  IdleHooks hooks_;
  std::chrono::milliseconds idle_timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool closing_ = false;
  std::vector<std::thread> workers_;
};

// Names the calling thread (at most 15 characters are kept by the kernel).
void set_thread_name(const std::string& name);

}  // namespace mhwl
