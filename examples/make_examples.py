#!/usr/bin/python3
"""Build the example models in examples/ (deterministic, seeded).

    /usr/bin/python3 examples/make_examples.py [OUTDIR]    (default: the folder of this script)

tiny_cnn.onnx is built by hand with onnx.helper (opset 17) so that it keeps the
redundancies a graph optimiser should find; examples/README.md lists them.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def tiny_cnn():
    rng = np.random.RandomState(0)

    def f32(*shape, scale=0.1):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    inits = []

    def init(name, arr):
        inits.append(numpy_helper.from_array(np.array(arr, order="C"), name))
        return name

    def i64(name, values):
        return init(name, np.array(values, dtype=np.int64))

    nodes = []

    def node(op, inputs, outputs, name, **attrs):
        nodes.append(helper.make_node(op, inputs, outputs, name=name, **attrs))
        return outputs[0]

    # 1. Conv 3->8 3x3 + BatchNormalization (inference form) + Relu: Conv-BN folding.
    init("conv1.weight", f32(8, 3, 3, 3, scale=0.3))
    init("conv1.bias", f32(8))
    init("bn1.scale", (1.0 + f32(8)).astype(np.float32))
    init("bn1.bias", f32(8))
    init("bn1.mean", f32(8))
    init("bn1.var", (0.5 + rng.random_sample(8)).astype(np.float32))
    x = node("Conv", ["input", "conv1.weight", "conv1.bias"], ["conv1"], "conv1",
             kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
    x = node("BatchNormalization", [x, "bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"], ["bn1"], "bn1",
             epsilon=1e-5)
    x = node("Relu", [x], ["relu1"], "relu1")

    # 2. Two parallel 1x1 convs on the same input, concatenated: merge into one conv.
    init("branch_a.weight", f32(8, 8, 1, 1, scale=0.3))
    init("branch_a.bias", f32(8))
    init("branch_b.weight", f32(8, 8, 1, 1, scale=0.3))
    init("branch_b.bias", f32(8))
    a = node("Conv", [x, "branch_a.weight", "branch_a.bias"], ["branch_a"], "branch_a", kernel_shape=[1, 1])
    b = node("Conv", [x, "branch_b.weight", "branch_b.bias"], ["branch_b"], "branch_b", kernel_shape=[1, 1])
    x = node("Concat", [a, b], ["concat1"], "concat1", axis=1)  # [1,16,16,16]
    x = node("Relu", [x], ["relu2"], "relu2")

    # 3. A Transpose pair that cancels (NCHW -> NHWC -> NCHW).
    x = node("Transpose", [x], ["to_nhwc"], "to_nhwc", perm=[0, 2, 3, 1])
    x = node("Transpose", [x], ["to_nchw"], "to_nchw", perm=[0, 3, 1, 2])

    # 4. Multiply by one and add zero: identities.
    init("one", np.array(1.0, dtype=np.float32))
    init("zero", np.zeros((1, 16, 1, 1), dtype=np.float32))
    x = node("Mul", [x, "one"], ["mul_one"], "mul_one")
    x = node("Add", [x, "zero"], ["add_zero"], "add_zero")

    # 5. MaxPool 2x2 -> [1,16,8,8], then a Reshape chain -> [1,1024].
    x = node("MaxPool", [x], ["pool1"], "pool1", kernel_shape=[2, 2], strides=[2, 2])
    i64("shape_1_16_64", [1, 16, 64])
    i64("shape_1_1024", [1, 1024])
    x = node("Reshape", [x, "shape_1_16_64"], ["reshape1"], "reshape1")
    x = node("Reshape", [x, "shape_1_1024"], ["reshape2"], "reshape2")

    # 6. Two MatMuls sharing their input (+ bias Add): merge into one MatMul.
    init("fc_a.weight", f32(1024, 16, scale=0.05))
    init("fc_a.bias", f32(16))
    init("fc_b.weight", f32(1024, 16, scale=0.05))
    init("fc_b.bias", f32(16))
    a = node("MatMul", [x, "fc_a.weight"], ["fc_a_mm"], "fc_a_mm")
    a = node("Add", [a, "fc_a.bias"], ["fc_a"], "fc_a")
    b = node("MatMul", [x, "fc_b.weight"], ["fc_b_mm"], "fc_b_mm")
    b = node("Add", [b, "fc_b.bias"], ["fc_b"], "fc_b")
    x = node("Concat", [a, b], ["concat2"], "concat2", axis=1)  # [1,32]
    x = node("Relu", [x], ["relu3"], "relu3")

    # 7. Gemm head 32 -> 10 (transB=1, as exporters write Linear).
    init("head.weight", f32(10, 32, scale=0.2))
    init("head.bias", f32(10))
    node("Gemm", [x, "head.weight", "head.bias"], ["logits"], "head", transB=1)

    graph = helper.make_graph(
        nodes, "tiny_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 10])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="refinery-examples", producer_version="1")
    model.ir_version = 8
    model.doc_string = ("Tiny CNN with optimisation opportunities: Conv+BatchNormalization, parallel 1x1 "
                        "convs, a cancelling Transpose pair, Mul by one, Add of zero, a Reshape chain, "
                        "MatMuls sharing an input, Gemm head. See examples/README.md.")
    return model


def main(argv):
    outdir = argv[1] if len(argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(outdir, exist_ok=True)
    model = tiny_cnn()
    onnx.checker.check_model(model, full_check=True)
    path = os.path.join(outdir, "tiny_cnn.onnx")
    data = model.SerializeToString()
    with open(path, "wb") as f:
        f.write(data)
    print(f"wrote {path} ({len(data)} bytes, {len(model.graph.node)} nodes)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
