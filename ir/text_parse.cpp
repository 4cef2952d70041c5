// Parser for the textual IR (format in docs/ir.md). Every error reads
// "file:line:col: message".
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>
#include <utility>

#include "ir/io.h"
#include "ir/text.h"
#include "ir/text_lexer.h"

namespace refinery::ir {
namespace {

// Decodes pairs of hex digits; false on an odd length or a non-hex digit.
bool decode_hex(std::string_view hex, std::string& out) {
  if (hex.size() % 2 != 0) return false;
  out.clear();
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(hex.data() + i, hex.data() + i + 2, v, 16);
    if (ec != std::errc() || p != hex.data() + i + 2) return false;
    out += static_cast<char>(v);
  }
  return true;
}

// A tensor literal as written, before the type that follows it is known.
struct Literal {
  enum Kind { Dense, Hex, Blob } kind = Dense;
  std::vector<std::string> elements;  // dense: tokens
  std::string hex;                    // hex: digits
  uint64_t offset = 0;                // blob
  size_t pos = 0;
};

class Parser {
 public:
  Parser(std::string_view text, std::string file, const std::string* sidecar)
      : r_(text, std::move(file)), sidecar_(sidecar) {}

  Expected<Graph> parse();

 private:
  Expected<TensorType> type();
  Expected<Literal> literal();
  Expected<TensorRef> build_tensor(const Literal& lit, const TensorType& t);
  Expected<AttrValue> attr_value();
  Expected<Attributes> attributes();
  Expected<void> header(ModelInfo& info);
  Expected<void> statement(Graph& g);
  Expected<std::string> ref();  // %name, "_" for an unnamed result
  Expected<ValueId> use();      // a defined value
  Expected<void> define(const std::string& name, ValueId v, size_t pos);

