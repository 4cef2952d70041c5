#!/usr/bin/env node
// Times the micro-models (and whole models) that `refinery measure` lists,
// for the learned CPU cost model (docs/targets.md, "The learned CPU model").
//
//   node tools/ort/measure.mjs MANIFEST.jsonl DATASET.jsonl [--warmup 2] [--runs 15] [--min-ms 30] [--max-runs 200]
//        [--profile-runs 10] [--gc-every 0]
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
// Entries already in DATASET (by id) are skipped: resumable. The run
// overhead (a session run of a one-element Add, `overhead` entry of the
// manifest, kind 'overhead') is re-timed every 25 entries and before each
// whole model; overhead_ms is the latest. The 'dispatch' entry (a chain of
// one-element Adds: the cost of one kernel inside a run) is timed in rounds
// alternating with the overhead, and overhead_ms is theirs. A whole model is timed with at
// least 15 runs and 30 ms. A progress line goes to stderr. Exit: 0 ok, 2 error.
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
  '[--profile-runs P] [--gc-every N]';
const PROFILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'profile.mjs');

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
  for (let i = 0; i < opts.warmup; i++) await run();
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
  await session.release?.();
  const m = median(cpu);
  return {
    median_ms: m, mad_ms: median(cpu.map((t) => Math.abs(t - m))), wall_ms: median(wall), runs: cpu.length,
    faults: median(faults),
  };
}

async function main(argv) {
  const args = parseArgs(argv, { flags: ['help'] });
  if (args.help) { console.log(USAGE); return 0; }
  if (args._.length !== 2) throw new Error(USAGE);
  const [manifestFile, datasetFile] = args._;
  const opts = {
    warmup: num(args.warmup ?? 2, 'warmup'), runs: num(args.runs ?? 15, 'runs'),
    minMs: num(args['min-ms'] ?? 30, 'min-ms'), maxRuns: num(args['max-runs'] ?? 200, 'max-runs'),
    profileRuns: num(args['profile-runs'] ?? 10, 'profile-runs'), gcEvery: num(args['gc-every'] ?? 0, 'gc-every'),
  };
  if (opts.gcEvery > 0) {
    v8.setFlagsFromString('--expose-gc');
    opts.collect = vm.runInNewContext('gc');
  }
  const optimizedDir = path.join(path.dirname(path.resolve(datasetFile)), 'optimized');
  const manifest = readJsonl(manifestFile);
  const overheadEntry = manifest.find((e) => e.kind === 'overhead');
  if (!overheadEntry) throw new Error(`${manifestFile}: no entry of kind 'overhead'`);
  const done = new Set(readJsonl(datasetFile).map((e) => e.id));
  const todo = manifest.filter((e) => e.kind !== 'overhead' && !done.has(e.id));
  const out = fs.openSync(datasetFile, 'a');
  let overhead = null;
  const t0 = Date.now();
  let lastLine = -Infinity;
  for (let i = 0; i < todo.length; i++) {
    const e = todo[i];
    // A whole model's run less the overhead is what its nodes' in-context
    // times share (refinery measure): both are timed at the same moment, the
    // model with at least the defaults' runs, since on a loaded machine a
    // median of a few runs of a 0.1 ms model, less an overhead timed minutes
    // earlier, can be near 0 (seen: 0.02 to 0.08 ms for one model).
    const whole = e.kind === 'model';
    if (overhead === null || i % 25 === 0 || whole) overhead = (await time(overheadEntry.file, { ...opts, minMs: 10 })).median_ms;
    let rec;
    try {
      const o = whole ? { ...opts, runs: Math.max(opts.runs, 15), minMs: Math.max(opts.minMs, 30) } : opts;
      if (e.kind === 'dispatch') {
        // A difference of two short runs (kDispatchChain Adds less one): the
        // two timed alternately, 7 rounds, each the median of its rounds.
        const chain = [], alone = [];
        for (let r = 0; r < 7; r++) {
          alone.push((await time(overheadEntry.file, { ...opts, minMs: 10 })).median_ms);
          chain.push((await time(e.file, { ...opts, minMs: 10 })).median_ms);
        }
        const m = median(chain);
        rec = { ...e, median_ms: m, mad_ms: median(chain.map((t) => Math.abs(t - m))), overhead_ms: median(alone),
          load: os.loadavg()[0] };
      } else {
        rec = { ...e, ...(await time(e.file, o)), overhead_ms: overhead, load: os.loadavg()[0] };
      }
      if (e.kind === 'model' && opts.profileRuns > 0) {
        const name = e.id.replace(/[^A-Za-z0-9_.-]/g, '_');
        Object.assign(rec, profile(e.file, opts.profileRuns, path.join(optimizedDir, `${name}.onnx`)));
      }
    } catch (err) {
      rec = { ...e, error: err.message.split('\n')[0] };
    }
    fs.writeSync(out, JSON.stringify(rec) + '\n');
    const s = (Date.now() - t0) / 1000;
    const eta = (s / (i + 1)) * (todo.length - i - 1);
    if (!process.stderr.isTTY && s - lastLine < 10 && i + 1 < todo.length) continue;
    lastLine = s;
    process.stderr.write(`measure: ${done.size + i + 1}/${manifest.length} timed, ${s.toFixed(0)} s, ` +
      `about ${eta.toFixed(0)} s left${process.stderr.isTTY ? '\r' : '\n'}`);
  }
  fs.closeSync(out);
  if (process.stderr.isTTY && todo.length) process.stderr.write('\n');
  return 0;
}

main(process.argv.slice(2)).then((rc) => process.exit(rc), (e) => {
  console.error(`measure: error: ${e.message}`);
  process.exit(2);
});
