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

std::expected<ExternalFiles::Slice, std::string> ExternalFiles::map(const std::string& location,
                                                                    uint64_t offset,
                                                                    std::optional<uint64_t> length) {
  std::filesystem::path rel(location);
  if (rel.is_absolute()) return std::unexpected(fmt::format("external data location '{}' is absolute", location));
  auto it = maps_.find(location);
  if (it == maps_.end()) {
    const std::filesystem::path path = dir_ / rel;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return std::unexpected(fmt::format("cannot open external data '{}': {}", path.string(), std::strerror(errno)));
    struct stat st{};
    if (fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      return std::unexpected(fmt::format("cannot stat external data '{}': {}", path.string(), std::strerror(err)));
    }
    auto mapping = std::make_shared<Mapping>();
    mapping->size = static_cast<size_t>(st.st_size);
    if (mapping->size > 0) {
      void* addr = mmap(nullptr, mapping->size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (addr == MAP_FAILED) {
        int err = errno;
        ::close(fd);
        return std::unexpected(fmt::format("cannot map external data '{}': {}", path.string(), std::strerror(err)));
      }
      mapping->addr = addr;
    }
    ::close(fd);  // the map stays valid
    it = maps_.emplace(location, std::move(mapping)).first;
  }
  const auto& mapping = it->second;
  const uint64_t len = length.value_or(mapping->size - std::min<uint64_t>(offset, mapping->size));
  if (offset > mapping->size || len > mapping->size - offset)
    return std::unexpected(fmt::format("external data '{}' has {} bytes, the tensor needs bytes {} to {}", location,
                                       mapping->size, offset, offset + len));
  const auto* base = static_cast<const std::byte*>(mapping->addr);
  std::span<const std::byte> bytes = len == 0 ? std::span<const std::byte>() : std::span(base + offset, len);
  return Slice{std::shared_ptr<const void>(mapping, mapping.get()), bytes};
}

ExternalWriter::~ExternalWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

std::expected<void, std::string> ExternalWriter::write(std::span<const std::byte> bytes,
                                                       onnx::TensorProto* proto) {
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
