#!/usr/bin/env node
// Runs two ONNX models on the same generated inputs and compares their outputs.
//
//   node tools/ort/compare.mjs A.onnx B.onnx [--seed N] [--samples K] [--exact | --rtol R --atol A]
//        [--threads 1] [--opt disable|basic|extended|all] [--dim name=value ...]
//        [--int-high H] [--int-low L] [--json]
//
// Inputs are generated for A (as run.mjs does, samples use seeds N, N+1, ...) and
// given to B matched by name, else by position. Outputs are matched the same way.
// Per output it prints the largest absolute and relative difference over all samples.
// Tolerance: |a - b| <= atol + rtol * |b| elementwise (NaN equals NaN), defaults
// rtol 1e-4, atol 1e-5; --exact asks for bit-identical outputs.
// ORT's graph optimisations are off by default (--opt disable) so that what is
// compared is the models, not what ORT made of them.
// Exit: 0 within tolerance, 1 not, 2 error (the message names the file).

import {
  createSession, feedsOf, generateInputs, num, parseArgs, parseDims, modelIO, tensorBytes, toNumbers,
} from './ortlib.mjs';

const USAGE = 'usage: compare.mjs A.onnx B.onnx [--seed N] [--samples K] [--exact | --rtol R --atol A] ' +
  '[--threads N] [--opt disable|basic|extended|all] [--dim name=value ...] [--int-high H] [--int-low L] [--json]';

class FileError extends Error {
  constructor(file, msg) { super(`${file}: ${msg}`); }
}

function match(namesA, namesB, what, fileB) {
  if (namesA.every((n) => namesB.includes(n))) return namesA.map((n) => n);
  if (namesA.length !== namesB.length) {
    throw new FileError(fileB, `${what} do not match: A has [${namesA}], B has [${namesB}]`);
  }
  return namesB.slice();                                 // by position
}

function sameShape(a, b) {
  return a.length === b.length && a.every((d, i) => d === b[i]);
}

async function main(argv) {
  const args = parseArgs(argv, { flags: ['help', 'exact', 'json'], repeat: ['dim'] });
  if (args.help) { console.log(USAGE); return 0; }
  if (args._.length !== 2) throw new Error(USAGE);
  const [fileA, fileB] = args._;
  const seed = num(args.seed ?? 0, 'seed');
  const samples = num(args.samples ?? 1, 'samples');
  const rtol = num(args.rtol ?? 1e-4, 'rtol');
  const atol = num(args.atol ?? 1e-5, 'atol');
  const exact = !!args.exact;
  const genOpts = {
    dims: parseDims(args.dim),
    intLow: num(args['int-low'] ?? 0, 'int-low'),
    intHigh: num(args['int-high'] ?? 100, 'int-high'),
  };
  const sessOpts = { threads: num(args.threads ?? 1, 'threads'), opt: args.opt ?? 'disable' };

  const open = async (file) => {
    try {
      const session = await createSession(file, sessOpts);
      return { io: modelIO(session), session };
    } catch (e) {
      throw new FileError(file, e.message);
    }
  };
  const A = await open(fileA);
  const B = await open(fileB);
  const inNamesB = match(A.session.inputNames, B.session.inputNames, 'inputs', fileB);
  const outNamesB = match(A.session.outputNames, B.session.outputNames, 'outputs', fileB);

  const stats = A.session.outputNames.map((name, i) => ({
    name, nameB: outNamesB[i], maxAbs: 0, maxRel: 0, identical: true, ok: true, mismatches: 0, n: 0, note: '',
  }));

  for (let s = 0; s < samples; s++) {
    const inputs = generateInputs(A.io, seed + s, genOpts);
    const feedsA = feedsOf(inputs);
    const feedsB = {};
    A.session.inputNames.forEach((n, i) => { feedsB[inNamesB[i]] = feedsA[n]; });
    let outA, outB;
    try { outA = await A.session.run(feedsA); } catch (e) { throw new FileError(fileA, e.message); }
    try { outB = await B.session.run(feedsB); } catch (e) { throw new FileError(fileB, e.message); }
    for (const st of stats) {
      const ta = outA[st.name], tb = outB[st.nameB];
      if (ta.type !== tb.type || !sameShape(ta.dims, tb.dims)) {
        st.ok = false; st.identical = false; st.maxAbs = Infinity; st.maxRel = Infinity;
        st.note = `type/shape differ: ${ta.type}[${ta.dims}] vs ${tb.type}[${tb.dims}]`;
        continue;
      }
      if (!tensorBytes(ta).equals(tensorBytes(tb))) st.identical = false;
      const va = toNumbers(ta), vb = toNumbers(tb);
      st.n += va.length;
      for (let i = 0; i < va.length; i++) {
        const a = va[i], b = vb[i];
        if (Number.isNaN(a) || Number.isNaN(b)) {
          if (Number.isNaN(a) !== Number.isNaN(b)) { st.ok = false; st.mismatches++; st.maxAbs = Infinity; st.maxRel = Infinity; }
          continue;
        }
        if (a === b) continue;                           // also equal infinities
        const d = Math.abs(a - b);
        const rel = d / Math.max(Math.abs(b), Number.MIN_VALUE);
        if (d > st.maxAbs || Number.isNaN(d)) st.maxAbs = Number.isNaN(d) ? Infinity : d;
        if (rel > st.maxRel || Number.isNaN(rel)) st.maxRel = Number.isNaN(rel) ? Infinity : rel;
        if (!(d <= atol + rtol * Math.abs(b))) { st.ok = false; st.mismatches++; }
      }
    }
  }

  let pass = true;
  for (const st of stats) {
    const ok = exact ? st.identical : st.ok;
    pass &&= ok;
    if (args.json) {
      console.log(JSON.stringify({
        output: st.name, output_b: st.nameB, max_abs: st.maxAbs, max_rel: st.maxRel,
        identical: st.identical, mismatches: st.mismatches, elements: st.n, ok, note: st.note || undefined,
      }));
    } else {
      console.log(`${st.name}${st.nameB !== st.name ? ` (B: ${st.nameB})` : ''}: max_abs ${st.maxAbs.toExponential(3)}` +
        ` max_rel ${st.maxRel.toExponential(3)}${st.identical ? ' identical' : ''}` +
        `${st.mismatches ? ` mismatches ${st.mismatches}/${st.n}` : ''}${st.note ? ` (${st.note})` : ''}` +
        ` ${ok ? 'OK' : 'FAIL'}`);
    }
  }
  const mode = exact ? 'exact' : `rtol ${rtol} atol ${atol}`;
  console.log(`compare: ${pass ? 'PASS' : 'FAIL'} (${mode}, ${samples} sample${samples === 1 ? '' : 's'}, seed ${seed})`);
  return pass ? 0 : 1;
}

main(process.argv.slice(2)).then((rc) => process.exit(rc), (e) => {
  console.error(`compare: error: ${e.message}`);
  process.exit(2);
});
