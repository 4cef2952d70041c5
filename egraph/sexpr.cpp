#include "egraph/sexpr.h"

#include <cctype>
#include <utility>

#include <fmt/format.h>

namespace refinery::egraph {

std::string ParseError::to_string() const { return fmt::format("{}:{}: {}", pos.line, pos.col, message); }

namespace {

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  std::expected<SExpr, ParseError> read_one() {
    skip_space();
    if (at_end()) return error("expected an expression, found end of input");
    auto expr = read();
    if (!expr) return expr;
    skip_space();
    if (!at_end()) return error(fmt::format("unexpected '{}' after the expression", text_[i_]));
    return expr;
  }

 private:
  bool at_end() const { return i_ >= text_.size(); }

  void advance() { pos_.step(text_[i_++]); }

  void skip_space() {
    while (!at_end()) {
      char c = text_[i_];
      if (c == ';') {
        while (!at_end() && text_[i_] != '\n') advance();
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        advance();
      } else {
        return;
      }
    }
  }

  std::unexpected<ParseError> error(std::string message) const {
    return std::unexpected(ParseError{pos_, std::move(message)});
  }

  std::expected<SExpr, ParseError> read() {
    SExpr out;
    out.pos = pos_;
    char c = text_[i_];
    if (c == ')') return error("unexpected ')'");
    if (c != '(') {
      out.is_atom = true;
      while (!at_end()) {
        char d = text_[i_];
        if (d == '(' || d == ')' || d == ';' || std::isspace(static_cast<unsigned char>(d))) break;
        out.atom.push_back(d);
        advance();
      }
      return out;
    }
    out.is_atom = false;
    advance();  // '('
    for (;;) {
      skip_space();
      if (at_end()) return std::unexpected(ParseError{out.pos, "unclosed '('"});
      if (text_[i_] == ')') {
        advance();
        break;
      }
      auto item = read();
      if (!item) return item;
      out.items.push_back(std::move(*item));
    }
    if (out.items.empty()) return std::unexpected(ParseError{out.pos, "empty list '()'"});
    if (!out.items.front().is_atom)
      return std::unexpected(ParseError{out.items.front().pos, "operator must be an atom"});
    return out;
  }

  std::string_view text_;
  std::size_t i_ = 0;
  SourcePos pos_;
};

}  // namespace

std::expected<SExpr, ParseError> parse_sexpr(std::string_view text) { return Reader(text).read_one(); }

}  // namespace refinery::egraph
