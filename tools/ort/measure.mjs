#!/usr/bin/env node
// Times the micro-models (and whole models) that `refinery measure` lists,
// for the learned CPU cost model (docs/targets.md, "The learned CPU model").
//
//   node tools/ort/measure.mjs MANIFEST.jsonl DATASET.jsonl [--warmup 2] [--runs 15] [--min-ms 30] [--max-runs 200]
//        [--profile-runs 10] [--gc-every 0] [--blocks 3] [--window-ms 400] [--jit-warmup-ms 300]
//        [--passes 2]
//
// MANIFEST has one JSON object a line with at least {id, file}; each is timed
// in onnxruntime-node (CPU, intraOpNumThreads 1, interOpNumThreads 1,
// graphOptimizationLevel 'all') on generated inputs (floats in [-1, 1),
// integers 0, so any index is in range), outputs written into preallocated
// tensors (no copy out): `warmup` runs, then at least `runs` and until
// `min-ms` of timing, at most `max-runs`. Appends to DATASET the manifest
// object plus {median_ms, mad_ms, wall_ms, runs, faults, overhead_ms, load}
// (or {error}): median_ms and mad_ms (the median absolute deviation) are of
// the process's CPU time per run, wall_ms the median wall time, faults the
// median of the runs' minor page faults, load the 1-min load average. CPU
// time, because a shared machine's wall time counts the time other
// processes held the core (docs/targets.md).
// Entries already in DATASET (by id) are skipped: resumable. Micro-models are timed 25 at a time, the 25
// --passes (2) times over with the run overhead (a session run of a one-element Add, `overhead` entry of the
// manifest, kind 'overhead') timed at each pass's start: a record is its fastest pass, overhead_ms the
// smallest overhead (timeChunk). The 'dispatch' entry (a chain of one-element Adds: the cost of one kernel
// inside a run) and an overhead beside it are timed as a whole model is. A whole model is timed with at
// least 15 runs and 30 ms, in a process of its own (this script again, with --one FILE): there, the
// JavaScript of session.run is compiled for this model's feeds alone, as in an application that runs one
// model, after a warm-up of at least --jit-warmup-ms (300) or 2,000 runs; in the measuring process, after
// thousands of micro-models of other types and shapes, a 0.03-0.15 ms model ran 1.3-2.5x its own time, one
// model one time and another the next (docs/measurements.md, session 27). Its runs are split in blocks, at
// least --blocks (3), each that share of the runs and time, more until --window-ms (400) have passed, and
// median_ms is the smallest block median (blocks: their count, slowest_block_ms the largest): this VM has
// slow spells of 0.1-0.2 s at 1.3-1.7x, which only add time. Its overhead_ms is the overhead model's, timed
// the same way in a process of its own. A progress line goes to stderr. Exit: 0 ok, 2 error.
// A whole model (kind 'model') is also profiled in context by
// tools/ort/profile.mjs (--profile-runs runs, default 10; 0: not profiled):
// its record gets profile: [[kernel name, median us], ...] for the kernels
// of ORT's optimized graph (wall time), profile_run_us, profile_cpu_per_wall
// (the profiled runs' CPU time over their wall time: the factor that makes
// the kernels' wall times CPU time, as median_ms is), and optimized: the optimized
// graph written beside DATASET (optimized/<id>.onnx), from which `refinery
// measure` finds each kernel's nodes (targets/kernels.h, in_context_times).
// --gc-every N (0, off, by default) collects the garbage outside the timed
// runs before every Nth run: each run's tensors and promises are garbage,
// and the pages they free are touched afresh later at about 11 us a fault
// on this VM (docs/measurements.md, sessions 22 and 23).

import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import { createSession, feedsOf, generateInputs, loadOrt, median, modelIO, num, parseArgs } from './ortlib.mjs';

const USAGE = 'usage: measure.mjs MANIFEST.jsonl DATASET.jsonl [--warmup W] [--runs N] [--min-ms T] [--max-runs M] ' +
  '[--profile-runs P] [--gc-every N] [--blocks B] [--window-ms T] [--jit-warmup-ms T] [--passes P]';
