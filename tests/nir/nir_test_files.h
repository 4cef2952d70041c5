// Where the NIR tests find their files: the shared examples, the generated
// networks (tools/make_nir_examples.py, written into the build tree once).
#pragma once
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <system_error>

#include <unistd.h>

namespace refinery::test {

inline std::filesystem::path shared_nir(const std::string& name) {
  return std::filesystem::path(REFINERY_SOURCE_DIR) / ".." / "shared" / "nir" / name;
}

inline const char* kPython = "/usr/bin/python3";
// numpy and h5py are part of the set-up: a test that needs them fails
// without them (with this message), it is not skipped.
inline const char* kPythonMissing =
    "/usr/bin/python3 lacks numpy or h5py, or tools/make_nir_examples.py failed: run scripts/setup.sh";

// Whether /usr/bin/python3 has numpy and h5py (the independent simulator needs both).
inline bool python_ready() {
  static const bool ok = std::system("/usr/bin/python3 -c 'import numpy, h5py' >/dev/null 2>&1") == 0;
  return ok;
}

// The generated networks' folder (BUILD/tests/<suite>/generated, one per test
// program so that two programs never write the same files at once); generated
// on first use. Empty when Python is not ready.
inline std::filesystem::path generated_nir(const std::string& suite = "nir") {
  static std::map<std::string, std::filesystem::path> dirs;
  auto it = dirs.find(suite);
  if (it != dirs.end()) return it->second;
  // ctest runs each test in its own process, several at once: each writes
  // into a folder of its own and renames the files into place (a rename is
  // atomic, and the files are the same every time), so no reader sees half a file.
  std::filesystem::path d = std::filesystem::path(REFINERY_BINARY_DIR) / "tests" / suite / "generated";
  std::filesystem::path tmp = d / (".tmp" + std::to_string(::getpid()));
  std::string cmd = std::string(kPython) + " " + REFINERY_SOURCE_DIR + "/tools/make_nir_examples.py " + tmp.string();
  std::error_code ec;
  if (python_ready() && std::system(cmd.c_str()) == 0) {
    for (const auto& f : std::filesystem::directory_iterator(tmp))
      std::filesystem::rename(f.path(), d / f.path().filename(), ec);
  } else {
    d.clear();
  }
  std::filesystem::remove_all(tmp, ec);
  return dirs[suite] = d;
}

}  // namespace refinery::test
