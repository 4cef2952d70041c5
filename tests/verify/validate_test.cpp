// Validation of a refined graph against the original: equal graphs pass,
// a changed value fails and is named, and custom (opaque) ops, which have no
// kernel, are stood in for: the same results in both runs, their inputs
// compared. An f32 difference past the tolerance is told apart from a change
// of meaning by running both graphs again in f64 (the rounding check).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "ir/text.h"
#include "verify/validate.h"

namespace refinery::verify {
namespace {

ir::Graph parse(const std::string& text) {
  auto g = ir::parse_graph(text);
  EXPECT_TRUE(g.has_value()) << g.error().str();
  return std::move(*g);
}

const char* kOriginal = R"(graph @main(%x: tensor<4xf32>) {
  %a = neg(%x) : tensor<4xf32>
  %b = neg(%a) : tensor<4xf32>
  %c = "com.example::Mystery"(%b) {k = 3} : tensor<4xf32>
  %d = relu(%c) : tensor<4xf32>
  return %d
})";

TEST(Validate, AGraphAgreesWithItself) {
  ir::Graph g = parse(R"(graph @main(%x: tensor<4xf32>) {
  %a = neg(%x) : tensor<4xf32>
  return %a
})");
  auto r = validate(g, g);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_TRUE(r->passed);
  EXPECT_EQ(r->samples, 3);
  EXPECT_EQ(r->max_abs_error, 0);
  EXPECT_EQ(r->verdict, "exact");
}

TEST(Validate, AChangedValueFailsAndIsNamed) {
  ir::Graph a = parse(R"(graph @main(%x: tensor<4xf32>) {
  %y = neg(%x) : tensor<4xf32>
  %z = relu(%y) : tensor<4xf32>
  return %z
})");
  ir::Graph b = parse(R"(graph @main(%x: tensor<4xf32>) {
  %y = abs(%x) : tensor<4xf32>
  %z = relu(%y) : tensor<4xf32>
  return %z
})");
  auto r = validate(a, b);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_FALSE(r->passed);
  EXPECT_NE(r->first_divergence.find("value 'y'"), std::string::npos) << r->first_divergence;
  EXPECT_EQ(r->verdict, "refuted");
}

// Each output's own errors, over every sample: the one that changed is named
// out of tolerance, the one that did not is exact.
TEST(Validate, ErrorsArePerOutput) {
  ir::Graph a = parse(R"(graph @main(%x: tensor<4xf32>) {
  %y = neg(%x) : tensor<4xf32>
  %z = relu(%x) : tensor<4xf32>
  return %y, %z
})");
  ir::Graph b = parse(R"(graph @main(%x: tensor<4xf32>) {
  %y = neg(%x) : tensor<4xf32>
  %z = abs(%x) : tensor<4xf32>
  return %y, %z
})");
  auto r = validate(a, b);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  ASSERT_EQ(r->outputs.size(), 2u);
  EXPECT_EQ(r->outputs[0].name, "y");
  EXPECT_EQ(r->outputs[0].max_abs_error, 0);
  EXPECT_TRUE(r->outputs[0].within_tolerance);
  EXPECT_EQ(r->outputs[1].name, "z");
  EXPECT_EQ(r->outputs[1].max_abs_error, r->max_abs_error);
  EXPECT_GT(r->outputs[1].max_abs_error, 0);
  EXPECT_FALSE(r->outputs[1].within_tolerance);
  EXPECT_EQ(r->worst_output, "z");
}

// The validation's classes are the rule verifier's (docs/rules.md): a
// refined graph that makes a NaN where the original had a number
// (x * 0 / 0 for x, the wrong way round) is refuted on special values.
TEST(Validate, ANaNProducedIsASpecialValueRefutation) {
  ir::Graph a = parse(R"(graph @main(%x: tensor<4xf32>) {
  %y = neg(%x) : tensor<4xf32>
  return %y
})");
  ir::Graph b = parse(R"(graph @main(%x: tensor<4xf32>) {
  %z = const dense<[0.0]> : tensor<1xf32>
  %m = mul(%x, %z) : tensor<4xf32>
  %d = div(%m, %z) : tensor<4xf32>
  %y = sub(%d, %x) : tensor<4xf32>
  return %y
})");
  auto r = validate(a, b);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_FALSE(r->passed);
  EXPECT_EQ(r->verdict, "refuted (special values)");
}

