// The tensor analysis' constant facts (issue #13, docs/egraph.md "Constant
// facts"): whether every element of a class is 0, and which entries along
// axis 1 (the channels of an N x C x ... activation, the features of an
// N x F matrix) do not depend on the graph's inputs: the channels a pruned
// convolution's zero filters leave constant, carried through ReLU, Clip,
// BatchNorm, pooling and elementwise ops. The rules that read the channel
// facts (rules/lib/channels.rules) hold for every choice of channels, so a
// fact steers where they apply, never whether the result is right; `zero` is
// a value condition and is exact here.
#pragma once

#include <memory>
#include <vector>

#include "egraph/tensor/analysis.h"

namespace refinery::egraph::tensor {

// Every element of the node's result is 0 (a zero constant, a gather of
// zero filters, a reshape of zeros, a ConstantOfShape of 0).
bool zero_fact(const TensorEGraph& g, const TensorNode& node);

// The constant channels of the node's result (nullptr when none is known).
ChannelSet channel_fact(const TensorEGraph& g, const TensorNode& node, const ir::TensorType& out);

// Whether no element of the node's result depends on the graph's inputs, at
// any rank (a constant expression: a gathered bias, a constant part reduced
// to one value per channel), given its other facts `d`.
bool input_free_fact(const TensorEGraph& g, const TensorNode& node, const TensorData& d);

}  // namespace refinery::egraph::tensor
