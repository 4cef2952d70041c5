// Diagnostics: errors are values at module boundaries (ARCHITECTURE.md,
// decision 10). A Diag says where (file, line:col or node name) and what.
#pragma once
#include <cstdint>
#include <expected>
#include <string>

namespace refinery {

struct Diag {
  std::string file;   // may be empty
  std::string where;  // "line:col", a node name, or empty
  std::string message;
  // The input is valid (ONNX's checker and runtimes accept it) but Refinery
  // cannot handle it: past a documented limit (subgraphs nested deeper than
  // the reader takes, 2^40 elements) or a construct it does not take yet.
  // The CLI exits 3, not 2 ("bad input").
  bool limitation = false;

  // "file:line:col: message", "file:node 'x': message", or the message alone.
  std::string str() const;
};

template <class T>
using Expected = std::expected<T, Diag>;

inline std::unexpected<Diag> fail(std::string message, std::string where = {}, std::string file = {}) {
  return std::unexpected(Diag{std::move(file), std::move(where), std::move(message)});
}

}  // namespace refinery
