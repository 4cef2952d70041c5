// A small s-expression reader for terms, patterns and rules in text form:
// `(+ ?a (* 2 x))`. Errors are values carrying line:col.
#pragma once

#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace refinery::egraph {

struct SourcePos {
  std::uint32_t line = 1;
  std::uint32_t col = 1;
  // Moves past `c`: a newline starts the next line.
  void step(char c) {
    if (c == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
};

struct ParseError {
  SourcePos pos;
  std::string message;
  // "line:col: message"
  std::string to_string() const;
};

struct SExpr {
  bool is_atom = true;
  std::string atom;          // when is_atom
  std::vector<SExpr> items;  // when a list
  SourcePos pos;
};

// Parses exactly one s-expression (surrounding whitespace and `;` comments
// allowed).
std::expected<SExpr, ParseError> parse_sexpr(std::string_view text);

}  // namespace refinery::egraph
