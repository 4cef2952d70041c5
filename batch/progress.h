// Progress of a batch: on a terminal a live bar (done/total, failures,
// elapsed, ETA) redrawn in place, with a line above it for each failure;
// elsewhere (a log file, CI, a Slurm job) one plain line per finished job.
#pragma once
#include <chrono>
#include <cstdio>

#include "batch/job.h"

namespace refinery::batch {

class Progress {
 public:
  // `total` jobs to run now (resumed ones excluded); `live`: redraw a bar.
  Progress(std::size_t total, bool live, std::FILE* out);
  void finished(const JobResult& job);
  void tick();    // redraws the bar (elapsed and ETA move on)
  void finish();  // ends the bar's line

  std::size_t done() const { return done_; }
  std::size_t failed() const { return failed_; }

 private:
  void draw();

  std::size_t total_, done_ = 0, failed_ = 0;
  bool live_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
};

// Whether `out` is a terminal.
bool is_terminal(std::FILE* out);

}  // namespace refinery::batch
