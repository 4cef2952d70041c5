// Where Refinery's data lives (the rule library, the target specs): the one
// place that finds it, for an installed `refinery` and for a build tree alike.
// In ir/ because ir/ is the lowest module; it knows nothing about the data.
#pragma once
#include <filesystem>
#include <string_view>

#include "ir/diag.h"

namespace refinery::ir {

// One kind of data, and where it lies in each layout:
//
//   kind      installed (<data root>/...)     source tree (<source>/...)
//   Rules     rules/*.rules                   rules/lib/*.rules
//   Targets   targets/*.json                  targets/specs/*.json
//
// The learned CPU cost model shipped with Refinery lies beside its spec
// (targets/cpu.ubj); calibrated ones in the user's folder (targets/spec.h).
enum class DataKind { Rules, Targets };

// The folder of `kind`, from the first of:
//   1. $REFINERY_DATA, when set and not empty: a data root in the installed
//      layout (what `cmake --install` writes to <prefix>/share/refinery);
//   2. <dir of the running executable>/../share/refinery (for an installed
//      <prefix>/bin/refinery), when that folder exists;
//   3. the source tree this was built from, in the source layout: only when
//      the running executable lies inside the build tree (build/cli/refinery,
//      the test binaries), so an installed binary never depends on it.
// Fails, naming what it looked for, when none applies.
Expected<std::filesystem::path> data_dir(DataKind kind);

// A shared module Refinery loads on first use (runtime/'s libtorch
// interpreter, runtime/load.cpp), from the first of:
//   1. <dir of the running executable>/../lib/refinery/<name> (installed);
//   2. $REFINERY_DATA/../../lib/refinery/<name>, when $REFINERY_DATA is set:
//      the prefix whose share/refinery it names;
//   3. <build tree>/lib/<name>, only when the running executable lies inside
//      the build tree.
// Fails, naming what it looked for, when none holds the file.
Expected<std::filesystem::path> module_file(std::string_view name);

}  // namespace refinery::ir
