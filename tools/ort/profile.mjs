#!/usr/bin/env node
// Where ONNX Runtime spends a model's time: the kernels of its optimized graph
// (after its fusions), each timed in context by ORT's own profiler.
//
//   node tools/ort/profile.mjs MODEL.onnx [--runs 20] [--warmup 3] [--threads 1]
//        [--opt all|extended|basic|disable] [--dim name=value ...] [--json] [--optimized OUT.onnx]
//
// Runs the model warmup + runs times on generated inputs (as run.mjs) with
// enableProfiling, reads ORT's trace, and prints per kernel of the optimized
// graph (in the order ORT ran them): its node name, op (FusedConv, Gemm,
// LayerNormalization, ReorderInput, ...), the median over the timed runs of
// its kernel time in microseconds, its share of the sum, and its input and
// output shapes. The footer gives the sum of the kernels' medians, the median
// of the whole runs (model_run) and the count by op. --json prints one JSON
// object a kernel and a last {"total": ...} line instead. --optimized also
// writes ORT's optimized graph (with NCHWc kernels it runs on this machine
// type only). Times are wall time: read them on a quiet machine; the footer
// (and the JSON's cpu_per_wall) gives the process's CPU time over its wall
// time during the timed runs, under 1 where other processes held the core.
// Exit: 0 ok, 2 error.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSession, feedsOf, generateInputs, median, modelIO, num, parseArgs, parseDims } from './ortlib.mjs';

const USAGE = 'usage: profile.mjs MODEL.onnx [--runs N] [--warmup W] [--threads T] [--opt LEVEL] ' +
  '[--dim name=value ...] [--json] [--optimized OUT.onnx]';

const shapeText = (list) => (list ?? []).map((o) => {
  const [type, dims] = Object.entries(o)[0] ?? ['?', []];
  return `${type}[${dims.join(',')}]`;
}).join(' ');