  TextReader r_;
  const std::string* sidecar_;
  std::unordered_map<std::string, ValueId> names_;
  std::vector<size_t> node_pos_;
  // Operands that name a value defined further down (recurrent edges of a
  // spiking graph); resolved at the end, checked by Graph::verify().
  struct Later {
    NodeId node;
    size_t input;
    std::string name;
    size_t pos;
  };
  std::vector<Later> later_;
};

Expected<std::string> Parser::ref() {
  if (r_.accept('_')) return std::string();
  if (!r_.accept('%')) return r_.error("expected a value name such as %x");
  return r_.name_after_sigil();
}

Expected<ValueId> Parser::use() {
  size_t pos = (r_.skip_space(), r_.pos());
  auto name = ref();
  if (!name) return std::unexpected(name.error());
  auto it = names_.find(*name);
  if (it == names_.end()) return r_.error_at(pos, fmt::format("use of undefined value %{}", *name));
  return it->second;
}

Expected<void> Parser::define(const std::string& name, ValueId v, size_t pos) {
  if (name.empty()) return {};
  if (!names_.emplace(name, v).second) return r_.error_at(pos, fmt::format("value %{} is defined twice", name));
  return {};
}

Expected<TensorType> Parser::type() {
  r_.skip_space();
  const size_t type_start = r_.pos();
  if (auto ok = r_.expect_word("tensor"); !ok) return std::unexpected(ok.error());
  if (auto ok = r_.expect('<'); !ok) return std::unexpected(ok.error());
  TensorType t;
  std::vector<Dim> dims;
  bool ranked = true;
  while (true) {
    char c = r_.peek();
    if (c == '*') {
      r_.advance();
      ranked = false;
    } else if (c >= '0' && c <= '9') {
      size_t start = r_.pos();
      std::string digits;
      while (r_.peek_raw() >= '0' && r_.peek_raw() <= '9') {
        digits += r_.peek_raw();
        r_.advance();
      }
      if (digits.size() > 18) return r_.error_at(start, "dimension is too large");
      dims.emplace_back(std::stoll(digits));
    } else if (c == '?') {
      r_.advance();
      dims.push_back(Dim::unknown());
    } else if (c == '"') {
      auto s = r_.string_literal();
      if (!s) return std::unexpected(s.error());
      dims.push_back(Dim::symbol(*s));
    } else {
      size_t start = r_.pos();
      std::string name = r_.bare_name();
      auto dt = dtype_from_name(name);
      if (!dt) return r_.error_at(start, fmt::format("unknown element type '{}'", name));
      t.dtype = *dt;
      break;
    }
    if (r_.peek_raw() != 'x') return r_.error("expected 'x' after a dimension");
    r_.advance();
  }
  t.shape = ranked ? Shape(std::move(dims)) : Shape::unranked();
  // The static dims' product, checked before anything multiplies it (a
  // constant's bytes, Shape::num_elements): past int64 is bad input, past
  // 2^40 elements Refinery's limit.
  if (auto bad = size_error(t.shape)) {
    auto e = r_.error_at(type_start, fmt::format("the type {}", bad->message));
    e.error().limitation = bad->limit;
    return e;
  }
  if (auto ok = r_.expect('>', "to close the type"); !ok) return std::unexpected(ok.error());
  return t;
}

Expected<Literal> Parser::literal() {
  r_.skip_space();
  Literal lit;
  lit.pos = r_.pos();
  if (r_.accept_word("dense")) {
    if (auto ok = r_.expect('<'); !ok) return std::unexpected(ok.error());
    if (auto ok = r_.expect('['); !ok) return std::unexpected(ok.error());
    if (!r_.accept(']')) {
      do {
        if (r_.accept_word("true"))
          lit.elements.push_back("1");
        else if (r_.accept_word("false"))
          lit.elements.push_back("0");
        else {
          std::string tok = r_.number_token();
          if (tok.empty() || tok == "-" || tok == "+") return r_.error("expected a number");
          lit.elements.push_back(tok);
        }
      } while (r_.accept(','));
      if (auto ok = r_.expect(']'); !ok) return std::unexpected(ok.error());
    }
  } else if (r_.accept_word("hex")) {
    lit.kind = Literal::Hex;
    if (auto ok = r_.expect('<'); !ok) return std::unexpected(ok.error());
    auto s = r_.string_literal();
    if (!s) return std::unexpected(s.error());
    lit.hex = *s;
  } else if (r_.accept_word("blob")) {
    lit.kind = Literal::Blob;
    if (auto ok = r_.expect('<'); !ok) return std::unexpected(ok.error());
    std::string tok = r_.number_token();
    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), lit.offset);
    if (ec != std::errc() || p != tok.data() + tok.size()) return r_.error("expected a byte offset");
  } else if (r_.accept_word("elided")) {
    return r_.error_at(lit.pos, "elided constants cannot be parsed (print with weights)");
  } else {
    return r_.error("expected a tensor literal: dense<[...]>, hex<\"...\"> or blob<offset>");
  }
  if (auto ok = r_.expect('>', "to close the literal"); !ok) return std::unexpected(ok.error());
  return lit;
}

// Whether an integer literal is a value of `t` (a bool is 0 or 1, as
// true and false read); u64 is read unsigned and always fits.
bool integer_fits(DType t, int64_t v) {
  switch (t) {
    case DType::i32: return std::in_range<int32_t>(v);
    case DType::u32: return std::in_range<uint32_t>(v);
    case DType::i16: return std::in_range<int16_t>(v);
    case DType::u16: return std::in_range<uint16_t>(v);
    case DType::i8: return std::in_range<int8_t>(v);
    case DType::u8: return std::in_range<uint8_t>(v);
    case DType::boolean: return v == 0 || v == 1;
    default: return true;
  }
}

template <class T>
void store(std::vector<std::byte>& out, size_t i, T v) {
  std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
}

