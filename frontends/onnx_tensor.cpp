// TensorProto <-> ir::Tensor, and read_tensor_proto for backend test data.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>

#include "frontends/onnx.h"
#include "frontends/onnx_internal.h"

namespace refinery::frontends {
namespace detail {
namespace {

using TP = onnx::TensorProto;

// Typed fields hold one element per entry; this packs them into the dtype's
// little-endian bytes. `Field` is the repeated field, `Stored` what one
// element is stored as in the tensor.
template <class Stored, class Field>
std::vector<std::byte> pack(const Field& field) {
  std::vector<std::byte> bytes(static_cast<size_t>(field.size()) * sizeof(Stored));
  for (int i = 0; i < field.size(); ++i) {
    Stored v = static_cast<Stored>(field.Get(i));
    std::memcpy(bytes.data() + static_cast<size_t>(i) * sizeof(Stored), &v, sizeof(Stored));
  }
  return bytes;
}

// The typed field that holds `dtype` (ONNX stores the small types in int32_data).
std::expected<std::vector<std::byte>, std::string> typed_bytes(const TP& p, ir::DType dtype) {
  using ir::DType;
  switch (dtype) {
    case DType::f32: return pack<float>(p.float_data());
    case DType::f64: return pack<double>(p.double_data());
    case DType::i64: return pack<int64_t>(p.int64_data());
    case DType::i32: return pack<int32_t>(p.int32_data());
    case DType::i16: return pack<int16_t>(p.int32_data());
    case DType::i8: return pack<int8_t>(p.int32_data());
    case DType::u8: return pack<uint8_t>(p.int32_data());
    case DType::u16: return pack<uint16_t>(p.int32_data());
    case DType::f16: return pack<uint16_t>(p.int32_data());  // the bits of each half
    case DType::bf16: return pack<uint16_t>(p.int32_data());
    case DType::boolean: return pack<uint8_t>(p.int32_data());
    case DType::u32: return pack<uint32_t>(p.uint64_data());
    case DType::u64: return pack<uint64_t>(p.uint64_data());
  }
  return std::unexpected("unsupported element type");
}

}  // namespace

std::expected<ir::TensorRef, std::string> tensor_from_proto(const TP& proto, std::shared_ptr<const void> keep_alive,
                                                            ExternalFiles& files) {
  auto dtype = ir::dtype_from_onnx(proto.data_type());
  if (!dtype)
    return std::unexpected(fmt::format("element type {} ({}) is not supported", proto.data_type(),
                                       TP::DataType_Name(static_cast<TP::DataType>(proto.data_type()))));
  if (proto.has_segment()) return std::unexpected("segmented tensors are not supported");
  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  auto count = element_count(dims);
  if (!count) return std::unexpected(count.error().message);
  const size_t expected = static_cast<size_t>(*count) * ir::dtype_size(*dtype);

  if (proto.data_location() == TP::EXTERNAL) {
    std::string location;
    uint64_t offset = 0;
    std::optional<uint64_t> length;
    for (const auto& entry : proto.external_data()) {
      try {
        if (entry.key() == "location")
          location = entry.value();
        else if (entry.key() == "offset")
          offset = std::stoull(entry.value());
        else if (entry.key() == "length")
          length = std::stoull(entry.value());
      } catch (const std::exception&) {
        return std::unexpected(fmt::format("external data key '{}' has a bad value '{}'", entry.key(), entry.value()));
      }
    }
    if (location.empty()) return std::unexpected("external data without a location");
    if (length && *length != expected)
      return std::unexpected(
          fmt::format("external data length {} disagrees with the tensor's {} bytes", *length, expected));
    auto slice = files.map(location, offset, expected);
    if (!slice) return std::unexpected(slice.error());
    if (slice->bytes.size() != expected)
      return std::unexpected(
          fmt::format("external data holds {} bytes, the tensor needs {}", slice->bytes.size(), expected));
    return std::make_shared<const ir::Tensor>(*dtype, std::move(dims), std::move(slice->owner), slice->bytes);
  }

  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != expected)
      return std::unexpected(fmt::format("raw_data holds {} bytes, the tensor needs {}", raw.size(), expected));
    // Refer into the proto instead of copying: `keep_alive` owns it.
    std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(raw.data()), raw.size());
    if (keep_alive) return std::make_shared<const ir::Tensor>(*dtype, std::move(dims), std::move(keep_alive), bytes);
    return std::make_shared<const ir::Tensor>(*dtype, std::move(dims),
                                              std::vector<std::byte>(bytes.begin(), bytes.end()));
  }

  auto bytes = typed_bytes(proto, *dtype);
  if (!bytes) return std::unexpected(bytes.error());
  if (bytes->size() != expected)
    return std::unexpected(
        fmt::format("holds {} elements, its dims need {}", bytes->size() / ir::dtype_size(*dtype), *count));
  return std::make_shared<const ir::Tensor>(*dtype, std::move(dims), std::move(*bytes));
}

std::expected<void, std::string> tensor_to_proto(const ir::Tensor& tensor, TP* proto, ExternalWriter* external) {
  proto->set_data_type(ir::dtype_to_onnx(tensor.dtype()));
  for (int64_t d : tensor.dims()) proto->add_dims(d);
  if (external != nullptr && tensor.bytes().size() >= external->threshold())
    return external->write(tensor.bytes(), proto);
  proto->set_raw_data(tensor.data(), tensor.bytes().size());
  return {};
}

}  // namespace detail

Expected<ir::Tensor> read_tensor_proto(const std::filesystem::path& file) {
  const std::string name = file.string();
  std::ifstream in(file, std::ios::binary);
  if (!in) return fail(fmt::format("cannot open the file: {}", std::strerror(errno)), {}, name);
  auto proto = std::make_shared<onnx::TensorProto>();
  if (!proto->ParseFromIstream(&in)) return fail("not a valid onnx.TensorProto", {}, name);
  detail::ExternalFiles files(file.parent_path());
  auto tensor = detail::tensor_from_proto(*proto, proto, files);
  if (!tensor)
    return fail(tensor.error(), proto->name().empty() ? "" : fmt::format("tensor '{}'", proto->name()), name);
  return **tensor;
}

}  // namespace refinery::frontends
