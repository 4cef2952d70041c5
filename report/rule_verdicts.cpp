#include "report/rule_verdicts.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "ir/io.h"

namespace refinery::report {

Expected<RuleVerdicts> load_rule_verdicts(const std::filesystem::path& file) {
  auto text = ir::read_file(file);
  if (!text) return std::unexpected(text.error());
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("summary") || !j.contains("rules") || !j["rules"].is_array())
    return fail("not a rule verification report (refinery rules verify --json)", "", file.string());
  RuleVerdicts out{.source = file};
  try {
    for (const nlohmann::json& r : j["rules"]) {
      RuleVerdict v;
      v.verdict = r.at("verdict").get<std::string>();
      v.condition = r.value("condition", "");
      v.binary32 = r.value("binary32", "");
      v.numeric = r.value("numeric", "");
      v.shapes = r.value("shapes", std::vector<std::string>{});
      v.file = fmt::format("{}:{}", r.value("file", ""), r.value("line", 0));
      out.by_rule[r.at("name").get<std::string>()] = std::move(v);
    }
  } catch (const nlohmann::json::exception& e) {
    return fail(fmt::format("not a rule verification report: {}", e.what()), "", file.string());
  }
  return out;
}

}  // namespace refinery::report
