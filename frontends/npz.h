// NumPy .npz archives (a zip of .npy arrays, as numpy.savez and
// savez_compressed write them): the per-step inputs and the spike traces of
// `refinery run` on a spiking graph (docs/spiking.md). Little-endian, C order.
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "ir/diag.h"
#include "ir/tensor.h"

namespace refinery::frontends {

using NamedTensors = std::vector<std::pair<std::string, ir::Tensor>>;

// The arrays of an .npz file, by name (the member name without ".npy"), in
// archive order. Stored and deflated members; dtypes f2, f4, f8, i1..i8,
// u1..u8 and bool. A malformed archive or array fails naming the file and
// the member.
Expected<NamedTensors> read_npz(const std::filesystem::path& file);

// Writes the arrays uncompressed (as numpy.savez does), atomically.
Expected<void> write_npz(const std::filesystem::path& file, const NamedTensors& arrays);

}  // namespace refinery::frontends
