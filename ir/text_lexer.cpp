#include "ir/text_lexer.h"

#include <fmt/format.h>

#include <charconv>

namespace refinery::ir {

namespace {
bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}
}  // namespace

bool is_bare_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name)
    if (!name_char(c)) return false;
  return true;
}

void TextReader::skip_space() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
}

bool TextReader::accept(char c) {
  if (peek() != c) return false;
  ++pos_;
  return true;
}

bool TextReader::accept_word(std::string_view w) {
  skip_space();
  if (text_.substr(pos_, w.size()) != w) return false;
  if (pos_ + w.size() < text_.size() && name_char(text_[pos_ + w.size()])) return false;
  pos_ += w.size();
  return true;
}

Expected<void> TextReader::expect(char c, std::string_view what) {
  if (accept(c)) return {};
  char got = peek();
  std::string found = got == '\0' ? "end of input" : fmt::format("'{}'", got);
  return error(what.empty() ? fmt::format("expected '{}', found {}", c, found)
                            : fmt::format("expected '{}' {}, found {}", c, what, found));
}

Expected<void> TextReader::expect_word(std::string_view w) {
  if (accept_word(w)) return {};
  return error(fmt::format("expected '{}'", w));
}

std::string TextReader::bare_name() {
  size_t start = pos_;
  while (pos_ < text_.size() && name_char(text_[pos_])) ++pos_;
  return std::string(text_.substr(start, pos_ - start));
}

Expected<std::string> TextReader::string_literal() {
  skip_space();
  size_t start = pos_;
  if (peek_raw() != '"') return error("expected a string");
  ++pos_;
  std::string out;
  while (true) {
    if (pos_ >= text_.size() || text_[pos_] == '\n') return error_at(start, "unterminated string");
    char c = text_[pos_++];
    if (c == '"') break;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos_ >= text_.size()) return error_at(start, "unterminated string");
    char e = text_[pos_++];
    if (e == 'n')
      out += '\n';
    else if (e == 'x') {
      unsigned v = 0;
      const char* at = text_.data() + pos_;
      auto [p, ec] = pos_ + 2 <= text_.size() ? std::from_chars(at, at + 2, v, 16)
                                              : std::from_chars_result{at, std::errc::invalid_argument};
      if (ec != std::errc() || p != at + 2) return error_at(pos_ - 2, "\\x must be followed by two hex digits");
      out += static_cast<char>(v);
      pos_ += 2;
    } else
      out += e;
  }
  return out;
}

Expected<std::string> TextReader::name_after_sigil() {
  if (peek_raw() == '"') return string_literal();
  std::string n = bare_name();
  if (n.empty()) return error("expected a name");
  return n;
}

std::string TextReader::number_token() {
  skip_space();
  size_t start = pos_;
  if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) ++pos_;
  if (text_.substr(pos_, 3) == "nan" || text_.substr(pos_, 3) == "inf") {
    pos_ += 3;
    return std::string(text_.substr(start, pos_ - start));
  }
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    bool exp_sign = (c == '-' || c == '+') && pos_ > start && (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E');
    if ((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || exp_sign)
      ++pos_;
    else
      break;
  }
  return std::string(text_.substr(start, pos_ - start));
}

std::string TextReader::where() const {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < pos_ && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return fmt::format("{}:{}", line, col);
}

std::unexpected<Diag> TextReader::error(std::string message) const {
  return std::unexpected(Diag{file_, where(), std::move(message)});
}

std::unexpected<Diag> TextReader::error_at(size_t pos, std::string message) const {
  TextReader copy = *this;
  copy.pos_ = pos;
  return copy.error(std::move(message));
}

}  // namespace refinery::ir
