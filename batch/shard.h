// A deterministic slice of a batch: shard I of N takes the jobs whose index
// in the planned list is I modulo N, so N copies of the same command (a Slurm
// job array, a Kubernetes Indexed Job) split the work with no overlap.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

#include "ir/diag.h"

namespace refinery::batch {

struct Shard {
  std::size_t index = 0, count = 1;  // 0 <= index < count
  bool contains(std::size_t job) const { return job % count == index; }
  bool whole() const { return count == 1; }
  // "" for the whole batch, else ".shard-I-of-N": the journal and summary
  // names of this shard, so that shards can share one output folder.
  std::string suffix() const;
};

// "I/N" with 0 <= I < N.
Expected<Shard> parse_shard(std::string_view text);

}  // namespace refinery::batch
