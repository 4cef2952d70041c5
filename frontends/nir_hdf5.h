// Internal to the NIR frontend: a thin owner of HDF5 handles and the few
// reads and writes the NIR layout needs (strings, string tables, numeric
// arrays as ir::Tensor). Uses HDF5's C API only.
#pragma once
#include <hdf5.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/diag.h"
#include "ir/tensor.h"

namespace refinery::frontends::h5 {

// Owns one HDF5 id and closes it with the right function.
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      close();
      id_ = std::exchange(o.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  ~Handle() { close(); }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

 private:
  void close();
  hid_t id_ = H5I_INVALID_HID;
};

// Turns HDF5's printing of its error stack off while alive (restores it after).
class QuietErrors {
 public:
  QuietErrors();
  ~QuietErrors();
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

enum class Kind { Group, Dataset, Other };

// Names of the links in a group, in name order.
std::vector<std::string> children(hid_t group);
Kind kind_of(hid_t group, const std::string& name);
bool exists(hid_t group, const std::string& name);

// A dataset's contents: a string (scalar), a string table (edges), or numbers.
struct Data {
  std::optional<std::string> text;
  std::vector<std::string> strings;  // string arrays, row-major
  std::vector<int64_t> dims;
  std::optional<ir::Tensor> tensor;
};
// `where` names the dataset in messages.
Expected<Data> read(hid_t group, const std::string& name, const std::string& where);

// Writers (the group must be open for writing).
Expected<void> write_string(hid_t group, const std::string& name, const std::string& value);
Expected<void> write_strings(hid_t group, const std::string& name, const std::vector<std::string>& values,
                             const std::vector<hsize_t>& dims);
Expected<void> write_tensor(hid_t group, const std::string& name, const ir::Tensor& tensor, bool compress);
Expected<void> write_ints(hid_t group, const std::string& name, const std::vector<int64_t>& values, bool scalar);

}  // namespace refinery::frontends::h5
