// Channel counts in the runtime's blocked layout (issue 13; docs/optimize.md,
// "Channel blocks"). ONNX Runtime's CPU provider runs convolutions in its
// NCHWc layout, channels in blocks of 16 floats (8 on a machine without
// AVX-512), and computes a convolution's output channels rounded up to the
// block. A convolution whose input channels are not a multiple of the block
// leaves that layout: ONNX Runtime reorders its input back to NCHW and runs
// a slower kernel, and reorders again after it. Pruned models make such
// counts (12 or 19 live channels of 32); written as they are, they measured
// 3-6% slower than the same graph widened to whole blocks
// (docs/measurements.md, session 21).
//
// The learned cost model prices each kernel alone, so it does not see the
// reorders between kernels; this is a graph transform after extraction, as
// the neuromorphic weight rescaling is (fit_weights.h), not a rewrite rule.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace refinery::optimize {

struct PaddedChannels {
  std::vector<std::string> values;  // the values widened together (one region), in graph order
  int64_t from = 0, to = 0;         // their channel count before and after
};

// Widens, in place, each region of f32 NCHW values whose channel count is
// not a multiple of `block` and that flows only from convolutions to
// convolutions: every value of the region is made by a Conv (group 1,
// constant weights), or by an Add, Relu, Clip or MaxPool of values of the
// region, and is read only by such ops or as a Conv's data input; none is a
// graph output. The region's makers get filters of zeros (bias 0) up to the
// next multiple of `block`, its readers zero weights for the new channels,
// so every value outside the region is computed from the same terms plus
// products of zero weights with finite values (the new channels hold zeros,
// or a Clip's bound). Equal on finite inputs, as the rules that drop zero
// weights are (docs/rules.md, binary32 classes: an input that holds an
// infinity gives 0 x inf = NaN in a new channel). Returns the regions
// widened; a region that reaches anything else is left as it is.
std::vector<PaddedChannels> pad_channels_to_block(ir::Graph& graph, int64_t block);

}  // namespace refinery::optimize
