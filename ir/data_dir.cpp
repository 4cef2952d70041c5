#include "ir/data_dir.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

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
#if !defined(REFINERY_MODULES_FROM_BIN) || !defined(REFINERY_MODULES_FROM_DATA)
#error "REFINERY_MODULES_FROM_BIN and _FROM_DATA (\"../lib/refinery\", \"../../lib/refinery\") must be defined"
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

Expected<fs::path> running_executable(std::string_view what) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return fail(fmt::format("cannot find {}: /proc/self/exe cannot be read ({})", what, ec.message()));
  return exe;
}

}  // namespace

Expected<fs::path> data_dir(DataKind kind) {
  const Layout names = layout(kind);
  if (const char* env = std::getenv("REFINERY_DATA"); env && *env) return fs::path(env) / names.installed;

  auto exe_or = running_executable("Refinery's data (set REFINERY_DATA to an installed share/refinery)");
  if (!exe_or) return std::unexpected(exe_or.error());
  const fs::path& exe = *exe_or;
  std::error_code ec;
  const fs::path installed = (exe.parent_path() / REFINERY_DATA_FROM_BIN).lexically_normal();
  if (fs::is_directory(installed, ec)) return installed / names.installed;

  if (is_inside(exe, REFINERY_DATA_BUILD_DIR)) return fs::path(REFINERY_DATA_SOURCE_DIR) / names.source;
  return fail(
      fmt::format("cannot find Refinery's data: $REFINERY_DATA is not set and {} does not exist "
                  "(set REFINERY_DATA to an installed share/refinery)",
                  installed.string()));
}

Expected<fs::path> module_file(std::string_view name) {
  auto exe = running_executable(fmt::format("the module {}", name));
  if (!exe) return std::unexpected(exe.error());
  std::vector<fs::path> looked{(exe->parent_path() / REFINERY_MODULES_FROM_BIN / name).lexically_normal()};
  if (const char* env = std::getenv("REFINERY_DATA"); env && *env)
    looked.push_back((fs::path(env) / REFINERY_MODULES_FROM_DATA / name).lexically_normal());
  if (is_inside(*exe, REFINERY_DATA_BUILD_DIR)) looked.push_back(fs::path(REFINERY_DATA_BUILD_DIR) / "lib" / name);
  std::vector<std::string> names;
  for (const fs::path& path : looked) {
    std::error_code ec;
    if (fs::is_regular_file(path, ec)) return path;
    names.push_back(path.string());
  }
  return fail(fmt::format("cannot find the module {} (looked for {})", name, fmt::join(names, ", ")));
}

}  // namespace refinery::ir
