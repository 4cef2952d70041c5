#include "cli/progress.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

namespace refinery::cli {
namespace {

constexpr auto kRedraw = std::chrono::milliseconds(250);
constexpr auto kPlainEvery = std::chrono::seconds(10);

// "3.1 s" under a minute, then "1:05", "1:02:03".
std::string clock_time(double s) {
  if (s < 60) return fmt::format("{:.1f} s", s);
  auto t = static_cast<long>(s + 0.5);
  return t >= 3600 ? fmt::format("{}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)
                   : fmt::format("{}:{:02}", t / 60, t % 60);
}

}  // namespace

ProgressDisplay::ProgressDisplay(std::string title, ProgressMode mode, std::FILE* out, ProgressClock clock)
    : title_(std::move(title)), mode_(mode), out_(out) {
  if (mode_ == ProgressMode::Auto) mode_ = isatty(fileno(out_)) == 1 ? ProgressMode::Live : ProgressMode::Plain;
  if (mode_ == ProgressMode::Live && clock == ProgressClock::Thread) clock_ = std::thread([this] { tick_live(); });
}

ProgressDisplay::~ProgressDisplay() { finish(); }

std::string ProgressDisplay::line(double elapsed) const {
  const ProgressUpdate& u = last_;
  std::string s = title_ + ":";
  std::string sep = " ";
  auto add = [&](const std::string& part) {
    s += sep + part;
    sep = ", ";
  };
  if (!u.phase.empty()) add(u.phase);
  if (u.total > 0) {
    constexpr std::size_t kWidth = 20;
    std::size_t filled = kWidth * std::min(u.done, u.total) / u.total;
    std::string counted = fmt::format("{}/{}{}", u.done, u.total, u.unit.empty() ? "" : " " + u.unit);
    add(mode_ == ProgressMode::Live
            ? fmt::format("[{}{}] {}", std::string(filled, '#'), std::string(kWidth - filled, '.'), counted)
            : counted);
  }
  if (!u.detail.empty()) add(u.detail);
  add(clock_time(elapsed));
  if (u.total > 0 && u.done > 0 && u.done < u.total)
    add("ETA " + clock_time(elapsed / static_cast<double>(u.done) * static_cast<double>(u.total - u.done)));
  return s;
}

void ProgressDisplay::update(const ProgressUpdate& u) {
  if (mode_ == ProgressMode::Never) return;
  std::lock_guard lock(mu_);
  if (finished_) return;
  const bool new_phase = !has_status_ || u.phase != last_.phase;
  last_ = u;
  last_.event.clear();
  has_status_ = true;
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (mode_ == ProgressMode::Plain) {
    // An event is the line of its own; the status line comes when the phase
    // changes and at most every kPlainEvery otherwise.
    if (!u.event.empty()) {
      fmt::print(out_, "{}\n", u.event);
    } else if (new_phase || now - last_plain_ >= kPlainEvery) {
      fmt::print(out_, "{}\n", line(elapsed));
      last_plain_ = now;
    }
    std::fflush(out_);
    return;
  }
  if (u.notable && !u.event.empty()) fmt::print(out_, "\r\033[K{}\n", u.event);
  draw_live();
}

void ProgressDisplay::draw_live() {
  if (!has_status_) return;
  last_drawn_ = Clock::now();
  fmt::print(out_, "\r\033[K{}", line(std::chrono::duration<double>(Clock::now() - start_).count()));
  std::fflush(out_);
}

void ProgressDisplay::tick_live() {
  // Signals are for the command's own thread: the batch pool waits for
  // SIGCHLD there (sigtimedwait), and this thread must not take it.
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  std::unique_lock lock(mu_);
  while (!finished_) {
    wake_.wait_for(lock, kRedraw);
    if (!finished_) draw_live();
  }
}

void ProgressDisplay::tick() {
  if (mode_ != ProgressMode::Live || clock_.joinable()) return;
  std::lock_guard lock(mu_);
  if (!finished_ && Clock::now() - last_drawn_ >= kRedraw) draw_live();
}

void ProgressDisplay::finish() {
  {
    std::lock_guard lock(mu_);
    if (finished_) return;
    finished_ = true;
    if (mode_ == ProgressMode::Live && has_status_) {
      fmt::print(out_, "\r\033[K");
      std::fflush(out_);
    }
  }
  wake_.notify_all();
  if (clock_.joinable()) clock_.join();
}

}  // namespace refinery::cli
