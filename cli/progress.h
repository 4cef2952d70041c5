// The one progress display of the refinery commands, on stderr. Libraries
// report through a ProgressFn (ir/progress.h); this draws it: on a terminal
// one line redrawn in place, its clock moving on between updates; elsewhere
// (a log, CI, a batch child) a plain line when the phase changes and at most
// every 10 s otherwise, and every event line; nothing under --quiet.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

#include "ir/progress.h"

namespace refinery::cli {

enum class ProgressMode {
  Auto,   // Live on a terminal, else Plain
  Live,   // the line redrawn in place (--progress=always: for tests, or a pager that draws)
  Plain,  // occasional lines
  Never,  // nothing (--quiet)
};

// What moves a live line's clock between updates: a thread of the
// display's own, or the owner calling tick() (`refinery batch`: its pool
// wakes every 50 ms anyway, and it forks its children only while it has
// one thread, batch/pool.h).
enum class ProgressClock { Thread, Ticks };

class ProgressDisplay {
 public:
  // `title` begins each line ("optimize", "verify", "batch").
  ProgressDisplay(std::string title, ProgressMode mode, std::FILE* out = stderr,
                  ProgressClock clock = ProgressClock::Thread);
  ~ProgressDisplay();
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  void update(const ProgressUpdate& u);
  // A callback for a library's options; valid while this display lives.
  ProgressFn callback() {
    return [this](const ProgressUpdate& u) { update(u); };
  }
  // With ProgressClock::Ticks: redraws the live line when its clock has
  // moved on since the last draw; cheap, call it often. Otherwise nothing.
  void tick();
  // Clears the live line (the command's own output follows); idempotent.
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  std::string line(double elapsed) const;  // the status line of `last_`
  void draw_live();                        // under mu_
  void tick_live();                        // the clock thread

  std::string title_;
  ProgressMode mode_;
  std::FILE* out_;
  Clock::time_point start_ = Clock::now(), last_plain_{}, last_drawn_{};
  std::mutex mu_;
  std::condition_variable wake_;
  bool has_status_ = false, finished_ = false;
  ProgressUpdate last_;
  std::thread clock_;
};

// --progress=auto|always|plain|never and --quiet (cli/main.cpp adds them).
struct ProgressFlags {
  ProgressMode mode = ProgressMode::Auto;
  bool quiet = false;
  ProgressMode effective() const { return quiet ? ProgressMode::Never : mode; }
};

}  // namespace refinery::cli
