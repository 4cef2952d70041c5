// Shapes and tensor types. A dimension is a static size, a named symbol
// (the batch "N" that stays symbolic through import and export), or unknown.
// A shape may be unranked (nothing is known), which only opaque ops produce.
#pragma once
#include <cstdint>
#include <expected>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace refinery::ir {

// The most elements a tensor or a static shape may have: 2^40 (4 TiB of f32),
// far past any real model and far below int64 overflow. A larger claim, in a
// file or in a shape computed from one (Expand, Tile, Pad, ConstantOfShape,
// Range ...), is refused (Refinery's limitation) before anything is allocated
// or mapped.
inline constexpr int64_t kMaxElements = int64_t{1} << 40;

// A Dim is also one entry of a small integer tensor's known contents
// (InferInput::known: ONNX's data propagation through Shape, Gather,
// Concat ...). There an entry may be a negative integer as well (the -1 of
// a Reshape target, an axis counted from the end, torch's expand(-1, ...)),
// known and distinct from an unknown entry. A negative integer is never a
// dimension of a Shape: the shape rules read it as an unknown dim there
// (InferContext::dims_value).
//
// A Dim may also be min(s, n) of a symbol s and a size n >= 1 (Dim::min_of):
// a static axis of n sliced to a symbolic length, `buffer[:s]` of a [64]
// buffer (docs/ir.md, "Dims"). Only the rules that know it read it as that
// (Slice makes it, broadcasting against s reads it); to everything else it is
// an unknown dim (is_unknown(), str() "?").
class Dim {
 public:
  Dim() = default;                    // unknown
  Dim(int64_t size) : size_(size) {}  // static (implicit: shapes read like {1, 3, 224}); negative: unknown
  static Dim symbol(std::string name) {
    Dim d;
    d.symbol_ = std::move(name);
    return d;
  }
  static Dim unknown() { return Dim(); }
  // min(s, n) of a symbol s and a size n >= 1.
  static Dim min_of(std::string name, int64_t n) {
    Dim d;
    d.symbol_ = std::move(name);
    d.cap_ = n;
    return d;
  }
  // A known integer of any sign: static when v >= 0, else a negative integer.
  static Dim integer(int64_t v) {
    Dim d(v);
    d.negative_ = v < 0;
    return d;
  }

  bool is_static() const { return size_ >= 0; }
  bool is_symbol() const { return !symbol_.empty() && cap_ == 0; }
  bool is_negative() const { return negative_; }
  bool is_integer() const { return is_static() || negative_; }  // static or a negative integer
  bool is_unknown() const { return size_ < 0 && !is_symbol() && !negative_; }  // a min too
  bool is_min() const { return cap_ > 0; }
  int64_t cap() const { return cap_; }  // min(s, n)'s n; 0 when not a min
  // The size when static; -1 when unknown or a symbol; a negative integer's value.
  int64_t size() const { return size_; }
  int64_t value() const { return size_; }  // the integer, when is_integer()
  const std::string& name() const { return symbol_; }  // a symbol's name, or min(s, n)'s s

  friend bool operator==(const Dim&, const Dim&) = default;
  std::string str() const;  // "3", "\"N\"" (quoted, so any name parses back), "?", "-1" (a negative integer)

 private:
  int64_t size_ = -1;
  std::string symbol_;
  bool negative_ = false;
  int64_t cap_ = 0;
};

class Shape {
 public:
  Shape() = default;  // rank 0 (a scalar)
  Shape(std::vector<Dim> dims) : dims_(std::move(dims)) {}
  Shape(std::initializer_list<Dim> dims) : dims_(dims) {}
  static Shape unranked() {
    Shape s;
    s.ranked_ = false;
    return s;
  }
  static Shape of(const std::vector<int64_t>& sizes);

  bool ranked() const { return ranked_; }
  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const std::vector<Dim>& dims() const { return dims_; }
  std::vector<Dim>& dims() { return dims_; }
  const Dim& operator[](int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  Dim& operator[](int64_t i) { return dims_[static_cast<size_t>(i)]; }

  bool is_static() const;                       // ranked and every dim static
  std::optional<int64_t> num_elements() const;  // when static
  std::vector<int64_t> sizes() const;           // static sizes (-1 where not)

  friend bool operator==(const Shape&, const Shape&) = default;
  std::string str() const;  // "1x3x224x224", "\"N\"x128", "*" (unranked), "" (scalar)

 private:
  std::vector<Dim> dims_;
  bool ranked_ = true;
};

struct TensorType {
  DType dtype = DType::f32;
  Shape shape;

  friend bool operator==(const TensorType&, const TensorType&) = default;
  std::string str() const;  // "tensor<1x128xf32>", "tensor<f32>", "tensor<*xf32>"
};

// Two descriptions of one tensor combined (docs/ir.md, "Refinement"): per
// dim the more precise one wins (unknown < symbol < static; of two different
// symbols, a's), a ranked shape over an unranked one. Nullopt / an error
// only for a contradiction: different static sizes, ranks or dtypes.
std::optional<Dim> refine(const Dim& a, const Dim& b);
std::expected<TensorType, std::string> refine(const TensorType& a, const TensorType& b);

// What is wrong with a shape: invalid (a negative dim, a product past int64),
// or valid but past kMaxElements (`limit`). The message starts with "has".
struct ShapeError {
  std::string message;
  bool limit = false;
};

// The product of `dims`, checked at each step so it never overflows.
std::expected<int64_t, ShapeError> element_count(std::span<const int64_t> dims);
// element_count of the static dims of `shape` (symbols and unknown dims left
// out, so a shape with a symbol is refused when its static part alone is too
// large); nullopt when that is fine.
std::optional<ShapeError> size_error(const Shape& shape);

// Windows along one spatial axis of a conv or pool (ONNX's arithmetic, in
// 128 bits since the attributes are any int64 a file says): an input of
// size `in` padded by `begin` and `end`, a window of extent `effective`
// (kernel and dilation) moved by `stride`. floor((in + begin + end -
// effective) / stride) + 1, or ceil in ceil mode, where the last window may
// overhang the padded input (by less than a stride) but must start inside
// the input or its left padding. 0 or less: no window fits (ONNX Runtime
// refuses the node).
__int128 window_count(__int128 in, __int128 begin, __int128 end, __int128 effective, __int128 stride, bool ceil_mode);

// Normalises a possibly negative axis against a rank; nullopt when out of range.
std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank);

}  // namespace refinery::ir
