// Convolution, pooling, normalisation, dropout and the softmax family.
#include "ir/ops/registry.h"

namespace refinery::ir::ops {
namespace {

// Spatial output size of a window op (ONNX conv/pool arithmetic).
struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends
  std::string auto_pad;
  bool ceil_mode = false;
};

std::expected<Window, InferError> read_window(const InferContext& c, int64_t spatial, std::vector<int64_t> kernel) {
  Window w;
  OpAttrs a = c.op_attrs();
  w.kernel = std::move(kernel);
  w.strides = a.get_ints("strides");
  w.dilations = a.get_ints("dilations");
  w.pads = a.get_ints("pads");
  w.auto_pad = a.get_string("auto_pad");
  w.ceil_mode = op_info(c.op).attr("ceil_mode") != nullptr && a.get_int("ceil_mode") != 0;  // pools only
  auto sz = static_cast<size_t>(spatial);
  if (w.kernel.size() != sz) return error(fmt::format("kernel has {} dims, expected {}", w.kernel.size(), sz));
  if (w.strides.size() != sz || w.dilations.size() != sz || w.pads.size() != 2 * sz)
    return error("strides, dilations or pads do not match the number of spatial dimensions");
  for (size_t i = 0; i < sz; ++i)
    if (w.strides[i] <= 0 || w.dilations[i] <= 0 || w.kernel[i] <= 0)
      return error("kernel, strides and dilations must be positive");
  return w;
}

std::expected<Dim, InferError> window_out(const Window& w, size_t i, const Dim& in) {
  if (!in.is_static()) return Dim::unknown();
  // In 128 bits: the attributes are any int64 a file says.
  using I = __int128;
  I effective = (I{w.kernel[i]} - 1) * w.dilations[i] + 1;
  if (w.auto_pad == "SAME_UPPER" || w.auto_pad == "SAME_LOWER")
    return Dim(static_cast<int64_t>((I{in.size()} + w.strides[i] - 1) / w.strides[i]));  // at most in
  I begin = w.auto_pad == "VALID" ? 0 : w.pads[i], end = w.auto_pad == "VALID" ? 0 : w.pads[i + w.kernel.size()];
  I out = window_count(in.size(), begin, end, effective, w.strides[i], w.ceil_mode);
  if (out <= 0)
    return error(
        fmt::format("the window spans {} (kernel and dilation), more than the padded input's {} on spatial axis {}",
                    effective, in.size() + begin + end, i));
  return size_dim(out, fmt::format("output size on spatial axis {}", i));
}

Result conv(InferContext& c) {
  if (auto ok = same_dtype(c, 0, 1, 3); !ok) return ok;
  const Shape& x = c.shape(0);
  const Shape& w = c.shape(1);
  if (x.rank() < 3) return error(fmt::format("conv input must be N x C x D1..., got {}", x.str()));
  if (w.rank() != x.rank()) return error(fmt::format("weight rank {} differs from input rank {}", w.rank(), x.rank()));
  int64_t spatial = x.rank() - 2;
  std::vector<int64_t> kernel = c.attrs->get_ints("kernel_shape", {});
  if (kernel.empty()) {
    for (int64_t i = 2; i < w.rank(); ++i) {
      if (!w[i].is_static()) return error("weight shape must be static when kernel_shape is absent");
      kernel.push_back(w[i].size());
    }
  }
  auto win = read_window(c, spatial, kernel);
  if (!win) return std::unexpected(win.error());
  int64_t group = c.op_attrs().get_int("group");
  if (group <= 0) return error(fmt::format("group {} is not positive", group));
  if (x[1].is_static() && w[1].is_static()) {
    auto expects = static_cast<__int128>(w[1].size()) * group;  // in 128 bits: group is the model's word
    if (x[1].size() != expects)
      return error(fmt::format(
          "input has {} channels but weight {} with group {} expects {}", x[1].size(), w.str(), group,
          expects <= INT64_MAX ? fmt::to_string(static_cast<int64_t>(expects)) : std::string("more than int64 holds")));
  }
  if (c.has_input(2) && (c.shape(2).rank() != 1 ||
                         (w[0].is_static() && c.shape(2)[0].is_static() && c.shape(2)[0].size() != w[0].size())))
    return error(fmt::format("bias shape {} does not match {} output channels", c.shape(2).str(), w[0].str()));
  std::vector<Dim> out{x[0], w[0]};
  for (size_t i = 0; i < static_cast<size_t>(spatial); ++i)
    if (auto d = window_out(*win, i, x[static_cast<int64_t>(i) + 2]))
      out.push_back(*d);
    else
      return std::unexpected(d.error());
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::move(out))};
  return {};
}

