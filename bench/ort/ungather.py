#!/usr/bin/env python3
# A measurement aid (docs/measurements.md, session 18), not part of the optimizer:
#   refinery convert OUT.onnx m.ir && python3 bench/ort/ungather.py m.ir hand.ir && refinery convert hand.ir hand.onnx
# Hand-made ceiling: each channel Gather feeding only 1x1 convolutions is folded into their
# weights (zero columns at the unselected channels), so the convolutions read the full tensor.
import re, struct, sys
src, dst = sys.argv[1], sys.argv[2]
lines = open(src).read().split('\n')
blob = bytearray(open(src + '.bin', 'rb').read())
const = {}
NAME = r'(%"[^"]*"|%[^,\s)]+)'
cre = re.compile(r'^  (%\S+) = const (blob<(\d+)>|dense<\[(.*)\]>) : tensor<(.*)>$')
for l in lines:
    m = cre.match(l)
    if m:
        name, _, off, dense, ty = m.groups()
        parts = ty.split('x'); dt = parts[-1]; dims = [int(p) for p in parts[:-1]]
        n = 1
        for d in dims: n *= d
        if off is not None:
            o = int(off)
            vals = list(struct.unpack_from('<%d%s' % (n, 'q' if dt == 'i64' else 'f'), blob, o))
        else:
            vals = [float(v) if dt == 'f32' else int(v) for v in dense.split(', ')]
        const[name] = (dims, dt, vals)
gre = re.compile(r'^  ' + NAME + r' = gather\(' + NAME + ', ' + NAME + r'\) \{axis = 1\} : tensor<(.*)>$')
new_lines = list(lines); extra = []; removed = 0
for i, l in enumerate(lines):
    m = gre.match(l)
    if not m: continue
    g, s, idx, ty = m.groups()
    users = [j for j, u in enumerate(lines) if j != i and re.search(re.escape(g) + r'[,)]', u)]
    conv1x1 = r'^  \S+ = conv\(' + re.escape(g) + ', ' + NAME + '(, ' + NAME + r')?\) \{kernel_shape = \[1, 1\]\}'
    ok = all(re.match(conv1x1, lines[j]) for j in users)
    # the source's channel count, from its definition
    sdef = [u for u in lines if u.startswith('  ' + s + ' = ')]
    if not ok or not sdef: continue
    cs = int(re.search(r': tensor<1x(\d+)x', sdef[0]).group(1))
    sel = const[idx][2]
    for j in users:
        w = re.match(r'^  \S+ = conv\(' + re.escape(g) + ', ' + NAME, lines[j]).group(1)
        dims, dt, vals = const[w]
        k, c = dims[0], dims[1]
        full = [0.0] * (k * cs)
        for o in range(k):
            for jj in range(c):
                full[o * cs + sel[jj]] = vals[o * c + jj]
        off = len(blob); blob += struct.pack('<%df' % len(full), *full)
        wn = w[:-1] + '_full"' if w.endswith('"') else w + '_full'
        extra.append('  %s = const blob<%d> : tensor<%dx%dx1x1xf32>' % (wn, off, k, cs))
        new_lines[j] = new_lines[j].replace('conv(' + g + ', ' + w, 'conv(' + s + ', ' + wn, 1)
    new_lines[i] = None; removed += 1
out = [l for l in new_lines if l is not None]
hdr = [k for k, l in enumerate(out) if l.startswith('graph')][0]
out = out[:hdr + 1] + extra + out[hdr + 1:]
open(dst, 'w').write('\n'.join(out)); open(dst + '.bin', 'wb').write(blob)
print('gathers removed:', removed)
