#!/usr/bin/env python3
# A measurement aid (docs/measurements.md, session 21), not part of the optimizer: which labels and operand
# orders ONNX Runtime runs alike. Writes one-op micro-models to OUT and prints bench.mjs's --pairs argument:
#   python3 bench/cost/label_pairs.py OUT > pairs.txt   # needs the onnx and numpy packages
#   node bench/ort/bench.mjs --pairs "$(cat pairs.txt)" --clock cpu --runs 400 --json r400.json
# Cases: A x, y [1,128,256] both variable; B x [1,128,256] and a constant c [256]; C x [1,64,56,56] and a
# constant scalar; D x [1,32,12,12] and a constant of its shape. Each label against Add (and Div against Mul),
# each commutative op with its operands swapped, and Einsums against the MatMuls they are (E).
import os, sys
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)


def model(name, op, inputs, consts, out_shape, order=None, **attrs):
    ins = [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs]
    inits = [nh.from_array((rng.random(s, dtype=np.float32) + 0.5).astype(np.float32), n) for n, s in consts]
    order = order or [n for n, _ in inputs] + [n for n, _ in consts]
    g = h.make_graph([h.make_node(op, order, ['y'], **attrs)], name, ins,
                     [h.make_tensor_value_info('y', T.FLOAT, out_shape)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    path = os.path.abspath(os.path.join(out, name + '.onnx'))
    onnx.save(m, path)
    return path


pairs = []
cases = {'A': ([1, 128, 256], None), 'B': ([1, 128, 256], [256]), 'C': ([1, 64, 56, 56], []),
         'D': ([1, 32, 12, 12], [1, 32, 12, 12])}
for case, (xs, cs) in cases.items():
    f = {}
    for op in ['Add', 'Sub', 'Mul', 'Div', 'Max', 'Min', 'Pow']:
        if cs is None:
            f[op, 'xc'] = model(f'{case}_{op}_xy', op, [('x', xs), ('z', xs)], [], xs)
            continue
        f[op, 'xc'] = model(f'{case}_{op}_xc', op, [('x', xs)], [('c', cs)], xs)
        f[op, 'cx'] = model(f'{case}_{op}_cx', op, [('x', xs)], [('c', cs)], xs, order=['c', 'x'])
    pairs += [(f['Add', 'xc'], f[op, 'xc']) for op in ['Sub', 'Mul', 'Div', 'Max', 'Min', 'Pow']]
    if cs is not None:
        pairs += [(f[op, 'xc'], f[op, 'cx']) for op in ['Add', 'Mul', 'Max', 'Min']]
        pairs += [(f['Add', 'xc'], f['Sub', 'cx']), (f['Mul', 'xc'], f['Div', 'xc'])]
for name, (a, b, eq, const) in {'bmm': ([8, 128, 64], [8, 64, 128], 'bij,bjk->bik', False),
                                 'proj': ([1, 128, 256], [256, 256], 'bsh,hd->bsd', True),
                                 'heads': ([1, 4, 128, 128], [1, 4, 128, 64], 'bhqk,bhkd->bhqd', False)}.items():
    y = a[:-1] + b[-1:]
    ins, consts = ([('a', a)], [('b', b)]) if const else ([('a', a), ('b', b)], [])
    pairs.append((model(f'E_matmul_{name}', 'MatMul', ins, consts, y),
                  model(f'E_einsum_{name}', 'Einsum', ins, consts, y, equation=eq)))
print(','.join(f'{a}:{b}' for a, b in pairs))
