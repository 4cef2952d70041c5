// Printer for the textual IR (format in docs/ir.md).
#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "ir/text.h"
#include "ir/text_lexer.h"

namespace refinery::ir {
namespace {

std::string quote_text(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(ch) < 0x20)
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(ch));
    else
      out += ch;
  }
  return out + "\"";
}

std::string value_ref(const std::string& name) {
  if (name.empty()) return "_";
  return is_bare_name(name) ? "%" + name : "%" + quote_text(name);
}

std::string float_text(double v, bool single) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto r =
      single ? std::to_chars(buf, buf + sizeof buf, static_cast<float>(v)) : std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string hex_bytes(std::span<const std::byte> bytes) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (std::byte b : bytes) {
    out += kDigits[static_cast<unsigned>(b) >> 4];
    out += kDigits[static_cast<unsigned>(b) & 15];
  }
  return out;
}

bool has_nan(const Tensor& t) {
  if (!is_float(t.dtype())) return false;
  for (int64_t i = 0; i < t.numel(); ++i)
    if (std::isnan(t.as_double(i))) return true;
  return false;
}

// dense<[...]> lists the elements; NaNs (whose payload a literal would lose)
// and large tensors go as raw bytes.
std::string tensor_literal(const Tensor& t, const PrintOptions& opt, std::string* blob) {
  if (t.numel() <= kInlineElements && !has_nan(t)) {
    std::string out = "dense<[";
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (i) out += ", ";
      if (t.dtype() == DType::boolean)
        out += t.as_int(i) ? "true" : "false";
      else if (is_float(t.dtype()))
        out += float_text(t.as_double(i), t.dtype() != DType::f64);
      else if (t.dtype() == DType::u64)
        out += std::to_string(static_cast<uint64_t>(t.as_int(i)));
      else
        out += std::to_string(t.as_int(i));
    }
    return out + "]>";
  }
  if (opt.weights == WeightsMode::Blob && blob != nullptr) {
    // Align each tensor to 64 bytes so the sidecar can be mapped and used in place.
    blob->resize((blob->size() + 63) / 64 * 64, '\0');
    size_t offset = blob->size();
    blob->append(reinterpret_cast<const char*>(t.bytes().data()), t.bytes().size());
    return fmt::format("blob<{}>", offset);
  }
  if (opt.weights == WeightsMode::Elide) return fmt::format("elided<{:016x}>", t.hash());
  return fmt::format("hex<\"{}\">", hex_bytes(t.bytes()));
}

std::string tensor_type_of(const Tensor& t) { return TensorType{t.dtype(), Shape::of(t.dims())}.str(); }

std::string attr_text(const AttrValue& v, const PrintOptions& opt, std::string* blob) {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>)
          return std::to_string(x);
        else if constexpr (std::is_same_v<T, float>)
          return float_text(x, true);
        else if constexpr (std::is_same_v<T, std::string>)
          return quote_text(x);
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          return x.empty() ? "ints[]" : fmt::format("[{}]", fmt::join(x, ", "));
        else if constexpr (std::is_same_v<T, std::vector<float>>) {
          if (x.empty()) return "floats[]";
          std::vector<std::string> parts;
          for (float f : x) parts.push_back(float_text(f, true));
          return fmt::format("[{}]", fmt::join(parts, ", "));
        } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
          if (x.empty()) return "strings[]";
          std::vector<std::string> parts;
          for (const auto& s : x) parts.push_back(quote_text(s));
          return fmt::format("[{}]", fmt::join(parts, ", "));
        } else if constexpr (std::is_same_v<T, TensorRef>) {
          return fmt::format("{} : {}", tensor_literal(*x, opt, blob), tensor_type_of(*x));
        } else {
          std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(x.bytes.data()), x.bytes.size());
          return fmt::format("opaque<{}, \"{}\">", x.onnx_kind, hex_bytes(bytes));
        }
      },
      v);
}