Result conv_transpose(InferContext& c) {
  if (auto ok = same_dtype(c, 0, 1, 3); !ok) return ok;
  const Shape& x = c.shape(0);
  const Shape& w = c.shape(1);
  if (x.rank() < 3 || w.rank() != x.rank()) return error("conv_transpose input and weight ranks do not fit");
  int64_t spatial = x.rank() - 2;
  auto sz = static_cast<size_t>(spatial);
  std::vector<int64_t> kernel = c.attrs->get_ints("kernel_shape", {});
  if (kernel.empty())
    for (int64_t i = 2; i < w.rank(); ++i) kernel.push_back(w[i].is_static() ? w[i].size() : -1);
  OpAttrs a = c.op_attrs();
  auto strides = a.get_ints("strides"), dil = a.get_ints("dilations"), pads = a.get_ints("pads");
  auto outpad = a.get_ints("output_padding");
  auto output_shape = a.maybe_ints("output_shape").value_or(std::vector<int64_t>{});
  auto auto_pad = a.get_string("auto_pad");
  int64_t group = a.get_int("group");
  if (kernel.size() != sz || strides.size() != sz || dil.size() != sz || pads.size() != 2 * sz || outpad.size() != sz ||
      (!output_shape.empty() && output_shape.size() < sz))
    return error(
        "kernel_shape, strides, dilations, pads, output_padding or output_shape do not match the number of "
        "spatial dimensions");
  if (group <= 0) return error(fmt::format("group {} is not positive", group));
  for (size_t i = 0; i < sz; ++i)
    if (strides[i] <= 0 || dil[i] <= 0) return error("strides and dilations must be positive");
  std::vector<Dim> out{x[0], Dim::unknown()};
  if (w[1].is_static()) {
    auto channels =
        size_dim(static_cast<__int128>(w[1].size()) * group, fmt::format("{} x group {} channels", w[1].str(), group));
    if (!channels) return std::unexpected(channels.error());
    out[1] = *channels;
  }
  for (size_t i = 0; i < sz; ++i) {
    const Dim& in = x[static_cast<int64_t>(i) + 2];
    if (!output_shape.empty()) {
      out.emplace_back(output_shape[output_shape.size() - sz + i]);
    } else if (!in.is_static() || kernel[i] < 0) {
      out.push_back(Dim::unknown());
    } else {
      using I = __int128;
      I size =
          auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER"
              ? I{in.size()} * strides[i]
              : I{strides[i]} * (in.size() - 1) + outpad[i] + (I{kernel[i]} - 1) * dil[i] + 1 - pads[i] - pads[i + sz];
      auto d = size_dim(size, fmt::format("output size on spatial axis {}", i));
      if (!d) return std::unexpected(d.error());
      out.push_back(*d);
    }
  }
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::move(out))};
  return {};
}

