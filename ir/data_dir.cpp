#include "ir/data_dir.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

// Compile definitions from CMake (ir/CMakeLists.txt): the installed data root
// relative to the installed executable's folder, and the trees this was built
// from and in.
#ifndef REFINERY_DATA_FROM_BIN
#error "REFINERY_DATA_FROM_BIN (e.g. \"../share/refinery\") must be defined"
#endif
#ifndef REFINERY_DATA_SOURCE_DIR
#error "REFINERY_DATA_SOURCE_DIR must be defined"
#endif
#ifndef REFINERY_DATA_BUILD_DIR
#error "REFINERY_DATA_BUILD_DIR must be defined"
#endif

namespace refinery::ir {
namespace fs = std::filesystem;

namespace {

struct Layout {
  std::string_view installed, source;
};

Layout layout(DataKind kind) {
  switch (kind) {
    case DataKind::Rules: return {"rules", "rules/lib"};
    case DataKind::Targets: return {"targets", "targets/specs"};
  }
  std::abort();
}

// Whether `path` is `dir` or lies below it (both made canonical first).
bool is_inside(const fs::path& path, const fs::path& dir) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(path, ec);
  if (ec) return false;
  fs::path d = fs::weakly_canonical(dir, ec);
  if (ec) return false;
  return std::mismatch(d.begin(), d.end(), p.begin(), p.end()).first == d.end();
}

}  // namespace

Expected<fs::path> data_dir(DataKind kind) {
  const Layout names = layout(kind);
  if (const char* env = std::getenv("REFINERY_DATA"); env && *env) return fs::path(env) / names.installed;

  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    return fail(
        fmt::format("cannot find Refinery's data: $REFINERY_DATA is not set and /proc/self/exe "
                    "cannot be read ({}); set REFINERY_DATA to an installed share/refinery",
                    ec.message()));
  const fs::path installed = (exe.parent_path() / REFINERY_DATA_FROM_BIN).lexically_normal();
  if (fs::is_directory(installed, ec)) return installed / names.installed;

  if (is_inside(exe, REFINERY_DATA_BUILD_DIR)) return fs::path(REFINERY_DATA_SOURCE_DIR) / names.source;
  return fail(
      fmt::format("cannot find Refinery's data: $REFINERY_DATA is not set and {} does not exist "
                  "(set REFINERY_DATA to an installed share/refinery)",
                  installed.string()));
}

}  // namespace refinery::ir
