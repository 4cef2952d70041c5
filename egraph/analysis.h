// E-class analysis: data attached to every e-class, computed from its nodes
// (make), combined when classes merge (merge), and allowed to edit the graph
// after a change (modify, optional). NoAnalysis is the do-nothing default.
#pragma once

#include "egraph/id.h"

namespace refinery::egraph {

// What a merge changed: `a_changed` when the merged value differs from the
// old `a`, `b_changed` when it differs from `b`. Parents of a class whose
// data changed are re-analysed during rebuild.
struct DidMerge {
  bool a_changed = false;
  bool b_changed = false;
};

// An analysis A over nodes N provides:
//   using Data = ...;
//   template <class G> Data make(const G& egraph, const N& node) const;
//   DidMerge merge(Data& a, Data&& b) const;
//   template <class G> void modify(G& egraph, Id id) const;   // optional
// `make` sees the children's data through egraph[child].data.
struct NoAnalysis {
  struct Data {
    bool operator==(const Data&) const = default;
  };
  template <class G, class N>
  Data make(const G&, const N&) const {
    return {};
  }
  DidMerge merge(Data&, Data&&) const { return {}; }
};

template <class A, class G>
concept HasModify = requires(const A& a, G& g, Id id) {
  a.modify(g, id);
};

}  // namespace refinery::egraph
