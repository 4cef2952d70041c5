#include "batch/inputs.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <set>

namespace refinery::batch {
namespace {

namespace fs = std::filesystem;

bool is_model(const fs::path& p) {
  return p.extension() == ".onnx" || p.extension() == ".nir" || p.extension() == ".ir";
}

struct Collector {
  fs::path exclude;
  std::vector<ModelInput> models;
  std::set<fs::path> seen;
  std::set<std::string> names;

  bool excluded(const fs::path& canonical) const {
    if (exclude.empty()) return false;
    auto [e, p] = std::mismatch(exclude.begin(), exclude.end(), canonical.begin(), canonical.end());
    return e == exclude.end();
  }

  void add(const fs::path& file, const fs::path& name) {
    fs::path canonical = fs::weakly_canonical(file);
    if (excluded(canonical) || !seen.insert(canonical).second) return;
    std::string unique = name.generic_string();
    for (int i = 2; !names.insert(unique).second; ++i)
      unique = (name.parent_path() / fmt::format("{}~{}{}", name.stem().string(), i, name.extension().string()))
                   .generic_string();
    models.push_back({file, unique});
  }

  Expected<void> add_folder(const fs::path& dir) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end; it.increment(ec))
      if (it->is_regular_file() && (it->path().extension() == ".onnx" || it->path().extension() == ".nir"))
        files.push_back(it->path());
    if (ec) return fail(fmt::format("cannot list the folder: {}", ec.message()), "", dir.string());
    std::sort(files.begin(), files.end());
    fs::path base = fs::weakly_canonical(dir).filename();
    for (const fs::path& f : files) add(f, base / fs::relative(f, dir));
    return {};
  }

  // A model file or a folder; a manifest only when `manifests` (a manifest
  // does not name other manifests).
  Expected<void> add_input(const fs::path& p, bool manifests) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) return add_folder(p);
    if (!fs::is_regular_file(p, ec)) return fail("no such file or folder", "", p.string());
    if (is_model(p)) {
      add(p, p.filename());
      return {};
    }
    if (!manifests) return fail("not a model (.onnx, .nir, .ir) nor a folder", "", p.string());
    std::ifstream in(p);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      auto first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
      if (first == std::string::npos || line[first] == '#') continue;
      fs::path entry = line.substr(first, last - first + 1);
      if (entry.is_relative()) entry = p.parent_path() / entry;
      if (auto ok = add_input(entry, false); !ok) {
        Diag d = ok.error();
        d.where = fmt::format("{}", n);
        d.message = fmt::format("'{}': {}", entry.string(), d.message);
        d.file = p.string();
        return std::unexpected(d);
      }
    }
    return {};
  }
};

}  // namespace

Expected<std::vector<ModelInput>> discover_models(const std::vector<std::string>& inputs, const fs::path& exclude) {
  Collector c{exclude.empty() ? fs::path{} : fs::weakly_canonical(exclude)};
  for (const std::string& input : inputs)
    if (auto ok = c.add_input(input, true); !ok) return std::unexpected(ok.error());
  return std::move(c.models);
}

}  // namespace refinery::batch
