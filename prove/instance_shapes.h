// What an instance's shapes exercise or rule out (internal to prove/):
// which ops are not drawn on empty inputs, and the graph facts
// make_instances ranks its draws by (broadcasting, empty values, an op that
// makes something of nothing). instance.cpp draws; this says what a draw is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace refinery::prove {

using Sizes = std::vector<int64_t>;

// Why `op` is not drawn on these inputs when some are empty
// (docs/rules.md, Verification: instances), nullopt where it is drawn:
// an arg-reduction over an empty axis has no index to return (ONNX gives
// none); a convolution or pooling window over empty spatial dims has no
// element to take, and over empty channels ATen refuses it; an empty batch
// is fine. Every other op is defined on empty tensors:
// elementwise and layout ops, MatMul and Gemm (an empty inner dim sums
// nothing: zeros), Concat with an empty piece, Softmax and the
// normalisations (an empty result), the reductions (the empty set's value,
// prove/z3/reduce.cpp).
std::optional<std::string> undefined_on_empty(ir::Op op, const std::vector<Sizes>& ins, const ir::Attributes& attrs);
// Whether an elementwise op of `g` broadcasts an operand (its shape is not
// the result's).
bool broadcasts(const ir::Graph& g);
// Whether some value of `g` has an empty dim.
bool has_empty(const ir::Graph& g);
// Whether an op of `g` makes something of nothing: an empty input, a result
// with elements (a reduction over an empty axis, a matmul's empty inner dim,
// a concat's empty piece). Laws that fail on empty tensors fail there.
bool collapses(const ir::Graph& g);

}  // namespace refinery::prove
