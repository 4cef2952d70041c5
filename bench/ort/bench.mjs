#!/usr/bin/env node
// Latency of original vs optimised ONNX models under onnxruntime-node (CPU).
//
//   node bench/ort/bench.mjs --pairs orig1.onnx:opt1.onnx[,orig2.onnx:opt2.onnx...] [--runs N] [--warmup W]
//   node bench/ort/bench.mjs --models DIR [--runs N] [--warmup W]     (each X.onnx with X.opt.onnx)
//        [--seed S] [--dim name=value ...] [--int-high H] [--threads 1] [--json FILE] [--no-control]
//        [--clock wall|cpu]
//
// Each pair runs single-threaded (intraOpNumThreads 1, interOpNumThreads 1,
// graphOptimizationLevel 'all') on the same generated inputs, with a control
// session (the original loaded a second time), the three in rotating order
// (A B C, B C A, C A B, ...) so that drift hits all alike. Prints a table:
// model, max abs output difference, median latency of each, speedup
// (orig/opt), control (orig/orig again: the noise floor of two sessions of one
// model), and the geometric means. onnxruntime-node comes from tools/ort/node_modules.
// --clock cpu times each run as the process's CPU time instead of wall time
// (on a shared machine the wall time counts the time other processes held
// the core; tools/ort/measure.mjs times so too). Per pair the JSON also has
// `faster_rounds` (rounds, one run of each, in which the optimised model ran
// faster), `rounds`, and `p_value`: a two-sided sign test of "neither is
// faster" over the rounds, so that a difference can be told from the noise
// (bench/cost counts a pair of equivalent graphs only where p < 0.01 and
// the medians differ by over 3%).
// Exit: 0 ok, 2 error.

import fs from 'node:fs';
import path from 'node:path';
import {
  createSession, feedsOf, generateInputs, median, modelIO, num, parseArgs, parseDims, toNumbers, unboundSymbols,
} from '../../tools/ort/ortlib.mjs';

const USAGE = 'usage: bench.mjs (--pairs a.onnx:b.onnx,... | --models DIR) [--runs N] [--warmup W] ' +
  '[--seed S] [--dim name=value ...] [--int-high H] [--threads N] [--json FILE] [--no-control] [--clock wall|cpu]';

function parsePairs(spec) {
  return spec.split(',').filter(Boolean).map((p) => {
    const k = p.indexOf('.onnx:');                       // paths may hold ':' elsewhere
    const cut = k >= 0 ? k + 5 : p.lastIndexOf(':');
    if (cut <= 0) throw new Error(`--pairs: expected orig.onnx:opt.onnx, got ${p}`);
    const a = p.slice(0, cut), b = p.slice(cut + 1);
    return { name: path.basename(a).replace(/\.onnx$/, ''), a, b };
  });
}

function modelsDir(dir) {
  return fs.readdirSync(dir).filter((f) => f.endsWith('.onnx') && !f.endsWith('.opt.onnx')).sort()
    .filter((f) => fs.existsSync(path.join(dir, f.replace(/\.onnx$/, '.opt.onnx'))))
    .map((f) => ({ name: f.replace(/\.onnx$/, ''), a: path.join(dir, f), b: path.join(dir, f.replace(/\.onnx$/, '.opt.onnx')) }));
}

// Milliseconds on each --clock: wall time, or the process's CPU time.
const CLOCKS = {
  wall: () => Number(process.hrtime.bigint()) / 1e6,
  cpu: () => {
    const c = process.cpuUsage();
    return (c.user + c.system) / 1e3;
  },
};

async function timed(session, feeds, clock = 'wall') {
  const now = CLOCKS[clock];
  const t0 = now();
  const out = await session.run(feeds);
  return [now() - t0, out];
}

// Two-sided sign test: the chance of a split at least as uneven as k of n
// when each side is equally likely (ties left out by the caller).
function signTest(k, n) {
  if (n === 0) return 1;
  const tail = Math.min(k, n - k);
  let logC = 0, p = 0;  // log C(n, i), summed for i = 0..tail
  for (let i = 0; i <= tail; i++) {
    if (i > 0) logC += Math.log(n - i + 1) - Math.log(i);
    p += Math.exp(logC - n * Math.LN2);
  }
  return Math.min(1, 2 * p);
}

function maxDiff(outA, outB, namesA, namesB) {
  let m = 0;
  namesA.forEach((n, i) => {
    const a = toNumbers(outA[n]), b = toNumbers(outB[namesB[i]]);
    if (a.length !== b.length) { m = Infinity; return; }
    for (let j = 0; j < a.length; j++) {
      const d = Math.abs(a[j] - b[j]);
      if (d > m || Number.isNaN(d)) m = Number.isNaN(d) ? Infinity : d;
    }
  });
  return m;
}

