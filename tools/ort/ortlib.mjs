// Shared helpers for run.mjs, compare.mjs and bench/ort/bench.mjs.
//
// - loadOrt(): onnxruntime-node, resolved from tools/ort/node_modules whoever imports us.
// - modelIO(session): graph inputs/outputs (name, dtype, dims) from the session's
//   inputMetadata/outputMetadata, initializers excluded.
// - a small deterministic PRNG and input generation, raw tensor files, stats.

import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
let ortModule = null;

export function loadOrt() {
  if (ortModule) return ortModule;
  try {
    ortModule = require('onnxruntime-node');
  } catch (e) {
    const dir = path.dirname(new URL(import.meta.url).pathname);
    throw new Error(`cannot load onnxruntime-node (${e.message.split('\n')[0]}); ` +
      `run: (cd ${dir} && npm install --ignore-scripts)`);
  }
  return ortModule;
}

// ---------------------------------------------------------------------------
// Element types
// ---------------------------------------------------------------------------

export const ELEM_BYTES = {
  float32: 4, float64: 8, float16: 2, bfloat16: 2, int8: 1, uint8: 1, int16: 2, uint16: 2,
  int32: 4, uint32: 4, int64: 8, uint64: 8, bool: 1,
};

const TYPED = {
  float32: Float32Array, float64: Float64Array, float16: Uint16Array, int8: Int8Array,
  uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array, int32: Int32Array,
  uint32: Uint32Array, int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

// ---------------------------------------------------------------------------
// Model inputs and outputs
// ---------------------------------------------------------------------------

// Returns {inputs: [{name, dtype, dims}], outputs: [...]} of a session, in
// graph order, initializers excluded; dims hold numbers, strings (symbolic)
// or null (unknown). dtype is ORT's tensor type name ('unknown' for a
// non-tensor value).
export function modelIO(session) {
  const io = (list) => list.map((m) => ({
    name: m.name,
    dtype: m.isTensor ? m.type : 'unknown',
    dims: m.isTensor ? m.shape.map((d) => (d === '' ? null : d)) : [],
  }));
  return { inputs: io(session.inputMetadata), outputs: io(session.outputMetadata) };
}

// ---------------------------------------------------------------------------
// PRNG and inputs
// ---------------------------------------------------------------------------

// mulberry32: tiny, fast, deterministic; next() returns a float in [0, 1).
export function makePrng(seed) {
  let a = (seed >>> 0) ^ 0x9e3779b9;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// IEEE float32 -> float16 bits, round to nearest even.
const f32 = new Float32Array(1), u32 = new Uint32Array(f32.buffer);
export function toHalf(x) {
  f32[0] = x;
  const b = u32[0];
  const sign = (b >>> 16) & 0x8000;
  let exp = (b >>> 23) & 0xff, mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  exp = exp - 127 + 15;
  if (exp >= 0x1f) return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - exp;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1), half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1))) h++;
    return sign | h;
  }
  let h = (exp << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1))) h++;
  return sign | h;
}

export function fromHalf(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >>> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 0x1f) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

// The symbolic dims of a model's inputs that dimOverrides does not name, each
// once: concreteDims binds them to 1, which a timing should say out loud
// (a transformer's `seq` at 1 times almost nothing but the overhead).
export function unboundSymbols(io, dimOverrides = {}) {
  const names = io.inputs.flatMap((inp) => inp.dims.filter((d) => typeof d === 'string' && !(d in dimOverrides)));
  return [...new Set(names)];
}

// Concrete dims: symbolic or unknown dims -> dimOverrides[name] ?? 1.
export function concreteDims(dims, dimOverrides = {}) {
  return dims.map((d) => (typeof d === 'number' ? d : (d !== null && d in dimOverrides ? dimOverrides[d] : 1)));
}

// One input tensor data from seed: floats uniform in [-1, 1), ints in [intLow, intHigh), bools 50/50.
export function generateData(dtype, dims, seed, { intLow = 0, intHigh = 100 } = {}) {
  const n = dims.reduce((a, b) => a * b, 1);
  const rnd = makePrng(seed);
  const T = TYPED[dtype];
  if (!T) throw new Error(`cannot generate inputs of type ${dtype}`);
  const data = new T(n);
  const span = intHigh - intLow;
  for (let i = 0; i < n; i++) {
    const u = rnd();
    switch (dtype) {
      case 'float32': case 'float64': data[i] = u * 2 - 1; break;
      case 'float16': data[i] = toHalf(u * 2 - 1); break;
      case 'bool': data[i] = u < 0.5 ? 1 : 0; break;
      case 'int64': case 'uint64': data[i] = BigInt(intLow + Math.floor(u * span)); break;
      default: data[i] = intLow + Math.floor(u * span);
    }
  }
  return data;
}

// Seed of input number `index` for run seed `seed`, shared by run.mjs and compare.mjs.
export function inputSeed(seed, index) {
  return (Math.imul(seed >>> 0, 1000003) + index * 7919 + 1) >>> 0;
}

export function makeTensor(dtype, data, dims) {
  const ort = loadOrt();
  return new ort.Tensor(dtype, dtype === 'bool' ? Uint8Array.from(data) : data, dims);
}

// Generated feeds for a model: [{name, dtype, dims, tensor}] in graph input order.
export function generateInputs(io, seed, opts = {}) {
  return io.inputs.map((inp, i) => {
    const dims = concreteDims(inp.dims, opts.dims);
    const data = generateData(inp.dtype, dims, inputSeed(seed, i), opts);
    return { name: inp.name, dtype: inp.dtype, dims, tensor: makeTensor(inp.dtype, data, dims) };
  });
}