TEST(Validate, OpaqueOpsAreStoodInForAndTheirInputsCompared) {
  ir::Graph original = parse(kOriginal);
  // neg(neg(x)) is x: the custom op gets the same input.
  ir::Graph good = parse(R"(graph @main(%x: tensor<4xf32>) {
  %c = "com.example::Mystery"(%x) {k = 3} : tensor<4xf32>
  %d = relu(%c) : tensor<4xf32>
  return %d
})");
  auto ok = validate(original, good);
  ASSERT_TRUE(ok.has_value()) << ok.error().str();
  EXPECT_TRUE(ok->passed) << ok->first_divergence;
  EXPECT_EQ(ok->max_abs_error, 0);

  // Feeding it -x instead: the outputs would agree (the stand-in does not
  // look at its input), the comparison of its inputs does not.
  ir::Graph bad = parse(R"(graph @main(%x: tensor<4xf32>) {
  %a = neg(%x) : tensor<4xf32>
  %c = "com.example::Mystery"(%a) {k = 3} : tensor<4xf32>
  %d = relu(%c) : tensor<4xf32>
  return %d
})");
  auto r = validate(original, bad);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_FALSE(r->passed);
  EXPECT_NE(r->first_divergence.find("input 0 of opaque node 'c'"), std::string::npos) << r->first_divergence;
}

TEST(Validate, AnOpaqueResultOfUnknownShapeCannotBeStoodIn) {
  ir::Graph g = parse(R"(graph @main(%x: tensor<4xf32>) {
  %c = "com.example::Mystery"(%x) : tensor<*xf32>
  return %c
})");
  auto r = validate(g, g);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().str().find("opaque node 'c': result 0 has no known shape"), std::string::npos) << r.error().str();
}

// (x + 1e4) - 1e4 is x in the reals; in f32 it loses x's low bits (the ulp of
// 1e4 is 2^-10), so it differs from x by up to ~5e-4, past atol 1e-4.
const char* kRoundTrip = R"(graph @main(%x: tensor<64xf32>) {
  %c = const dense<[10000.0]> : tensor<1xf32>
  %a = add(%x, %c) : tensor<64xf32>
  %y = sub(%a, %c) : tensor<64xf32>
  return %y
})";
const char* kIdentity = R"(graph @main(%x: tensor<64xf32>) {
  %c = const dense<[1.0]> : tensor<1xf32>
  %y = mul(%x, %c) : tensor<64xf32>
  return %y
})";

TEST(RoundingCheck, AMoreAccurateRefinementPassesAsRounding) {
  ir::Graph original = parse(kRoundTrip), refined = parse(kIdentity);
  ValidationOptions strict;
  strict.rounding_check = false;
  auto f32 = validate(original, refined, strict);
  ASSERT_TRUE(f32.has_value()) << f32.error().str();
  EXPECT_FALSE(f32->passed) << "the f32 outputs should differ past the tolerance";
  EXPECT_GT(f32->max_abs_error, 1e-4);
  EXPECT_FALSE(f32->rounding_checked);

  auto r = validate(original, refined);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_TRUE(r->passed) << r->rounding_verdict;
  EXPECT_TRUE(r->rounding_checked);
  EXPECT_TRUE(r->within_rounding);
  EXPECT_EQ(r->max_abs_error, f32->max_abs_error);  // the f32 figure is still the one reported
  EXPECT_LT(r->wide_max_abs_error, 1e-10);
  EXPECT_GT(r->original_rounding, 1e-4);
  EXPECT_LT(r->refined_rounding, 1e-10);
}

// Only the outputs over the f32 tolerance are held to the accuracy bound: a
// second output within it (y2, off by up to 2^-20 from (x + 16) - 16) passes
// though it is less accurate than the original's exact x.
TEST(RoundingCheck, OutputsWithinTheF32ToleranceAreNotHeldToTheBound) {
  ir::Graph original = parse(R"(graph @main(%x: tensor<64xf32>) {
  %c = const dense<[10000.0]> : tensor<1xf32>
  %one = const dense<[1.0]> : tensor<1xf32>
  %a = add(%x, %c) : tensor<64xf32>
  %y = sub(%a, %c) : tensor<64xf32>
  %y2 = mul(%x, %one) : tensor<64xf32>
  return %y, %y2
})");
  ir::Graph refined = parse(R"(graph @main(%x: tensor<64xf32>) {
  %one = const dense<[1.0]> : tensor<1xf32>
  %c = const dense<[16.0]> : tensor<1xf32>
  %y = mul(%x, %one) : tensor<64xf32>
  %b = add(%x, %c) : tensor<64xf32>
  %y2 = sub(%b, %c) : tensor<64xf32>
  return %y, %y2
})");
  auto r = validate(original, refined);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_TRUE(r->passed) << r->rounding_verdict;
  EXPECT_TRUE(r->within_rounding);
  EXPECT_GT(r->refined_rounding, 1e-8);  // y2's f32 rounding, within the f32 tolerance
}

