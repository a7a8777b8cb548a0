// ThreadPool (see thread_pool.h).
#include "mhwl/thread_pool.h"

#include <pthread.h>

namespace mhwl {

void set_thread_name(const std::string& name) {
  pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
}

ThreadPool::ThreadPool(size_t threads, std::string name, IdleHooks hooks,
                       std::chrono::milliseconds idle_timeout)
    : name_(std::move(name)), hooks_(hooks), idle_timeout_(idle_timeout) {
  workers_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) workers_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::submit(Job job) {
  {
    std::lock_guard lock(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void ThreadPool::worker(size_t index) {
  set_thread_name(name_ + "-" + std::to_string(index));
  std::unique_lock lock(mu_);
  for (;;) {
    if (jobs_.empty() && !closing_) {
      // Short park first; a worker still idle after it takes the long wait.
      hooks_.start(false);
      bool woke = cv_.wait_for(lock, idle_timeout_, [&] { return !jobs_.empty() || closing_; });
      hooks_.end(false);
      if (!woke) {
        hooks_.start(true);
        cv_.wait(lock, [&] { return !jobs_.empty() || closing_; });
        hooks_.end(true);
      }
    }
    if (jobs_.empty()) {
      if (closing_) return;
      continue;
    }
    Job job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    job = nullptr;  // the job's captures die on this thread, before the next wait
    lock.lock();
  }
}

}  // namespace mhwl
