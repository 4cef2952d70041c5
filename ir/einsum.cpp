#include "ir/einsum.h"

#include <fmt/format.h>

#include <algorithm>

#include "ir/ops/registry.h"

namespace refinery::ir {

namespace {

bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

std::unexpected<std::string> error(std::string msg) { return std::unexpected(std::move(msg)); }

// `what` names the term in messages: "term 1", "the output".
std::expected<EinsumTerm, std::string> parse_term(std::string_view text, std::string_view what) {
  EinsumTerm term;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (is_label(c)) {
      term.labels.push_back(c);
      ++i;
    } else if (text.substr(i, 3) == "...") {
      if (term.has_ellipsis()) return error(fmt::format("einsum {} has more than one '...'", what));
      term.ellipsis = static_cast<int>(term.labels.size());
      i += 3;
    } else {
      return error(fmt::format("einsum {} '{}': unexpected '{}' (labels are letters a-z, A-Z)", what, text, c));
    }
  }
  return term;
}

// Two sizes of one label in different inputs: equal, or one of them 1.
std::optional<Dim> unify_across(const Dim& a, const Dim& b) {
  if (a == b) return a;
  if (a == Dim(1)) return b;
  if (b == Dim(1)) return a;
  if (a.is_static() && b.is_static()) return std::nullopt;
  if (a.is_static()) return a;
  if (b.is_static()) return b;
  return Dim::unknown();
}

}  // namespace

std::string EinsumTerm::str() const {
  if (!has_ellipsis()) return labels;
  std::string s = labels;
  s.insert(static_cast<size_t>(ellipsis), "...");
  return s;
}

std::string EinsumEquation::str() const {
  std::string s;
  for (size_t i = 0; i < inputs.size(); ++i) s += (i ? "," : "") + inputs[i].str();
  return s + "->" + output.str();
}

std::expected<EinsumEquation, std::string> parse_einsum(std::string_view equation) {
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq.push_back(c);
  if (eq.empty()) return error("einsum equation is empty");
  EinsumEquation out;
  size_t arrow = eq.find("->");
  if (arrow != std::string::npos && eq.find("->", arrow + 2) != std::string::npos)
    return error("einsum equation has more than one '->'");
  std::string_view lhs = std::string_view(eq).substr(0, arrow);
  for (size_t start = 0, k = 0;; ++k) {
    size_t comma = lhs.find(',', start);
    auto term = parse_term(lhs.substr(start, comma == std::string_view::npos ? lhs.npos : comma - start),
                           fmt::format("term {}", k));
    if (!term) return std::unexpected(term.error());
    out.inputs.push_back(std::move(*term));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  bool any_ellipsis =
      std::any_of(out.inputs.begin(), out.inputs.end(), [](const EinsumTerm& t) { return t.has_ellipsis(); });
  std::map<char, int> count;
  for (const EinsumTerm& t : out.inputs)
    for (char c : t.labels) ++count[c];
  if (arrow == std::string::npos) {
    out.implicit = true;
    if (any_ellipsis) out.output.ellipsis = 0;
    for (const auto& [c, n] : count)  // std::map: ASCII order
      if (n == 1) out.output.labels.push_back(c);
    return out;
  }
  auto output = parse_term(std::string_view(eq).substr(arrow + 2), "output");
  if (!output) return std::unexpected(output.error());
  for (size_t i = 0; i < output->labels.size(); ++i) {
    char c = output->labels[i];
    if (!count.contains(c)) return error(fmt::format("einsum output label '{}' appears in no input", c));
    if (output->labels.find(c, i + 1) != std::string::npos)
      return error(fmt::format("einsum output names label '{}' twice", c));
  }
  out.output = std::move(*output);
  return out;
}

std::expected<EinsumDims, std::string> einsum_dims(const EinsumEquation& eq, std::span<const Shape* const> inputs) {
  if (eq.inputs.size() != inputs.size())
    return error(fmt::format("einsum equation has {} terms for {} inputs", eq.inputs.size(), inputs.size()));
  EinsumDims d;
  std::map<char, size_t> first_input;  // which input set each label's size
  Shape ellipsis;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const EinsumTerm& term = eq.inputs[k];
    const Shape& shape = *inputs[k];
    int64_t named = static_cast<int64_t>(term.labels.size());
    if (named > shape.rank() || (!term.has_ellipsis() && named != shape.rank()))
      return error(fmt::format("einsum term {} '{}' has {} labels but input {} has rank {}", k, term.str(), named, k,
                               shape.rank()));
    int64_t covered = shape.rank() - named;  // by the ellipsis
    if (term.has_ellipsis()) {
      Shape part(
          std::vector<Dim>(shape.dims().begin() + term.ellipsis, shape.dims().begin() + term.ellipsis + covered));
      auto b = ops::broadcast(ellipsis, part);
      if (!b)
        return error(
            fmt::format("einsum '...' of input {} ({}) does not broadcast with {}", k, part.str(), ellipsis.str()));
      ellipsis = std::move(*b);
    }
    std::map<char, Dim> local;
    for (int64_t i = 0; i < named; ++i) {
      char c = term.labels[static_cast<size_t>(i)];
      const Dim& dim = shape[i < term.ellipsis || !term.has_ellipsis() ? i : i + covered];
      if (auto seen = local.find(c); seen != local.end()) {
        auto same = refine(seen->second, dim);
        if (!same)
          return error(fmt::format("einsum label '{}' is repeated in input {} with sizes {} and {}", c, k,
                                   seen->second.str(), dim.str()));
        seen->second = *same;
      } else {
        local.emplace(c, dim);
      }
    }
    for (const auto& [c, dim] : local) {
      auto [it, fresh] = d.labels.emplace(c, dim);
      if (fresh) {
        first_input[c] = k;
        continue;
      }
      auto both = unify_across(it->second, dim);
      if (!both)
        return error(fmt::format("einsum label '{}' is {} in input {} and {} in input {}", c, it->second.str(),
                                 first_input[c], dim.str(), k));
      it->second = *both;
    }
  }
  d.ellipsis = ellipsis.dims();
  const EinsumTerm& out = eq.output;
  if (!out.has_ellipsis() && !d.ellipsis.empty())
    return error(fmt::format("einsum output omits '...' but the inputs' '...' covers {} dims", d.ellipsis.size()));
  std::vector<Dim> dims;
  for (size_t i = 0; i <= out.labels.size(); ++i) {
    if (out.ellipsis == static_cast<int>(i)) dims.insert(dims.end(), d.ellipsis.begin(), d.ellipsis.end());
    if (i < out.labels.size()) dims.push_back(d.labels.at(out.labels[i]));
  }
  d.output = Shape(std::move(dims));
  for (const EinsumTerm& t : eq.inputs)
    for (char c : t.labels)
      if (out.labels.find(c) == std::string::npos && d.summed.find(c) == std::string::npos) d.summed.push_back(c);
  return d;
}

}  // namespace refinery::ir
