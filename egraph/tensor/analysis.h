// The tensor analysis: the type system (ARCHITECTURE.md, decision 4). Every
// e-class has exactly one tensor type, computed by the op table's shape
// rules; it also carries constant facts (the tensor of a constant leaf, the
// known contents of small integer tensors, as ir's shape inference does, and
// zeros and constant channels: channels.h).
// A union keeps the more precise of two compatible types (ir::refine); a
// union of classes whose types contradict is a bug and throws TypeMismatch.
#pragma once

#include <expected>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "egraph/analysis.h"
#include "egraph/egraph.h"
#include "egraph/tensor/context.h"
#include "egraph/tensor/tensor_node.h"

namespace refinery::egraph::tensor {

// Which entries along axis 1 are constant (egraph/tensor/channels.h).
using ChannelSet = std::shared_ptr<const std::vector<bool>>;

struct TensorData {
  ir::TensorType type;
  std::optional<std::vector<ir::Dim>> known;  // contents of a small integer tensor
  ir::TensorRef constant;                     // when the class holds a constant leaf
  bool zero = false;                          // every element is 0
  ChannelSet channels;                        // axis-1 entries that do not depend on the inputs
  bool input_free = false;                    // no element depends on the inputs (a constant expression)

  bool operator==(const TensorData& o) const {
    return type == o.type && known == o.known && constant == o.constant && zero == o.zero &&
           input_free == o.input_free &&
           (channels == o.channels || (channels && o.channels && *channels == *o.channels));
  }
};

struct TypeMismatch : std::logic_error {
  using std::logic_error::logic_error;
};

class TensorAnalysis;
using TensorEGraph = EGraph<TensorNode, TensorAnalysis>;

class TensorAnalysis {
 public:
  using Data = TensorData;

  explicit TensorAnalysis(std::shared_ptr<TensorContext> ctx) : ctx_(std::move(ctx)) {}

  // The node's data, or why it does not type-check (used by appliers to
  // refuse an ill-typed right-hand side before adding it).
  std::expected<TensorData, std::string> infer(const TensorEGraph& g, const TensorNode& node) const;

  Data make(const TensorEGraph& g, const TensorNode& node) const;
  DidMerge merge(Data& a, Data&& b) const;

  TensorContext& context() const { return *ctx_; }
  const std::shared_ptr<TensorContext>& context_ptr() const { return ctx_; }

 private:
  std::expected<TensorData, std::string> infer_type(const TensorEGraph& g, const TensorNode& node) const;
  std::shared_ptr<TensorContext> ctx_;
};

}  // namespace refinery::egraph::tensor
