// Where the NIR tests find their files: the shared examples, the generated
// networks (tools/make_nir_examples.py, written into the build tree once).
#pragma once
#include <cstdlib>
#include <filesystem>
#include <string>

namespace refinery::test {

inline std::filesystem::path shared_nir(const std::string& name) {
  return std::filesystem::path(REFINERY_SOURCE_DIR) / ".." / "shared" / "nir" / name;
}

inline const char* kPython = "/usr/bin/python3";

// Whether /usr/bin/python3 has numpy and h5py (the independent simulator needs both).
inline bool python_ready() {
  static const bool ok = std::system("/usr/bin/python3 -c 'import numpy, h5py' >/dev/null 2>&1") == 0;
  return ok;
}

// The generated networks' folder; generated on first use. Empty when Python is not ready.
inline std::filesystem::path generated_nir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path d = std::filesystem::path(REFINERY_BINARY_DIR) / "tests" / "nir" / "generated";
    if (!python_ready()) return std::filesystem::path();
    std::string cmd = std::string(kPython) + " " + REFINERY_SOURCE_DIR + "/tools/make_nir_examples.py " + d.string();
    if (std::system(cmd.c_str()) != 0) return std::filesystem::path();
    return d;
  }();
  return dir;
}

}  // namespace refinery::test
