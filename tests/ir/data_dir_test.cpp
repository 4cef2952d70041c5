// ir::data_dir: $REFINERY_DATA names a data root in the installed layout; a
// binary of the build tree (this test) reads the source tree's layout. The
// installed binary's case is tests/cli/install_test.sh.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "ir/data_dir.h"

namespace refinery::ir {
namespace {

namespace fs = std::filesystem;

// Sets or unsets REFINERY_DATA for one test, and puts it back after.
class DataEnv {
 public:
  explicit DataEnv(const char* value) {
    if (const char* old = std::getenv("REFINERY_DATA")) old_ = old, had_ = true;
    if (value)
      ::setenv("REFINERY_DATA", value, 1);
    else
      ::unsetenv("REFINERY_DATA");
  }
  ~DataEnv() {
    if (had_)
      ::setenv("REFINERY_DATA", old_.c_str(), 1);
    else
      ::unsetenv("REFINERY_DATA");
  }

 private:
  std::string old_;
  bool had_ = false;
};

TEST(DataDir, EnvironmentNamesAnInstalledLayout) {
  DataEnv env("/opt/refinery/share/refinery");
  EXPECT_EQ(data_dir(DataKind::Rules).value(), fs::path("/opt/refinery/share/refinery/rules"));
  EXPECT_EQ(data_dir(DataKind::Targets).value(), fs::path("/opt/refinery/share/refinery/targets"));
}

TEST(DataDir, EmptyEnvironmentIsUnset) {
  DataEnv env("");
  EXPECT_EQ(data_dir(DataKind::Rules).value(), fs::path(REFINERY_SOURCE_DIR) / "rules/lib");
}

TEST(DataDir, BuildTreeBinaryReadsTheSourceTree) {
  DataEnv env(nullptr);
  fs::path rules = data_dir(DataKind::Rules).value(), targets = data_dir(DataKind::Targets).value();
  EXPECT_EQ(rules, fs::path(REFINERY_SOURCE_DIR) / "rules/lib");
  EXPECT_EQ(targets, fs::path(REFINERY_SOURCE_DIR) / "targets/specs");
  EXPECT_TRUE(fs::exists(rules / "fold.rules"));
  EXPECT_TRUE(fs::exists(targets / "cpu.json"));
}

}  // namespace
}  // namespace refinery::ir