const SELF = fileURLToPath(import.meta.url);
const PROFILE = path.join(path.dirname(SELF), 'profile.mjs');

// ORT's optimized graph of a whole model and its kernels timed in context (profile.mjs).
function profile(file, runs, optimized) {
  fs.mkdirSync(path.dirname(optimized), { recursive: true });
  const out = execFileSync(process.execPath, [PROFILE, file, '--json', '--runs', String(runs), '--optimized', optimized],
    { encoding: 'utf8', maxBuffer: 1 << 28 });
  const rows = out.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
  const total = rows.pop()?.total;
  if (!total) throw new Error(`${file}: profile.mjs printed no total`);
  return {
    profile: rows.map((r) => [r.name, r.us]), profile_run_us: total.run_us, profile_cpu_per_wall: total.cpu_per_wall,
    optimized,
  };
}

function readJsonl(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l, i) => {
    try { return JSON.parse(l); } catch (e) { throw new Error(`${file}:${i + 1}: ${e.message}`); }
  });
}

async function time(file, opts) {
  const ort = loadOrt();
  const session = await createSession(file, { threads: 1, opt: 'all' });
  const io = modelIO(session);
  const feeds = feedsOf(generateInputs(io, 0, { dims: {}, intLow: 0, intHigh: 1 }));
  // Preallocated outputs: ONNX Runtime writes into them, nothing is copied out.
  const fetches = {};
  for (const o of io.outputs) {
    if (o.dims.some((d) => typeof d !== 'number')) { fetches[o.name] = null; continue; }
    const n = o.dims.reduce((a, b) => a * b, 1);
    const T = { float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
      bool: Uint8Array, uint8: Uint8Array, int8: Int8Array, float16: Uint16Array }[o.dtype];
    fetches[o.name] = T ? new ort.Tensor(o.dtype, new T(n), o.dims) : null;
  }
  // CPU time of the process (all its threads; ONNX Runtime runs on one) and
  // wall time: on a shared machine the wall time counts the time others
  // held the core, the CPU time does not.
  // And the minor page faults of each run: on this VM a session can run for
  // seconds touching memory afresh, about 11 us a fault (a 0.03 ms GEMM at
  // 0.13 ms with 8 a run; docs/measurements.md, session 22).
  const run = async () => {
    const f0 = process.resourceUsage().minorPageFault;
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    await session.run(feeds, fetches);
    const wall = Number(process.hrtime.bigint() - t0) / 1e6;
    const c = process.cpuUsage(c0);
    return [(c.user + c.system) / 1e3, wall, process.resourceUsage().minorPageFault - f0];
  };
  const warm0 = Date.now();
  for (let i = 0; i < opts.warmup || (i < 2000 && Date.now() - warm0 < (opts.jitWarmupMs ?? 0)); i++) await run();
  const blocks = [];
  const window0 = Date.now();
  for (let b = 0; b < (opts.blocks ?? 1) || Date.now() - window0 < (opts.windowMs ?? 0); b++) {
    const cpu = [], wall = [], faults = [];
    let total = 0;
    while (cpu.length < opts.maxRuns && (cpu.length < opts.runs || total < opts.minMs)) {
      if (opts.collect && cpu.length % opts.gcEvery === 0) opts.collect();
      const [c, w, f] = await run();
      cpu.push(c);
      wall.push(w);
      faults.push(f);
      total += w;
    }
    const m = median(cpu);
    blocks.push({
      median_ms: m, mad_ms: median(cpu.map((t) => Math.abs(t - m))), wall_ms: median(wall), runs: cpu.length,
      faults: median(faults),
    });
  }
  await session.release?.();
  const best = blocks.reduce((a, b) => (b.median_ms < a.median_ms ? b : a));
  if (blocks.length === 1) return best;
  return { ...best, blocks: blocks.length, slowest_block_ms: Math.max(...blocks.map((b) => b.median_ms)) };
}

