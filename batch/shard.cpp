#include "batch/shard.h"

#include <fmt/format.h>

#include <charconv>

namespace refinery::batch {

std::string Shard::suffix() const { return whole() ? "" : fmt::format(".shard-{}-of-{}", index, count); }

Expected<Shard> parse_shard(std::string_view text) {
  Shard s;
  auto slash = text.find('/');
  auto bad = [&] { return fail(fmt::format("--shard expects I/N with 0 <= I < N, got '{}'", text)); };
  if (slash == std::string_view::npos) return bad();
  auto [p1, e1] = std::from_chars(text.data(), text.data() + slash, s.index);
  auto [p2, e2] = std::from_chars(text.data() + slash + 1, text.data() + text.size(), s.count);
  if (e1 != std::errc() || e2 != std::errc() || p1 != text.data() + slash || p2 != text.data() + text.size() ||
      s.count == 0 || s.index >= s.count)
    return bad();
  return s;
}

}  // namespace refinery::batch
