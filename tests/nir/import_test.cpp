// NIR import and export: the shared example files, the malformed ones' exact
// messages, and import -> export -> import identity.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "frontends/nir.h"
#include "ir/spiking.h"
#include "ir/text.h"
#include "nir_test_files.h"

namespace refinery {
namespace {

namespace fs = std::filesystem;

const char* kLoads[] = {"paper_01_lif_lif_norse.nir", "paper_01_lif_lif_rockpool.nir", "paper_02_cnn_cnn_sinabs.nir",
                        "paper_03_rnn_braille_noDelay_bias_zero.nir", "NIRTorch_tests_feedback_graph.nir"};
const char* kGenerated[] = {"gen_lif.nir", "gen_cubalif.nir", "gen_if.nir", "gen_recurrent.nir", "gen_nested.nir",
                            "gen_loop.nir",    "gen_loop_renamed.nir"};

// Import, export, import again: the two graphs are identical, and so are
// their .ir texts.
void round_trip(const fs::path& file) {
  auto a = frontends::import_nir(file);
  ASSERT_TRUE(a.has_value()) << a.error().str();
  fs::path out = fs::path(REFINERY_BINARY_DIR) / "tests" / "nir" / ("rt_" + file.filename().string());
  fs::create_directories(out.parent_path());
  auto ok = frontends::export_nir(*a, out);
  ASSERT_TRUE(ok.has_value()) << ok.error().str();
  auto b = frontends::import_nir(out);
  ASSERT_TRUE(b.has_value()) << b.error().str();
  EXPECT_EQ(ir::graph_difference(*a, *b), "") << file;
  // and through the text format
  auto c = ir::parse_graph(ir::print_graph(*a));
  ASSERT_TRUE(c.has_value()) << c.error().str();
  EXPECT_EQ(ir::graph_difference(*a, *c), "") << file;
}

TEST(NirImport, SharedExamplesLoadAndRoundTrip) {
  for (const char* f : kLoads) {
    SCOPED_TRACE(f);
    round_trip(test::shared_nir(f));
  }
}

TEST(NirImport, GeneratedNetworksLoadAndRoundTrip) {
  if (test::generated_nir().empty()) FAIL() << test::kPythonMissing;
  for (const char* f : kGenerated) {
    SCOPED_TRACE(f);
    round_trip(test::generated_nir() / f);
  }
}

TEST(NirImport, FiguresOfTheBrailleNetwork) {
  auto g = frontends::import_nir(test::shared_nir("paper_03_rnn_braille_noDelay_bias_zero.nir"));
  ASSERT_TRUE(g.has_value());
  auto s = ir::spiking_stats(*g);
  EXPECT_EQ(s.layers, 5);
  EXPECT_EQ(s.neurons, 38 + 7);
  EXPECT_EQ(s.synapses, 38 * 12 + 38 * 38 + 7 * 38);
  EXPECT_EQ(s.recurrent_edges, 1);
}

TEST(NirImport, NestedGraphIsInlined) {
  if (test::generated_nir().empty()) FAIL() << test::kPythonMissing;
  auto g = frontends::import_nir(test::generated_nir() / "gen_nested.nir");
  ASSERT_TRUE(g.has_value()) << g.error().str();
  EXPECT_TRUE(g->find_value("rnn/lif").has_value());
  EXPECT_EQ(ir::spiking_stats(*g).recurrent_edges, 1);
}

// Export re-nests "rnn/..." into a NIRGraph group "rnn" with its own edges,
// Input and Output, as NIR writes nested graphs.
TEST(NirExport, NestedGraphIsWrittenNested) {
  if (test::generated_nir().empty()) FAIL() << test::kPythonMissing;
  auto g = frontends::import_nir(test::generated_nir() / "gen_nested.nir");
  ASSERT_TRUE(g.has_value()) << g.error().str();
  fs::path out = fs::path(REFINERY_BINARY_DIR) / "tests" / "nir" / "nested_layout.nir";
  ASSERT_TRUE(frontends::export_nir(*g, out).has_value());
  std::string cmd = std::string(test::kPython) +
                    " -c \"import h5py,sys\n"
                    "f = h5py.File(sys.argv[1])\n"
                    "r = f['node/nodes/rnn']\n"
                    "assert r['type'][()] == b'NIRGraph'\n"
                    "assert sorted(r['nodes']) == ['input', 'lif', 'lin', 'output'], list(r['nodes'])\n"
                    "assert r['nodes/input/type'][()] == b'Input' and r['nodes/output/type'][()] == b'Output'\n"
                    "e = sorted((a.decode(), b.decode()) for a, b in r['edges'][()])\n"
                    "assert e == [('input', 'lif'), ('lif', 'lin'), ('lif', 'output'), ('lin', 'lif')], e\n"
                    "t = sorted((a.decode(), b.decode()) for a, b in f['node/edges'][()])\n"
                    "assert ('fc1', 'rnn') in t and ('rnn', 'fc2') in t, t\n"
                    "assert f['version'][()] == b'0.2.0'\n\" " +
                    out.string();
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST(NirExport, NestedGraphEnteredOtherThanThroughItsInputFails) {
  auto g = ir::parse_graph(R"(graph @main(%x: tensor<2xf32>) attributes {ir_version = 8, opsets = {}} {
  %w = const dense<[1.0, 0.0, 0.0, 1.0]> : tensor<2x2xf32>
  %thr = const dense<[1.0, 1.0]> : tensor<2xf32>
  %r = const dense<[1.0, 1.0]> : tensor<2xf32>
  %reset = const dense<[0.0, 0.0]> : tensor<2xf32>
  %"sub/lin" = linear(%x, %w) : tensor<2xf32> loc("sub/lin")
  %if = if_neuron(%"sub/lin", %r, %thr, %reset) : tensor<2xf32>
  return %if
}
)");
  ASSERT_TRUE(g.has_value()) << g.error().str();
  fs::path out = fs::path(REFINERY_BINARY_DIR) / "tests" / "nir" / "bad_nesting.nir";
  auto ok = frontends::export_nir(*g, out);
  ASSERT_FALSE(ok.has_value());
  EXPECT_EQ(ok.error().str(), out.string() +
                                  ":node 'sub/lin': edge 'x' -> 'sub/lin' crosses the boundary of a nested "
                                  "graph other than through its Input or Output node");
  EXPECT_FALSE(fs::exists(out));
}

// The file's NIR version is kept (in ModelInfo::metadata) and written back;
// a graph that did not come from NIR is written as 1.0.0.
TEST(NirExport, KeepsTheFileVersion) {
  auto g = frontends::import_nir(test::shared_nir("paper_01_lif_lif_norse.nir"));
  ASSERT_TRUE(g.has_value());
  ASSERT_EQ(g->info.metadata.size(), 1u);
  EXPECT_EQ(g->info.metadata[0], (std::pair<std::string, std::string>{"nir_version", "0.1.1"}));
  auto text = ir::print_graph(*g);
  EXPECT_NE(text.find("metadata = {\"nir_version\" = \"0.1.1\"}"), std::string::npos);
  g->info.metadata.clear();
  fs::path out = fs::path(REFINERY_BINARY_DIR) / "tests" / "nir" / "unversioned.nir";
  ASSERT_TRUE(frontends::export_nir(*g, out).has_value());
  auto back = frontends::import_nir(out);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->info.metadata[0].second, "1.0.0");
}

std::string error_of(const fs::path& file) {
  auto g = frontends::import_nir(file);
  return g ? "loaded" : g.error().str();
}

TEST(NirImport, MalformedSharedFilesNameTheFault) {
  fs::path scnn = test::shared_nir("NIR-demo-repo_norse_demo_scnn_model.nir");
  EXPECT_EQ(error_of(scnn), scnn.string() +
                                ":top-level graph: has no 'edges' dataset (a graph lists its edges as an "
                                "E x 2 table of node names)");
  fs::path sub = test::shared_nir("paper_03_rnn_extras_braille_noDelay_bias_zero_subgraph.nir");
  EXPECT_EQ(error_of(sub), sub.string() + ":graph 'lif1': edge 'input' -> 'lif': names no node 'lif'");
}

TEST(NirImport, MalformedGeneratedFilesNameTheFault) {
  fs::path dir = test::generated_nir();
  if (dir.empty()) FAIL() << test::kPythonMissing;
  EXPECT_EQ(error_of(dir / "bad_weight.nir"),
            (dir / "bad_weight.nir").string() +
                ":node 'fc': Affine: weight [5x7] does not fit the input [6]: expects [7] (input from 'input')");
  EXPECT_EQ(error_of(dir / "dangling_edge.nir"),
            (dir / "dangling_edge.nir").string() + ":top-level graph: edge 'lif' -> 'outptu': names no node 'outptu'");
  EXPECT_EQ(error_of(dir / "stateless_cycle.nir"),
            (dir / "stateless_cycle.nir").string() + ":node 'a': cycle without a stateful node through 'a', 'b'");
  EXPECT_EQ(error_of(dir / "no_edges.nir"), (dir / "no_edges.nir").string() + ":top-level graph: has no edges");
  EXPECT_EQ(error_of(dir / "huge_extent.nir"),
            (dir / "huge_extent.nir").string() +
                ":node 'lif': dataset 'tau' claims shape [1099511627776], more than the file holds for it");
  EXPECT_EQ(error_of(dir / "string_weight.nir"),
            (dir / "string_weight.nir").string() +
                ":node 'fc': Affine 'weight' has the wrong type: strings, expected numbers");
}

// snnTorch exports write an Output's shape as []: like NIR's own reader
// without type checking, the Output takes the shape that arrives, and the
// import says so.
TEST(NirImport, OutputWithEmptyShapeTakesWhatArrivesWithANote) {
  fs::path dir = test::generated_nir();
  if (dir.empty()) FAIL() << test::kPythonMissing;
  std::vector<Diag> notes;
  auto g = frontends::import_nir(dir / "output_empty_shape.nir", {.notes = &notes});
  ASSERT_TRUE(g.has_value()) << g.error().str();
  EXPECT_EQ(g->value(g->outputs()[0]).type.shape.str(), "3");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].str(), (dir / "output_empty_shape.nir").string() +
                                ":node 'output': Output has an empty stored shape; it takes the shape that arrives, "
                                "[3] from 'lif'");
}

