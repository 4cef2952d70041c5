// add / merge / rebuild: congruence is restored, invariants hold, and on
// random adds and unions the classes equal a naive congruence closure.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "egraph/basic_node.h"
#include "egraph/egraph.h"

namespace refinery::egraph {
namespace {

using Node = BasicNode<2>;
using Graph = EGraph<Node>;

TEST(EGraph, HashconsSharesEqualNodes) {
  Graph g;
  Id x = g.add(Node(0, {}));
  Id f1 = g.add(Node(1, {x}));
  Id f2 = g.add(Node(1, {x}));
  EXPECT_EQ(f1, f2);
  EXPECT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.num_classes(), 2u);
}

TEST(EGraph, RebuildRestoresCongruence) {
  Graph g;
  Id a = g.add(Node(0, {}));
  Id b = g.add(Node(1, {}));
  Id fa = g.add(Node(2, {a}));
  Id fb = g.add(Node(2, {b}));
  Id gfa = g.add(Node(3, {fa}));
  Id gfb = g.add(Node(3, {fb}));
  EXPECT_TRUE(g.merge(a, b));
  EXPECT_FALSE(g.is_clean());
  g.rebuild();
  EXPECT_EQ(g.find(fa), g.find(fb));
  EXPECT_EQ(g.find(gfa), g.find(gfb));
  EXPECT_EQ(g.num_classes(), 3u);
  EXPECT_EQ(g.num_nodes(), 4u);  // a, b, f(ab), g(f(ab))
  EXPECT_EQ(g.check_invariants(), "");
  EXPECT_FALSE(g.merge(fa, fb));
}

// add_prepared_into: a new node joins the given class (no class of its own,
// no union); a node already there is found in its own class, not joined.
TEST(EGraph, AddPreparedIntoJoinsANewNodeToTheClass) {
  Graph g;
  Id a = g.add(Node(0, {}));
  Id b = g.add(Node(1, {}));
  Id ab = g.add(Node(2, {a, b}));
  Id fa = g.add(Node(3, {a}));
  g.rebuild();
  const std::size_t classes = g.num_classes(), unions = g.union_count();
  Node ba(2, {b, a});
  auto [id, added] = g.add_prepared_into(ba, g.prepare(ba), ab);
  EXPECT_TRUE(added);
  EXPECT_EQ(id, g.find(ab));
  EXPECT_EQ(g.num_classes(), classes);
  EXPECT_EQ(g.union_count(), unions);
  Node again(2, {b, a});
  auto [id2, added2] = g.add_prepared_into(again, g.prepare(again), ab);
  EXPECT_FALSE(added2);
  EXPECT_EQ(id2, g.find(ab));
  Node f(3, {a});
  auto [id3, added3] = g.add_prepared_into(f, g.prepare(f), ab);
  EXPECT_FALSE(added3);
  EXPECT_EQ(id3, g.find(fa));
  g.rebuild();
  EXPECT_EQ(g.check_invariants(), "");
  EXPECT_EQ(g.num_classes(), classes);
  EXPECT_EQ(g.num_nodes(), 5u);
  EXPECT_EQ(g[ab].nodes.size(), 2u);
  EXPECT_EQ(g.lookup(Node(2, {b, a})), g.find(ab));
}

TEST(EGraph, InvariantCheckReportsADirtyGraph) {
  Graph g;
  g.add(Node(0, {}));
  EXPECT_EQ(g.check_invariants(), "graph is dirty (rebuild not called)");
}

// A naive closure over term handles: handle k is the k-th add.
struct NaiveModel {
  std::vector<Node> nodes;  // children are handles
  std::vector<std::pair<std::size_t, std::size_t>> unions;

  std::vector<std::size_t> closure() const {
    std::vector<std::size_t> rep(nodes.size());
    for (std::size_t i = 0; i < rep.size(); ++i) rep[i] = i;
    auto find = [&](std::size_t x) {
      while (rep[x] != x) x = rep[x];
      return x;
    };
    auto unite = [&](std::size_t a, std::size_t b) {
      a = find(a), b = find(b);
      if (a == b) return false;
      rep[std::max(a, b)] = std::min(a, b);
      return true;
    };
    for (auto [a, b] : unions) unite(a, b);
    for (bool changed = true; changed;) {
      changed = false;
      for (std::size_t i = 0; i < nodes.size(); ++i)
        for (std::size_t j = i + 1; j < nodes.size(); ++j) {
          if (!nodes[i].same_op(nodes[j]) || find(i) == find(j)) continue;
          bool same = true;
          for (std::size_t k = 0; k < nodes[i].arity; ++k)
            same &= find(index(nodes[i].kids[k])) == find(index(nodes[j].kids[k]));
          if (same) changed |= unite(i, j);
        }
    }
    for (std::size_t i = 0; i < rep.size(); ++i) rep[i] = find(i);
    return rep;
  }
};

class RandomOps : public ::testing::TestWithParam<unsigned> {};

TEST_P(RandomOps, MatchesNaiveCongruenceClosure) {
  std::mt19937 rng(GetParam());
  Graph g;
  NaiveModel model;
  std::vector<Id> ids;  // handle -> id returned by add
  auto add = [&](Node handles) {
    Node node = handles;
    for (Id& c : node.children()) c = ids[index(c)];
    ids.push_back(g.add(node));
    model.nodes.push_back(handles);
  };
  for (int leaf = 0; leaf < 6; ++leaf) add(Node(static_cast<std::uint32_t>(leaf), {}));
  for (int step = 0; step < 250; ++step) {
    auto pick = [&] { return make_id(rng() % ids.size()); };
    switch (rng() % 6) {
      case 0:
      case 1: add(Node(10, {pick()})); break;
      case 2:
      case 3: add(Node(11, {pick(), pick()})); break;
      case 4: {
        std::size_t a = rng() % ids.size(), b = rng() % ids.size();
        g.merge(ids[a], ids[b]);
        model.unions.emplace_back(a, b);
        break;
      }
      default:
        if (rng() % 4 == 0) {
          g.rebuild();
          ASSERT_EQ(g.check_invariants(), "");
        }
    }
  }
  g.rebuild();
  ASSERT_EQ(g.check_invariants(), "");
  auto rep = model.closure();
  for (std::size_t i = 0; i < ids.size(); ++i)
    for (std::size_t j = 0; j < ids.size(); ++j)
      ASSERT_EQ(rep[i] == rep[j], g.find(ids[i]) == g.find(ids[j])) << i << " " << j;
  std::size_t classes = 0;
  for (std::size_t i = 0; i < rep.size(); ++i) classes += rep[i] == i;
  EXPECT_EQ(classes, g.num_classes());
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomOps, ::testing::Range(1u, 21u));

}  // namespace
}  // namespace refinery::egraph
