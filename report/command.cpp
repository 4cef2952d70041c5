#include "report/command.h"

#include <cctype>

namespace refinery::report {

std::string shell_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    bool safe = !a.empty();
    for (unsigned char c : a)
      if (!(std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '=' || c == ',' || c == ':' ||
            c == '+' || c == '@'))
        safe = false;
    if (safe) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

}  // namespace refinery::report