Result pool(InferContext& c) {
  const Shape& x = c.shape(0);
  if (x.rank() < 3) return error(fmt::format("pool input must be N x C x D1..., got {}", x.str()));
  auto kernel = c.attrs->maybe_ints("kernel_shape");
  if (!kernel) return error("kernel_shape is required");
  auto win = read_window(c, x.rank() - 2, *kernel);
  if (!win) return std::unexpected(win.error());
  std::vector<Dim> out{x[0], x[1]};
  for (size_t i = 0; i + 2 < static_cast<size_t>(x.rank()); ++i)
    if (auto d = window_out(*win, i, x[static_cast<int64_t>(i) + 2]))
      out.push_back(*d);
    else
      return std::unexpected(d.error());
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(out)};
  if (c.num_outputs > 1) c.outputs[1] = TensorType{DType::i64, Shape(out)};
  return {};
}

Result global_pool(InferContext& c) {
  const Shape& x = c.shape(0);
  if (x.rank() < 3) return error(fmt::format("global pool input must be N x C x D1..., got {}", x.str()));
  std::vector<Dim> out{x[0], x[1]};
  for (int64_t i = 2; i < x.rank(); ++i) out.emplace_back(1);
  c.outputs[0] = TensorType{c.in(0).dtype, Shape(std::move(out))};
  return {};
}

Result batch_norm(InferContext& c) {
  if (auto ok = same_dtype(c, 0, 1, 3); !ok) return ok;
  if (c.shape(0).rank() < 2) return error("batch_norm input must have a channel dimension");
  for (size_t i = 1; i < 5; ++i)
    if (c.shape(i).rank() != 1) return error(fmt::format("input {} must be 1-d, got {}", i, c.shape(i).str()));
  c.outputs[0] = c.in(0);
  for (int i = 1; i < c.num_outputs; ++i) c.outputs[static_cast<size_t>(i)] = c.in(3);
  return {};
}

Result instance_norm(InferContext& c) {
  if (auto ok = same_dtype(c, 0, 1, 3); !ok) return ok;
  if (c.shape(0).rank() < 3) return error("instance_norm input must be N x C x D1...");
  return same_as_first(c);
}

Result layer_norm(InferContext& c) {
  const Shape& x = c.shape(0);
  OpAttrs a = c.op_attrs();
  auto axis = normalize_axis(a.get_int("axis"), x.rank());
  if (!axis) return error("axis out of range");
  c.outputs[0] = c.in(0);
  std::vector<Dim> stat(x.dims().begin(), x.dims().begin() + *axis);
  for (int64_t i = *axis; i < x.rank(); ++i) stat.emplace_back(1);
  DType st = static_cast<DType>(a.get_int("stash_type") == 1 ? DType::f32 : c.in(0).dtype);
  for (int i = 1; i < c.num_outputs; ++i) c.outputs[static_cast<size_t>(i)] = TensorType{st, Shape(stat)};
  return {};
}

Result dropout(InferContext& c) {
  c.outputs[0] = c.in(0);
  if (c.num_outputs > 1) c.outputs[1] = TensorType{DType::boolean, c.shape(0)};
  return {};
}

Result softmax(InferContext& c) {
  if (!normalize_axis(c.op_attrs().get_int("axis"), c.shape(0).rank()))
    return error(fmt::format("axis out of range for rank {}", c.shape(0).rank()));
  if (!is_float(c.in(0).dtype)) return error("expects a floating-point input");
  return same_as_first(c);
}

Result lrn(InferContext& c) {
  if (c.shape(0).rank() < 3) return error("lrn input must be N x C x D1...");
  if (int64_t size = c.op_attrs().get_int("size"); size <= 0)
    return error(fmt::format("size {} is not positive", size));
  return same_as_first(c);
}

// kernel_shape has no default: the weight's shape gives it.
const std::vector<AttrSpec> kConvAttrs{
    string_attr("auto_pad", "NOTSET"), ints_per_axis("dilations", 1), int_attr("group", 1),
    {"kernel_shape", AttrKind::Ints},  ints_per_axis_ends("pads", 0), ints_per_axis("strides", 1)};

}  // namespace

