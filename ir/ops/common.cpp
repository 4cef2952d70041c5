// Shape-rule helpers shared by the op families.
#include "ir/ops/registry.h"

namespace refinery::ir::ops {

std::expected<Shape, InferError> broadcast(const Shape& a, const Shape& b) {
  int64_t rank = std::max(a.rank(), b.rank());
  std::vector<Dim> dims(static_cast<size_t>(rank));
  for (int64_t i = 0; i < rank; ++i) {
    int64_t ia = i - (rank - a.rank()), ib = i - (rank - b.rank());
    Dim da = ia >= 0 ? a[ia] : Dim(1), db = ib >= 0 ? b[ib] : Dim(1);
    Dim& out = dims[static_cast<size_t>(i)];
    if (da == db)
      out = da;
    else if (da == Dim(1))
      out = db;
    else if (db == Dim(1))
      out = da;
    else if (da.is_static() && db.is_static())
      return error(fmt::format("shapes {} and {} do not broadcast", a.str(), b.str()));
    else if (da.is_static())
      out = da;  // the other must match at run time
    else if (db.is_static())
      out = db;
    else if (da.is_min() && db.is_symbol() && da.name() == db.name())
      out = db;  // min(s, n) against s: it is s (s <= n) or 1 (n = 1) wherever it broadcasts
    else if (db.is_min() && da.is_symbol() && da.name() == db.name())
      out = da;
    else
      out = Dim::unknown();
  }
  return Shape(std::move(dims));
}

std::expected<Dim, InferError> size_dim(__int128 size, std::string_view what) {
  if (size < 0) return error(fmt::format("{} is negative", what));
  if (size > INT64_MAX) return error(fmt::format("{} overflows int64", what));
  return Dim(static_cast<int64_t>(size));
}

Result same_as_first(InferContext& c) {
  c.outputs[0] = c.in(0);
  return {};
}

Result same_dtype(const InferContext& c, size_t ref, size_t first, size_t last) {
  for (size_t i = first; i < last && i < c.inputs.size(); ++i)
    if (c.has_input(i) && c.in(i).dtype != c.in(ref).dtype)
      return error(fmt::format("input {} is {} but input {} is {}", i, dtype_name(c.in(i).dtype), ref,
                               dtype_name(c.in(ref).dtype)));
  return {};
}

}  // namespace refinery::ir::ops
