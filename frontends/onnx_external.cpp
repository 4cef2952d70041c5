// External data: tensors whose bytes live in a file beside the model
// (data_location EXTERNAL with location / offset / length keys). Reading maps
// the file once and every tensor refers into the map; writing appends to one
// data file.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

#include "frontends/onnx_internal.h"

namespace refinery::frontends::detail {

struct ExternalFiles::Mapping {
  void* addr = nullptr;
  size_t size = 0;
  Mapping() = default;
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  ~Mapping() {
    if (addr != nullptr) munmap(addr, size);
  }
};

namespace {

// Whether `path` lies strictly inside `dir`, component by component (both
// canonical, so "/a/bc" is not inside "/a/b").
bool inside(const std::filesystem::path& path, const std::filesystem::path& dir) {
  auto p = path.begin();
  for (const auto& d : dir) {
    if (d.empty()) continue;  // the trailing "" of "/a/b/"
    if (p == path.end() || *p != d) return false;
    ++p;
  }
  return p != path.end();
}

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

}  // namespace

std::expected<std::filesystem::path, std::string> ExternalFiles::resolve(const std::string& location) const {
  namespace fs = std::filesystem;
  const fs::path rel(location);
  if (rel.has_root_path())
    return std::unexpected(
        fmt::format("external data location '{}' is absolute; it must be relative to the model's folder", location));
  for (const auto& part : rel)
    if (part == "..")
      return std::unexpected(
          fmt::format("external data location '{}' contains '..'; it must stay inside the model's folder", location));
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(dir_.empty() ? fs::path(".") : dir_, ec);
  if (ec)
    return std::unexpected(fmt::format("cannot resolve the model's folder '{}': {}", dir_.string(), ec.message()));
  const fs::path path = fs::weakly_canonical(dir / rel, ec);
  if (ec) return std::unexpected(fmt::format("cannot resolve external data '{}': {}", location, ec.message()));
  if (!inside(path, dir))
    return std::unexpected(fmt::format(
        "external data location '{}' resolves to '{}' (through a symbolic link), outside the model's folder", location,
        path.string()));
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return std::unexpected(fmt::format("cannot open external data '{}': {}", location, std::strerror(errno)));
  if (!S_ISREG(st.st_mode))
    return std::unexpected(
        fmt::format("external data '{}' is {}, not a regular file", location, file_kind(st.st_mode)));
  return path;
}

std::expected<ExternalFiles::Slice, std::string> ExternalFiles::map(const std::string& location, uint64_t offset,
                                                                    std::optional<uint64_t> length) {
  auto it = maps_.find(location);
  if (it == maps_.end()) {
    auto resolved = resolve(location);
    if (!resolved) return std::unexpected(resolved.error());
    const std::filesystem::path& path = *resolved;
    // Non-blocking and not through a link: the file checked above may have
    // been swapped for a FIFO or a link since; fstat below sees what opened.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0)
      return std::unexpected(fmt::format("cannot open external data '{}': {}", location, std::strerror(errno)));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      int err = errno;
      ::close(fd);
      return std::unexpected(fmt::format("cannot read external data '{}': {}", location,
                                         S_ISREG(st.st_mode) ? std::strerror(err) : "not a regular file"));
    }
    auto mapping = std::make_shared<Mapping>();
    mapping->size = static_cast<size_t>(st.st_size);
    if (mapping->size > 0) {
      void* addr = mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (addr == MAP_FAILED) {
        int err = errno;
        ::close(fd);
        return std::unexpected(fmt::format("cannot map external data '{}': {}", location, std::strerror(err)));
      }
      mapping->addr = addr;
    }
    ::close(fd);  // the map stays valid
    it = maps_.emplace(location, std::move(mapping)).first;
  }
  const auto& mapping = it->second;
  const uint64_t len = length.value_or(mapping->size - std::min<uint64_t>(offset, mapping->size));
  if (offset > mapping->size || len > mapping->size - offset)
    return std::unexpected(fmt::format("external data '{}' has {} bytes; offset {} and length {} run past its end",
                                       location, mapping->size, offset, len));
  const auto* base = static_cast<const std::byte*>(mapping->addr);
  std::span<const std::byte> bytes = len == 0 ? std::span<const std::byte>() : std::span(base + offset, len);
  return Slice{std::shared_ptr<const void>(mapping, mapping.get()), bytes};
}