void register_nn(Table& t) {
  define(t, OpInfo{.op = Op::Conv, .min_inputs = 2, .max_inputs = 3, .attrs = kConvAttrs, .shape_rule = conv});
  auto ct_attrs = kConvAttrs;
  ct_attrs.push_back(ints_per_axis("output_padding", 0));
  ct_attrs.push_back({"output_shape", AttrKind::Ints});  // absent: from the input, strides and pads
  define(
      t,
      OpInfo{
          .op = Op::ConvTranspose, .min_inputs = 2, .max_inputs = 3, .attrs = ct_attrs, .shape_rule = conv_transpose});
  define(t, OpInfo{.op = Op::MaxPool,
                   .min_inputs = 1,
                   .max_inputs = 1,
                   .min_outputs = 1,
                   .max_outputs = 2,
                   .attrs = {string_attr("auto_pad", "NOTSET"),
                             int_attr("ceil_mode", 0),
                             ints_per_axis("dilations", 1),
                             {"kernel_shape", AttrKind::Ints, AttrUse::Required},
                             ints_per_axis_ends("pads", 0),
                             int_attr("storage_order", 0),
                             ints_per_axis("strides", 1)},
                   .shape_rule = pool});
  define(t, OpInfo{.op = Op::AveragePool,
                   .min_inputs = 1,
                   .max_inputs = 1,
                   // dilations: ONNX AveragePool-19's; the shape rule and the kernel read it
                   .attrs = {string_attr("auto_pad", "NOTSET"),
                             int_attr("ceil_mode", 0),
                             int_attr("count_include_pad", 0),
                             ints_per_axis("dilations", 1),
                             {"kernel_shape", AttrKind::Ints, AttrUse::Required},
                             ints_per_axis_ends("pads", 0),
                             ints_per_axis("strides", 1)},
                   .shape_rule = pool});
  for (Op op : {Op::GlobalAveragePool, Op::GlobalMaxPool})
    define(t, OpInfo{.op = op, .min_inputs = 1, .max_inputs = 1, .shape_rule = global_pool});
  define(t, OpInfo{.op = Op::BatchNormalization,
                   .min_inputs = 5,
                   .max_inputs = 5,
                   .min_outputs = 1,
                   .max_outputs = 3,
                   .attrs = {float_attr("epsilon", 1e-5f), float_attr("momentum", 0.9f), int_attr("training_mode", 0)},
                   .shape_rule = batch_norm});
  define(t, OpInfo{.op = Op::InstanceNormalization,
                   .min_inputs = 3,
                   .max_inputs = 3,
                   .attrs = {float_attr("epsilon", 1e-5f)},
                   .shape_rule = instance_norm});
  define(t, OpInfo{.op = Op::LayerNormalization,
                   .min_inputs = 2,
                   .max_inputs = 3,
                   .min_outputs = 1,
                   .max_outputs = 3,
                   .attrs = {int_attr("axis", -1), float_attr("epsilon", 1e-5f), int_attr("stash_type", 1)},
                   .shape_rule = layer_norm});
  define(t, OpInfo{.op = Op::LRN,
                   .min_inputs = 1,
                   .max_inputs = 1,
                   .attrs = {float_attr("alpha", 1e-4f),
                             float_attr("beta", 0.75f),
                             float_attr("bias", 1.0f),
                             {"size", AttrKind::Int, AttrUse::Required}},
                   .shape_rule = lrn});
  define(t, OpInfo{.op = Op::Dropout,
                   .min_inputs = 1,
                   .max_inputs = 3,
                   .min_outputs = 1,
                   .max_outputs = 2,
                   .attrs = {{"seed", AttrKind::Int}},
                   .shape_rule = dropout});  // absent seed: a random one
  for (Op op : {Op::Softmax, Op::LogSoftmax, Op::Hardmax})
    define(t,
           OpInfo{.op = op, .min_inputs = 1, .max_inputs = 1, .attrs = {int_attr("axis", -1)}, .shape_rule = softmax});
}

}  // namespace refinery::ir::ops
