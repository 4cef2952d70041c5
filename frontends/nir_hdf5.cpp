#include "frontends/nir_hdf5.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <unordered_set>

namespace refinery::frontends::h5 {

void Handle::close() {
  if (id_ < 0) return;
  switch (H5Iget_type(id_)) {
    case H5I_FILE: H5Fclose(id_); break;
    case H5I_GROUP: H5Gclose(id_); break;
    case H5I_DATASET: H5Dclose(id_); break;
    case H5I_DATASPACE: H5Sclose(id_); break;
    case H5I_DATATYPE: H5Tclose(id_); break;
    case H5I_GENPROP_LST: H5Pclose(id_); break;
    default: H5Oclose(id_); break;
  }
  id_ = H5I_INVALID_HID;
}

QuietErrors::QuietErrors() {
  H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}
QuietErrors::~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }

std::vector<std::string> children(hid_t group) {
  std::vector<std::string> names;
  H5G_info_t info;
  if (H5Gget_info(group, &info) < 0) return names;
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    ssize_t n = H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    if (n < 0) continue;
    std::string name(static_cast<size_t>(n), '\0');
    H5Lget_name_by_idx(group, ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size() + 1, H5P_DEFAULT);
    names.push_back(std::move(name));
  }
  return names;
}

bool exists(hid_t group, const std::string& name) { return H5Lexists(group, name.c_str(), H5P_DEFAULT) > 0; }

Kind kind_of(hid_t group, const std::string& name) {
  if (!exists(group, name)) return Kind::Other;
  Handle obj(H5Oopen(group, name.c_str(), H5P_DEFAULT));
  if (!obj.valid()) return Kind::Other;
  H5I_type_t t = H5Iget_type(obj.get());
  return t == H5I_GROUP ? Kind::Group : t == H5I_DATASET ? Kind::Dataset : Kind::Other;
}

namespace {

std::optional<ir::DType> dtype_of(hid_t type) {
  H5T_class_t cls = H5Tget_class(type);
  size_t size = H5Tget_size(type);
  if (cls == H5T_FLOAT) {
    if (size == 4) return ir::DType::f32;
    if (size == 8) return ir::DType::f64;
    return std::nullopt;
  }
  if (cls == H5T_INTEGER) {
    bool sign = H5Tget_sign(type) == H5T_SGN_2;
    switch (size) {
      case 1: return sign ? ir::DType::i8 : ir::DType::u8;
      case 2: return sign ? ir::DType::i16 : ir::DType::u16;
      case 4: return sign ? ir::DType::i32 : ir::DType::u32;
      case 8: return sign ? ir::DType::i64 : ir::DType::u64;
      default: return std::nullopt;
    }
  }
  if (cls == H5T_ENUM && size == 1) return ir::DType::boolean;  // numpy bool as h5py writes it
  return std::nullopt;
}

hid_t mem_type(ir::DType t) {
  switch (t) {
    case ir::DType::f32: return H5T_NATIVE_FLOAT;
    case ir::DType::f64: return H5T_NATIVE_DOUBLE;
    case ir::DType::i8: return H5T_NATIVE_INT8;
    case ir::DType::u8: return H5T_NATIVE_UINT8;
    case ir::DType::boolean: return H5T_NATIVE_UINT8;
    case ir::DType::i16: return H5T_NATIVE_INT16;
    case ir::DType::u16: return H5T_NATIVE_UINT16;
    case ir::DType::i32: return H5T_NATIVE_INT32;
    case ir::DType::u32: return H5T_NATIVE_UINT32;
    case ir::DType::i64: return H5T_NATIVE_INT64;
    case ir::DType::u64: return H5T_NATIVE_UINT64;
    default: return H5T_NATIVE_DOUBLE;
  }
}

}  // namespace