Expected<TensorRef> Parser::build_tensor(const Literal& lit, const TensorType& t) {
  if (!t.shape.is_static()) return r_.error_at(lit.pos, "a constant needs a static shape");
  auto dims = t.shape.sizes();
  size_t n = static_cast<size_t>(*t.shape.num_elements());
  size_t nbytes = n * dtype_size(t.dtype);
  // The literal's size is checked against the type before the tensor is
  // allocated: a short file may declare 2^40 elements.
  if (lit.kind == Literal::Blob) {
    if (sidecar_ == nullptr) return r_.error_at(lit.pos, "blob<> constant but no sidecar weights file");
    // Written so that a huge offset cannot wrap around.
    if (lit.offset > sidecar_->size() || nbytes > sidecar_->size() - lit.offset)
      return r_.error_at(lit.pos, fmt::format("blob<{}> of {} bytes runs past the end of the weights file ({} bytes)",
                                              lit.offset, nbytes, sidecar_->size()));
  } else if (lit.kind == Literal::Hex) {
    if (lit.hex.size() != 2 * nbytes)
      return r_.error_at(lit.pos,
                         fmt::format("hex literal has {} bytes, the type needs {}", lit.hex.size() / 2, nbytes));
  } else if (lit.elements.size() != n) {
    return r_.error_at(lit.pos, fmt::format("literal has {} elements, the type needs {}", lit.elements.size(), n));
  }
  std::vector<std::byte> bytes(nbytes);
  if (lit.kind == Literal::Blob) {
    std::memcpy(bytes.data(), sidecar_->data() + lit.offset, nbytes);
  } else if (lit.kind == Literal::Hex) {
    std::string decoded;
    if (!decode_hex(lit.hex, decoded)) return r_.error_at(lit.pos, "bad hex digit");
    std::memcpy(bytes.data(), decoded.data(), nbytes);
  } else {
    for (size_t i = 0; i < n; ++i) {
      const std::string& tok = lit.elements[i];
      if (is_float(t.dtype)) {
        double v;
        if (tok == "nan" || tok == "-nan")
          v = std::nan("");
        else if (tok == "inf")
          v = INFINITY;
        else if (tok == "-inf")
          v = -INFINITY;
        else {
          auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
          if (ec != std::errc() || p != tok.data() + tok.size())
            return r_.error_at(lit.pos, fmt::format("bad number '{}'", tok));
          if (t.dtype != DType::f64) {  // parse as float directly: no double rounding
            float f = 0;
            auto [pf, ecf] = std::from_chars(tok.data(), tok.data() + tok.size(), f);
            if (ecf != std::errc())  // past f32's range, or a nonzero that rounds to 0
              return r_.error_at(lit.pos, fmt::format("number '{}' is out of range for {}", tok, dtype_name(t.dtype)));
            v = f;
          }
        }
        switch (t.dtype) {
          case DType::f32: store(bytes, i, static_cast<float>(v)); break;
          case DType::f64: store(bytes, i, v); break;
          case DType::f16: store(bytes, i, float_to_half(static_cast<float>(v))); break;
          default: store(bytes, i, float_to_bf16(static_cast<float>(v))); break;
        }
      } else {
        int64_t v = 0;
        uint64_t u = 0;
        auto [p, ec] = t.dtype == DType::u64 ? std::from_chars(tok.data(), tok.data() + tok.size(), u)
                                             : std::from_chars(tok.data(), tok.data() + tok.size(), v);
        if (ec != std::errc() || p != tok.data() + tok.size())
          return r_.error_at(lit.pos, fmt::format("bad integer '{}'", tok));
        if (!integer_fits(t.dtype, v))
          return r_.error_at(lit.pos, fmt::format("integer '{}' is out of range for {}", tok, dtype_name(t.dtype)));
        switch (t.dtype) {
          case DType::i64: store(bytes, i, v); break;
          case DType::u64: store(bytes, i, u); break;
          case DType::i32: store(bytes, i, static_cast<int32_t>(v)); break;
          case DType::u32: store(bytes, i, static_cast<uint32_t>(v)); break;
          case DType::i16: store(bytes, i, static_cast<int16_t>(v)); break;
          case DType::u16: store(bytes, i, static_cast<uint16_t>(v)); break;
          case DType::i8: store(bytes, i, static_cast<int8_t>(v)); break;
          default: store(bytes, i, static_cast<uint8_t>(v)); break;  // u8, bool
        }
      }
    }
  }
  return std::make_shared<const Tensor>(t.dtype, std::move(dims), std::move(bytes));
}

