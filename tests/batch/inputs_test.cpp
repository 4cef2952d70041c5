// Discovery of the models of a batch, and shards.
#include <gtest/gtest.h>

#include <fstream>

#include "batch/inputs.h"
#include "batch/job.h"
#include "batch/shard.h"

namespace refinery::batch {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("refinery_batch_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void touch(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "x";
}

std::vector<std::string> names(const std::vector<ModelInput>& models) {
  std::vector<std::string> out;
  for (const auto& m : models) out.push_back(m.name);
  return out;
}

TEST(Inputs, FolderIsSearchedRecursivelyForOnnxAndNirSorted) {
  fs::path d = fresh_dir("inputs_folder");
  touch(d / "m/b.onnx");
  touch(d / "m/a.nir");
  touch(d / "m/sub/c.onnx");
  touch(d / "m/notes.txt");
  auto models = discover_models({(d / "m").string()});
  ASSERT_TRUE(models) << models.error().str();
  EXPECT_EQ(names(*models), (std::vector<std::string>{"m/a.nir", "m/b.onnx", "m/sub/c.onnx"}));
}

TEST(Inputs, DuplicateNamesGetASuffixAndTheSameFileIsKeptOnce) {
  fs::path d = fresh_dir("inputs_dup");
  touch(d / "x/mlp.onnx");
  touch(d / "y/mlp.onnx");
  auto models =
      discover_models({(d / "x/mlp.onnx").string(), (d / "y/mlp.onnx").string(), (d / "x/../x/mlp.onnx").string()});
  ASSERT_TRUE(models) << models.error().str();
  EXPECT_EQ(names(*models), (std::vector<std::string>{"mlp.onnx", "mlp~2.onnx"}));
}

TEST(Inputs, ManifestListsPathsRelativeToItself) {
  fs::path d = fresh_dir("inputs_manifest");
  touch(d / "models/a.onnx");
  touch(d / "more/b.onnx");
  std::ofstream(d / "list.txt") << "# the models\nmodels/a.onnx\n\n  more  \n";
  auto models = discover_models({(d / "list.txt").string()});
  ASSERT_TRUE(models) << models.error().str();
  EXPECT_EQ(names(*models), (std::vector<std::string>{"a.onnx", "more/b.onnx"}));
}

TEST(Inputs, MissingEntryIsAnErrorWithItsLine) {
  fs::path d = fresh_dir("inputs_missing");
  std::ofstream(d / "list.txt") << "# x\nnope.onnx\n";
  auto models = discover_models({(d / "list.txt").string()});
  ASSERT_FALSE(models);
  EXPECT_EQ(models.error().str(),
            (d / "list.txt").string() + ":2: '" + (d / "nope.onnx").string() + "': no such file or folder");
}

TEST(Inputs, OutputFolderIsExcluded) {
  fs::path d = fresh_dir("inputs_exclude");
  touch(d / "a.onnx");
  touch(d / "out/cpu/a.onnx");
  auto models = discover_models({d.string()}, d / "out");
  ASSERT_TRUE(models);
  EXPECT_EQ(models->size(), 1u);
}

TEST(Jobs, OnePerModelAndTargetUnderTheTargetFolder) {
  auto jobs = plan_jobs({{"m/a.onnx", "m/a.onnx"}}, {"cpu", "specs/h200.json"}, "out");
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].key, "cpu/m/a.onnx");
  EXPECT_EQ(jobs[0].output, fs::path("out/cpu/m/a.onnx"));
  EXPECT_EQ(jobs[0].report, fs::path("out/cpu/m/a.onnx.report.json"));
  EXPECT_EQ(jobs[1].key, "h200/m/a.onnx");
}

TEST(Shard, ParsesIOverN) {
  EXPECT_EQ(parse_shard("2/5")->index, 2u);
  EXPECT_EQ(parse_shard("2/5")->count, 5u);
  EXPECT_EQ(parse_shard("2/5")->suffix(), ".shard-2-of-5");
  for (const char* bad : {"5/5", "1", "a/2", "1/0", "1/2x", "-1/2"}) EXPECT_FALSE(parse_shard(bad)) << bad;
}

TEST(Shard, ShardsPartitionTheJobs) {
  for (std::size_t n = 1; n <= 5; ++n)
    for (std::size_t job = 0; job < 23; ++job) {
      int owners = 0;
      for (std::size_t i = 0; i < n; ++i) owners += Shard{i, n}.contains(job);
      EXPECT_EQ(owners, 1);
    }
}

}  // namespace
}  // namespace refinery::batch