// A model timed in a process of its own (main's --one): its blocks each a share of the runs and time.
function timeApart(file, opts) {
  const b = opts.blocks;
  const args = [SELF, '--one', file, '--warmup', opts.warmup, '--runs', Math.max(5, Math.ceil(opts.runs / b)),
    '--min-ms', opts.minMs / b, '--max-runs', Math.ceil(opts.maxRuns / b), '--blocks', b,
    '--window-ms', opts.windowMs, '--jit-warmup-ms', opts.jitWarmupMs, '--gc-every', opts.gcEvery];
  return JSON.parse(execFileSync(process.execPath, args.map(String), { encoding: 'utf8' }));
}

// The VM's longer slow spells (seconds, the overhead model as slow, 1.3-1.5x; session 27): a pass or a whole
// model whose overhead comes out above 1.3x the least overhead timed so far is taken again after a second,
// at most 3 more times, the fastest kept.
const spell = { least: Infinity };
const inSpell = (overhead) => {
  spell.least = Math.min(spell.least, overhead);
  return overhead > 1.3 * spell.least;
};
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Micro-models a chunk at a time, the chunk timed --passes times over (2), the overhead at the start of
// each pass: a micro-model's record is its fastest pass, less the smallest overhead. A pass of 25 takes about
// 0.5 s, longer than the VM's short slow spells (0.1-0.2 s at 1.3-1.7x), so one pass in a spell is not the
// record; while every pass's overhead says a longer spell, another pass.
async function timeChunk(chunk, overheadFile, opts) {
  const best = chunk.map(() => null), overheads = [];
  for (let p = 0; p < opts.passes + 3; p++) {
    if (p >= opts.passes) {
      if (!inSpell(Math.min(...overheads))) break;
      await pause(1000);
    }
    overheads.push((await time(overheadFile, { ...opts, minMs: 10 })).median_ms);
    for (let k = 0; k < chunk.length; k++) {
      if (best[k]?.error) continue;
      try {
        const t = await time(chunk[k].file, opts);
        if (!best[k] || t.median_ms < best[k].median_ms) best[k] = t;
      } catch (err) {
        best[k] = { error: err.message.split('\n')[0] };
      }
    }
  }
  const overhead = Math.min(...overheads);
  return chunk.map((e, k) => (best[k].error ? { ...e, ...best[k] }
    : { ...e, ...best[k], overhead_ms: overhead, passes: overheads.length, load: os.loadavg()[0] }));
}

// A whole model (or the dispatch chain) and the overhead beside it, each in a process of its own (timeApart);
// again after a second while the overhead says a slow spell, the fastest kept.
async function timeWhole(file, overheadFile, opts) {
  let best = null;
  for (let attempt = 0; attempt < 4; attempt++) {
    if (attempt > 0) await pause(1000);
    const t = timeApart(file, opts), overhead = timeApart(overheadFile, { ...opts, minMs: 10 }).median_ms;
    if (!best || t.median_ms < best.median_ms) best = { ...t, overhead_ms: overhead, attempts: attempt + 1 };
    if (!inSpell(overhead)) break;
  }
  return best;
}