TEST(RoundingCheck, ALessAccurateRefinementFails) {
  auto r = validate(parse(kIdentity), parse(kRoundTrip));
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_FALSE(r->passed);
  EXPECT_TRUE(r->rounding_checked);
  EXPECT_FALSE(r->within_rounding);
  EXPECT_NE(r->rounding_verdict.find("less accurate"), std::string::npos) << r->rounding_verdict;
  EXPECT_NE(r->first_divergence.find("value 'y'"), std::string::npos) << r->first_divergence;
}

TEST(RoundingCheck, AChangeOfMeaningFailsInF64Too) {
  ir::Graph changed = parse(R"(graph @main(%x: tensor<64xf32>) {
  %c = const dense<[1.01]> : tensor<1xf32>
  %y = mul(%x, %c) : tensor<64xf32>
  return %y
})");
  auto r = validate(parse(kIdentity), changed);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_FALSE(r->passed);
  EXPECT_TRUE(r->rounding_checked);
  EXPECT_NE(r->rounding_verdict.find("differ in f64 too"), std::string::npos) << r->rounding_verdict;
  EXPECT_GT(r->wide_max_abs_error, 1e-4);
}

// A constant expression folded into one f32 constant (x / 3 as x times
// 0.33333334) is rounding, not a change of meaning: given the refined graph
// as it was before folding (the optimizer's `exact`), the rounding check
// runs that in f64 and passes; the folded graph alone differs in f64 by the
// constant's rounding. The original's f32 round trip through 10000 makes
// the f32 comparison fail, so that the rounding check runs.
TEST(RoundingCheck, AConstantFoldedInF32IsRoundingWhereTheUnfoldedGraphIsGiven) {
  ir::Graph original = parse(R"(graph @main(%x: tensor<64xf32>) {
  %c = const dense<[10000.0]> : tensor<1xf32>
  %three = const dense<[3.0]> : tensor<1xf32>
  %a = add(%x, %c) : tensor<64xf32>
  %b = sub(%a, %c) : tensor<64xf32>
  %y = div(%b, %three) : tensor<64xf32>
  return %y
})");
  ir::Graph folded = parse(R"(graph @main(%x: tensor<64xf32>) {
  %k = const dense<[0.33333334]> : tensor<1xf32>
  %y = mul(%x, %k) : tensor<64xf32>
  return %y
})");
  ir::Graph exact = parse(R"(graph @main(%x: tensor<64xf32>) {
  %one = const dense<[1.0]> : tensor<1xf32>
  %three = const dense<[3.0]> : tensor<1xf32>
  %k = div(%one, %three) : tensor<1xf32>
  %y = mul(%x, %k) : tensor<64xf32>
  return %y
})");
  auto alone = validate(original, folded);
  ASSERT_TRUE(alone.has_value()) << alone.error().str();
  EXPECT_FALSE(alone->passed);
  EXPECT_NE(alone->rounding_verdict.find("differ in f64 too"), std::string::npos) << alone->rounding_verdict;

  auto r = validate(original, folded, {}, &exact);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_TRUE(r->rounding_checked);
  EXPECT_TRUE(r->passed) << r->rounding_verdict;
  EXPECT_LT(r->wide_max_abs_error, 1e-12);
  EXPECT_EQ(r->max_abs_error, alone->max_abs_error);  // the f32 comparison is the written graph's
}

// Spiking graphs run through time: validation simulates both on the same
// seeded spike trains (the stateless interpreter has no kernel for lif).
std::string lif_graph(const char* threshold) {
  return std::string(R"(graph @main(%x: tensor<2xf32>) attributes {ir_version = 8, opsets = {}} {
  %tau = const dense<[0.01]> : tensor<f32>
  %r = const dense<[1.0]> : tensor<f32>
  %leak = const dense<[0.0]> : tensor<f32>
  %thr = const dense<[)") +
         threshold + R"(]> : tensor<f32>
  %reset = const dense<[0.0]> : tensor<f32>
  %w = const dense<[2.0, 0.0, 0.0, 2.0]> : tensor<2x2xf32>
  %in = linear(%x, %w) : tensor<2xf32>
  %lif = lif(%in, %tau, %r, %leak, %thr, %reset) : tensor<2xf32>
  return %lif
})";
}