Expected<AttrValue> Parser::attr_value() {
  char c = r_.peek();
  if (c == '"') {
    auto s = r_.string_literal();
    if (!s) return std::unexpected(s.error());
    return AttrValue(*s);
  }
  if (r_.accept_word("ints")) {
    if (auto ok = r_.expect('['); !ok) return std::unexpected(ok.error());
    if (auto ok = r_.expect(']'); !ok) return std::unexpected(ok.error());
    return AttrValue(std::vector<int64_t>{});
  }
  if (r_.accept_word("floats")) {
    if (auto ok = r_.expect('['); !ok) return std::unexpected(ok.error());
    if (auto ok = r_.expect(']'); !ok) return std::unexpected(ok.error());
    return AttrValue(std::vector<float>{});
  }
  if (r_.accept_word("strings")) {
    if (auto ok = r_.expect('['); !ok) return std::unexpected(ok.error());
    if (auto ok = r_.expect(']'); !ok) return std::unexpected(ok.error());
    return AttrValue(std::vector<std::string>{});
  }
  if (r_.accept_word("opaque")) {
    if (auto ok = r_.expect('<'); !ok) return std::unexpected(ok.error());
    std::string kind = r_.number_token();
    if (auto ok = r_.expect(','); !ok) return std::unexpected(ok.error());
    r_.skip_space();
    size_t hex_pos = r_.pos();
    auto hex = r_.string_literal();
    if (!hex) return std::unexpected(hex.error());
    if (auto ok = r_.expect('>'); !ok) return std::unexpected(ok.error());
    OpaqueAttr a;
    a.onnx_kind = std::atoi(kind.c_str());
    if (!decode_hex(*hex, a.bytes)) return r_.error_at(hex_pos, "expected pairs of hex digits");
    return AttrValue(std::move(a));
  }
  if (c == 'd' || c == 'h' || c == 'b') {
    auto lit = literal();
    if (!lit) return std::unexpected(lit.error());
    if (auto ok = r_.expect(':'); !ok) return std::unexpected(ok.error());
    auto t = type();
    if (!t) return std::unexpected(t.error());
    auto tensor = build_tensor(*lit, *t);
    if (!tensor) return std::unexpected(tensor.error());
    return AttrValue(*tensor);
  }
  auto scalar = [&](std::string tok) -> std::optional<AttrValue> {
    if (tok.find_first_of(".en") != std::string::npos || tok.find("inf") != std::string::npos) {
      float f;
      if (tok == "nan") return AttrValue(std::nanf(""));
      if (tok == "inf") return AttrValue(INFINITY);
      if (tok == "-inf") return AttrValue(-INFINITY);
      auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), f);
      if (ec != std::errc() || p != tok.data() + tok.size()) return std::nullopt;
      return AttrValue(f);
    }
    int64_t v;
    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (ec != std::errc() || p != tok.data() + tok.size() || tok.empty()) return std::nullopt;
    return AttrValue(v);
  };
  if (r_.accept('[')) {
    if (r_.peek() == '"') {
      std::vector<std::string> out;
      do {
        auto s = r_.string_literal();
        if (!s) return std::unexpected(s.error());
        out.push_back(*s);
      } while (r_.accept(','));
      if (auto ok = r_.expect(']'); !ok) return std::unexpected(ok.error());
      return AttrValue(std::move(out));
    }
    std::vector<AttrValue> items;
    do {
      size_t pos = (r_.skip_space(), r_.pos());
      auto v = scalar(r_.number_token());
      if (!v) return r_.error_at(pos, "expected a number in the list");
      items.push_back(*v);
    } while (r_.accept(','));
    if (auto ok = r_.expect(']'); !ok) return std::unexpected(ok.error());
    bool any_float = false;
    for (const auto& v : items) any_float |= std::holds_alternative<float>(v);
    if (any_float) {
      std::vector<float> out;
      for (const auto& v : items)
        out.push_back(std::holds_alternative<float>(v) ? std::get<float>(v) : static_cast<float>(std::get<int64_t>(v)));
      return AttrValue(std::move(out));
    }
    std::vector<int64_t> out;
    for (const auto& v : items) out.push_back(std::get<int64_t>(v));
    return AttrValue(std::move(out));
  }
  size_t pos = (r_.skip_space(), r_.pos());
  auto v = scalar(r_.number_token());
  if (!v) return r_.error_at(pos, "expected an attribute value");
  return *v;
}

Expected<Attributes> Parser::attributes() {
  Attributes attrs;
  if (auto ok = r_.expect('{'); !ok) return std::unexpected(ok.error());
  if (r_.accept('}')) return attrs;
  do {
    r_.skip_space();
    size_t pos = r_.pos();
    std::string name;
    if (r_.peek() == '"') {
      auto s = r_.string_literal();
      if (!s) return std::unexpected(s.error());
      name = *s;
    } else {
      name = r_.bare_name();
    }
    if (name.empty()) return r_.error("expected an attribute name");
    if (attrs.has(name)) return r_.error_at(pos, fmt::format("attribute '{}' given twice", name));
    if (auto ok = r_.expect('=', fmt::format("after attribute '{}'", name)); !ok) return std::unexpected(ok.error());
    auto v = attr_value();
    if (!v) return std::unexpected(v.error());
    attrs.set(std::move(name), std::move(*v));
  } while (r_.accept(','));
  if (auto ok = r_.expect('}', "to close the attributes"); !ok) return std::unexpected(ok.error());
  return attrs;
}