async function main(argv) {
  const args = parseArgs(argv, { flags: ['help', 'json'], repeat: ['dim'] });
  if (args.help) { console.log(USAGE); return 0; }
  if (args._.length !== 1) throw new Error(USAGE);
  const model = args._[0];
  const runs = num(args.runs ?? 20, 'runs');
  const warmup = num(args.warmup ?? 3, 'warmup');
  if (runs < 1 || warmup < 0) throw new Error('--runs must be at least 1 and --warmup at least 0');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-profile-'));
  const extra = { enableProfiling: true, profileFilePrefix: path.join(dir, 'trace') };
  // ORT warns that an optimized graph with NCHWc kernels is for this machine
  // only; the usage says so, and the warning would interleave with --json.
  if (args.optimized) Object.assign(extra, { optimizedModelFilePath: path.resolve(args.optimized), logSeverityLevel: 3 });
  let session;
  try {
    session = await createSession(model, { threads: num(args.threads ?? 1, 'threads'), opt: args.opt ?? 'all', extra });
  } catch (e) {
    throw new Error(`${model}: ${e.message}`);
  }
  const inputs = generateInputs(modelIO(session), 0, { dims: parseDims(args.dim), intLow: 0, intHigh: 1 });
  const feeds = feedsOf(inputs);
  // Each run's process CPU time and wall time: the profiler's kernel times
  // are wall time, which on a shared machine counts the time other
  // processes held the core; cpu_per_wall (the medians' ratio over the timed
  // runs) converts them to CPU time as measure.mjs times the whole run.
  const cpu = [], wall = [];
  for (let i = 0; i < warmup + runs; i++) {
    const c0 = process.cpuUsage();
    const t0 = process.hrtime.bigint();
    try {
      await session.run(feeds);
    } catch (e) {
      throw new Error(`${model}: ${e.message}`);
    }
    if (i < warmup) continue;
    wall.push(Number(process.hrtime.bigint() - t0) / 1e3);
    const c = process.cpuUsage(c0);
    cpu.push(c.user + c.system);
  }
  const cpuPerWall = Math.min(1, median(cpu) / median(wall));
  session.endProfiling();
  await session.release?.();
  const traces = fs.readdirSync(dir).filter((f) => f.endsWith('.json'));
  if (traces.length !== 1) throw new Error(`${model}: expected one ORT trace in ${dir}, found ${traces.length}`);
  const events = JSON.parse(fs.readFileSync(path.join(dir, traces[0]), 'utf8'));
  fs.rmSync(dir, { recursive: true, force: true });

  // The model_run events delimit the runs; the timed ones are those after the warm-up.
  const modelRuns = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').sort((a, b) => a.ts - b.ts);
  if (modelRuns.length !== warmup + runs) {
    throw new Error(`${model}: ORT's trace has ${modelRuns.length} runs, expected ${warmup + runs}`);
  }
  const timed = modelRuns.slice(warmup);
  const inTimed = (e) => timed.some((r) => e.ts >= r.ts && e.ts <= r.ts + r.dur);
  const kernels = new Map();  // node name -> {name, op, times, inputs, outputs, first}
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time') || !inTimed(e)) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    let k = kernels.get(name);
    if (!k) {
      k = { name, op: e.args?.op_name ?? '?', times: [], inputs: shapeText(e.args?.input_type_shape),
        outputs: shapeText(e.args?.output_type_shape), first: e.ts };
      kernels.set(name, k);
    }
    k.times.push(e.dur);
  }
  const rows = [...kernels.values()].sort((a, b) => a.first - b.first)
    .map((k) => ({ name: k.name, op: k.op, us: median(k.times), runs: k.times.length, inputs: k.inputs, outputs: k.outputs }));
  const sum = rows.reduce((s, r) => s + r.us, 0);
  const runUs = median(timed.map((r) => r.dur));
  const byOp = {};
  for (const r of rows) {
    byOp[r.op] ??= { count: 0, us: 0 };
    byOp[r.op].count++;
    byOp[r.op].us += r.us;
  }
  if (args.json) {
    for (const r of rows) console.log(JSON.stringify(r));
    const total = { kernels: rows.length, kernel_us: sum, run_us: runUs, runs, cpu_per_wall: cpuPerWall, by_op: byOp };
    console.log(JSON.stringify({ total }));
    return 0;
  }
  const w = Math.min(48, Math.max(4, ...rows.map((r) => r.name.length)));
  console.log(`${'kernel'.padEnd(w)}  ${'op'.padEnd(26)} ${'us'.padStart(9)} ${'share'.padStart(6)}  inputs -> outputs`);
  for (const r of rows) {
    console.log(`${r.name.slice(0, w).padEnd(w)}  ${r.op.padEnd(26)} ${r.us.toFixed(1).padStart(9)} ${(100 * r.us / sum).toFixed(1).padStart(5)}%  ${r.inputs} -> ${r.outputs}`);
  }
  console.log(`\n${rows.length} kernels, sum of medians ${(sum / 1000).toFixed(3)} ms; whole run median ${(runUs / 1000).toFixed(3)} ms (${runs} runs after ${warmup} warm-up)` +
    `; the process had the core ${(100 * cpuPerWall).toFixed(0)}% of its wall time`);
  for (const [op, v] of Object.entries(byOp).sort((a, b) => b[1].us - a[1].us)) {
    console.log(`  ${op.padEnd(26)} ${String(v.count).padStart(4)} kernels ${(v.us / 1000).toFixed(3).padStart(9)} ms`);
  }
  return 0;
}

// exitCode, not exit(): exit() drops what a full pipe has not taken yet
// (measure.mjs read densenet121's 54 KB of --json cut at 43 KB under load,
// its profile without the total, and left the model out).
main(process.argv.slice(2)).then((rc) => { process.exitCode = rc; }, (e) => {
  console.error(`profile: error: ${e.message}`);
  process.exitCode = 2;
});