// One byte of the braille network's global heap (offset 2482, found by
// fuzzing) makes libhdf5 read out of bounds in H5Dread, a segfault inside the
// library. The reader runs in a child process, so this is an error naming the
// file, and the test process lives.
TEST(NirImport, CorruptHdf5InternalsAreAnErrorNotACrash) {
  fs::path src = test::shared_nir("paper_03_rnn_braille_noDelay_bias_zero.nir");
  std::ifstream in(src, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 2482u);
  bytes[2482] = static_cast<char>(0xA2);
  fs::path bad = fs::path(REFINERY_BINARY_DIR) / "tests" / "nir" / "corrupt_heap.nir";
  std::ofstream(bad, std::ios::binary) << bytes;
  auto g = frontends::import_nir(bad);
  ASSERT_FALSE(g.has_value());
  EXPECT_EQ(g.error().file, bad.string()) << g.error().str();
  std::cout << "[ corrupt  ] " << g.error().str() << "\n";
  // The untouched file still loads through the same path.
  EXPECT_TRUE(frontends::import_nir(src).has_value());
}

TEST(NirImport, NotNir) {
  fs::path self = fs::path(REFINERY_SOURCE_DIR) / "tests" / "nir" / "CMakeLists.txt";
  EXPECT_EQ(error_of(self), self.string() + ": not an HDF5 file (a NIR file is HDF5)");
}

}  // namespace
}  // namespace refinery
