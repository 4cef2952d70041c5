#include "tests/frontends/model_builder.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>

namespace refinery::frontends::testing {

ModelBuilder::ModelBuilder(int64_t opset) {
  model_.set_ir_version(8);
  model_.set_producer_name("refinery-tests");
  auto* o = model_.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  model_.mutable_graph()->set_name("test");
}

void set_dims(onnx::TypeProto* type, int elem_type, const std::vector<DimSpec>& dims) {
  auto* t = type->mutable_tensor_type();
  t->set_elem_type(elem_type);
  auto* shape = t->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (const auto* size = std::get_if<int64_t>(&d))
      dim->set_dim_value(*size);
    else if (!std::get<std::string>(d).empty())
      dim->set_dim_param(std::get<std::string>(d));
  }
}

ModelBuilder& ModelBuilder::input(const std::string& name, int elem_type, const std::vector<DimSpec>& dims) {
  auto* vi = model_.mutable_graph()->add_input();
  vi->set_name(name);
  set_dims(vi->mutable_type(), elem_type, dims);
  return *this;
}

ModelBuilder& ModelBuilder::output(const std::string& name, int elem_type, const std::vector<DimSpec>& dims) {
  auto* vi = model_.mutable_graph()->add_output();
  vi->set_name(name);
  set_dims(vi->mutable_type(), elem_type, dims);
  return *this;
}

onnx::NodeProto& ModelBuilder::node(const std::string& op_type, const std::vector<std::string>& inputs,
                                    const std::vector<std::string>& outputs, const std::string& name,
                                    const std::string& domain) {
  auto* n = model_.mutable_graph()->add_node();
  n->set_op_type(op_type);
  if (!name.empty()) n->set_name(name);
  if (!domain.empty()) n->set_domain(domain);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *n;
}

onnx::TensorProto& ModelBuilder::initializer_f32(const std::string& name, const std::vector<int64_t>& dims,
                                                 const std::vector<float>& values) {
  auto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
  return *t;
}

onnx::TensorProto& ModelBuilder::initializer_external(const std::string& name, const std::vector<int64_t>& dims,
                                                      const std::string& location, std::optional<uint64_t> offset,
                                                      std::optional<uint64_t> length) {
  auto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const char* key, const std::string& value) {
    auto* e = t->add_external_data();
    e->set_key(key);
    e->set_value(value);
  };
  add("location", location);
  if (offset) add("offset", std::to_string(*offset));
  if (length) add("length", std::to_string(*length));
  return *t;
}

ModelBuilder nested_ifs(int depth) {
  ModelBuilder b;
  b.input("c", onnx::TensorProto::BOOL, {}).output("y", onnx::TensorProto::FLOAT, {int64_t{1}});
  // A branch that gives [1.0] as `out`.
  auto leaf = [](onnx::GraphProto* g, const std::string& out) {
    g->set_name("leaf");
    auto* n = g->add_node();
    n->set_op_type("Constant");
    n->add_output(out);
    auto* a = n->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_dims(1);
    a->mutable_t()->add_float_data(1.0f);
    auto* o = g->add_output();
    o->set_name(out);
    set_dims(o->mutable_type(), onnx::TensorProto::FLOAT, {int64_t{1}});
  };
  onnx::GraphProto* g = b.model().mutable_graph();
  for (int level = 0; level < depth; ++level) {
    const std::string out = level == 0 ? "y" : fmt::format("y{}", level);
    onnx::NodeProto* n = g->add_node();
    n->set_op_type("If");
    n->set_name(fmt::format("if{}", level));
    n->add_input("c");
    n->add_output(out);
    auto* then_attr = n->add_attribute();
    then_attr->set_name("then_branch");
    then_attr->set_type(onnx::AttributeProto::GRAPH);
    auto* else_attr = n->add_attribute();
    else_attr->set_name("else_branch");
    else_attr->set_type(onnx::AttributeProto::GRAPH);
    leaf(else_attr->mutable_g(), fmt::format("e{}", level));
    g = then_attr->mutable_g();
    g->set_name(fmt::format("then{}", level));
    const std::string inner = fmt::format("y{}", level + 1);
    auto* o = g->add_output();
    o->set_name(inner);
    set_dims(o->mutable_type(), onnx::TensorProto::FLOAT, {int64_t{1}});
  }
  leaf(g, fmt::format("y{}", depth));  // the innermost then_branch: a Constant
  g->mutable_output()->RemoveLast();   // leaf adds the output again
  return b;
}

ModelBuilder relu_chain(int length) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {int64_t{1}}).output("y", onnx::TensorProto::FLOAT, {int64_t{1}});
  for (int i = 0; i < length; ++i)
    b.node("Relu", {i == 0 ? "x" : fmt::format("r{}", i)}, {i + 1 == length ? "y" : fmt::format("r{}", i + 1)},
           fmt::format("relu{}", i));
  return b;
}

ModelBuilder& ModelBuilder::import_domain(const std::string& domain, int64_t version) {
  auto* o = model_.add_opset_import();
  o->set_domain(domain);
  o->set_version(version);
  return *this;
}

std::filesystem::path ModelBuilder::write(const std::filesystem::path& dir, const std::string& file_name) const {
  auto path = dir / file_name;
  std::ofstream out(path, std::ios::binary);
  model_.SerializeToOstream(&out);
  return path;
}

