// The three analytic cost models. Times in seconds for one result of an op;
// the op's fixed costs (launch, dispatch, reading its inputs) are shared
// among its results.
#include <algorithm>
#include <cmath>
#include <functional>

#include "targets/cost_model.h"
#include "targets/neuromorphic.h"
#include "targets/workload.h"

namespace refinery::targets {

namespace {

double out_bytes(const OpDesc& op) { return op.output ? bytes(*op.output) : 0; }
double share(const OpDesc& op) { return 1.0 / std::max(1, op.num_outputs); }
ir::DType dtype_of(const OpDesc& op) {
  for (const ir::TensorType* t : op.inputs)
    if (t) return t->dtype;
  return op.output ? op.output->dtype : ir::DType::f32;
}

// The input a fused elementwise op streams from its producer (in registers,
// not read again): its largest, the first of equals, wherever the graph
// writes it, so that Add(b, x) and Add(x, b) cost the same (the cost laws).
std::size_t streamed_input(const OpDesc& op) {
  std::size_t s = 0;
  for (std::size_t i = 1; i < op.inputs.size(); ++i)
    if (op.inputs[i] && (!op.inputs[s] || numel(*op.inputs[i]) > numel(*op.inputs[s]))) s = i;
  return s;
}

// Bytes (`bytes_of` each) an elementwise op reads besides the input it
// streams. Scalars are free.
double extra_input_bytes(const OpDesc& op, const std::function<double(const ir::TensorType&)>& bytes_of) {
  double b = 0;
  const std::size_t streamed = streamed_input(op);
  for (std::size_t i = 0; i < op.inputs.size(); ++i)
    if (i != streamed && op.inputs[i] && numel(*op.inputs[i]) > 1) b += bytes_of(*op.inputs[i]);
  return b;
}

// GPU: a roofline per kernel plus its launch and its family's latency (the
// time a kernel of that family takes beyond its roofline: a cudnn
// convolution at batch 1 runs 10-20 us whatever its FLOPs), at the share of
// the peak its family reaches (cudnn's f32 convolutions: a sixth), the graph's own
// launch once (run_overhead). Elementwise ops, splits and slices are fused
// into their producer (no launch, no round trip through memory of the
// intermediate); views are free. docs/targets.md, "Cost models".
class GpuModel final : public CostModel {
 public:
  using CostModel::CostModel;
  double run_overhead() const override { return spec_.graph_launch_s; }

 protected:
  // The launch and the latency of a kernel of `op`'s family.
  double kernel_fixed(const OpDesc& op) const {
    auto latency = spec_.kernel_latency_s.find(kernel_family(op));
    return spec_.kernel_launch_s + (latency == spec_.kernel_latency_s.end() ? 0 : latency->second);
  }
  // The peak a kernel of `op`'s family reaches: the spec's, times the family's efficiency.
  double peak(const OpDesc& op, bool matmul) const {
    auto efficiency = spec_.kernel_efficiency.find(kernel_family(op));
    return spec_.peak(dtype_of(op), matmul) * (efficiency == spec_.kernel_efficiency.end() ? 1 : efficiency->second);
  }

  double op_cost(const OpDesc& op) const override {
    const double bw = spec_.memory_bandwidth;
    switch (classify(op.op)) {
      case OpClass::Free: return 0;
      case OpClass::Matrix: {
        double compute = flops(op) / peak(op, true);
        double memory = (input_bytes(op) + out_bytes(op) * op.num_outputs) / bw;
        return share(op) * (std::max(compute, memory) + kernel_fixed(op));
      }
      case OpClass::Elementwise: return flops(op) / spec_.peak(dtype_of(op), false) + extra_input_bytes(op, bytes) / bw;
      case OpClass::Split: return out_bytes(op) / bw;
      case OpClass::Movement: return share(op) * kernel_fixed(op) + (share(op) * input_bytes(op) + out_bytes(op)) / bw;
      case OpClass::Reduction:
      case OpClass::Opaque: {
        double compute = flops(op) / peak(op, false);
        double memory = (input_bytes(op) + out_bytes(op) * op.num_outputs) / bw;
        return share(op) * (std::max(compute, memory) + kernel_fixed(op));
      }
    }
    return 0;
  }
};

double round_up(double x, double to) { return std::ceil(x / to) * to; }

// TPU: matrix ops on the MXUs, each pass a [rows x cols] weight tile that
// streams the left operand's rows: K pads to the MXU's rows, N to its
// columns, M to the sublane count (8). XLA chooses the layouts, not the
// graph's labels (ARCHITECTURE.md decision 11): a GEMM is taken in its
// layout-free view, the weights' free dim (the features, out channels) as
// N on the lanes and the activations' (batch x spatial) as M, whichever
// operand the graph writes first; every other tensor as its elements packed
// into whole 8x128 vregs, not NCHW's last two dims padded. Everything but
// matrix ops runs on the VPU, fused by XLA into its producer.
class TpuModel final : public CostModel {
 public:
  using CostModel::CostModel;

 protected:
  double padded_numel(const ir::TensorType& t) const {
    return round_up(numel(t), static_cast<double>(spec_.tiling.sublanes) * spec_.tiling.lanes);
  }
  double padded_bytes(const ir::TensorType& t) const {
    return padded_numel(t) * static_cast<double>(ir::dtype_size(t.dtype));
  }

