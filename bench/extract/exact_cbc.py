#!/usr/bin/env python3
"""The true optimum of an extraction problem, with no time limit: a diagnostic for what the ILP's bound should reach.

    exact_cbc.py FILE.json [--round-limit S]

FILE is extraction-gym JSON (`bench_extract reduced` writes the ILP's reduced problem, or a sub-problem of it, so).
The model: a binary per candidate, an activity per class (the sum of its candidates), for each class and each class
its candidates need: the candidates that need it sum to at most its activity; the roots active. Acyclicity by cycle
cuts added lazily (solve, find the cycles of the answer, forbid each: the candidates that make its edges sum to at
most its length less one, solve again), so each round's optimum is a lower bound and the first acyclic one is the
optimum. Each round is CBC's command line (`cbc`, Debian's coinor-cbc) with no gap allowed; a round stopped by
--round-limit (CPU seconds, default 600) makes the result a bound, and the script says so. Costs are printed in ms.
"""
import json
import os
import subprocess
import sys
import tempfile


def read(path):
    j = json.load(open(path))
    index, classes = {}, []

    def cls(e):
        if e not in index:
            index[e] = len(classes)
            classes.append([])
        return index[e]

    for node in j['nodes'].values():
        cls(node['eclass'])
    for node in j['nodes'].values():
        kids = [cls(j['nodes'][k]['eclass']) for k in node['children']]
        classes[cls(node['eclass'])].append((node['cost'] * 1e3, kids))
    roots = [index[r] for r in j['root_eclasses']]
    return classes, roots, j.get('fixed_cost', 0.0) * 1e3


def dag_cost(classes, roots, choice):
    seen, stack, total = set(), list(roots), 0.0
    while stack:
        c = stack.pop()
        if c in seen:
            continue
        seen.add(c)
        cost, kids = classes[c][choice[c]]
        total += cost
        stack.extend(kids)
    return total


def cycles(classes, roots, choice):
    """One cycle (a list of classes) per back edge of a depth-first search over the chosen graph."""
    out, colour = [], {}
    for root in roots:
        stack, path = [(root, 0)], []
        while stack:
            c, i = stack.pop()
            if i == 0:
                if colour.get(c) == 2:
                    continue
                colour[c] = 1
                path.append(c)
            kids = classes[c][choice[c]][1]
            if i < len(kids):
                stack.append((c, i + 1))
                k = kids[i]
                if colour.get(k) == 1:
                    out.append(path[path.index(k):])
                elif k not in colour:
                    stack.append((k, 0))
            else:
                colour[c] = 2
                path.pop()
    return out


def write_lp(path, classes, roots, cuts):
    rows = ['Minimize', ' obj: ' + (' + '.join(f'{cost:.12g} x{c}_{i}' for c, row in enumerate(classes)
                                               for i, (cost, _) in enumerate(row) if cost > 0) or '0 a0'),
            'Subject To']
    for c, row in enumerate(classes):
        rows.append(f' e{c}: ' + ' + '.join(f'x{c}_{i}' for i in range(len(row))) + f' - a{c} = 0')
        need = {}
        for i, (_, kids) in enumerate(row):
            for k in set(kids):
                need.setdefault(k, []).append(i)
        for k, idx in need.items():
            rows.append(f' n{c}_{k}: ' + ' + '.join(f'x{c}_{i}' for i in idx) + f' - a{k} <= 0')
    rows += [f' r{r}: a{r} = 1' for r in roots]
    rows += [f' cy{t}: ' + ' + '.join(terms) + f' <= {rhs}' for t, (terms, rhs) in enumerate(cuts)]
    rows.append('Bounds')
    rows += [f' 0 <= a{c} <= 1' for c in range(len(classes))]
    rows.append('Binaries')
    rows += [f' x{c}_{i}' for c, row in enumerate(classes) for i in range(len(row))]
    rows.append('End')
    open(path, 'w').write('\n'.join(rows) + '\n')


def main():
    args = sys.argv[1:]
    limit = 600
    if '--round-limit' in args:
        at = args.index('--round-limit')
        limit = float(args[at + 1])
        del args[at:at + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    classes, roots, fixed = read(args[0])
    cuts, exact = [], True
    with tempfile.TemporaryDirectory() as tmp:
        lp, sol = os.path.join(tmp, 'model.lp'), os.path.join(tmp, 'model.sol')
        for rnd in range(1, 10000):
            write_lp(lp, classes, roots, cuts)
            subprocess.run(['cbc', lp, 'sec', str(limit), 'ratio', '0', 'allow', '0', 'solve', 'solu', sol],
                           capture_output=True, text=True, check=True)
            lines = open(sol).read().splitlines()
            status = lines[0]
            if not status.startswith('Optimal'):
                exact = False
            choice = [None] * len(classes)
            for line in lines[1:]:
                t = line.split()
                if len(t) >= 3 and t[1].startswith('x') and float(t[2]) > 0.5:
                    c, i = map(int, t[1][1:].split('_'))
                    choice[c] = i
            found = cycles(classes, roots, choice)
            cost = dag_cost(classes, roots, choice)
            print(f'round {rnd}: {status}; answer {cost + fixed:.6f} ms, {len(found)} cycles, {len(cuts)} cuts',
                  flush=True)
            if not found:
                break
            for cycle in found:
                terms = [f'x{c}_{i}' for at, c in enumerate(cycle)
                         for i, (_, kids) in enumerate(classes[c]) if cycle[(at + 1) % len(cycle)] in kids]
                cuts.append((terms, len(cycle) - 1))
    what = 'optimum' if exact else 'acyclic answer (a round stopped on its limit: not proved optimal)'
    print(f'{args[0]}: {what} {cost + fixed:.6f} ms after {rnd} rounds, {len(cuts)} cycle cuts')


if __name__ == '__main__':
    main()