TEST(ValidateSpiking, AGraphAgreesWithItselfOverTime) {
  ir::Graph g = parse(lif_graph("0.05"));
  auto r = validate(g, g);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_TRUE(r->passed) << r->first_divergence;
  EXPECT_EQ(r->samples, 3);
  ASSERT_EQ(r->spike_trains.size(), 1u);  // the lif layer; linear does not spike
  EXPECT_EQ(r->spike_trains[0].op, "lif");
  EXPECT_TRUE(r->spike_trains[0].identical);
  EXPECT_GT(r->spike_trains[0].original_spikes, 0);
  EXPECT_EQ(r->spike_trains[0].original_spikes, r->spike_trains[0].refined_spikes);
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_TRUE(r->outputs[0].within_tolerance);
}

TEST(ValidateSpiking, AnotherThresholdChangesTheSpikesAndIsNamed) {
  ir::Graph a = parse(lif_graph("0.05")), b = parse(lif_graph("0.5"));
  auto r = validate(a, b);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_FALSE(r->passed);
  EXPECT_NE(r->first_divergence.find("(lif) of sample 0"), std::string::npos) << r->first_divergence;
  ASSERT_EQ(r->spike_trains.size(), 1u);
  EXPECT_FALSE(r->spike_trains[0].identical);
  EXPECT_GT(r->spike_trains[0].original_spikes, r->spike_trains[0].refined_spikes);  // a higher threshold fires less
}

// A softmax over a symbolic axis of one element is 1 everywhere, as x / x
// is: samples at n = 1 cannot tell them apart; the last sample, widened to
// n = 2, does. Without the widening the wrong graph passes.
TEST(Validate, TheLastSampleWidensTheSymbolicDims) {
  ir::Graph a = parse(R"(graph @main(%x: tensor<"n"x4xf32>) {
  %y = softmax(%x) {axis = 0} : tensor<"n"x4xf32>
  return %y
})");
  ir::Graph b = parse(R"(graph @main(%x: tensor<"n"x4xf32>) {
  %y = div(%x, %x) : tensor<"n"x4xf32>
  return %y
})");
  auto r = validate(a, b);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_FALSE(r->passed);
  EXPECT_NE(r->first_divergence.find("of sample 2"), std::string::npos) << r->first_divergence;
  EXPECT_EQ(r->widened_dims, (std::map<std::string, std::int64_t>{{"n", 2}}));
  ValidationOptions narrow;
  narrow.widen_symbolic = false;
  auto n = validate(a, b, narrow);
  ASSERT_TRUE(n.has_value()) << n.error().str();
  EXPECT_TRUE(n->passed);
  EXPECT_TRUE(n->widened_dims.empty());
  // Two symbolic dims take 2 and 3; a dim the caller set keeps its value.
  ir::Graph two = parse(R"(graph @main(%x: tensor<"b"x"s"xf32>, %y: tensor<"k"xf32>) {
  %z = neg(%x) : tensor<"b"x"s"xf32>
  return %z, %y
})");
  ValidationOptions set;
  set.dims = {{"s", 5}};
  auto t = validate(two, two, set);
  ASSERT_TRUE(t.has_value()) << t.error().str();
  EXPECT_EQ(t->widened_dims, (std::map<std::string, std::int64_t>{{"b", 2}, {"k", 3}, {"s", 5}}));
}

// An original that runs only at n = 1 (a reshape to a fixed shape) is
// validated at n = 1 on every sample, and the report says why.
TEST(Validate, AnOriginalThatRunsOnlyAtOneIsNotWidened) {
  ir::Graph a = parse(R"(graph @main(%x: tensor<"n"x4xf32>) {
  %t = const dense<[4]> : tensor<1xi64>
  %y = reshape(%x, %t) : tensor<4xf32>
  return %y
})");
  auto r = validate(a, a);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_TRUE(r->passed);
  EXPECT_EQ(r->samples, 3);
  EXPECT_TRUE(r->widened_dims.empty());
  EXPECT_NE(r->widen_note.find("the original does not run at n=2"), std::string::npos) << r->widen_note;
}

}  // namespace
}  // namespace refinery::verify
