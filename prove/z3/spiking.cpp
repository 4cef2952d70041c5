// Symbolic semantics of the NIR primitives (ir/ops/spiking.cpp), the
// equations of docs/spiking.md. The stateless ones are ordinary entries; the
// stateful neurons are one time step, reading their state before the step
// from SymDomain::step and writing it after (prove/induction.h): without a
// step they have no semantics. A delay's length in steps is a rounding of
// delay / dt: the prover fixes it per case (SpikingStep::delay_steps), and
// the step assumes that the delay rounds to it.
#include <fmt/format.h>

#include "ir/spiking.h"
#include "prove/z3/semantics.h"

namespace refinery::prove::semantics {
namespace {

// Operand `name` of the node, broadcast to population element `idx`.
const z3::expr& param(Ctx& c, std::string_view name, const Shape& idx) {
  return bcast(c.x(*ir::operand_index(c.n.op, name)), idx);
}

Result affine(Ctx& c) {
  const SymTensor &x = c.x(0), &w = c.x(1);
  int64_t rows = w.shape[0], cols = w.shape[1];
  std::vector<z3::expr> e;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<z3::expr> terms;
    if (c.n.op == ir::Op::Affine) terms.push_back(c.x(2).elems[static_cast<size_t>(r)]);
    for (int64_t k = 0; k < cols; ++k)
      terms.push_back(c.d.mul(w.elems[static_cast<size_t>(r * cols + k)], x.elems[static_cast<size_t>(k)]));
    e.push_back(sum_of(c.d, terms));
  }
  return one(make(c.out[0], std::move(e)));
}

Result scale(Ctx& c) { return map_nary(c, [&](const z3::expr& a, const z3::expr& b) { return c.d.mul(b, a); }); }

Result threshold(Ctx& c) {
  return map_nary(c, [&](const z3::expr& x, const z3::expr& t) { return z3::ite(t < x, c.d.num(1), c.d.num(0)); });
}

// Convolution and pooling over [C, L...]: each output sums its window (taps
// outside the input skipped), in the order of docs/spiking.md.
Result window(Ctx& c) {
  const SymTensor& x = c.x(0);
  bool conv = c.n.op == ir::Op::NirConv1d || c.n.op == ir::Op::NirConv2d;
  ir::OpAttrs a = c.attrs();
  size_t spatial = x.shape.size() - 1;
  std::vector<int64_t> strides = a.get_ints("strides"), pads = a.get_ints("pads");
  std::vector<int64_t> dil = conv ? a.get_ints("dilations") : std::vector<int64_t>(spatial, 1);
  std::vector<int64_t> kernel = conv ? Shape(c.x(1).shape.begin() + 2, c.x(1).shape.end()) : a.get_ints("kernel_shape");
  int64_t group = conv ? a.get_int("group") : x.shape[0];
  int64_t cin_per_group = conv ? c.x(1).shape[1] : 1;
  const Shape& out = c.out[0];
  int64_t cout_per_group = out[0] / group;
  std::vector<z3::expr> e;
  for (int64_t o = 0; o < numel(out); ++o) {
    Shape oi = unravel(o, out);
    int64_t co = oi[0], g = co / cout_per_group;
    std::vector<z3::expr> terms;
    if (conv && c.has(2)) terms.push_back(c.x(2).elems[static_cast<size_t>(co)]);
    for (int64_t ci = 0; ci < cin_per_group; ++ci)
      for (int64_t k = 0; k < numel(kernel); ++k) {
        Shape ki = unravel(k, kernel), xi{g * cin_per_group + ci};
        bool inside = true;
        for (size_t s = 0; s < spatial; ++s) {
          int64_t at = oi[s + 1] * strides[s] - pads[s] + ki[s] * dil[s];
          inside = inside && at >= 0 && at < x.shape[s + 1];
          xi.push_back(at);
        }
        if (!inside) continue;
        const z3::expr& xv = x.elems[static_cast<size_t>(ravel(xi, x.shape))];
        if (!conv) {
          terms.push_back(xv);
          continue;
        }
        Shape wi{co, ci};
        wi.insert(wi.end(), ki.begin(), ki.end());
        terms.push_back(c.d.mul(c.x(1).elems[static_cast<size_t>(ravel(wi, c.x(1).shape))], xv));
      }
    z3::expr acc = sum_of(c.d, terms);
    if (c.n.op == ir::Op::AvgPool2d) acc = c.d.div(acc, c.d.num(static_cast<double>(numel(kernel))), false);
    e.push_back(acc);
  }
  return one(make(out, std::move(e)));
}

// One step of a neuron population (docs/spiking.md, "Stateful ops").
Result neuron(Ctx& c) {
  SpikingStep* st = c.d.step;
  if (st == nullptr) return fail_sem(c, "a stateful op: its rules are proved by induction over time");
  auto it = st->before.find(c.n.name);
  if (it == st->before.end()) return fail_sem(c, fmt::format("no state for '{}'", c.n.name));
  using ir::Op;
  Op op = c.n.op;
  bool cuba = op == Op::CubaLI || op == Op::CubaLIF;
  bool fires = op == Op::IF || op == Op::LIF || op == Op::CubaLIF;
  SymDomain& d = c.d;
  const Shape& s = c.out[0];
  std::vector<z3::expr> out, v_after, i_after;
  // euler: k = dt / tau; exact: a = exp(-dt / tau) (uninterpreted: a proof holds for every value of it)
  auto factor = [&](const z3::expr& tau) {
    z3::expr q = d.div(st->dt, tau);
    return st->exact ? d.fn("exp", -q) : q;
  };
  auto leak = [&](const z3::expr& v, const z3::expr& tau, const z3::expr& vl, const z3::expr& drive) {
    z3::expr k = factor(tau);
    return st->exact ? d.add(d.mul(k, v), d.mul(d.num(1) - k, d.add(vl, drive)))
                     : d.add(v, d.mul(k, d.add(d.sub(vl, v), drive)));
  };
  for (int64_t e = 0; e < numel(s); ++e) {
    Shape idx = unravel(e, s);
    const z3::expr& x = bcast(c.x(0), idx);
    z3::expr v = it->second[0].elems[static_cast<size_t>(e)];
    switch (op) {
      case Op::Integrator:
      case Op::IF: v = d.add(v, d.mul(st->dt, d.mul(param(c, "r", idx), x))); break;
      case Op::LI:
      case Op::LIF:
        v = leak(v, param(c, "tau", idx), param(c, "v_leak", idx), d.mul(param(c, "r", idx), x));
        break;
      default: {
        z3::expr i = it->second[1].elems[static_cast<size_t>(e)];
        z3::expr in = d.mul(param(c, "w_in", idx), x);
        z3::expr k = factor(param(c, "tau_syn", idx));
        i = st->exact ? d.add(d.mul(k, i), d.mul(d.num(1) - k, in)) : d.add(i, d.mul(k, d.sub(in, i)));
        i_after.push_back(i);
        v = leak(v, param(c, "tau_mem", idx), param(c, "v_leak", idx), d.mul(param(c, "r", idx), i));
      }
    }
    if (!fires) {
      out.push_back(v);
      v_after.push_back(v);
      continue;
    }
    const z3::expr& th = param(c, "v_threshold", idx);
    z3::expr spike = th < v;
    out.push_back(z3::ite(spike, d.num(1), d.num(0)));
    v_after.push_back(z3::ite(spike, st->subtract ? d.sub(v, th) : param(c, "v_reset", idx), v));
  }
  if (fires) {
    std::vector<z3::expr> th;
    for (int64_t e = 0; e < numel(s); ++e) th.push_back(param(c, "v_threshold", unravel(e, s)));
    st->thresholds[c.n.name] = make(s, std::move(th));
  }
  std::vector<SymTensor> after{make(s, v_after)};
  if (cuba) after.push_back(make(s, i_after));
  st->after[c.n.name] = std::move(after);
  return one(make(s, std::move(out)));
}

// A delay of k steps (docs/spiking.md): k registers holding the input of
// the last k steps, newest first; the output is the oldest (the input
// itself when k = 0). The case's fact: the delay rounds to k, llround(d / dt)
// with halves away from zero; a negative length fails the run (undefined).
// One length for the population: the case assumes that the first element
// rounds to k, and the prover must show that the others do
// (SpikingStep::same_length), as the rule's conditions may say (zero ?d).
Result delay(Ctx& c) {
  SpikingStep* st = c.d.step;
  if (st == nullptr) return fail_sem(c, "a stateful op: its rules are proved over time");
  auto k_it = st->delay_steps.find(c.n.name);
  auto regs = st->before.find(c.n.name);
  if (k_it == st->delay_steps.end() || regs == st->before.end())
    return fail_sem(c, fmt::format("no length or state for the delay '{}'", c.n.name));
  const SymTensor& len = c.x(1);
  SymDomain& d = c.d;
  const int64_t k = k_it->second;
  const auto half = [&](double v) { return d.num(v) * st->dt; };
  const auto rounds_to_k = [&](const z3::expr& length) {
    return k == 0 ? half(-0.5) < length && length < half(0.5)
                  : half(static_cast<double>(k) - 0.5) <= length && length < half(static_cast<double>(k) + 0.5);
  };
  for (size_t e = 0; e < len.elems.size(); ++e) {
    (e == 0 ? d.facts : st->same_length).push_back(rounds_to_k(len.elems[e]));
    d.defined.push_back(half(-0.5) < len.elems[e]);
  }
  const std::vector<SymTensor>& before = regs->second;
  if (static_cast<int64_t>(before.size()) != k) return fail_sem(c, "delay state of the wrong length");
  std::vector<SymTensor> after;
  if (k > 0) {
    after.push_back(c.x(0));
    after.insert(after.end(), before.begin(), before.end() - 1);
  }
  st->after[c.n.name] = std::move(after);
  return one(k == 0 ? c.x(0) : before.back());
}

}  // namespace

void fill_spiking(Table& t) {
  using ir::Op;
  define(t, Op::Affine, affine);
  define(t, Op::Linear, affine);
  define(t, Op::Scale, scale);
  define(t, Op::Threshold, threshold);
  define(t, Op::NirFlatten, same_elems);
  define(t, Op::NirConv1d, window);
  define(t, Op::NirConv2d, window);
  define(t, Op::SumPool2d, window);
  define(t, Op::AvgPool2d, window);
  define(t, Op::Delay, delay);
  for (Op op : {Op::Integrator, Op::IF, Op::LI, Op::LIF, Op::CubaLI, Op::CubaLIF}) define(t, op, neuron);
}

}  // namespace refinery::prove::semantics
