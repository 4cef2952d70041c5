#!/usr/bin/env python3
"""Writes the malformed ONNX models the CLI tests feed to refinery.

Run with Debian's python3 (python3-onnx):  /usr/bin/python3 make_bad_models.py
The outputs are committed; each is a few hundred bytes. None is checked on
purpose: each breaks one rule.
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, graph):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="refinery-tests")
    model.ir_version = 8
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(model.SerializeToString())


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])

# A node reads "fc.weight", declared in value_info but given by no initializer.
save("missing_initializer.onnx", helper.make_graph(
    [helper.make_node("Add", ["x", "fc.weight"], ["y"], name="add_bias")], "g", [x], [y],
    value_info=[helper.make_tensor_value_info("fc.weight", TensorProto.FLOAT, [2, 4])]))

# A node reads a value that nothing defines or declares.
save("dangling_input.onnx", helper.make_graph(
    [helper.make_node("Relu", ["x"], ["r"], name="relu_0"),
     helper.make_node("Mul", ["r", "ghost"], ["y"], name="mul_ghost")], "g", [x], [y]))

# Two nodes that feed each other.
save("cycle.onnx", helper.make_graph(
    [helper.make_node("Add", ["x", "b"], ["a"], name="add_a"),
     helper.make_node("Relu", ["a"], ["b"], name="relu_b"),
     helper.make_node("Identity", ["a"], ["y"], name="out")], "g", [x], [y]))

# Add of f32 and i64.
k = numpy_helper.from_array(np.arange(8, dtype=np.int64).reshape(2, 4), "k")
save("wrong_types.onnx", helper.make_graph(
    [helper.make_node("Add", ["x", "k"], ["y"], name="add_mixed")], "g", [x], [y], initializer=[k]))

# A valid model cut short, and bytes that are no model at all.
w = numpy_helper.from_array(np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4), "w")
good = helper.make_model(helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g", [x], [y], initializer=[w]),
    opset_imports=[helper.make_opsetid("", 17)])
data = good.SerializeToString()
with open(os.path.join(HERE, "truncated.onnx"), "wb") as f:
    f.write(data[: len(data) // 2])
with open(os.path.join(HERE, "garbage.onnx"), "wb") as f:
    f.write(bytes((i * 97 + 13) % 251 for i in range(300)))
