// A fixed pool of threads for the Runner's search phase (searching only
// reads the e-graph). `run(f)` calls f on every thread of the pool, the
// caller's included, and returns when all calls have returned; the work is
// shared out by f itself (an atomic counter over the tasks). Threads are
// started once and sleep between runs, so a run costs a wake-up, not a
// thread start (an iteration of a small e-graph takes well under a
// millisecond).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace refinery::egraph {

class ThreadPool {
 public:
  // `threads` in all, the caller counting as one (1: no thread is started).
  explicit ThreadPool(std::size_t threads) {
    for (std::size_t t = 1; t < threads; ++t) workers_.emplace_back([this] { work(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mu_);
      quit_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  std::size_t size() const { return workers_.size() + 1; }

  // f must not throw.
  void run(const std::function<void()>& f) {
    if (workers_.empty()) {
      f();
      return;
    }
    {
      std::lock_guard lock(mu_);
      task_ = &f;
      pending_ = workers_.size();
      ++generation_;
    }
    wake_.notify_all();
    f();
    std::unique_lock lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
    task_ = nullptr;
  }

 private:
  void work() {
    std::size_t seen = 0;
    for (;;) {
      const std::function<void()>* f = nullptr;
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [&] { return quit_ || generation_ != seen; });
        if (quit_) return;
        seen = generation_;
        f = task_;
      }
      (*f)();
      std::lock_guard lock(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void()>* task_ = nullptr;
  std::size_t pending_ = 0, generation_ = 0;
  bool quit_ = false;
};

}  // namespace refinery::egraph
