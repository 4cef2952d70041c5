#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "ir/data_dir.h"
#include "rules/compile.h"
#include "rules/rule_ast.h"
#include "rules/rules.h"

namespace refinery::rules {

const Rule* RuleSet::find(std::string_view name) const {
  for (const Rule& r : rules_)
    if (r.name == name) return &r;
  return nullptr;
}

std::vector<std::string> RuleSet::families() const {
  std::set<std::string> s;
  for (const Rule& r : rules_) s.insert(r.family);
  return {s.begin(), s.end()};
}

std::vector<const Rule*> RuleSet::select(const RuleFilter& filter) const {
  std::vector<const Rule*> out;
  for (const Rule& r : rules_) {
    bool fam = filter.families.empty() ||
               std::find(filter.families.begin(), filter.families.end(), r.family) != filter.families.end();
    bool name =
        filter.names.empty() || std::find(filter.names.begin(), filter.names.end(), r.name) != filter.names.end();
    if (fam && name) out.push_back(&r);
  }
  return out;
}

std::vector<TensorRewrite> RuleSet::rewrites(const RuleFilter& filter) const {
  std::vector<TensorRewrite> out;
  for (const Rule* r : select(filter)) out.push_back(compile_rule(*r));
  return out;
}

Expected<std::filesystem::path> library_dir() { return ir::data_dir(ir::DataKind::Rules); }

Expected<RuleSet> load_library() {
  auto found = library_dir();
  if (!found) return std::unexpected(found.error());
  const std::filesystem::path& dir = *found;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return fail(fmt::format("rule library {} is not a folder", dir.string()));
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().extension() == ".rules") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) return fail(fmt::format("rule library {} has no .rules files", dir.string()));
  return load_rules(files);
}

namespace {
void collect_ops(const Pat& p, std::set<ir::Op>& ops) {
  if (p.kind != Pat::Kind::Op) return;
  ops.insert(p.op);
  for (const Pat& k : p.kids) collect_ops(k, ops);
}
}  // namespace

std::vector<ir::Op> ops_made(const Rule& rule) {
  std::set<ir::Op> ops;
  for (const auto& [root, pat] : rule.body->rhs) collect_ops(pat, ops);
  return {ops.begin(), ops.end()};
}

}  // namespace refinery::rules
