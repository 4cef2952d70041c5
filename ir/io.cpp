#include "ir/io.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace refinery::ir {

Expected<void> write_files_atomic(const std::vector<std::pair<std::filesystem::path, std::string_view>>& files) {
  std::vector<std::filesystem::path> temps;
  auto cleanup = [&] {
    std::error_code ec;
    for (const auto& t : temps) std::filesystem::remove(t, ec);
  };
  for (const auto& [path, bytes] : files) {
    auto temp = path;
    temp += fmt::format(".tmp{}", ::getpid());
    temps.push_back(temp);
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) {
      cleanup();
      return fail(fmt::format("cannot write: {}", std::strerror(errno)), {}, path.string());
    }
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      cleanup();
      return fail("write failed (disk full?)", {}, path.string());
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    std::filesystem::rename(temps[i], files[i].first, ec);
    if (ec) {
      cleanup();
      return fail(fmt::format("cannot rename into place: {}", ec.message()), {}, files[i].first.string());
    }
  }
  return {};
}

Expected<std::string> read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail(fmt::format("cannot open: {}", std::strerror(errno)), {}, file.string());
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return fail("read failed", {}, file.string());
  return bytes;
}

}  // namespace refinery::ir