onnx::AttributeProto& add_attr(onnx::NodeProto& node, const std::string& name, int64_t value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
  return *a;
}

onnx::AttributeProto& add_attr(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : value) a->add_ints(v);
  return *a;
}

onnx::AttributeProto& add_attr(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
  return *a;
}

onnx::AttributeProto& add_attr(onnx::NodeProto& node, const std::string& name, float value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
  return *a;
}

onnx::ModelProto read_model_proto(const std::filesystem::path& file) {
  onnx::ModelProto m;
  std::ifstream in(file, std::ios::binary);
  EXPECT_TRUE(m.ParseFromIstream(&in)) << file;
  return m;
}

std::filesystem::path fresh_dir(const std::string& name) {
  auto dir = std::filesystem::path(::testing::TempDir()) / fmt::format("refinery_fe_{}_{}", name, getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

namespace {

std::string node_text(const ir::Graph& g, const ir::Node& n) {
  auto names = [&](const std::vector<ir::ValueId>& vs) {
    std::vector<std::string> out;
    for (ir::ValueId v : vs) out.push_back(v == ir::kNoValue ? "" : g.value(v).name);
    return fmt::format("{}", fmt::join(out, ","));
  };
  std::string op = n.op == ir::Op::Opaque ? n.domain + "::" + n.op_type : std::string(ir::op_name(n.op));
  return fmt::format("{} '{}' ({}) -> ({})", op, n.name, names(n.inputs), names(n.outputs));
}

}  // namespace

std::vector<std::string> graph_differences(const ir::Graph& a, const ir::Graph& b) {
  std::vector<std::string> diffs;
  if (a.num_nodes() != b.num_nodes()) diffs.push_back(fmt::format("{} nodes vs {}", a.num_nodes(), b.num_nodes()));
  for (size_t i = 0; i < std::min(a.num_nodes(), b.num_nodes()); ++i) {
    const ir::Node& x = a.nodes()[i];
    const ir::Node& y = b.nodes()[i];
    std::string tx = node_text(a, x), ty = node_text(b, y);
    if (tx != ty) diffs.push_back(fmt::format("node {}: {} vs {}", i, tx, ty));
    if (!(x.attrs == y.attrs)) diffs.push_back(fmt::format("node {} ({}): attributes differ", i, tx));
  }
  auto io = [&](const ir::Graph& g, const std::vector<ir::ValueId>& vs) {
    std::vector<std::string> out;
    for (ir::ValueId v : vs) out.push_back(g.value(v).name + ":" + g.value(v).type.str());
    return out;
  };
  if (io(a, a.inputs()) != io(b, b.inputs())) diffs.push_back("graph inputs differ");
  if (io(a, a.outputs()) != io(b, b.outputs())) diffs.push_back("graph outputs differ");
  if (a.constants().size() != b.constants().size())
    diffs.push_back(fmt::format("{} constants vs {}", a.constants().size(), b.constants().size()));
  for (size_t i = 0; i < std::min(a.constants().size(), b.constants().size()); ++i) {
    const ir::Value& x = a.value(a.constants()[i]);
    const ir::Value& y = b.value(b.constants()[i]);
    if (x.name != y.name || !x.constant->bitwise_equal(*y.constant))
      diffs.push_back(fmt::format("constant {} ('{}' vs '{}') differs", i, x.name, y.name));
  }
  return diffs;
}

namespace {

// Runs `node tools/ort/SCRIPT ARGS 2>&1`: its exit status and output.
OrtResult run_ort_tool(const std::string& script, const std::string& args) {
  const std::filesystem::path tools = std::filesystem::path(REFINERY_SOURCE_DIR) / "tools" / "ort";
  if (!std::filesystem::exists(tools / "node_modules" / "onnxruntime-node"))
    return {-1, "tools/ort/node_modules/onnxruntime-node is missing: run scripts/setup.sh"};
  if (std::system("node --version > /dev/null 2>&1") != 0) return {-1, "node is missing: run scripts/setup.sh"};
  std::string cmd = fmt::format("node '{}' {} 2>&1", (tools / script).string(), args);
  std::FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return {-1, fmt::format("cannot run '{}'", cmd)};
  std::string output;
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) output.append(buf.data(), n);
  int status = pclose(pipe);
  return OrtResult{WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

}  // namespace

OrtResult ort_compare_exact(const std::filesystem::path& a, const std::filesystem::path& b, const std::string& opt) {
  return run_ort_tool("compare.mjs", fmt::format("'{}' '{}' --exact --opt {}", a.string(), b.string(), opt));
}

std::vector<std::string> ort_optimized_ops(const std::filesystem::path& model, const std::filesystem::path& out,
                                           std::string* why) {
  OrtResult r = run_ort_tool("profile.mjs",
                             fmt::format("'{}' --runs 1 --warmup 0 --optimized '{}'", model.string(), out.string()));
  if (r.status != 0) {
    *why = r.output;
    return {};
  }
  const onnx::ModelProto m = read_model_proto(out);
  std::vector<std::string> ops;
  for (const auto& n : m.graph().node()) ops.push_back(n.op_type());
  return ops;
}

}  // namespace refinery::frontends::testing