std::string attrs_text(const Attributes& attrs, const PrintOptions& opt, std::string* blob) {
  if (attrs.empty()) return {};
  std::vector<std::string> parts;
  for (const auto& [name, value] : attrs.entries())
    parts.push_back(fmt::format("{} = {}", is_bare_name(name) ? name : quote_text(name), attr_text(value, opt, blob)));
  return fmt::format(" {{{}}}", fmt::join(parts, ", "));
}

std::string header_attrs(const ModelInfo& info) {
  std::vector<std::string> parts;
  parts.push_back(fmt::format("ir_version = {}", info.ir_version));
  std::vector<std::string> opsets;
  for (const auto& [domain, version] : info.opsets)
    opsets.push_back(fmt::format("{} = {}", quote_text(domain), version));
  parts.push_back(fmt::format("opsets = {{{}}}", fmt::join(opsets, ", ")));
  auto text = [&](std::string_view key, const std::string& v) {
    if (!v.empty()) parts.push_back(fmt::format("{} = {}", key, quote_text(v)));
  };
  text("producer_name", info.producer_name);
  text("producer_version", info.producer_version);
  text("domain", info.domain);
  text("doc_string", info.doc_string);
  if (info.model_version != 0) parts.push_back(fmt::format("model_version = {}", info.model_version));
  if (!info.metadata.empty()) {
    std::vector<std::string> kv;
    for (const auto& [k, v] : info.metadata) kv.push_back(fmt::format("{} = {}", quote_text(k), quote_text(v)));
    parts.push_back(fmt::format("metadata = {{{}}}", fmt::join(kv, ", ")));
  }
  if (!info.onnx_functions.empty()) {
    std::vector<std::string> fs;
    for (const std::string& f : info.onnx_functions)
      fs.push_back(fmt::format("\"{}\"", hex_bytes({reinterpret_cast<const std::byte*>(f.data()), f.size()})));
    parts.push_back(fmt::format("onnx_functions = [{}]", fmt::join(fs, ", ")));
  }
  return fmt::format("{{{}}}", fmt::join(parts, ", "));
}

}  // namespace

std::string print_graph(const Graph& g, const PrintOptions& opt, std::string* blob) {
  std::string out;
  std::vector<std::string> ins;
  for (ValueId v : g.inputs()) ins.push_back(fmt::format("{}: {}", value_ref(g.value(v).name), g.value(v).type.str()));
  std::string gname = is_bare_name(g.info.graph_name) ? g.info.graph_name : quote_text(g.info.graph_name);
  out += fmt::format("graph @{}({}) attributes {} {{\n", gname, fmt::join(ins, ", "), header_attrs(g.info));
  for (ValueId v : g.constants()) {
    const Value& val = g.value(v);
    out += fmt::format("  {} = const {} : {}\n", value_ref(val.name), tensor_literal(*val.constant, opt, blob),
                       val.type.str());
  }
  for (const Node& n : g.nodes()) {
    std::vector<std::string> outs, types, args;
    for (ValueId v : n.outputs) {
      outs.push_back(value_ref(g.value(v).name));
      types.push_back(g.value(v).type.str());
    }
    for (ValueId v : n.inputs) args.push_back(v == kNoValue ? "none" : value_ref(g.value(v).name));
    std::string op = n.op == Op::Opaque ? quote_text(n.domain.empty() ? n.op_type : n.domain + "::" + n.op_type)
                                        : std::string(op_name(n.op));
    std::string lhs = outs.empty() ? "" : fmt::format("{} = ", fmt::join(outs, ", "));
    out += fmt::format("  {}{}({}){} : {}", lhs, op, fmt::join(args, ", "), attrs_text(n.attrs, opt, blob),
                       types.empty() ? "()" : fmt::format("{}", fmt::join(types, ", ")));
    if (!n.name.empty()) out += fmt::format(" loc({})", quote_text(n.name));
    out += '\n';
  }
  std::vector<std::string> rets;
  for (ValueId v : g.outputs()) rets.push_back(value_ref(g.value(v).name));
  out += fmt::format("  return {}\n}}\n", fmt::join(rets, ", "));
  return out;
}

}  // namespace refinery::ir