Expected<void> Parser::header(ModelInfo& info) {
  auto map = [&](auto&& each) -> Expected<void> {
    if (auto ok = r_.expect('{'); !ok) return ok;
    if (r_.accept('}')) return {};
    do {
      auto key = r_.string_literal();
      if (!key) return std::unexpected(key.error());
      if (auto ok = r_.expect('='); !ok) return ok;
      if (auto ok = each(*key); !ok) return ok;
    } while (r_.accept(','));
    return r_.expect('}');
  };
  if (auto ok = r_.expect('{'); !ok) return ok;
  info.opsets.clear();
  if (r_.accept('}')) return {};
  do {
    r_.skip_space();
    size_t pos = r_.pos();
    std::string key = r_.bare_name();
    if (auto ok = r_.expect('=', fmt::format("after '{}'", key)); !ok) return ok;
    if (key == "opsets") {
      auto ok = map([&](const std::string& domain) -> Expected<void> {
        std::string tok = r_.number_token();
        info.opsets[domain] = std::atoll(tok.c_str());
        return {};
      });
      if (!ok) return ok;
    } else if (key == "metadata") {
      auto ok = map([&](const std::string& k) -> Expected<void> {
        auto v = r_.string_literal();
        if (!v) return std::unexpected(v.error());
        info.metadata.emplace_back(k, *v);
        return {};
      });
      if (!ok) return ok;
    } else if (key == "onnx_functions") {
      if (auto ok = r_.expect('['); !ok) return ok;
      info.onnx_functions.clear();
      if (!r_.accept(']')) {
        do {
          r_.skip_space();
          size_t hex_pos = r_.pos();
          auto hex = r_.string_literal();
          if (!hex) return std::unexpected(hex.error());
          std::string bytes;
          if (!decode_hex(*hex, bytes)) return r_.error_at(hex_pos, "expected pairs of hex digits");
          info.onnx_functions.push_back(std::move(bytes));
        } while (r_.accept(','));
        if (auto ok = r_.expect(']'); !ok) return ok;
      }
    } else if (key == "ir_version" || key == "model_version") {
      int64_t v = std::atoll(r_.number_token().c_str());
      (key == "ir_version" ? info.ir_version : info.model_version) = v;
    } else {
      auto v = r_.string_literal();
      if (!v) return std::unexpected(v.error());
      if (key == "producer_name")
        info.producer_name = *v;
      else if (key == "producer_version")
        info.producer_version = *v;
      else if (key == "domain")
        info.domain = *v;
      else if (key == "doc_string")
        info.doc_string = *v;
      else
        return r_.error_at(pos, fmt::format("unknown graph attribute '{}'", key));
    }
  } while (r_.accept(','));
  return r_.expect('}');
}