// The element count of a dataset, or nothing when its shape claims more
// than the file can hold for it (a corrupt extent must not become a huge
// allocation): without filters the stored bytes must cover the shape, with
// them (gzip) no more than ~1000:1 compression is believed. Up to 1 MiB is
// always believed (a small dataset may be left to its fill value).
std::optional<size_t> plausible_count(hid_t ds, hid_t type, const std::vector<hsize_t>& dims) {
  constexpr uint64_t kMaxElements = uint64_t{1} << 34;
  uint64_t n = 1;
  for (hsize_t x : dims) {
    if (x != 0 && n > kMaxElements / x) return std::nullopt;
    n *= x;
  }
  if (n > kMaxElements) return std::nullopt;
  const uint64_t element = std::max<uint64_t>(1, H5Tget_size(type));
  const uint64_t stored = H5Dget_storage_size(ds);
  Handle dcpl(H5Dget_create_plist(ds));
  const int filters = dcpl.valid() ? H5Pget_nfilters(dcpl.get()) : 0;
  const uint64_t claimed = n * element;
  if (filters <= 0 && stored < claimed && claimed > (1u << 20)) return std::nullopt;
  if (filters > 0 && claimed > 1100 * stored + (1u << 20)) return std::nullopt;
  return static_cast<size_t>(n);
}

namespace {

// Every variable-length string a read allocates comes from here
// (H5Pset_vlen_mem_manager), and what libhdf5 has not freed itself is freed
// when the arena goes, whether the read succeeded or failed part way: a
// read that stops at a corrupt heap entry loses the strings it converted
// before it in its own buffers, where H5Dvlen_reclaim on ours cannot reach.
class VlenArena {
 public:
  VlenArena() = default;
  VlenArena(const VlenArena&) = delete;
  VlenArena& operator=(const VlenArena&) = delete;
  ~VlenArena() {
    for (void* p : blocks_) std::free(p);
  }
  // A dataset transfer property list whose vlen memory is this arena's.
  Handle transfer_list() {
    Handle xfer(H5Pcreate(H5P_DATASET_XFER));
    if (xfer.valid()) H5Pset_vlen_mem_manager(xfer.get(), &VlenArena::alloc, this, &VlenArena::release, this);
    return xfer;
  }

 private:
  static void* alloc(size_t size, void* self) {
    void* p = std::malloc(size);
    if (p != nullptr) static_cast<VlenArena*>(self)->blocks_.insert(p);
    return p;
  }
  static void release(void* p, void* self) {
    if (p != nullptr && static_cast<VlenArena*>(self)->blocks_.erase(p) > 0) std::free(p);
  }
  std::unordered_set<void*> blocks_;
};

}  // namespace

