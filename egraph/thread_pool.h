// A fixed pool of threads for the Runner's search phase (searching only
// reads the e-graph). `run(f)` calls f on the caller's thread and on every
// worker that wakes while that call runs, and returns when all of those
// calls have returned; the work is shared out by f itself (an atomic
// counter over the tasks), so f must be content to run on the caller
// alone. A worker that wakes after the caller's f has returned does not
// call it: the caller never waits for a wake-up, which on this VM costs
// more than a small e-graph's whole search (2 threads ran the math suite
// in 9.09 ms against 6.75 ms on one while run waited for every worker).
// Threads are started once and sleep between runs.
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
      ++generation_;
    }
    wake_.notify_all();
    f();
    std::unique_lock lock(mu_);
    task_ = nullptr;  // closed: a worker waking from now on skips this run
    done_.wait(lock, [this] { return active_ == 0; });
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
        if (!f) continue;  // woke after the caller's call returned
        ++active_;
      }
      (*f)();
      std::lock_guard lock(mu_);
      if (--active_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void()>* task_ = nullptr;
  std::size_t active_ = 0, generation_ = 0;  // active_: workers inside the open run's f
  bool quit_ = false;
};

}  // namespace refinery::egraph