Expected<void> Parser::statement(Graph& g) {
  r_.skip_space();
  size_t stmt_pos = r_.pos();
  std::vector<std::pair<std::string, size_t>> results;
  if (r_.peek() == '%' || r_.peek() == '_') {
    do {
      r_.skip_space();
      size_t pos = r_.pos();
      auto name = ref();
      if (!name) return std::unexpected(name.error());
      results.emplace_back(*name, pos);
    } while (r_.accept(','));
    if (auto ok = r_.expect('='); !ok) return ok;
  }
  r_.skip_space();
  size_t op_pos = r_.pos();
  if (r_.accept_word("const")) {
    if (results.size() != 1) return r_.error_at(stmt_pos, "a constant defines exactly one value");
    auto lit = literal();
    if (!lit) return std::unexpected(lit.error());
    if (auto ok = r_.expect(':'); !ok) return ok;
    auto t = type();
    if (!t) return std::unexpected(t.error());
    auto tensor = build_tensor(*lit, *t);
    if (!tensor) return std::unexpected(tensor.error());
    return define(results[0].first, g.add_constant(results[0].first, *tensor), results[0].second);
  }
  Node node;
  if (r_.peek() == '"') {
    auto s = r_.string_literal();
    if (!s) return std::unexpected(s.error());
    auto sep = s->rfind("::");
    if (sep == std::string::npos)
      node.op_type = *s;
    else {
      node.domain = s->substr(0, sep);
      node.op_type = s->substr(sep + 2);
    }
    node.op = Op::Opaque;
  } else {
    std::string name = r_.bare_name();
    if (name.empty()) return r_.error("expected an op name");
    auto op = op_from_name(name);
    if (!op)
      return r_.error_at(
          op_pos,
          fmt::format("unknown op '{}' (an op Refinery does not know is written quoted, as \"Domain::Type\")", name));
    node.op = *op;
  }
  if (auto ok = r_.expect('(', "to open the operands"); !ok) return ok;
  if (!r_.accept(')')) {
    do {
      if (r_.accept_word("none")) {
        node.inputs.push_back(kNoValue);
        continue;
      }
      size_t pos = (r_.skip_space(), r_.pos());
      auto name = ref();
      if (!name) return std::unexpected(name.error());
      auto it = names_.find(*name);
      if (it == names_.end()) {
        later_.push_back(Later{NodeId{static_cast<uint32_t>(g.num_nodes())}, node.inputs.size(), *name, pos});
        node.inputs.push_back(kNoValue);
      } else {
        node.inputs.push_back(it->second);
      }
    } while (r_.accept(','));
    if (auto ok = r_.expect(')', "to close the operands"); !ok) return ok;
  }
  if (r_.peek() == '{') {
    auto attrs = attributes();
    if (!attrs) return std::unexpected(attrs.error());
    node.attrs = std::move(*attrs);
  }
  if (auto ok = r_.expect(':', "before the result types"); !ok) return ok;
  std::vector<TensorType> types;
  if (r_.accept('(')) {
    if (auto ok = r_.expect(')'); !ok) return ok;
  } else {
    do {
      auto t = type();
      if (!t) return std::unexpected(t.error());
      types.push_back(*t);
    } while (r_.accept(','));
  }
  if (types.size() != results.size())
    return r_.error_at(stmt_pos, fmt::format("{} results but {} types", results.size(), types.size()));
  if (r_.accept_word("loc")) {
    if (auto ok = r_.expect('('); !ok) return ok;
    auto s = r_.string_literal();
    if (!s) return std::unexpected(s.error());
    node.name = *s;
    if (auto ok = r_.expect(')'); !ok) return ok;
  }
  std::vector<std::string> names;
  for (const auto& [n, pos] : results) names.push_back(n);
  NodeId id = g.add_node(std::move(node), names, types);
  node_pos_.push_back(op_pos);
  for (size_t i = 0; i < results.size(); ++i)
    if (auto ok = define(results[i].first, g.node(id).outputs[i], results[i].second); !ok) return ok;
  return {};
}

// Declared and inferred types agree where both are known.
bool compatible(const TensorType& declared, const TensorType& inferred) {
  if (declared.dtype != inferred.dtype) return false;
  if (!declared.shape.ranked() || !inferred.shape.ranked()) return true;
  if (declared.shape.rank() != inferred.shape.rank()) return false;
  for (int64_t i = 0; i < declared.shape.rank(); ++i) {
    const Dim &a = declared.shape[i], &b = inferred.shape[i];
    if (a.is_static() && b.is_static() && a.size() != b.size()) return false;
  }
  return true;
}

