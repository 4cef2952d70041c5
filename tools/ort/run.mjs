#!/usr/bin/env node
// Runs an ONNX model with onnxruntime-node (CPU) and summarises its outputs.
//
//   node tools/ort/run.mjs MODEL.onnx [--inputs DIR] [--seed N] [--out DIR] [--threads 1]
//        [--opt all|extended|basic|disable] [--dim name=value ...] [--int-high H] [--int-low L]
//        [--save-inputs DIR]
//
// Inputs come from DIR (<index>.bin raw little-endian + <index>.json {name, dtype, dims})
// or are generated from --seed (default 0): floats uniform in [-1, 1), ints in
// [int-low, int-high) (default [0, 100)), bools 50/50. Symbolic dims are 1 unless --dim.
// Prints one JSON line per output: {name, dtype, dims, sha256, min, max, mean};
// with --out, writes the outputs in the same raw format (<index>.bin/.json).
// Exit: 0 ok, 2 error.

import {
  createSession, feedsOf, generateInputs, num, parseArgs, parseDims, readInputsDir, modelIO,
  summarize, writeTensor,
} from './ortlib.mjs';

const USAGE = 'usage: run.mjs MODEL.onnx [--inputs DIR] [--seed N] [--out DIR] [--threads N] ' +
  '[--opt all|extended|basic|disable] [--dim name=value ...] [--int-high H] [--int-low L] [--save-inputs DIR]';

async function main(argv) {
  const args = parseArgs(argv, { flags: ['help'], repeat: ['dim'] });
  if (args.help) { console.log(USAGE); return 0; }
  if (args._.length !== 1) throw new Error(USAGE);
  const model = args._[0];
  const seed = num(args.seed ?? 0, 'seed');
  const opts = {
    dims: parseDims(args.dim),
    intLow: num(args['int-low'] ?? 0, 'int-low'),
    intHigh: num(args['int-high'] ?? 100, 'int-high'),
  };
  let io, session;
  try {
    session = await createSession(model, { threads: num(args.threads ?? 1, 'threads'), opt: args.opt ?? 'all' });
    io = modelIO(session);
  } catch (e) {
    throw new Error(`${model}: ${e.message}`);
  }
  const inputs = args.inputs ? readInputsDir(args.inputs) : generateInputs(io, seed, opts);
  if (args['save-inputs']) inputs.forEach((x, i) => writeTensor(args['save-inputs'], i, x.name, x.tensor));
  let results;
  try {
    results = await session.run(feedsOf(inputs));
  } catch (e) {
    throw new Error(`${model}: ${e.message}`);
  }
  session.outputNames.forEach((name, i) => {
    const t = results[name];
    if (args.out) writeTensor(args.out, i, name, t);
    console.log(JSON.stringify(summarize(name, t)));
  });
  return 0;
}

main(process.argv.slice(2)).then((rc) => process.exit(rc), (e) => {
  console.error(`run: error: ${e.message}`);
  process.exit(2);
});