  // The GEMM as XLA lays it out: when only the left operand is constant
  // (W x, a 1x1 convolution written as a MatMul), the product is computed
  // as (x^T W^T)^T, so that the weights' rows are N.
  static Gemm layout_free(const OpDesc& op, Gemm g) {
    bool left_constant = op.input_constant.size() > 0 && op.input_constant[0];
    bool right_constant = op.input_constant.size() > 1 && op.input_constant[1];
    if ((op.op == ir::Op::MatMul || op.op == ir::Op::Gemm) && left_constant && !right_constant) std::swap(g.m, g.n);
    return g;
  }

  double op_cost(const OpDesc& op) const override {
    const double bw = spec_.memory_bandwidth, overhead = spec_.op_overhead_s;
    const double vpu = spec_.vector_flops > 0 ? spec_.vector_flops : spec_.peak(dtype_of(op), false) / 16;
    double in_bytes = 0;
    for (const ir::TensorType* t : op.inputs)
      if (t) in_bytes += padded_bytes(*t);
    double o_bytes = op.output ? padded_bytes(*op.output) : 0;
    double o_numel = op.output ? padded_numel(*op.output) : 0;
    switch (classify(op.op)) {
      case OpClass::Free: return 0;
      case OpClass::Matrix: {
        auto shape = gemm_shape(op);
        if (!shape) return share(op) * overhead;
        Gemm g = layout_free(op, *shape);
        double m = round_up(g.m, spec_.tiling.sublanes);
        double k = round_up(g.k, spec_.mxu.rows);
        double n = round_up(g.n, spec_.mxu.cols);
        double compute = 2 * g.batch * m * k * n / spec_.peak(dtype_of(op), true);
        double memory = (in_bytes + o_bytes * op.num_outputs) / bw;
        return share(op) * (std::max(compute, memory) + overhead);
      }
      case OpClass::Elementwise: {
        double extra = extra_input_bytes(op, [this](const ir::TensorType& t) { return padded_bytes(t); });
        return o_numel * (flops(op) / std::max(1.0, numel(*op.output))) / vpu + extra / bw;
      }
      case OpClass::Split: return o_bytes / bw;
      case OpClass::Movement: return share(op) * (overhead + in_bytes / bw) + o_bytes / bw;
      case OpClass::Reduction:
      case OpClass::Opaque: {
        double compute = flops(op) * (in_bytes > 0 ? in_bytes / std::max(1.0, input_bytes(op)) : 1) / vpu;
        return share(op) * (std::max(compute, (in_bytes + o_bytes * op.num_outputs) / bw) + overhead);
      }
    }
    return 0;
  }
};

// CPU (analytic, until the learned model): every op but a view pays the
// runtime's dispatch overhead (ONNX Runtime drops Identity and Dropout and
// runs Reshape, Flatten, Squeeze, Unsqueeze as views of their input); GEMMs
// run at an efficiency that grows with their size (the cube root of m*k*n:
// small GEMMs cannot amortise packing and keep the FMA units busy); memory
// traffic streams from cache when the op's data fits, else from DRAM.
class CpuModel final : public CostModel {
 public:
  using CostModel::CostModel;

 protected:
  double bandwidth(double traffic) const {
    if (spec_.cache_bandwidth > 0 && traffic <= spec_.cache_bytes) return spec_.cache_bandwidth;
    return spec_.memory_bandwidth;
  }

  double op_cost(const OpDesc& op) const override {
    const double overhead = spec_.op_overhead_s;
    // ONNX Runtime's fused Attention (com.microsoft): its parts priced as
    // their ops, one dispatch for all of them. Measured against the unfused
    // form it runs 1.01x-1.23x faster (docs/measurements.md, "Fused
    // attention"); this prices it below the decomposition by the dispatches
    // it saves, which is at most what was measured.
    if (op.op == ir::Op::MsAttention)
      return attention_cost(op, overhead, [this](const OpDesc& p) { return op_cost(p); });
    if (ort_cpu_fused_epilogue(op)) return 0;
    double traffic = input_bytes(op) + out_bytes(op) * op.num_outputs;
    double memory = traffic / bandwidth(traffic);
    switch (classify(op.op)) {
      case OpClass::Free: return 0;
      case OpClass::Matrix: {
        auto g = gemm_shape(op);
        double eff = spec_.gemm_efficiency.max;
        if (g && spec_.gemm_efficiency.half_size > 0) {
          double s = std::cbrt(g->m * g->k * g->n);
          eff *= s / (s + spec_.gemm_efficiency.half_size);
        }
        double compute = flops(op) / (spec_.peak(dtype_of(op), true) * eff);
        return share(op) * (std::max(compute, memory) + overhead);
      }
      case OpClass::Elementwise:
      case OpClass::Reduction:
      case OpClass::Opaque: {
        double compute = flops(op) * op.num_outputs / (spec_.peak(dtype_of(op), false) * spec_.elementwise_efficiency);
        return share(op) * (std::max(compute, memory) + overhead);
      }
      case OpClass::Split:
      case OpClass::Movement: return share(op) * (memory + overhead);
    }
    return 0;
  }
};

}  // namespace

std::unique_ptr<CostModel> make_cost_model(HardwareSpec spec) {
  switch (spec.kind) {
    case TargetKind::Gpu: return std::make_unique<GpuModel>(std::move(spec));
    case TargetKind::Tpu: return std::make_unique<TpuModel>(std::move(spec));
    case TargetKind::Neuromorphic: return make_neuromorphic_model(std::move(spec));
    case TargetKind::Cpu: break;
  }
  return std::make_unique<CpuModel>(std::move(spec));
}

}  // namespace refinery::targets