Expected<Data> read(hid_t group, const std::string& name, const std::string& where) {
  Handle ds(H5Dopen2(group, name.c_str(), H5P_DEFAULT));
  if (!ds.valid()) return fail(fmt::format("cannot open dataset '{}'", name), where);
  Handle type(H5Dget_type(ds.get()));
  Handle space(H5Dget_space(ds.get()));
  int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) return fail(fmt::format("dataset '{}' has no simple shape", name), where);
  std::vector<hsize_t> hd(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), hd.data(), nullptr);
  Data d;
  std::string shape;
  for (hsize_t x : hd) {
    d.dims.push_back(static_cast<int64_t>(x));
    shape += fmt::format("{}{}", shape.empty() ? "" : "x", x);
  }
  auto count = plausible_count(ds.get(), type.get(), hd);
  if (!count)
    return fail(fmt::format("dataset '{}' claims shape [{}], more than the file holds for it", name, shape), where);
  if (H5Tget_class(type.get()) == H5T_STRING) {
    std::vector<std::string> out(*count);
    if (H5Tis_variable_str(type.get()) > 0) {
      Handle mt(H5Tcopy(H5T_C_S1));
      H5Tset_size(mt.get(), H5T_VARIABLE);
      H5Tset_cset(mt.get(), H5Tget_cset(type.get()));
      std::vector<char*> buf(*count, nullptr);
      VlenArena arena;
      Handle xfer = arena.transfer_list();
      if (*count > 0 && H5Dread(ds.get(), mt.get(), H5S_ALL, H5S_ALL, xfer.get(), buf.data()) < 0)
        return fail(fmt::format("cannot read strings of dataset '{}'", name), where);
      for (size_t i = 0; i < *count; ++i) out[i] = buf[i] ? buf[i] : "";
    } else {
      size_t size = H5Tget_size(type.get());
      Handle mt(H5Tcopy(H5T_C_S1));
      H5Tset_size(mt.get(), size);
      std::vector<char> buf(size * *count + 1, '\0');
      if (*count > 0 && H5Dread(ds.get(), mt.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
        return fail(fmt::format("cannot read strings of dataset '{}'", name), where);
      for (size_t i = 0; i < *count; ++i)
        out[i] = std::string(buf.data() + i * size, strnlen(buf.data() + i * size, size));
    }
    if (rank == 0) d.text = out.empty() ? std::string() : out[0];
    d.strings = std::move(out);
    return d;
  }
  auto dt = dtype_of(type.get());
  if (!dt) return fail(fmt::format("dataset '{}' has an element type Refinery does not read", name), where);
  std::vector<std::byte> bytes(*count * ir::dtype_size(*dt));
  if (*count > 0 && H5Dread(ds.get(), mem_type(*dt), H5S_ALL, H5S_ALL, H5P_DEFAULT, bytes.data()) < 0)
    return fail(fmt::format("cannot read dataset '{}' (a compression filter may be missing)", name), where);
  d.tensor = ir::Tensor(*dt, d.dims, std::move(bytes));
  return d;
}

namespace {

Handle string_type() {
  Handle t(H5Tcopy(H5T_C_S1));
  H5Tset_size(t.get(), H5T_VARIABLE);
  H5Tset_cset(t.get(), H5T_CSET_UTF8);
  return t;
}

Expected<void> check(herr_t status, const std::string& name) {
  if (status < 0) return fail(fmt::format("cannot write dataset '{}'", name));
  return {};
}

}  // namespace

Expected<void> write_string(hid_t group, const std::string& name, const std::string& value) {
  Handle t = string_type();
  Handle space(H5Screate(H5S_SCALAR));
  Handle ds(H5Dcreate2(group, name.c_str(), t.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  const char* p = value.c_str();
  return check(ds.valid() ? H5Dwrite(ds.get(), t.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, &p) : -1, name);
}

Expected<void> write_strings(hid_t group, const std::string& name, const std::vector<std::string>& values,
                             const std::vector<hsize_t>& dims) {
  Handle t = string_type();
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  Handle ds(H5Dcreate2(group, name.c_str(), t.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  std::vector<const char*> ptrs;
  for (const auto& s : values) ptrs.push_back(s.c_str());
  if (!ds.valid()) return check(-1, name);
  if (ptrs.empty()) return {};
  return check(H5Dwrite(ds.get(), t.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()), name);
}

Expected<void> write_tensor(hid_t group, const std::string& name, const ir::Tensor& tensor, bool compress) {
  std::vector<hsize_t> dims;
  for (int64_t d : tensor.dims()) dims.push_back(static_cast<hsize_t>(d));
  Handle space(dims.empty() ? H5Screate(H5S_SCALAR)
                            : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  if (compress && !dims.empty() && tensor.numel() > 0) {
    H5Pset_chunk(dcpl.get(), static_cast<int>(dims.size()), dims.data());
    H5Pset_deflate(dcpl.get(), 4);
  }
  hid_t file_type = mem_type(tensor.dtype());
  if (tensor.dtype() == ir::DType::f16 || tensor.dtype() == ir::DType::bf16)
    return fail(fmt::format("cannot write a {} dataset '{}'", ir::dtype_name(tensor.dtype()), name));
  Handle ds(H5Dcreate2(group, name.c_str(), file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
  if (!ds.valid()) return check(-1, name);
  if (tensor.numel() == 0) return {};
  return check(H5Dwrite(ds.get(), file_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, tensor.data()), name);
}

Expected<void> write_ints(hid_t group, const std::string& name, const std::vector<int64_t>& values, bool scalar) {
  if (scalar)
    return write_tensor(group, name, ir::Tensor::from_values<int64_t>(ir::DType::i64, {}, {values.at(0)}), false);
  return write_tensor(group, name, ir::Tensor::vector_i64(values), false);
}

}  // namespace refinery::frontends::h5
