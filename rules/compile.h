// Internal to rules/: one checked rule to one engine rewrite.
#pragma once

#include "rules/rules.h"

namespace refinery::rules {

TensorRewrite compile_rule(const Rule& rule);

}  // namespace refinery::rules
