// Runs the refinery executable and captures its exit code, stdout and stderr.
#pragma once
#include <sys/wait.h>
#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace refinery::testing {

struct CliResult {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline CliResult run_cli(const std::string& args) {
  auto dir = std::filesystem::temp_directory_path() / ("refinery_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string cmd =
      std::string(REFINERY_EXE) + " " + args + " >" + (dir / "out").string() + " 2>" + (dir / "err").string();
  int status = std::system(cmd.c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

inline std::string source_path(const std::string& rel) { return std::string(REFINERY_SOURCE_DIR) + "/" + rel; }

// A path for a test's output in the temp folder's `folder`, with no file
// (nor a ".bin" sidecar) left there from an earlier run.
inline std::filesystem::path scratch_file(const std::string& folder, const std::string& name) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / folder;
  std::filesystem::create_directories(dir);
  std::filesystem::path p = dir / name;
  std::filesystem::remove(p);
  std::filesystem::remove(std::filesystem::path(p.string() + ".bin"));
  return p;
}

}  // namespace refinery::testing
