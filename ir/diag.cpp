#include "ir/diag.h"

namespace refinery {

std::string Diag::str() const {
  std::string out;
  if (!file.empty()) out += file;
  if (!where.empty()) {
    if (!out.empty()) out += ':';
    out += where;
  }
  if (!out.empty()) out += ": ";
  out += message;
  return out;
}

}  // namespace refinery
