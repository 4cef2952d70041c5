#include "batch/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <string>

namespace refinery::batch {
namespace {

std::string clock_time(double s) {
  auto t = static_cast<long>(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                   : fmt::format("{:02}:{:02}", t / 60, t % 60);
}

}  // namespace

bool is_terminal(std::FILE* out) { return isatty(fileno(out)) == 1; }

Progress::Progress(std::size_t total, bool live, std::FILE* out)
    : total_(total), live_(live), out_(out), start_(std::chrono::steady_clock::now()) {
  if (live_) draw();
}

void Progress::finished(const JobResult& job) {
  ++done_;
  if (job.failed()) ++failed_;
  std::string line = fmt::format("[{}/{}] {}: {} ({:.1f} s){}", done_, total_, job.key, to_string(job.status),
                                 job.wall_seconds, job.reason.empty() ? "" : ": " + job.reason);
  if (!live_) {
    fmt::print(out_, "{}\n", line);
    std::fflush(out_);
    return;
  }
  if (job.failed()) fmt::print(out_, "\r\033[K{}\n", line);
  draw();
}

void Progress::tick() {
  if (live_) draw();
}

void Progress::finish() {
  if (live_) fmt::print(out_, "\n");
  std::fflush(out_);
}

void Progress::draw() {
  constexpr std::size_t kWidth = 30;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::size_t filled = total_ ? kWidth * done_ / total_ : kWidth;
  std::string eta = done_ ? clock_time(elapsed / static_cast<double>(done_) * static_cast<double>(total_ - done_))
                          : std::string("--:--");
  fmt::print(out_, "\r\033[K[{}{}] {}/{} done, {} failed, {} elapsed, ETA {}", std::string(filled, '#'),
             std::string(kWidth - filled, '.'), done_, total_, failed_, clock_time(elapsed), eta);
  std::fflush(out_);
}

}  // namespace refinery::batch