Expected<void> check_tensor_claims(const onnx::GraphProto& graph, const std::filesystem::path& model_dir,
                                   const std::string& file) {
  const ExternalFiles files(model_dir);
  auto check = [&](const onnx::TensorProto& t, const std::string& where) -> Expected<void> {
    const std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    // Inline data past 2^40 elements cannot fit a model under 2 GB: the file
    // is wrong. External data that large could be real: Refinery's limit.
    if (auto count = element_count(dims); !count)
      return std::unexpected(Diag{file, where, count.error().message,
                                  count.error().limit && t.data_location() == onnx::TensorProto::EXTERNAL});
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return {};
    for (const auto& entry : t.external_data())
      if (entry.key() == "location")
        if (auto ok = files.resolve(entry.value()); !ok) return fail(ok.error(), where, file);
    return {};
  };
  // Subgraphs too (their nesting is already bounded): a body's tensors stay
  // opaque here, but export would hand their locations on. `in` names the
  // outermost node a subgraph sits in.
  std::vector<std::pair<const onnx::GraphProto*, std::string>> todo{{&graph, ""}};
  while (!todo.empty()) {
    auto [g, in] = todo.back();
    todo.pop_back();
    const std::string suffix = in.empty() ? "" : fmt::format(" (in {})", in);
    for (const auto& t : g->initializer())
      if (auto ok = check(t, fmt::format("initializer '{}'{}", t.name(), suffix)); !ok) return ok;
    for (int i = 0; i < g->node_size(); ++i)
      for (const auto& a : g->node(i).attribute()) {
        const std::string node = node_where(g->node(i), i);
        const std::string where = fmt::format("{} attribute '{}'{}", node, a.name(), suffix);
        if (a.has_t())
          if (auto ok = check(a.t(), where); !ok) return ok;
        for (const auto& t : a.tensors())
          if (auto ok = check(t, where); !ok) return ok;
        if (a.has_g()) todo.emplace_back(&a.g(), in.empty() ? node : in);
        for (const auto& sub : a.graphs()) todo.emplace_back(&sub, in.empty() ? node : in);
      }
  }
  return {};
}

ExternalWriter::~ExternalWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

std::expected<void, std::string> ExternalWriter::write(std::span<const std::byte> bytes, onnx::TensorProto* proto) {
  if (file_ == nullptr) {
    file_ = std::fopen(temp_path_.c_str(), "wb");
    if (file_ == nullptr)
      return std::unexpected(fmt::format("cannot create '{}': {}", temp_path_.string(), std::strerror(errno)));
    opened_ = true;
  }
  // Align each tensor to 64 bytes so a runtime can map it in place.
  static constexpr uint64_t kAlign = 64;
  static constexpr char kZeros[kAlign] = {};
  const uint64_t pad = (kAlign - offset_ % kAlign) % kAlign;
  if (pad > 0 && std::fwrite(kZeros, 1, pad, file_) != pad)
    return std::unexpected(fmt::format("cannot write '{}': {}", temp_path_.string(), std::strerror(errno)));
  offset_ += pad;
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    return std::unexpected(fmt::format("cannot write '{}': {}", temp_path_.string(), std::strerror(errno)));
  proto->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, std::string value) {
    auto* e = proto->add_external_data();
    e->set_key(key);
    e->set_value(std::move(value));
  };
  add("location", location_);
  add("offset", std::to_string(offset_));
  add("length", std::to_string(bytes.size()));
  offset_ += bytes.size();
  return {};
}

std::expected<void, std::string> ExternalWriter::close() {
  if (file_ == nullptr) return {};
  const bool ok = std::fflush(file_) == 0 && fsync(fileno(file_)) == 0;
  const int err = errno;
  std::fclose(file_);
  file_ = nullptr;
  if (!ok) return std::unexpected(fmt::format("cannot write '{}': {}", temp_path_.string(), std::strerror(err)));
  return {};
}

}  // namespace refinery::frontends::detail
