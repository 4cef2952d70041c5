// The interpreter loop: wrap inputs and constants as ATen tensors, run nodes
// in order through the kernel table, free each value after its last use.
#include "runtime/interpreter.h"
#include "runtime/module.h"

#include <algorithm>

#include <ATen/Parallel.h>

#include "runtime/aten.h"

namespace refinery::runtime {
namespace {

KernelTable build_kernel_table() {
  KernelTable t{};
  register_elementwise_kernels(t);
  register_linear_kernels(t);
  register_pool_kernels(t);
  register_norm_kernels(t);
  register_reduce_kernels(t);
  register_layout_kernels(t);
  register_shape_kernels(t);
  register_contrib_kernels(t);
  return t;
}

std::string opaque_name(const ir::Node& node) {
  return node.domain.empty() || node.domain == "ai.onnx" ? node.op_type
                                                         : fmt::format("{}:{}", node.domain, node.op_type);
}

// Declared input types must match what the caller passes.
Expected<void> check_input(const ir::Graph& graph, ir::ValueId v, const ir::Tensor& t) {
  const ir::Value& value = graph.value(v);
  auto where = fmt::format("input '{}'", value.name);
  if (t.dtype() != value.type.dtype)
    return fail(fmt::format("expected {}, got {}", ir::dtype_name(value.type.dtype), ir::dtype_name(t.dtype())), where);
  const ir::Shape& s = value.type.shape;
  if (!s.ranked()) return {};
  bool fits = s.rank() == static_cast<int64_t>(t.dims().size());
  for (int64_t i = 0; fits && i < s.rank(); ++i)
    if (s[i].is_static() && s[i].size() != t.dims()[static_cast<size_t>(i)]) fits = false;
  if (!fits) {
    std::string got;
    for (size_t i = 0; i < t.dims().size(); ++i) got += fmt::format("{}{}", i ? "x" : "", t.dims()[i]);
    return fail(fmt::format("expected shape {}, got {}", s.str(), got.empty() ? "a scalar" : got), where);
  }
  return {};
}

at::Tensor widen(at::Tensor t, bool wide) {
  if (wide && t.defined() && t.is_floating_point() && t.scalar_type() != at::kDouble) return t.to(at::kDouble);
  return t;
}

}  // namespace

const KernelTable& kernel_table() {
  static const KernelTable table = build_kernel_table();
  return table;
}

namespace module {

bool has_kernel(ir::Op op) { return op != ir::Op::Opaque && kernel_table()[static_cast<size_t>(op)] != nullptr; }

std::vector<std::string> unsupported_ops(const ir::Graph& graph) {
  std::vector<std::string> out;
  for (const ir::Node& node : graph.nodes()) {
    std::string name;
    if (node.op == ir::Op::Opaque)
      name = opaque_name(node);
    else if (!has_kernel(node.op))
      name = std::string(ir::op_name(node.op));
    else
      continue;
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  }
  return out;
}

Expected<std::vector<ir::Tensor>> run(const ir::Graph& graph, const std::vector<ir::Tensor>& inputs,
                                      const RunOptions& options) {
  if (inputs.size() != graph.inputs().size())
    return fail(fmt::format("the graph takes {} inputs, got {}", graph.inputs().size(), inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (auto ok = check_input(graph, graph.inputs()[i], inputs[i]); !ok) return std::unexpected(ok.error());
  if (options.threads > 0 && at::get_num_threads() != options.threads) at::set_num_threads(options.threads);

  RunStats stats;
  std::vector<uint32_t> uses = graph.use_counts();
  std::vector<at::Tensor> values(graph.num_values());
  size_t live = 0;
  auto hold = [&](ir::ValueId v, at::Tensor t) {
    values[ir::index(v)] = std::move(t);
    stats.peak_live_values = std::max(stats.peak_live_values, ++live);
  };
  auto release = [&](ir::ValueId v) {
    if (--uses[ir::index(v)] == 0 && values[ir::index(v)].defined()) {
      values[ir::index(v)].reset();
      --live;
    }
  };

  try {
    for (size_t i = 0; i < inputs.size(); ++i)
      hold(graph.inputs()[i], widen(to_aten(std::make_shared<const ir::Tensor>(inputs[i])), options.wide_floats));
    // Each used constant is wrapped once per run, over the graph's own bytes.
    for (ir::ValueId c : graph.constants()) {
      if (uses[ir::index(c)] == 0) continue;
      bool copied = false;
      hold(c, widen(to_aten(graph.value(c).constant, &copied), options.wide_floats));
      ++stats.constants_converted;
      stats.constants_copied += copied ? 1 : 0;
    }
  } catch (const std::exception& e) {
    return fail(fmt::format("cannot convert inputs: {}", e.what()));
  }

  const KernelTable& kernels = kernel_table();
  std::vector<at::Tensor> args;
  for (size_t n = 0; n < graph.num_nodes(); ++n) {
    ir::NodeId id{static_cast<uint32_t>(n)};
    const ir::Node& node = graph.node(id);
    auto where = [&] { return fmt::format("node '{}'", graph.node_label(id)); };
    if (node.op == ir::Op::Opaque && options.opaque) {
      std::vector<ir::Tensor> ins;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        ir::ValueId v = node.inputs[i];
        if (v == ir::kNoValue || !values[ir::index(v)].defined()) {
          ins.emplace_back(ir::DType::f32, std::vector<int64_t>{0}, std::vector<std::byte>{});
          continue;
        }
        ins.push_back(from_aten(values[ir::index(v)], graph.value(v).type.dtype));
      }
      auto outs = options.opaque(node, ins);
      if (!outs) {
        Diag d = outs.error();
        d.where = where();
        return std::unexpected(std::move(d));
      }
      if (outs->size() < node.outputs.size())
        return fail(fmt::format("the stand-in gave {} results, the node has {}", outs->size(), node.outputs.size()),
                    where());
      try {
        for (size_t i = 0; i < node.outputs.size(); ++i)
          if (uses[ir::index(node.outputs[i])] > 0)
            hold(node.outputs[i],
                 widen(to_aten(std::make_shared<const ir::Tensor>(std::move((*outs)[i]))), options.wide_floats));
      } catch (const std::exception& e) {
        return fail(e.what(), where());
      }
      for (ir::ValueId v : node.inputs)
        if (v != ir::kNoValue) release(v);
      continue;
    }
    if (node.op == ir::Op::Opaque)
      return fail(fmt::format("'{}' is an opaque op; the interpreter has no kernel for it", opaque_name(node)),
                  where());
    Kernel kernel = kernels[static_cast<size_t>(node.op)];
    if (kernel == nullptr) return fail(fmt::format("no kernel for op '{}'", ir::op_name(node.op)), where());
    const ir::OpInfo& info = ir::op_info(node.op);
    int nin = static_cast<int>(node.inputs.size());
    if (nin < info.min_inputs || (info.max_inputs >= 0 && nin > info.max_inputs))
      return fail(fmt::format("{} takes {} to {} inputs, got {}", info.name, info.min_inputs,
                              info.max_inputs < 0 ? std::string("any") : std::to_string(info.max_inputs), nin),
                  where());
    args.assign(node.inputs.size(), at::Tensor());
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      ir::ValueId v = node.inputs[i];
      if (v == ir::kNoValue) {
        if (static_cast<int>(i) < info.min_inputs) return fail(fmt::format("required input {} is missing", i), where());
        continue;
      }
      if (!values[ir::index(v)].defined())
        return fail(fmt::format("input '{}' has no value (used before it is defined?)", graph.value(v).name), where());
      args[i] = values[ir::index(v)];
    }
    KernelResult result;
    try {
      result = kernel(KernelCall{graph, node, args});
    } catch (const c10::Error& e) {
      return fail(e.what_without_backtrace(), where());
    } catch (const std::exception& e) {
      return fail(e.what(), where());
    }
    if (!result) return fail(result.error(), where());
    if (result->size() < node.outputs.size())
      return fail(fmt::format("kernel produced {} outputs, the node has {}", result->size(), node.outputs.size()),
                  where());
    args.clear();
    for (size_t i = 0; i < node.outputs.size(); ++i)
      if (uses[ir::index(node.outputs[i])] > 0)
        hold(node.outputs[i], widen(std::move((*result)[i]), options.wide_floats));
    for (ir::ValueId v : node.inputs)
      if (v != ir::kNoValue) release(v);
  }

  std::vector<ir::Tensor> outputs;
  for (ir::ValueId v : graph.outputs()) {
    const at::Tensor& t = values[ir::index(v)];
    if (!t.defined()) return fail(fmt::format("graph output '{}' was never computed", graph.value(v).name));
    auto dtype = options.wide_floats && t.scalar_type() == at::kDouble
                     ? std::optional<ir::DType>(ir::DType::f64)
                     : ir_dtype(t.scalar_type(), graph.value(v).type.dtype);
    if (!dtype) return fail(fmt::format("graph output '{}' has an ATen type with no IR dtype", graph.value(v).name));
    try {
      outputs.push_back(from_aten(t, *dtype));
    } catch (const std::exception& e) {
      return fail(fmt::format("cannot convert output '{}': {}", graph.value(v).name, e.what()));
    }
  }
  if (options.stats) *options.stats = stats;
  return outputs;
}

}  // namespace module

}  // namespace refinery::runtime

extern "C" const refinery::runtime::ModuleEntry* refinery_aten_entry() {
  namespace rt = refinery::runtime;
  static const rt::ModuleEntry entry{rt::ModuleAbi{}, &rt::module::run, &rt::module::unsupported_ops,
                                     &rt::module::has_kernel};
  return &entry;
}
