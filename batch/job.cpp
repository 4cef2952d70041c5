#include "batch/job.h"

#include <array>
#include <utility>

namespace refinery::batch {

namespace fs = std::filesystem;

std::vector<Job> plan_jobs(const std::vector<ModelInput>& models, const std::vector<std::string>& targets,
                           const fs::path& out_dir) {
  std::vector<Job> jobs;
  for (const ModelInput& m : models)
    for (const std::string& t : targets) {
      std::string folder = fs::path(t).extension() == ".json" ? fs::path(t).stem().string() : t;
      fs::path out = out_dir / folder / m.name;
      jobs.push_back({.key = folder + "/" + m.name,
                      .target = t,
                      .model = m.path,
                      .output = out,
                      .report = out.string() + ".report.json",
                      .log = out.string() + ".log"});
    }
  return jobs;
}

namespace {
constexpr std::array<std::pair<Status, std::string_view>, 7> kStatusNames{{
    {Status::Written, "written"},
    {Status::ValidationFailed, "validation failed"},
    {Status::BadInput, "bad input"},
    {Status::Limitation, "limitation"},
    {Status::Timeout, "timeout"},
    {Status::Crashed, "crashed"},
    {Status::Error, "error"},
}};
}  // namespace

std::string_view to_string(Status status) {
  for (const auto& [s, name] : kStatusNames)
    if (s == status) return name;
  return "?";
}

std::optional<Status> status_from_string(std::string_view text) {
  for (const auto& [s, name] : kStatusNames)
    if (name == text) return s;
  return std::nullopt;
}

}  // namespace refinery::batch