async function benchPair(pair, opts) {
  const open = async (file) => {
    try {
      const session = await createSession(file, { threads: opts.threads, opt: 'all' });
      return { io: modelIO(session), session };
    } catch (e) {
      throw new Error(`${file}: ${e.message}`);
    }
  };
  const A = await open(pair.a), B = await open(pair.b);
  // The control: a second session of the original, timed in the same
  // rotation. Two sessions of one model differ by their memory placement
  // alone (a few percent on this machine); orig/control is that noise floor.
  const C = opts.control ? await open(pair.a) : null;
  const inputs = generateInputs(A.io, opts.seed, opts.gen);
  const unbound = unboundSymbols(A.io, opts.gen.dims);
  if (unbound.length)
    console.error(`bench: note: ${pair.a}: ${unbound.join(', ')} bound to 1 ` +
      `(give ${unbound.map((s) => `--dim ${s}=N`).join(' ')} to time another size)`);
  const feedsA = feedsOf(inputs);
  const byName = A.session.inputNames.every((n) => B.session.inputNames.includes(n));
  const feedsB = {};
  A.session.inputNames.forEach((n, i) => { feedsB[byName ? n : B.session.inputNames[i]] = feedsA[n]; });
  const outNamesB = A.session.outputNames.every((n) => B.session.outputNames.includes(n))
    ? A.session.outputNames : B.session.outputNames;

  let outA, outB;
  try { outA = await A.session.run(feedsA); } catch (e) { throw new Error(`${pair.a}: ${e.message}`); }
  try { outB = await B.session.run(feedsB); } catch (e) { throw new Error(`${pair.b}: ${e.message}`); }
  const diff = maxDiff(outA, outB, A.session.outputNames, outNamesB);

  for (let w = 0; w < opts.warmup; w++) {
    await A.session.run(feedsA);
    await B.session.run(feedsB);
    if (C) await C.session.run(feedsA);
  }
  const ta = [], tb = [], tc = [];
  // Rotating order (A B C, B C A, C A B, ...) so that drift hits all alike.
  const order = C ? [[0, 1, 2], [1, 2, 0], [2, 0, 1]] : [[0, 1], [1, 0]];
  const sessions = [[A.session, feedsA, ta], [B.session, feedsB, tb], [C?.session, feedsA, tc]];
  for (let r = 0; r < opts.runs; r++)
    for (const k of order[r % order.length]) {
      const [session, feeds, times] = sessions[k];
      times.push((await timed(session, feeds, opts.clock))[0]);
    }
  await A.session.release?.();
  await B.session.release?.();
  await C?.session.release?.();
  const ma = median(ta), mb = median(tb);
  const control = C ? ma / median(tc) : null;
  // Round r ran A and B once each, back to back.
  let faster = 0, rounds = 0;
  for (let r = 0; r < ta.length; r++) {
    if (ta[r] === tb[r]) continue;
    rounds++;
    if (tb[r] < ta[r]) faster++;
  }
  return { model: pair.name, orig: pair.a, opt: pair.b, max_diff: diff, median_ms_orig: ma, median_ms_opt: mb,
    speedup: ma / mb, control, clock: opts.clock, faster_rounds: faster, rounds, p_value: signTest(faster, rounds) };
}

function table(rows, geo) {
  const head = ['model', 'max diff', 'orig ms', 'opt ms', 'speedup', 'control'];
  const body = rows.map((r) => [r.model, r.max_diff.toExponential(2), r.median_ms_orig.toFixed(3),
    r.median_ms_opt.toFixed(3), `${r.speedup.toFixed(3)}x`, r.control === null ? '-' : `${r.control.toFixed(3)}x`]);
  const controls = rows.filter((r) => r.control !== null);
  const geoControl = controls.length
    ? `${Math.exp(controls.reduce((s, r) => s + Math.log(r.control), 0) / controls.length).toFixed(3)}x` : '';
  body.push(['geomean', '', '', '', `${geo.toFixed(3)}x`, geoControl]);
  const w = head.map((h, i) => Math.max(h.length, ...body.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ');
  const out = [line(head), w.map((n) => '-'.repeat(n)).join('  ')];
  body.forEach((r, i) => { if (i === body.length - 1) out.push(w.map((n) => '-'.repeat(n)).join('  ')); out.push(line(r)); });
  return out.join('\n');
}

async function main(argv) {
  const args = parseArgs(argv, { flags: ['help', 'no-control'], repeat: ['dim'] });
  if (args.help) { console.log(USAGE); return 0; }
  let pairs;
  if (args.pairs) pairs = parsePairs(args.pairs);
  else if (args.models) pairs = modelsDir(args.models);
  else throw new Error(USAGE);
  if (!pairs.length) throw new Error('no model pairs to run (for --models DIR: X.onnx with X.opt.onnx)');
  const opts = {
    runs: num(args.runs ?? 20, 'runs'),
    warmup: num(args.warmup ?? 3, 'warmup'),
    seed: num(args.seed ?? 0, 'seed'),
    threads: num(args.threads ?? 1, 'threads'),
    control: !args['no-control'],
    clock: args.clock ?? 'wall',
    gen: { dims: parseDims(args.dim), intHigh: num(args['int-high'] ?? 100, 'int-high'), intLow: 0 },
  };
  if (opts.runs < 1) throw new Error('--runs must be at least 1');
  if (!Object.hasOwn(CLOCKS, opts.clock)) throw new Error(`--clock: expected wall or cpu, got ${opts.clock}`);
  const rows = [];
  for (const p of pairs) rows.push(await benchPair(p, opts));
  const geo = Math.exp(rows.reduce((s, r) => s + Math.log(r.speedup), 0) / rows.length);
  console.log(table(rows, geo));
  if (args.json) {
    fs.writeFileSync(args.json, JSON.stringify({ runs: opts.runs, warmup: opts.warmup, threads: opts.threads, rows, geomean_speedup: geo }, null, 2) + '\n');
  }
  return 0;
}

main(process.argv.slice(2)).then((rc) => process.exit(rc), (e) => {
  console.error(`bench: error: ${e.message}`);
  process.exit(2);
});
