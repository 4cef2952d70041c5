// Internal to ir/: the character-level reader the .ir parser is built on, with
// line:col positions for messages, and the name rule the printer shares.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "ir/diag.h"

namespace refinery::ir {

// A name prints bare (%conv1.weight) when it is made of [A-Za-z0-9_.];
// anything else is quoted (%"onnx::Conv_12").
bool is_bare_name(std::string_view name);

class TextReader {
 public:
  TextReader(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

  void skip_space();  // whitespace and // comments
  bool at_end() {
    skip_space();
    return pos_ >= text_.size();
  }
  char peek() {
    skip_space();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  char peek_raw() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool accept(char c);                   // skips space, consumes c if next
  bool accept_word(std::string_view w);  // a keyword followed by a non-name char
  Expected<void> expect(char c, std::string_view what = {});
  Expected<void> expect_word(std::string_view w);

  std::string bare_name();                   // [A-Za-z0-9_.]*, may be empty
  Expected<std::string> string_literal();    // "..." with escapes
  Expected<std::string> name_after_sigil();  // bare or quoted, after % or @
  // A number token: digits, sign, '.', exponent, or nan / inf.
  std::string number_token();

  // Position for messages.
  std::string where() const;
  std::unexpected<Diag> error(std::string message) const;
  std::unexpected<Diag> error_at(size_t pos, std::string message) const;
  size_t pos() const { return pos_; }
  void advance(size_t n = 1) { pos_ += n; }
  const std::string& file() const { return file_; }

 private:
  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
};

}  // namespace refinery::ir