// ---------------------------------------------------------------------------
// Raw tensor files: <index>.bin (little-endian) + <index>.json {name, dtype, dims}
// ---------------------------------------------------------------------------

export function tensorBytes(tensor) {
  const d = tensor.data;
  if (tensor.type === 'bool') return Buffer.from(Uint8Array.from(d, (v) => (v ? 1 : 0)));
  return Buffer.from(d.buffer, d.byteOffset, d.byteLength);
}

export function readInputsDir(dir) {
  const files = fs.readdirSync(dir).filter((f) => /^\d+\.json$/.test(f))
    .sort((a, b) => parseInt(a) - parseInt(b));
  if (!files.length) throw new Error(`${dir}: no <index>.json/<index>.bin files`);
  return files.map((f) => {
    const meta = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8'));
    const bin = fs.readFileSync(path.join(dir, f.replace(/\.json$/, '.bin')));
    const T = TYPED[meta.dtype];
    if (!T) throw new Error(`${dir}/${f}: unsupported dtype ${meta.dtype}`);
    const n = meta.dims.reduce((a, b) => a * b, 1);
    if (bin.length !== n * ELEM_BYTES[meta.dtype]) {
      throw new Error(`${dir}/${f}: ${bin.length} bytes, expected ${n * ELEM_BYTES[meta.dtype]}`);
    }
    const copy = new Uint8Array(bin);                    // aligned copy
    const data = new T(copy.buffer, 0, n);
    return { name: meta.name, dtype: meta.dtype, dims: meta.dims, tensor: makeTensor(meta.dtype, data, meta.dims) };
  });
}

export function writeTensor(dir, index, name, tensor) {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, `${index}.bin`), tensorBytes(tensor));
  fs.writeFileSync(path.join(dir, `${index}.json`),
    JSON.stringify({ name, dtype: tensor.type, dims: Array.from(tensor.dims) }) + '\n');
}

// Values as JS numbers (float16 decoded, int64 converted, bool 0/1).
export function toNumbers(tensor) {
  const d = tensor.data;
  if (tensor.type === 'float16') return Float64Array.from(d, fromHalf);
  if (tensor.type === 'int64' || tensor.type === 'uint64') return Float64Array.from(d, Number);
  if (tensor.type === 'bool') return Float64Array.from(d, (v) => (v ? 1 : 0));
  if (tensor.type === 'string') throw new Error('string tensors are not supported');
  return d;
}

export function summarize(name, tensor) {
  const bytes = tensorBytes(tensor);
  const v = toNumbers(tensor);
  let min = Infinity, max = -Infinity, sum = 0;
  for (let i = 0; i < v.length; i++) {
    const x = v[i];
    if (x < min) min = x;
    if (x > max) max = x;
    sum += x;
  }
  return {
    name, dtype: tensor.type, dims: Array.from(tensor.dims),
    sha256: createHash('sha256').update(bytes).digest('hex'),
    min: v.length ? min : null, max: v.length ? max : null, mean: v.length ? sum / v.length : null,
  };
}

// ---------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------

const OPT_LEVELS = { all: 'all', extended: 'extended', basic: 'basic', disable: 'disabled', disabled: 'disabled' };

// `extra` adds onnxruntime-common SessionOptions (enableProfiling, profileFilePrefix, optimizedModelFilePath).
export async function createSession(file, { threads = 1, opt = 'all', extra = {} } = {}) {
  const ort = loadOrt();
  const level = OPT_LEVELS[opt];
  if (!level) throw new Error(`--opt must be one of ${Object.keys(OPT_LEVELS).join(', ')}`);
  return ort.InferenceSession.create(file, {
    intraOpNumThreads: threads, interOpNumThreads: 1, graphOptimizationLevel: level,
    executionMode: 'sequential', executionProviders: ['cpu'], ...extra,
  });
}

export function feedsOf(inputs) {
  const feeds = {};
  for (const i of inputs) feeds[i.name] = i.tensor;
  return feeds;
}

// The median of a list of numbers (the mean of the middle two of an even count).
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// ---------------------------------------------------------------------------
// Command line
// ---------------------------------------------------------------------------

// Parses argv into {_: [positionals], name: value}; repeated options (like --dim) collect into arrays.
export function parseArgs(argv, { flags = [], repeat = [] } = {}) {
  const out = { _: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) { out._.push(a); continue; }
    let key = a.slice(2), val;
    const eq = key.indexOf('=');
    if (eq >= 0) { val = key.slice(eq + 1); key = key.slice(0, eq); }
    if (flags.includes(key)) { out[key] = true; continue; }
    if (val === undefined) {
      if (i + 1 >= argv.length) throw new Error(`option --${key} needs a value`);
      val = argv[++i];
    }
    if (repeat.includes(key)) (out[key] ??= []).push(val);
    else out[key] = val;
  }
  return out;
}

export function parseDims(list = []) {
  const dims = {};
  for (const s of list) {
    const m = /^([^=]+)=(\d+)$/.exec(s);
    if (!m) throw new Error(`--dim expects name=value, got ${s}`);
    dims[m[1]] = parseInt(m[2], 10);
  }
  return dims;
}

export function num(v, name) {
  const x = Number(v);
  if (!Number.isFinite(x)) throw new Error(`--${name} expects a number, got ${v}`);
  return x;
}