async function main(argv) {
  const args = parseArgs(argv, { flags: ['help'] });
  if (args.help) { console.log(USAGE); return 0; }
  const opts = {
    warmup: num(args.warmup ?? 2, 'warmup'), runs: num(args.runs ?? 15, 'runs'),
    minMs: num(args['min-ms'] ?? 30, 'min-ms'), maxRuns: num(args['max-runs'] ?? 200, 'max-runs'),
    profileRuns: num(args['profile-runs'] ?? 10, 'profile-runs'), gcEvery: num(args['gc-every'] ?? 0, 'gc-every'),
    blocks: num(args.blocks ?? 3, 'blocks'), windowMs: num(args['window-ms'] ?? 400, 'window-ms'),
    jitWarmupMs: num(args['jit-warmup-ms'] ?? 300, 'jit-warmup-ms'), passes: num(args.passes ?? 2, 'passes'),
  };
  if (opts.blocks < 1 || opts.passes < 1) throw new Error('--blocks and --passes must be at least 1');
  if (opts.gcEvery > 0) {
    v8.setFlagsFromString('--expose-gc');
    opts.collect = vm.runInNewContext('gc');
  }
  if (args.one !== undefined) {  // one whole model, in this process of its own (timeApart)
    console.log(JSON.stringify(await time(args.one, opts)));
    return 0;
  }
  if (args._.length !== 2) throw new Error(USAGE);
  const [manifestFile, datasetFile] = args._;
  // Micro-models and the overhead: in this process, one block, no JIT warm-up of their own.
  const here = { ...opts, blocks: 1, windowMs: 0, jitWarmupMs: 0 };
  const optimizedDir = path.join(path.dirname(path.resolve(datasetFile)), 'optimized');
  const manifest = readJsonl(manifestFile);
  const overheadEntry = manifest.find((e) => e.kind === 'overhead');
  if (!overheadEntry) throw new Error(`${manifestFile}: no entry of kind 'overhead'`);
  const done = new Set(readJsonl(datasetFile).map((e) => e.id));
  const todo = manifest.filter((e) => e.kind !== 'overhead' && !done.has(e.id));
  const out = fs.openSync(datasetFile, 'a');
  const t0 = Date.now();
  let lastLine = -Infinity, written = 0;
  const write = (rec) => {
    fs.writeSync(out, JSON.stringify(rec) + '\n');
    written++;
    const s = (Date.now() - t0) / 1000;
    const eta = (s / written) * (todo.length - written);
    if (!process.stderr.isTTY && s - lastLine < 10 && written < todo.length) return;
    lastLine = s;
    process.stderr.write(`measure: ${done.size + written}/${manifest.length} timed, ${s.toFixed(0)} s, ` +
      `about ${eta.toFixed(0)} s left${process.stderr.isTTY ? '\r' : '\n'}`);
  };
  for (let i = 0; i < todo.length;) {
    if (todo[i].kind === 'kernel') {
      const chunk = [];
      while (i < todo.length && todo[i].kind === 'kernel' && chunk.length < 25) chunk.push(todo[i++]);
      for (const rec of await timeChunk(chunk, overheadEntry.file, here)) write(rec);
      continue;
    }
    const e = todo[i++];
    let rec;
    try {
      if (e.kind === 'dispatch') {
        // A difference of two short runs (kDispatchChain Adds less one), each
        // timed as a whole model is, in a process of its own: in this process
        // (7 rounds alternating, each the median of its rounds) one dataset's
        // rounds all fell in a slow spell, 0.72 us a kernel against 0.19-0.28
        // in seven others (session 27).
        rec = { ...e, ...(await timeWhole(e.file, overheadEntry.file, { ...opts, minMs: 10 })),
          load: os.loadavg()[0] };
      } else {
        // A whole model's run less the overhead is what its nodes' in-context
        // times share (refinery measure): both are timed at the same moment,
        // each in a process of its own (timeApart), the model with at least the
        // defaults' runs, since on a loaded machine a median of a few runs of a
        // 0.1 ms model, less an overhead timed minutes earlier, can be near 0
        // (seen: 0.02 to 0.08 ms for one model).
        const o = { ...opts, runs: Math.max(opts.runs, 15), minMs: Math.max(opts.minMs, 30) };
        rec = { ...e, ...(await timeWhole(e.file, overheadEntry.file, o)), load: os.loadavg()[0] };
        if (opts.profileRuns > 0) {
          const name = e.id.replace(/[^A-Za-z0-9_.-]/g, '_');
          Object.assign(rec, profile(e.file, opts.profileRuns, path.join(optimizedDir, `${name}.onnx`)));
        }
      }
    } catch (err) {
      rec = { ...e, error: err.message.split('\n')[0] };
    }
    write(rec);
  }
  fs.closeSync(out);
  if (process.stderr.isTTY && todo.length) process.stderr.write('\n');
  return 0;
}

main(process.argv.slice(2)).then((rc) => process.exit(rc), (e) => {
  console.error(`measure: error: ${e.message}`);
  process.exit(2);
});