Expected<Graph> Parser::parse() {
  Graph g;
  if (auto ok = r_.expect_word("graph"); !ok) return std::unexpected(ok.error());
  if (auto ok = r_.expect('@'); !ok) return std::unexpected(ok.error());
  auto gname = r_.name_after_sigil();
  if (!gname) return std::unexpected(gname.error());
  g.info.graph_name = *gname;
  if (auto ok = r_.expect('('); !ok) return std::unexpected(ok.error());
  if (!r_.accept(')')) {
    do {
      r_.skip_space();
      size_t pos = r_.pos();
      auto name = ref();
      if (!name) return std::unexpected(name.error());
      if (auto ok = r_.expect(':'); !ok) return std::unexpected(ok.error());
      auto t = type();
      if (!t) return std::unexpected(t.error());
      if (auto ok = define(*name, g.add_input(*name, *t), pos); !ok) return std::unexpected(ok.error());
    } while (r_.accept(','));
    if (auto ok = r_.expect(')'); !ok) return std::unexpected(ok.error());
  }
  if (r_.accept_word("attributes"))
    if (auto ok = header(g.info); !ok) return std::unexpected(ok.error());
  if (auto ok = r_.expect('{'); !ok) return std::unexpected(ok.error());
  while (!r_.accept_word("return")) {
    if (r_.at_end()) return r_.error("expected 'return' before the end of the graph");
    if (auto ok = statement(g); !ok) return std::unexpected(ok.error());
  }
  std::vector<ValueId> outs;
  if (r_.peek() == '%') {
    do {
      auto v = use();
      if (!v) return std::unexpected(v.error());
      outs.push_back(*v);
    } while (r_.accept(','));
  }
  g.set_outputs(std::move(outs));
  if (auto ok = r_.expect('}', "to close the graph"); !ok) return std::unexpected(ok.error());
  if (!r_.at_end()) return r_.error("unexpected text after the graph");

  for (const Later& l : later_) {
    auto it = names_.find(l.name);
    if (it == names_.end()) return r_.error_at(l.pos, fmt::format("use of undefined value %{}", l.name));
    g.node(l.node).inputs[l.input] = it->second;
  }

  // Arity, attributes, then types: each error points at the node's line.
  auto at_node = [&](size_t n, const std::string& msg) { return r_.error_at(node_pos_[n], msg); };
  if (auto ok = g.verify(); !ok) {
    // verify() names the node; find its position.
    for (size_t n = 0; n < g.num_nodes(); ++n)
      if (ok.error().where.find(fmt::format("'{}'", g.node_label(NodeId{static_cast<uint32_t>(n)}))) !=
          std::string::npos)
        return at_node(n, ok.error().message);
    return std::unexpected(Diag{r_.file(), ok.error().where, ok.error().message});
  }
  Graph inferred = g;
  if (auto ok = inferred.infer_shapes(); !ok) {
    for (size_t n = 0; n < g.num_nodes(); ++n)
      if (ok.error().where.find(fmt::format("'{}'", g.node_label(NodeId{static_cast<uint32_t>(n)}))) !=
          std::string::npos) {
        auto e = at_node(n, ok.error().message);
        e.error().limitation = ok.error().limitation;
        return e;
      }
    return std::unexpected(Diag{r_.file(), ok.error().where, ok.error().message, ok.error().limitation});
  }
  for (size_t n = 0; n < g.num_nodes(); ++n)
    for (ValueId v : g.nodes()[n].outputs)
      if (!compatible(g.value(v).type, inferred.value(v).type))
        return at_node(n, fmt::format("%{} is declared {} but {} gives {}", g.value(v).name, g.value(v).type.str(),
                                      op_name(g.nodes()[n].op), inferred.value(v).type.str()));
  return g;
}

}  // namespace

Expected<Graph> parse_graph(std::string_view text, const std::string& file) {
  return Parser(text, file, nullptr).parse();
}

Expected<Graph> read_ir_file(const std::filesystem::path& file) {
  auto text = read_file(file);
  if (!text) return std::unexpected(text.error());
  std::filesystem::path side = file;
  side += ".bin";
  std::optional<std::string> sidecar;
  if (std::filesystem::exists(side)) {
    auto bytes = read_file(side);
    if (!bytes) return std::unexpected(bytes.error());
    sidecar = std::move(*bytes);
  }
  return Parser(*text, file.string(), sidecar ? &*sidecar : nullptr).parse();
}

Expected<void> write_ir_file(const Graph& graph, const std::filesystem::path& file) {
  std::string blob;
  std::string text = print_graph(graph, PrintOptions{.weights = WeightsMode::Blob}, &blob);
  std::filesystem::path side = file;
  side += ".bin";
  if (blob.empty()) {
    auto ok = write_files_atomic({{file, text}});
    std::error_code ec;
    if (ok) std::filesystem::remove(side, ec);  // a stale sidecar would be misleading
    return ok;
  }
  return write_files_atomic({{side, blob}, {file, text}});
}

}  // namespace refinery::ir
